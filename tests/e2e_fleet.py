#!/usr/bin/env python3
"""End-to-end: fleet mode (issue 15), with a real Prometheus (Debian's) scraping real exporters.

    python3 tests/e2e_fleet.py [--keep] [--only shards|names] [--exporter PATH] [--python PATH]

A. Shards. 200 applications: copies of a real Spark 4.1.1 event log (the fixture
   tests/data/eventlogs/spark-4.1.1-none-single, 12 jobs, 2 of them failed, skipped and failed
   stages, failed tasks), each with its own `local-<13 digits>` application id, renumbered
   everywhere in the file, which is named by the id as Spark names single-file logs. Three shard
   exporters (--shard.count 3) and one unsharded exporter read the folder; Prometheus scrapes
   them every 2 s (jobs `shards` and `all`). Then the three stop and two start with
   --shard.count 2 (once Prometheus has seen the three down). Asserts, for 3 and then 2 shards:
     1. every application is in exactly one shard, the one XXH32(app_id) mod count says
        (computed here, in Python, from the algorithm's definition), and the union is the 200
     2. every job-group counter family summed by (app_id, job_group, job_description, status)
        over the shards equals the unsharded exporter's, series for series
     3. the numbers are Spark's: jobs, stages and tasks by status, executor run and CPU time,
        from the source log, times 200; each application's jobs = its log's SparkListenerJobEnd
        lines; each shard read exactly its own logs' bytes
   and over the whole run, at every scrape-interval step: no application in two shards, no
   application with more jobs than its log has, the shards' job total never above Spark's.
   Beside them, two name-mode shards (--model.aggregate-by app_name --shard.count 2) over 24
   copies under 8 names: each name in the shard XXH32(app_name) mod 2 says, no app_id label,
   and nothing counted (those runs ended before the exporters started), every name at zero.

B. Aggregation by application name (--model.aggregate-by app_name). One real PySpark
   application (tests/e2e_fleet_workload.py) runs 5 times, one run after another, under one
   name, with a known number of jobs per run, failing jobs in a job group, one run that ends
   with exit code 1. One exporter reads the event-log folder, scraped every 1 s; it is stopped
   (SIGTERM) after the third run has ended and started again before the fourth begins (no run
   ends while it is down). Asserts, against the runs' event logs (and Spark's status tracker):
     1. name-mode series carry no app_id; every series is first scraped at zero
     2. round(increase(...[whole run])) of spark_jobs_total by (job_group, status), of
        spark_tasks_total by status, of spark_app_runs_total by status and of the run-duration
        histogram's count equal the logs' totals for all 5 runs; the duration sum matches too
     3. the restarted exporter starts from zero (the runs its predecessor counted are not
        counted again) with a later _created, and at the end shows only the runs since its
        start: the last value alone would be wrong, increase() is right
Prints one line per assertion; exit 1 if any failed, 2 if a prerequisite is missing (prometheus,
zstd, the exporter; pyspark unless --only shards). The temporary folder (logs, Prometheus data,
report.json) is kept on failure or with --keep.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, Prom, e2e_main, free_port, wait_for  # noqa: E402
from groups import log_job_group  # noqa: E402

SOURCE_LOG = os.path.join(ROOT, "tests", "data", "eventlogs", "spark-4.1.1-none-single", "local-1796010159017")
APPS = 200
SHARD_INTERVAL = 2
# What the shard test asserts on; Prometheus keeps only these (200 applications x 4 exporters of
# every family would be a million series on a 2-core CI machine). No stage duration histograms:
# these runs ended long ago, so each is summarised as it is read (model.summary_level: groups,
# the default), which keeps job durations only.
SHARD_FAMILIES = [
    "spark_jobs_total", "spark_stages_total", "spark_tasks_total",
    "spark_task_run_time_seconds_total", "spark_task_cpu_time_seconds_total",
    "spark_task_gc_time_seconds_total", "spark_task_input_bytes_total",
    "spark_task_output_bytes_total", "spark_task_shuffle_read_bytes_total",
    "spark_task_shuffle_write_bytes_total", "spark_task_memory_spilled_bytes_total",
    "spark_task_disk_spilled_bytes_total", "spark_job_duration_seconds_count",
    "spark_job_duration_seconds_sum",
]
GROUP_KEY = ("app_id", "job_group", "job_description", "status")
# Name-mode shards (the shard key is then the name): old runs of these names.
NAMES = [f"daily-etl-{k}" for k in range(8)]
NAME_RUNS = 3

WORKLOAD = os.path.join(ROOT, "tests", "e2e_fleet_workload.py")
APP_NAME = "fleet-e2e-daily"
NAME_INTERVAL = 1
# Runs: load jobs; f = a failing job in group `bad`; x = the run ends with exit code 1.
PLAN = ["2", "1f", "3x", "2f", "1"]
RESTART_BEFORE = 3  # the exporter restarts between the third run's end and the fourth's start

JOB_STATUS = {"JobSucceeded": "succeeded", "JobFailed": "failed"}


# --- XXH32, from its specification (github.com/Cyan4973/xxHash doc/xxhash_spec.md) -------------

P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
M32 = 0xFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def xxh32(data, seed=0):
    """XXH32 of `data` (bytes): the shard of an application is xxh32(app_id) mod count."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M32, (seed + P2) & M32, seed & M32, (seed - P1) & M32]
        while i + 16 <= n:
            for k in range(4):
                lane = int.from_bytes(data[i:i + 4], "little")
                v[k] = (_rotl((v[k] + lane * P2) & M32, 13) * P1) & M32
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M32
    else:
        h = (seed + P5) & M32
    h = (h + n) & M32
    while i + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[i:i + 4], "little") * P3) & M32, 17) * P4) & M32
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * P5) & M32, 11) * P1) & M32
        i += 1
    h ^= h >> 15
    h = (h * P2) & M32
    h ^= h >> 13
    h = (h * P3) & M32
    h ^= h >> 16
    return h


