"""What the PySpark workloads of the tests and scripts share: the Spark session they build, job
group setup, progress logging, marker files, waiting for a release file, and not outliving the
test that started them.

Used by tests/e2e/workload.py, tests/e2e_live/workload.py, tests/faults/driver.py,
tests/e2e_lost/app.py, tests/e2e_prometheus_workload.py, scripts/eventlog_workload.py and (their
REST snapshots) scripts/diagnosis_workload.py and scripts/tpch_workload.py, each of
which puts this folder on sys.path first. pyspark is imported only when a session is built, so a
workload reports argument errors before paying for the import.

Nothing here may be called from code that Spark ships to its Python workers (UDFs, RDD
functions): the workers cannot import this module.
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request


def logger(prefix):
    """A `log(msg)` printing `[<prefix> HH:MM:SS] msg` to stderr, flushed."""

    def log(msg):
        print(f"[{prefix} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    return log


def exit_with_parent(log):
    """Exit (status 2) once the parent process, the test, is gone: if it dies without cleaning up
    (SIGKILL, a CI timeout), the workload does not outlive it, and the JVM follows, as PySpark's
    gateway ends with its Python process."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                log("The test process is gone; exiting")
                os._exit(2)

    threading.Thread(target=watch, daemon=True).start()


def session(master, app_name, *, conf=(), ui_port=None, event_log_dir=None, loopback=False,
            driver_memory="1g", log_level="ERROR"):
    """A SparkSession on `master` named `app_name`, console progress off, with:

    ui_port        spark.ui.port
    event_log_dir  event logging on, into this folder (created; given to Spark as a file: URL)
    loopback       driver host and bind address 127.0.0.1
    driver_memory  spark.driver.memory (None: Spark's default)
    conf           further (key, value) pairs, in order (they may override the above)
    log_level      the SparkContext's log level
    """
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master).appName(app_name)
    settings = []
    if driver_memory is not None:
        settings.append(("spark.driver.memory", driver_memory))
    if loopback:
        settings += [("spark.driver.host", "127.0.0.1"), ("spark.driver.bindAddress", "127.0.0.1")]
    if ui_port is not None:
        settings.append(("spark.ui.port", str(ui_port)))
    settings.append(("spark.ui.showConsoleProgress", "false"))
    if event_log_dir is not None:
        os.makedirs(event_log_dir, exist_ok=True)
        settings += [("spark.eventLog.enabled", "true"),
                     ("spark.eventLog.dir", "file://" + os.path.abspath(event_log_dir))]
    for k, v in list(settings) + list(conf):
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    return spark


def set_group(sc, group, desc, interrupt_on_cancel=False):
    """Set the job group and description of the jobs this thread starts next. With `group` None
    the group is cleared and `desc` (None too: none) is the description alone."""
    if group is None:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setJobDescription(desc)
    else:
        sc.setJobGroup(group, desc, interruptOnCancel=interrupt_on_cancel)


def write_json(path, data):
    """Write `data` as JSON to `path` atomically (a reader never sees half a file)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def wait_for_file(path, timeout, every=0.2):
    """Wait until `path` exists (never, if None) or `timeout` seconds pass; whether it exists."""
    deadline = time.time() + timeout
    while time.time() < deadline and not (path and os.path.exists(path)):
        time.sleep(every)
    return bool(path and os.path.exists(path))


# --- A live driver's REST answers, saved once every job has ended (the fixtures' rest/ folders).

SENTINEL = "sentinel: every earlier SQL execution is in REST"
"""The description of a workload's last SQL execution: REST lists it once it lists every earlier one."""


def get(api, path):
    with urllib.request.urlopen(api + path, timeout=30) as r:
        return r.read()


def settled(api, app_id):
    """Jobs, stages and SQL executions as REST shows them, or None while any is running."""
    jobs = json.loads(get(api, f"/{app_id}/jobs"))
    stages = json.loads(get(api, f"/{app_id}/stages"))
    sql = json.loads(get(api, f"/{app_id}/sql?details=false&offset=0&length=1000000"))
    if any(j["status"] not in ("SUCCEEDED", "FAILED") for j in jobs):
        return None
    if any(s["status"] not in ("COMPLETE", "FAILED", "SKIPPED") for s in stages):
        return None
    if any(x["status"] not in ("COMPLETED", "FAILED") for x in sql):
        return None
    return (jobs, stages, sql)


def write_rest(api, app_id, out, log, sentinel=SENTINEL):
    """Wait until REST shows everything ended (twice the same) and lists the sentinel execution,
    then write its answers (`log` says what happened). The SQL listener has its own event queue, which may lag the jobs'
    one: the sentinel, the application's last SQL execution, shows in /sql only once every
    earlier execution has."""
    deadline = time.time() + 120
    prev, stable_since = None, None
    while True:
        cur = settled(api, app_id)
        stable = cur is not None and cur == prev
        stable_since = (stable_since or time.time()) if stable else None
        if stable and any(x.get("description") == sentinel for x in cur[2]):
            break
        # Settled without the sentinel for 15 s is final (the list asks for every execution:
        # Spark pages /sql, 20 unless `length` says otherwise).
        if stable and time.time() - stable_since > 15:
            log(f"REST /sql never listed the sentinel; it lists {len(cur[2])} executions")
            break
        if time.time() > deadline:
            raise SystemExit("REST never settled: " + json.dumps(
                cur and [(x["id"], x["status"], x.get("description")) for x in cur[2]][-3:]))
        prev = cur
        time.sleep(1.0)
    d = os.path.join(out, app_id)
    os.makedirs(d, exist_ok=True)

    def dump(name, body):
        with open(os.path.join(d, name), "w") as f:
            json.dump(body, f, indent=1, sort_keys=True)
            f.write("\n")

    for name, path in [("applications.json", ""), ("app.json", f"/{app_id}"),
                       ("jobs.json", f"/{app_id}/jobs"), ("stages.json", f"/{app_id}/stages"),
                       ("stages__details-true.json", f"/{app_id}/stages?details=true"),
                       ("sql__details-false.json", f"/{app_id}/sql?details=false&offset=0&length=1000000"),
                       ("allexecutors.json", f"/{app_id}/allexecutors")]:
        dump(name, json.loads(get(api, path)))
    raw = {"storage/rdd": json.loads(get(api, f"/{app_id}/storage/rdd")),
           "environment": json.loads(get(api, f"/{app_id}/environment"))}
    for e in json.loads(get(api, f"/{app_id}/sql?details=false&offset=0&length=1000000")):
        raw[f"sql/{e['id']}?details=true"] = json.loads(
            get(api, f"/{app_id}/sql/{e['id']}?details=true&planDescription=true"))
    for s in json.loads(get(api, f"/{app_id}/stages")):
        if s["status"] == "SKIPPED":
            continue
        key = f"stages/{s['stageId']}/{s['attemptId']}/taskSummary"
        try:
            raw[key] = json.loads(get(api, f"/{app_id}/{key}?quantiles=0.5,1.0"))
        except urllib.error.HTTPError as e:
            log(f"{key}: HTTP {e.code}")
    dump("raw.json", raw)
    log(f"REST of {app_id} written to {d}")