# --- Spark's truth, from event logs ------------------------------------------------------------

def log_lines(path):
    """The event lines of a log: a plain file, a zstd file, or a rolling eventlog_v2_ folder
    (its events_<n>_ parts in order, each decoded)."""
    if os.path.isdir(path):
        parts = sorted((f for f in os.listdir(path) if f.startswith("events_")),
                       key=lambda f: int(f.split("_")[1]))
        return [line for f in parts for line in log_lines(os.path.join(path, f))]
    if path.endswith(".zstd") or path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True, text=True).stdout
    else:
        text = open(path).read()
    return [line for line in text.splitlines() if line.strip()]


def log_truth(lines):
    """What Spark's event log says about an application: jobs by (group, status), stages and
    tasks by status, executor run and CPU time, start and end times, exit code."""
    t = {"jobs": {}, "stages": {}, "tasks": {}, "run_ms": 0, "cpu_ns": 0, "job_ends": 0,
         "start_ms": None, "end_ms": None, "exit_code": None, "name": None}
    group_of, in_jobs, submitted = {}, set(), set()

    def bump(d, k):
        d[k] = d.get(k, 0) + 1

    for line in lines:
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerApplicationStart":
            t["start_ms"], t["name"] = e["Timestamp"], e["App Name"]
        elif ev == "SparkListenerApplicationEnd":
            t["end_ms"], t["exit_code"] = e["Timestamp"], e.get("ExitCode")
        elif ev == "SparkListenerJobStart":
            group_of[e["Job ID"]] = log_job_group(e)
            in_jobs.update(s["Stage ID"] for s in e["Stage Infos"])
        elif ev == "SparkListenerJobEnd":
            t["job_ends"] += 1
            bump(t["jobs"], (group_of.get(e["Job ID"], ""), JOB_STATUS[e["Job Result"]["Result"]]))
        elif ev == "SparkListenerStageSubmitted":
            submitted.add(e["Stage Info"]["Stage ID"])
        elif ev == "SparkListenerStageCompleted":
            bump(t["stages"], "failed" if "Failure Reason" in e["Stage Info"] else "complete")
        elif ev == "SparkListenerTaskEnd":
            reason = e["Task End Reason"]["Reason"]
            bump(t["tasks"], {"Success": "succeeded", "TaskKilled": "killed"}.get(reason, "failed"))
            m = e.get("Task Metrics") or {}
            t["run_ms"] += m.get("Executor Run Time", 0)
            t["cpu_ns"] += m.get("Executor CPU Time", 0)
    skipped = len(in_jobs - submitted)
    if skipped:
        t["stages"]["skipped"] = skipped
    return t


def by_status(jobs):
    out = {}
    for (_, s), n in jobs.items():
        out[s] = out.get(s, 0) + n
    return out


# --- Prometheus helpers ------------------------------------------------------------------------

def vector(prom, expr, key, at=None):
    """{label values of `key`: value} of an instant query; two series with one key is an error."""
    r = prom.query(expr, at)
    if r.get("status") != "success":
        raise RuntimeError(f"{expr}: {r.get('error')}")
    out = {}
    for s in r["data"]["result"]:
        k = tuple(s["metric"].get(x, "") for x in key)
        if k in out:
            raise RuntimeError(f"{expr}: two series for {k}")
        out[k] = float(s["value"][1])
    return out


def scalar(prom, expr, at=None):
    """The value of a query that yields at most one series (None: no series)."""
    v = vector(prom, expr, (), at)
    return v.get(())


def matrix(prom, expr, start, end, step):
    r = prom.query_range(expr, start, end, step)
    if r.get("status") != "success":
        raise RuntimeError(f"{expr}: {r.get('error')}")
    return r["data"]["result"]


def nonzero(d):
    return {k: v for k, v in d.items() if v}


def healthy(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def settle(what, pred, timeout, res):
    """Wait for `pred`; a timeout is a failed assertion, not the end of the test."""
    try:
        wait_for(pred, timeout, what)
        return True
    except TimeoutError as e:
        res.add(what, False, str(e))
        return False


def stop_all(procs):
    """SIGTERM every process at once (each drains on its own), then wait for each."""
    for p in procs:
        if p.p.poll() is None:
            try:
                os.killpg(p.p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for p in procs:
        p.stop()


def start_prometheus(tmp, procs, name, scrape_configs, interval):
    port = free_port()
    cfg = os.path.join(tmp, f"{name}.yml")
    with open(cfg, "w") as f:
        f.write(f"global:\n  scrape_interval: {interval}s\n  scrape_timeout: {interval}s\n"
                f"  evaluation_interval: {interval}s\nscrape_configs:\n{scrape_configs}")
    procs.append(Proc(name, ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/{name}-data",
                             f"--web.listen-address=127.0.0.1:{port}"], tmp))
    prom = Prom(f"http://127.0.0.1:{port}")
    wait_for(lambda: prom.api("status/buildinfo").get("status") == "success", 30, name)
    return prom


# --- A. shards ---------------------------------------------------------------------------------

def make_logs(folder):
    """APPS copies of SOURCE_LOG, each with its own application id, named by it. Returns
    ({app_id: bytes}, the source's truth)."""
    text = open(SOURCE_LOG).read()
    lines = [line for line in text.splitlines() if line.strip()]
    src_id = next(json.loads(line)["App ID"] for line in lines if '"SparkListenerApplicationStart"' in line)
    os.makedirs(folder)
    sizes = {}
    for i in range(APPS):
        app_id = f"local-{1796020000000 + i * 7919:013d}"
        copy = text.replace(src_id, app_id)
        with open(os.path.join(folder, app_id), "w") as f:
            f.write(copy)
        sizes[app_id] = len(copy.encode())
    return sizes, log_truth(lines)


def make_name_logs(folder):
    """NAME_RUNS copies of SOURCE_LOG per name of NAMES, each with its own application id and
    the name in place of the source's everywhere. Returns their bytes."""
    text = open(SOURCE_LOG).read()
    start = next(json.loads(line) for line in text.splitlines() if '"SparkListenerApplicationStart"' in line)
    os.makedirs(folder)
    total = 0
    for k, name in enumerate(NAMES):
        for r in range(NAME_RUNS):
            app_id = f"local-{1796030000000 + (k * NAME_RUNS + r) * 104729:013d}"
            copy = text.replace(start["App ID"], app_id).replace(f'"{start["App Name"]}"', f'"{name}"')
            with open(os.path.join(folder, app_id), "w") as f:
                f.write(copy)
            total += len(copy.encode())
    return total


def check_name_shards(prom, res, when, total_bytes):
    """Name-mode shards: each name in the shard XXH32(app_name) mod 2 says, no app_id, and the
    old runs (ended before the exporters started) not counted, their names' series at zero."""
    owners = {}
    for s in prom.query('spark_app_info{job="name-shards"}', when)["data"]["result"]:
        owners.setdefault(s["metric"].get("app_name"), []).append(s["metric"]["shard"])
    want = {n: [f"{xxh32(n.encode()) % 2}/2"] for n in NAMES}
    res.add("name mode, 2 shards: each name in exactly the shard XXH32(app_name) mod 2",
            owners == want, f"names per shard {[sum(1 for v in want.values() if v == [f'{k}/2']) for k in (0, 1)]}; "
            f"got {sorted(owners.items()) if owners != want else 'as computed'}")
    read = vector(prom, 'spark_exporter_eventlog_bytes_total{job="name-shards"}', ("shard",), when)
    print(f"e2e-fleet: name-mode shards read {sorted(read.items())} bytes of the {total_bytes} of all "
          "their logs", flush=True)
    with_id = vector(prom, 'count by (__name__) ({job="name-shards",app_id!=""})', ("__name__",), when)
    res.add("name mode, 2 shards: no series carries app_id", not with_id, f"{with_id}")
    names = {k[0] for k in vector(prom, 'count by (app_name) (spark_jobs_total{job="name-shards"})', ("app_name",), when)}
    counted = scalar(prom, 'sum(spark_jobs_total{job="name-shards"}) + sum(spark_app_runs_total{job="name-shards"})', when)
    res.add(f"name mode, 2 shards: the {len(NAMES) * NAME_RUNS} runs that ended before the exporters started "
            f"are not counted; every name's series exist, at zero", counted == 0.0 and names == set(NAMES),
            f"jobs + runs {counted}; {len(names)} names with spark_jobs_total series")


def run_shards(a, tmp, res, procs):
    logs = os.path.join(tmp, "shard-logs")
    sizes, truth = make_logs(logs)
    ids = set(sizes)
    # Each copy's own truth: its SparkListenerJobEnd lines (the renumbering kept every event).
    job_ends = {i: open(os.path.join(logs, i)).read().count('"Event":"SparkListenerJobEnd"') for i in ids}
    total_bytes = sum(sizes.values())
    total_jobs = sum(job_ends.values())
    print(f"e2e-fleet: {APPS} applications, {total_bytes} bytes, {total_jobs} jobs", flush=True)
    res.add("XXH32 here = the exporter's reference value (crates/core/src/shard.rs)",
            xxh32(b"local-1795981136444") == 0xBE92E177, f"{xxh32(b'local-1795981136444'):#x}")
    # One histogram bucket each: the exporters render ~60k series each instead of ~220k.
    cfg = os.path.join(tmp, "shard-exporter.yml")
    with open(cfg, "w") as f:
        f.write("histograms:\n  duration_buckets: [60]\n  task_duration_buckets: [1]\n")

    def exporter(name, port, *extra, folder=logs):
        p = Proc(name, [a.exporter, f"--config.file={cfg}", f"--web.listen-address=127.0.0.1:{port}",
                        "--spark.url=", f"--event-log.dir={folder}", "--lifecycle.grace-period=5s", *extra], tmp)
        procs.append(p)
        return p

    layouts = {3: [free_port() for _ in range(3)], 2: [free_port() for _ in range(2)]}
    name_logs = os.path.join(tmp, "name-logs")
    name_bytes = make_name_logs(name_logs)
    name_ports = [free_port() for _ in range(2)]
    all_port = free_port()
    keep = "|".join(SHARD_FAMILIES + ["spark_app_info", "spark_app_runs_total", "spark_exporter_eventlog_bytes_total"])
    targets = "".join(f"      - targets: [\"127.0.0.1:{p}\"]\n        labels: {{shard: \"{i}/{n}\"}}\n"
                      for n, ports in layouts.items() for i, p in enumerate(ports))
    relabel = (f"    metric_relabel_configs:\n      - source_labels: [__name__]\n"
               f"        regex: '{keep}'\n        action: keep\n")
    scrape = (f"  - job_name: shards\n{relabel}    static_configs:\n{targets}"
              f"  - job_name: all\n{relabel}    static_configs:\n      - targets: [\"127.0.0.1:{all_port}\"]\n"
              f"  - job_name: name-shards\n{relabel}    static_configs:\n" +
              "".join(f"      - targets: [\"127.0.0.1:{p}\"]\n        labels: {{shard: \"{i}/2\"}}\n"
                      for i, p in enumerate(name_ports)))

    began = time.time()
    unsharded = exporter("exporter-all", all_port)
    three = [exporter(f"exporter-{i}-of-3", p, "--shard.count=3", f"--shard.index={i}")
             for i, p in enumerate(layouts[3])]
    by_name = [exporter(f"exporter-names-{i}-of-2", p, "--model.aggregate-by=app_name", "--shard.count=2",
                        f"--shard.index={i}", folder=name_logs) for i, p in enumerate(name_ports)]
    prom = start_prometheus(tmp, procs, "prometheus-shards", scrape, SHARD_INTERVAL)

    def check(count, when):
        """Assertions 1-3 for `count` shards, at time `when`."""
        tag = f"{count} shards"
        info = prom.query('spark_app_info{job="shards"}', when)["data"]["result"]
        owners = {}
        for s in info:
            owners.setdefault(s["metric"]["app_id"], []).append(s["metric"]["shard"])
        per_app = vector(prom, 'count by (app_id) (spark_app_info{job="shards"})', ("app_id",), when)
        res.add(f"{tag}: every application in exactly one shard",
                set(per_app.values()) == {1.0} and len(per_app) == APPS,
                f"{len(per_app)} applications, counts {sorted(set(per_app.values()))}")
        res.add(f"{tag}: the shards' applications are the 200", set(owners) == ids,
                f"{len(set(owners) - ids)} unknown, {len(ids - set(owners))} missing")
        unsharded_ids = {k[0] for k in vector(prom, 'spark_app_info{job="all"}', ("app_id",), when)}
        res.add(f"{tag}: the unsharded exporter's applications are the 200", unsharded_ids == ids,
                f"{len(unsharded_ids)}")
        wrong = [i for i, sh in owners.items() if sh != [f"{xxh32(i.encode()) % count}/{count}"]]
        sizes_by = [sum(1 for i in ids if xxh32(i.encode()) % count == k) for k in range(count)]
        res.add(f"{tag}: each application in shard XXH32(app_id) mod {count}", not wrong and owners,
                f"applications per shard {sizes_by}; wrong: {wrong[:3]}")
        read = vector(prom, 'spark_exporter_eventlog_bytes_total{job="shards"}', ("shard",), when)
        want = {(f"{k}/{count}",): float(sum(sizes[i] for i in ids if xxh32(i.encode()) % count == k))
                for k in range(count)}
        res.add(f"{tag}: each shard read exactly its own logs' bytes", read == want, f"{read} vs {want}")
        # 2: family by family, series for series, shards = unsharded.
        compared, diffs = 0, []
        for fam in SHARD_FAMILIES:
            by = ", ".join(GROUP_KEY)
            s = vector(prom, f'sum by ({by}) ({fam}{{job="shards"}})', GROUP_KEY, when)
            u = vector(prom, f'sum by ({by}) ({fam}{{job="all"}})', GROUP_KEY, when)
            compared += len(u)
            if s != u or not u:
                diffs.append(f"{fam}: {len(s)} vs {len(u)} series, "
                             f"{len([k for k in u if s.get(k) != u[k]])} differ")
        res.add(f"{tag}: {len(SHARD_FAMILIES)} families summed over shards = unsharded, series for series",
                not diffs, f"{compared} series" + (f"; {diffs}" if diffs else ""))
        # 3: Spark's numbers.
        for fam, want_by in (("spark_jobs_total", by_status(truth["jobs"])),
                             ("spark_stages_total", truth["stages"]), ("spark_tasks_total", truth["tasks"])):
            got = nonzero({k[0]: v for k, v in vector(prom, f'sum by (status) ({fam}{{job="shards"}})',
                                                       ("status",), when).items()})
            want = {k: float(v * APPS) for k, v in want_by.items()}
            res.add(f"{tag}: {fam} by status = the logs'", got == want, f"{got} vs {want}")
        jobs = {k[0]: v for k, v in vector(prom, 'sum by (app_id) (spark_jobs_total{job="shards"})',
                                            ("app_id",), when).items()}
        bad = [i for i in ids if jobs.get(i) != job_ends[i]]
        res.add(f"{tag}: each application's jobs = its log's SparkListenerJobEnd lines", not bad,
                f"{len(jobs)} applications; {bad[:3]}")
        for fam, want in (("spark_task_run_time_seconds_total", truth["run_ms"] / 1e3 * APPS),
                          ("spark_task_cpu_time_seconds_total", truth["cpu_ns"] / 1e9 * APPS)):
            got = scalar(prom, f'sum({fam}{{job="shards"}})', when)
            res.add(f"{tag}: {fam} = the logs' executor time", got is not None and abs(got - want) < 1e-6 * want,
                    f"{got} vs {want:.6f}")

    def complete(count):
        """Every exporter of the layout and the unsharded one has read every byte."""
        got = vector(prom, 'sum by (job) (spark_exporter_eventlog_bytes_total{shard=~".*/%d|"})' % count, ("job",))
        return got.get(("shards",)) == total_bytes and got.get(("all",)) == total_bytes

    if settle("3 shards and the unsharded exporter read every log", lambda: complete(3), 90, res):
        time.sleep(2 * SHARD_INTERVAL)  # the models caught up with the bytes read
        check(3, time.time())
    # A name shard learns a log's name by reading it, so "done" is: every name known and the
    # bytes read no longer growing over two scrapes.
    def names_done():
        now = time.time()
        read = [vector(prom, 'spark_exporter_eventlog_bytes_total{job="name-shards"}', ("shard",), t)
                for t in (now, now - 2 * SHARD_INTERVAL)]
        names = scalar(prom, 'count(count by (app_name) (spark_app_info{job="name-shards"}))')
        return names == len(NAMES) and len(read[0]) == 2 and read[0] == read[1]

    if settle("the 2 name-mode shards read every log", names_done, 60, res):
        check_name_shards(prom, res, time.time(), name_bytes)
    stop_all(by_name)
    # The shard count changes: the three stop, and once Prometheus has seen them down, two start.
    switch = time.time()
    stop_all(three)
    res.add("the 3 shards exit 0 after SIGTERM", all(p.p.returncode == 0 for p in three),
            f"{[p.p.returncode for p in three]}")
    settle("Prometheus saw the 3 shards down",
           lambda: vector(prom, 'up{job="shards",shard=~".*/3"}', ("shard",)) == {(f"{i}/3",): 0.0 for i in range(3)},
           30, res)
    two = [exporter(f"exporter-{i}-of-2", p, "--shard.count=2", f"--shard.index={i}") for i, p in enumerate(layouts[2])]
    if settle("2 shards read every log", lambda: complete(2), 90, res):
        time.sleep(2 * SHARD_INTERVAL)
        check(2, time.time())
    end = time.time()
    # Over the whole run, at every scrape-interval step.
    most = [float(v) for s in matrix(prom, 'max(count by (app_id) (spark_app_info{job="shards"}))',
                                     began, end, SHARD_INTERVAL) for _, v in s["values"]]
    res.add("at every step, no application in two shards", most and max(most) == 1.0,
            f"{len(most)} steps, max {max(most) if most else None}")
    per_app = [float(v) for s in matrix(prom, 'max(sum by (app_id) (spark_jobs_total{job="shards"}))',
                                        began, end, SHARD_INTERVAL) for _, v in s["values"]]
    want_app = max(job_ends.values())
    res.add(f"at every step, no application with more than its log's {want_app} jobs",
            per_app and max(per_app) <= want_app, f"max {max(per_app) if per_app else None}")
    series = matrix(prom, 'sum(spark_jobs_total{job="shards"})', began, end, SHARD_INTERVAL)
    vals = {float(t): float(v) for s in series for t, v in s["values"]}
    steps = int((end - began) // SHARD_INTERVAL) + 1
    full = sum(1 for v in vals.values() if v == total_jobs)
    over = [v for v in vals.values() if v > total_jobs]
    before = [v for t, v in vals.items() if t < switch]
    res.add(f"at every step, the shards' job total is at most Spark's {total_jobs}",
            not over and full > 0, f"{steps} steps: {full} at {total_jobs}, {steps - len(vals)} absent, "
            f"{len(vals) - full} partial (a shard still reading or not yet scraped); over: {over[:3]}")
    res.add("just before the switch, the 3 shards' job total = Spark's", before and before[-1] == total_jobs,
            f"{before[-1] if before else None}")
    stop_all(two + [unsharded])


# --- B. aggregation by application name ----------------------------------------------------------

def run_names(a, tmp, res, procs):
    events, control = os.path.join(tmp, "events"), os.path.join(tmp, "control")
    os.makedirs(events)
    os.makedirs(control)
    port = free_port()
    sel = f'app_name="{APP_NAME}"'

    def exporter(n):
        p = Proc(f"exporter-names-{n}", [a.exporter, f"--web.listen-address=127.0.0.1:{port}", "--spark.url=",
                                         f"--event-log.dir={events}", "--model.aggregate-by=app_name",
                                         "--web.openmetrics-created", "--lifecycle.grace-period=5s"], tmp)
        procs.append(p)
        wait_for(lambda: healthy(port) or p.p.poll() is not None, 30, f"exporter {n} healthy")
        if p.p.poll() is not None:
            raise RuntimeError(f"exporter {n} exited {p.p.returncode}: {p.tail(5)}")
        return p

    def created():
        """spark_app_runs_total's _created per status, from the exporter's OpenMetrics output."""
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode()
        return [float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
                if line.startswith("spark_app_runs_created{") and f'app_name="{APP_NAME}"' in line]

    began = time.time()
    first = exporter(1)
    prom = start_prometheus(tmp, procs, "prometheus-names",
                            f"  - job_name: names\n    static_configs:\n      - targets: [\"127.0.0.1:{port}\"]\n",
                            NAME_INTERVAL)
    wait_for(lambda: scalar(prom, 'up{job="names"}') == 1.0, 30, "Prometheus scraped the exporter")
    work = Proc("workload", [a.python, WORKLOAD, "--events", events, "--name", APP_NAME, "--control", control,
                             "--plan", ",".join(PLAN)], tmp)
    procs.append(work)
    runs, restart, current = [], {}, first
    for i in range(len(PLAN)):
        if i == RESTART_BEFORE:
            # Exporter 1 has counted the runs so far (else its stop would lose one), then stops.
            settle(f"exporter 1 counted the first {i} runs before its stop",
                   lambda: scalar(prom, f"sum(spark_app_runs_total{{{sel}}})") == float(i), 30, res)
            restart["created_before"] = created()
            current.stop()
            res.add("exporter 1 exits 0 after SIGTERM", current.p.returncode == 0, f"exit {current.p.returncode}")
            settle("Prometheus saw exporter 1 down", lambda: scalar(prom, 'up{job="names"}') == 0.0, 30, res)
            restart["at"] = time.time()
            current = exporter(2)
            restart["created_after"] = created()
            # Two scrapes of the new process before the next run starts.
            wait_for(lambda: scalar(prom, 'up{job="names"}') == 1.0, 30, "Prometheus scraped exporter 2")
            time.sleep(2 * NAME_INTERVAL + 0.5)
            restart["scraped"] = time.time()
        open(os.path.join(control, f"go-{i}"), "w").close()
        truth_file = os.path.join(control, f"truth-{i}.json")
        wait_for(lambda: os.path.exists(truth_file) or work.p.poll() is not None, 300, f"run {i + 1}")
        if not os.path.exists(truth_file):
            raise RuntimeError(f"the workload exited {work.p.returncode} before run {i + 1} ended")
        t = json.load(open(truth_file))
        t["ended"] = time.time()
        runs.append(t)
        print(f"e2e-fleet: run {i + 1} {t['app_id']} ended: {t['jobs']}", flush=True)
    work.p.wait(60)
    res.add("the workload ran 5 runs and exited 0", work.p.returncode == 0 and len(runs) == len(PLAN),
            f"exit {work.p.returncode}")
    # Every run's end scraped (poll 1 s, render up to 1 s old, scrape every 1 s).
    time.sleep(4 * NAME_INTERVAL)
    # Evaluated at the last scrape's own time: increase() then extrapolates neither at the end
    # (no gap after the last sample) nor at the start (the series begin at zero), so it is exact.
    at = scalar(prom, 'timestamp(up{job="names"})')
    window = f"{int(at - began) + 10}s"

    # Spark's truth: every run's event log (a rolling eventlog_v2_ folder, zstd: Spark 4's default).
    logs = []
    for t in runs:
        path = os.path.join(events, f"eventlog_v2_{t['app_id']}")
        if not os.path.isdir(path):
            path = os.path.join(events, t["app_id"])
        lt = log_truth(log_lines(path))
        logs.append(lt)
        tracker = {tuple(k.split("\t")): v for k, v in t["jobs"].items()}
        res.add(f"run {len(logs)}: its event log and Spark's status tracker agree on the jobs",
                lt["jobs"] == tracker and lt["name"] == APP_NAME and lt["exit_code"] == t["exit_code"],
                f"{lt['jobs']} vs {tracker}, exit code {lt['exit_code']}")
    jobs, tasks, runs_by = {}, {}, {}
    for lt in logs:
        for k, n in lt["jobs"].items():
            jobs[k] = jobs.get(k, 0) + n
        for k, n in lt["tasks"].items():
            tasks[k] = tasks.get(k, 0) + n
        s = "succeeded" if lt["exit_code"] == 0 else "failed" if lt["exit_code"] is not None else "unknown"
        runs_by[s] = runs_by.get(s, 0) + 1
    total_jobs = sum(jobs.values())
    after = logs[RESTART_BEFORE:]
    jobs_after = sum(lt["job_ends"] for lt in after)

    # 1. No app_id; every series born at zero.
    with_id = vector(prom, f'count by (__name__) ({{__name__=~"spark_(jobs|stages|tasks|app_runs)_total|'
                           f'spark_app_run_duration_seconds_count",{sel},app_id!=""}})', ("__name__",), at)
    res.add("name-mode series carry no app_id label", not with_id, f"{with_id}")
    firsts = {}
    # Every raw sample of exporter 1's lifetime (a range vector, not steps that could skip one).
    raw = prom.query(f'{{__name__=~"spark_jobs_total|spark_app_runs_total",{sel}}}[{int(restart["at"] - began) + 5}s]',
                     restart["at"])
    for s in raw["data"]["result"]:
        m = s["metric"]
        firsts[(m["__name__"], m.get("job_group", ""), m["status"])] = float(s["values"][0][1])
    born = {k: v for k, v in firsts.items() if v != 0}
    want_keys = {("spark_jobs_total", g, s) for g, s in jobs}
    res.add("every spark_jobs_total and spark_app_runs_total name series was first scraped at zero",
            firsts and not born and want_keys <= set(firsts),
            f"{len(firsts)} series; non-zero first: {born}; never scraped: {sorted(want_keys - set(firsts))}")

    # 2. increase() over the whole run = the logs' totals over all runs.
    got = {k: v for k, v in vector(prom, f'round(sum by (job_group, status) (increase(spark_jobs_total{{{sel}}}[{window}])))',
                                   ("job_group", "status"), at).items() if v}
    res.add(f"increase(spark_jobs_total) by (job_group, status) = the logs' ({total_jobs} jobs in {len(PLAN)} runs)",
            got == {k: float(v) for k, v in jobs.items()}, f"{got} vs {jobs}")
    got = nonzero({k[0]: v for k, v in vector(prom, f'round(sum by (status) (increase(spark_tasks_total{{{sel}}}[{window}])))',
                                               ("status",), at).items()})
    res.add("increase(spark_tasks_total) by status = the logs'", got == {k: float(v) for k, v in tasks.items()},
            f"{got} vs {tasks}")
    got = nonzero({k[0]: v for k, v in vector(prom, f'round(sum by (status) (increase(spark_app_runs_total{{{sel}}}[{window}])))',
                                               ("status",), at).items()})
    res.add("increase(spark_app_runs_total) by status = the logs' exit codes", got == {k: float(v) for k, v in runs_by.items()},
            f"{got} vs {runs_by}")
    got = scalar(prom, f'round(sum(increase(spark_app_run_duration_seconds_count{{{sel}}}[{window}])))', at)
    res.add(f"increase(spark_app_run_duration_seconds_count) = {len(PLAN)} runs", got == len(PLAN), f"{got}")
    want = sum((lt["end_ms"] - lt["start_ms"]) / 1e3 for lt in logs)
    got = scalar(prom, f'sum(increase(spark_app_run_duration_seconds_sum{{{sel}}}[{window}]))', at)
    res.add("increase(spark_app_run_duration_seconds_sum) = the logs' run durations (end - start)",
            got is not None and abs(got - want) <= 1e-6 * want, f"{got} vs {want:.3f} s")

    # 3. The restart: from zero, a later _created, never counting a run twice.
    if restart:
        zero = scalar(prom, f"sum(spark_jobs_total{{{sel}}}) + sum(spark_app_runs_total{{{sel}}})", restart["scraped"])
        res.add(f"after the restart, the {RESTART_BEFORE} runs already counted are not counted again (0)",
                zero == 0.0, f"{zero}")
        b, c = restart.get("created_before") or [], restart.get("created_after") or []
        res.add("after the restart, spark_app_runs _created is the new process's",
                b and c and min(c) >= restart["at"] - 1 and min(c) > max(b), f"before {b}, after {c}")
        last = scalar(prom, f"sum(spark_jobs_total{{{sel}}})", at)
        res.add(f"the last value alone shows only the {len(after)} runs since the restart "
                f"({jobs_after} jobs, not {total_jobs}): increase() is needed", last == jobs_after, f"{last}")
    stop_all([current])


def main():
    return e2e_main("e2e-fleet", __doc__, [("shards", run_shards), ("names", run_names)],
                    tools=("prometheus", "zstd"),
                    modules=lambda a: () if a.only == "shards" else ("pyspark",))

if __name__ == "__main__":
    sys.exit(main())
