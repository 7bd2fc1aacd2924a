#!/usr/bin/env python3
"""End-to-end: fleet mode (issue 15), with a real Prometheus (Debian's) scraping real exporters.

    python3 tests/e2e_fleet.py [--keep] [--only shards|names|checkpoints] [--exporter PATH]
                               [--python PATH] [--seed N]

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
   application (tests/e2e_fleet_workload.py) runs 7 times, one run after another, under one
   name, with a known number of jobs per run, failing jobs in a job group, one run that ends
   with exit code 1, and, after 5 normal runs, one run made slow on purpose (a skewed job whose
   long task makes it last about SLOW_RATIO (2.5) times the median duration of the runs before
   it, and hold as many times their core-seconds), then a normal one again. One exporter reads the
   event-log folder (diagnosis thresholds NAME_DIAGNOSE: every run has idle cores), scraped
   every 1 s by a Prometheus that evaluates the shipped rules every 1 s (scripts/alerts-generate.py
   with the shorter windows of NAME_RULES); it is stopped (SIGTERM) after the third run has
   ended and started again before the fourth begins (no run ends while it is down). Asserts,
   against the runs' event logs (and Spark's status tracker):
     1. name-mode series carry no app_id; every counter and run-histogram series is first
        scraped at zero, by each of the two exporters
     2. round(increase(...[whole run])) of spark_jobs_total by (job_group, status), of
        spark_tasks_total by status, of spark_app_runs_total by status and of the run-duration
        histogram's count equal the logs' totals for all 7 runs; the duration sum matches too
     3. the restarted exporter starts from zero (the runs its predecessor counted are not
        counted again) with a later _created, and at the end shows only the runs since its
        start: the last value alone would be wrong, increase() is right
     4. runs that regress (issue 36), from every evaluation's ALERTS sample and which run the
        gauge spark_app_last_run_end_timestamp_seconds named last then: SparkRunSlowerThanUsual
        and SparkRunCostlierThanUsual fired while the slow run was the last one and never while
        another was; SparkNewFindingKind fired for skew (the slow run's skewed stage), never for
        a kind the runs before it had (idle_cores); the rule's history median is within the
        bucket error (19 %) of the true median of the runs' durations, and the history counts
        all 7 runs across the restart
C. Checkpoints (issue 34: --checkpoint.path, every 1 s here, one folder all shards share).
   Twice, per run and by name (--model.aggregate-by app_name), each with its own folders and
   Prometheus job: 30 copies of the part A log under 6 names (2 per shard of 3, both shards of 2
   hold some), ended an hour before the start, then three shards, scraped every 1 s (OpenMetrics,
   --web.openmetrics-created; Prometheus' created-timestamp-zero-ingestion where the version has
   it, else _created is a series of its own). Then, at random points (--seed, printed), shards
   restart: SIGTERM, SIGKILL (only once its periodic checkpoint is 2.5 s newer than the last log
   added), two at once, each time with 1 to 4 new runs added while they are down (a log written
   beside the folder and renamed into it, ending as it is added, one of them held by each down
   shard), and a reshard 3 -> 2 -> 3 (all stop with SIGTERM, two start with --shard.count 2, are
   scraped 3 times, count 2 new runs, stop; three start again). Asserts:
     1. every restarted shard loaded its checkpoint (SIGTERM: and exited 0) and read exactly the
        bytes of the new logs it reads (by id its own, by name all), not one of a log that was
        finished before it stopped; every shard after a reshard logs "this shard's part of the
        previous shards' checkpoints" and reads 0 bytes; the 2 shards' job total = the fleet's
     2. sum(resets()) over the whole run = 0 for every series (with its instance) of
        spark_jobs_total, spark_stages_total, spark_tasks_total (and spark_app_runs_total by name)
     3. from the raw samples of the whole run: each series (labels without instance), followed
        across the instances it moves between, never goes down and is never on two at once; its
        _created sample never changes
     4. the numbers are the logs': jobs by (app_id or app_name, job_group, status), stages and
        tasks by status, runs by name (status succeeded) = the logs' (per run: every log; by
        name: only the runs that ended after the first start, those added during the run,
        including those that ended while their shard was down; every name has series). The
        fleet's value is sum without (instance, shard) at the last scrape: every series was born
        during the run and never went down (2, 3), so its last value is exactly its increase over
        the run (increase() would extrapolate, and misses a series' first value without
        created-timestamp ingestion). No run ends during a handover (logs are added only while
        some shards are up), so the equality is exact.
   Against an exporter without --checkpoint.path the restarts read every log again and name
   mode loses the runs that ended while a shard was down, with resets: 1, 2 and 4 fail.

Prints one line per assertion; exit 1 if any failed, 2 if a prerequisite is missing (prometheus,
zstd, the exporter; pyspark unless --only shards or --only checkpoints). The temporary folder (logs, Prometheus data,
report.json) is kept on failure or with --keep.
"""
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, Prom, e2e_main, free_port, http_get, wait_for  # noqa: E402
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
# Runs: load jobs; s = a skewed job in group `skewed` (the slow run); f = a failing job in group
# `bad`; x = the run ends with exit code 1.
PLAN = ["2", "1f", "3x", "2f", "1", "2s", "1"]
RESTART_BEFORE = 3  # the exporter restarts between the third run's end and the fourth's start
SLOW = PLAN.index("2s")  # the run made slow on purpose, after 5 normal ones, and one more after it
# Its skewed job's long task sleeps SLOW_RATIO x the median duration of the runs before it minus
# the shortest of them (from their event logs; at least SLOW_MIN_EXTRA seconds): its other jobs
# take no less than the shortest run, so it lasts, and holds its 2 cores, at least 2.5 times the
# median, over the 2.38 that fire whatever the bucket error (docs/runbook.md), and not much longer
# (CI time); longer on a slower machine.
SLOW_RATIO = 2.5
SLOW_MIN_EXTRA = 15
# Part B's Prometheus evaluates the shipped rules (scripts/alerts-generate.py), with the windows
# of the run histories shortened for a three-minute run: the history covers the whole part, a
# finding kind is new for 30 s (its lookback covers the whole part too; the runs' history ends
# 5 s before that window, a few scrapes). The expressions, the ratio (2) and the history's
# minimum of 5 runs are the shipped ones.
NAME_RULES = ["RUN_HISTORY_WINDOW=10m", "RUN_HISTORY_MIN_RUNS=5", "RUN_REGRESSION_WINDOW=5m",
              "NEW_FINDING_KIND_WINDOW=30s", "NEW_FINDING_KIND_LOOKBACK=600s", "NEW_FINDING_KIND_SETTLE=5s"]
# The exporter's diagnosis thresholds in part B: every run has idle cores (a run of 10 to 30 s on
# local[2] uses 30 to 75 % of its cores' time: below 0.9, over 5 core-seconds; the defaults, 0.5
# and a core-minute, see none), so the normal runs have a finding kind of their own, which must
# never fire SparkNewFindingKind; skew (the slow run's new kind) needs 10 s more than the median
# task (default 2 s: on a loaded machine the first job's Python workers can start seconds apart).
NAME_DIAGNOSE = "diagnose:\n  min_core_utilization: 0.9\n  utilization_min_core_time: 5s\n  skew_min_excess: 10s\n"
NEW_KIND = "skew"
# histogram_quantile reads a value in the bucket of the true quantile: within 2^(1/4) - 1.
BUCKET_ERROR = 2 ** 0.25 - 1

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


def exporter_job_group(ev):
    """The job_group the exporter gives an event log's SparkListenerJobStart: a Structured
    Streaming micro-batch's job (job group = the query's runId, description
    "<name>\\nid = <uuid>\\nrunId = <runId>\\nbatch = <n>") counts under its query's name
    (docs/internals.md "Job groups"), any other job as tests/support/groups.py says."""
    props = ev.get("Properties") or {}
    lines = (props.get("spark.job.description") or "").split("\n")
    run_id = props.get("spark.jobGroup.id") or ""
    if run_id and len(lines) >= 3 and lines[1].startswith("id = ") and lines[2] == f"runId = {run_id}":
        return lines[0]
    return log_job_group(ev)


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
            group_of[e["Job ID"]] = exporter_job_group(e)
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


def start_prometheus(tmp, procs, name, scrape_configs, interval, flags=(), rules=None):
    port = free_port()
    cfg = os.path.join(tmp, f"{name}.yml")
    with open(cfg, "w") as f:
        f.write(f"global:\n  scrape_interval: {interval}s\n  scrape_timeout: {interval}s\n"
                f"  evaluation_interval: {interval}s\n" + (f"rule_files:\n  - {rules}\n" if rules else "")
                + f"scrape_configs:\n{scrape_configs}")
    procs.append(Proc(name, ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/{name}-data",
                             f"--web.listen-address=127.0.0.1:{port}", *flags], tmp))
    prom = Prom(f"http://127.0.0.1:{port}")
    wait_for(lambda: prom.api("status/buildinfo").get("status") == "success", 30, name)
    return prom


# --- A. shards ---------------------------------------------------------------------------------

EPOCH_MS = re.compile(r"(?<![-\d])1\d{12}(?!\d)")


def log_copy(text, src_id, app_id, rename=None, shift_ms=0):
    """A copy of the event log `text` as another application: `app_id` in place of the source's
    `src_id` everywhere; `rename` = (old, new): the application name `new` in place of the
    quoted `old` everywhere; `shift_ms`: every epoch-millisecond time in it (13 digits, not an
    application id's) moved by that much, so the copy ran at another time."""
    if shift_ms:
        text = EPOCH_MS.sub(lambda m: str(int(m.group()) + shift_ms), text)
    text = text.replace(src_id, app_id)
    if rename:
        text = text.replace(f'"{rename[0]}"', f'"{rename[1]}"')
    return text

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
        copy = log_copy(text, src_id, app_id)
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
            copy = log_copy(text, start["App ID"], app_id, (start["App Name"], name))
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
    diagnose = os.path.join(tmp, "names-diagnose.yaml")
    with open(diagnose, "w") as f:
        f.write(NAME_DIAGNOSE)
    # The shipped rules, with NAME_RULES.
    rules_dir = os.path.join(tmp, "names-rules")
    gen = [sys.executable, os.path.join(ROOT, "scripts", "alerts-generate.py"), "--out-dir", rules_dir]
    for o in NAME_RULES:
        gen += ["--set", o]
    subprocess.run(gen, check=True, capture_output=True)

    def exporter(n):
        p = Proc(f"exporter-names-{n}", [a.exporter, f"--web.listen-address=127.0.0.1:{port}", "--spark.url=",
                                         f"--config.file={diagnose}",
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
                            NAME_INTERVAL, rules=os.path.join(rules_dir, "spark-exporter.rules.yml"))
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
        go = ""
        if i == SLOW:
            # The slow run's skewed job: SLOW_RATIO x the median duration of the runs so far,
            # less the shortest one (what its other jobs take at least).
            before = [run_duration(events, t) for t in runs]
            go = f"{max(SLOW_MIN_EXTRA, SLOW_RATIO * statistics.median(before) - min(before)):.1f}"
            print(f"e2e-fleet: run {i + 1} is the slow one: the runs so far took {statistics.median(before):.1f} s "
                  f"(median), {min(before):.1f} s (shortest); its skewed job's long task sleeps {go} s", flush=True)
        with open(os.path.join(control, f".go-{i}"), "w") as f:
            f.write(go)
        os.rename(os.path.join(control, f".go-{i}"), os.path.join(control, f"go-{i}"))
        truth_file = os.path.join(control, f"truth-{i}.json")
        wait_for(lambda: os.path.exists(truth_file) or work.p.poll() is not None, 300, f"run {i + 1}")
        if not os.path.exists(truth_file):
            raise RuntimeError(f"the workload exited {work.p.returncode} before run {i + 1} ended")
        t = json.load(open(truth_file))
        t["ended"] = time.time()
        runs.append(t)
        print(f"e2e-fleet: run {i + 1} {t['app_id']} ended: {t['jobs']}", flush=True)
    work.p.wait(60)
    res.add(f"the workload ran {len(PLAN)} runs and exited 0", work.p.returncode == 0 and len(runs) == len(PLAN),
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
        lt = log_truth(log_lines(run_log(events, t)))
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
    # Every raw sample of each exporter's lifetime (a range vector, not steps that could skip one):
    # the counters and the run histograms (the history rules' increase() would miss a first
    # observation of a series born at one), each first scraped at zero; every job series of the
    # runs the exporter counted was scraped.
    families = "spark_jobs_total|spark_app_runs_total|spark_app_run_(duration|core)_seconds_(bucket|count)"
    # (Exporter 1 was seen down a scrape before restart["at"]: exporter 2's span holds none of its samples.)
    spans = [(1, began, restart["at"], logs[:RESTART_BEFORE]), (2, restart["at"], at, logs[RESTART_BEFORE:])]
    for n, t0, t1, counted in spans:
        firsts = {}
        raw = prom.query(f'{{__name__=~"{families}",{sel}}}[{int(t1 - t0) + (5 if n == 1 else 1)}s]', t1)
        for s in raw["data"]["result"]:
            m = s["metric"]
            firsts[(m["__name__"], m.get("job_group", ""), m.get("status", ""), m.get("le", ""))] = float(s["values"][0][1])
        born = {k: v for k, v in firsts.items() if v != 0}
        want_keys = {("spark_jobs_total", g, st, "") for lt in counted for g, st in lt["jobs"]}
        hists = sum(1 for k in firsts if k[0].startswith("spark_app_run_"))
        res.add(f"exporter {n}: every spark_jobs_total, spark_app_runs_total and run histogram name series was "
                f"first scraped at zero", firsts and hists and not born and want_keys <= set(firsts),
                f"{len(firsts)} series ({hists} of the histograms); non-zero first: {born}; "
                f"never scraped: {sorted(want_keys - set(firsts))}")

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
    check_history(prom, res, sel, logs, began, at)
    stop_all([current])


def run_log(events, t):
    """The event log of a run of part B (its truth-i.json `t`): a rolling eventlog_v2_ folder, zstd
    (Spark 4's default), or a single file."""
    path = os.path.join(events, f"eventlog_v2_{t['app_id']}")
    return path if os.path.isdir(path) else os.path.join(events, t["app_id"])


def run_duration(events, t):
    lt = log_truth(log_lines(run_log(events, t)))
    return (lt["end_ms"] - lt["start_ms"]) / 1e3


def check_history(prom, res, sel, logs, began, at):
    """Part B, 4: runs that regress (issue 36), by the shipped rules (NAME_RULES) in Prometheus.
    The raw samples of the whole part: ALERTS as each evaluation wrote it, and which run was the
    last one (spark_app_last_run_end_timestamp_seconds: Spark's end time of a run)."""
    span = f"{int(at - began) + 10}s"

    def raw(expr):
        r = prom.query(f"{expr}[{span}]", at)
        if r.get("status") != "success":
            raise RuntimeError(f"{expr}: {r.get('error')}")
        return r["data"]["result"]

    starts = [lt["start_ms"] / 1e3 for lt in logs]
    ends = [lt["end_ms"] / 1e3 for lt in logs]
    durations = [e - s for s, e in zip(starts, ends)]
    rel = lambda t: f"{t - ends[SLOW]:+.1f} s"  # noqa: E731 (time from the slow run's end)

    # Every rule loaded and evaluated without error.
    groups = prom.api("rules").get("data", {}).get("groups", [])
    rules = [r for g in groups for r in g["rules"]]
    bad = [(r.get("name"), r.get("lastError")) for r in rules if r.get("health") != "ok"]
    res.add(f"Prometheus evaluates the shipped rules ({', '.join(NAME_RULES)}) every {NAME_INTERVAL} s, none unhealthy",
            rules and not bad, f"{len(rules)} rules in {len(groups)} groups; unhealthy: {bad[:3]}")

    gauge = sorted((float(t), float(v)) for s in raw(f"spark_app_last_run_end_timestamp_seconds{{{sel}}}")
                   for t, v in s["values"])

    def last_run(t):
        """The index of the run the gauge named last at time t (None: no sample yet, -1: a value
        that is no run's end)."""
        v = None
        for ts, val in gauge:
            if ts > t:
                break
            v = val
        if v is None:
            return None
        k = min(range(len(ends)), key=lambda j: abs(ends[j] - v))
        return k if abs(ends[k] - v) < 0.01 else -1

    median_before = statistics.median(durations[:SLOW])
    for alert, what, gauge_name, median in (
            ("SparkRunSlowerThanUsual", "duration", "spark_app_last_run_duration_seconds",
             "spark_app_name:run_duration_seconds:history_median"),
            ("SparkRunCostlierThanUsual", "core-seconds", "spark_app_last_run_core_seconds",
             "spark_app_name:run_core_seconds:history_median")):
        times = sorted(float(t) for s in raw(f'ALERTS{{alertname="{alert}",alertstate="firing",{sel}}}')
                       for t, _ in s["values"])
        # An evaluation right after a scrape may not see that scrape's samples yet: one that fired
        # while the gauge had just turned from the slow run to the next one still saw the slow run.
        slow = [t for t in times if SLOW in (last_run(t), last_run(t - 1.5 * NAME_INTERVAL))]
        other = sorted({last_run(t) for t in times if t not in slow}, key=str)
        ratio = scalar(prom, f"max({gauge_name}{{{sel}}}) / max({median}{{{sel}}})", slow[0]) if slow else None
        res.add(f"{alert} fired for {APP_NAME} while the slow run {SLOW + 1} was the last one, never while "
                f"another was", slow and not other,
                f"{len(slow)} firing evaluations from {rel(slow[0]) if slow else '-'} to {rel(slow[-1]) if slow else '-'} "
                f"after the slow run's end (the next run ended at {rel(ends[SLOW + 1]) if SLOW + 1 < len(ends) else '-'}); "
                f"fired while run(s) {[k + 1 if isinstance(k, int) and k >= 0 else k for k in other]} were last: "
                f"{len(times) - len(slow)} evaluations; {what} last run / median at the first firing {ratio and round(ratio, 2)}; slow run "
                f"{durations[SLOW]:.1f} s, median of the {SLOW} runs before {median_before:.1f} s")

    # SparkNewFindingKind: for the slow run's new kind, never for the kinds the runs before had.
    before = {s["metric"].get("kind") for s in raw(f"spark_diagnosis_findings_total{{{sel}}}")
              if any(float(t) < starts[SLOW] and float(v) > 0 for t, v in s["values"])}
    fired = {}
    for s in raw(f'ALERTS{{alertname="SparkNewFindingKind",alertstate="firing",{sel}}}'):
        fired.setdefault(s["metric"].get("kind"), []).extend(float(t) for t, _ in s["values"])
    new = sorted(fired.get(NEW_KIND, []))
    res.add(f"SparkNewFindingKind fired for {APP_NAME}'s new kind {NEW_KIND} (the slow run's skewed stage), never "
            f"for a kind the runs before it had", new and new[0] > starts[SLOW] and before
            and NEW_KIND not in before and not set(fired) & before,
            f"kinds before the slow run: {sorted(before)}; fired: "
            f"{ {k: f'{len(v)} evaluations from {rel(min(v))} to {rel(max(v))}' for k, v in fired.items()} } "
            f"(relative to the slow run's end; it started at {rel(starts[SLOW])})")

    # The history median: within the bucket error of the true median of the runs' durations.
    med = scalar(prom, f"spark_app_name:run_duration_seconds:history_median{{{sel}}}", at)
    true = statistics.median(durations)
    res.add(f"spark_app_name:run_duration_seconds:history_median is within {BUCKET_ERROR:.1%} (the bucket "
            f"error) of the true median of the {len(logs)} runs' durations (end - start)",
            med is not None and abs(med / true - 1) <= BUCKET_ERROR,
            f"{med} vs {true:.3f} s (durations {[round(d, 1) for d in durations]}); core-seconds median "
            f"{scalar(prom, f'spark_app_name:run_core_seconds:history_median{{{sel}}}', at)}")
    count = scalar(prom, f"spark_app_name:runs:history_count{{{sel}}}", at)
    res.add(f"spark_app_name:runs:history_count = the {len(logs)} runs (across the restart)",
            count is not None and round(count) == len(logs), f"{count}")


# --- C. checkpoints ------------------------------------------------------------------------------

CKPT_INTERVAL = 1   # Prometheus scrapes every second
CKPT_LOGS = 30      # logs in the folder before the first start
CKPT_SEED = 34      # --seed: which shards restart, when, and how many logs come meanwhile
# The 30 first runs ended an hour before the start (summarised as they are read, as a fleet reads a
# store of old logs); the later ones end as they are added and keep their detail for
# CKPT_SUMMARY_AFTER seconds: checkpoints hold both kinds, and the passage from one to the other.
CKPT_OLD = 3600
CKPT_SUMMARY_AFTER = 10
CKPT_HANDOVER = "this shard's part of the previous shards' checkpoints"
# A SIGKILL waits until the shard's checkpoint file is this much newer than the last log added
# (discovery every 1 s, a checkpoint every 1 s): what it had read is then in its checkpoint.
CKPT_KILL_MARGIN = 2.5
# The counter families checked, with the labels (beside app_id, or app_name in name mode) the
# logs' truth is keyed by.
CKPT_FAMILIES = {"spark_jobs_total": ("job_group", "status"), "spark_stages_total": ("status",),
                 "spark_tasks_total": ("status",)}
CKPT_RUNS = "spark_app_runs_total"  # name mode: by ("status",)
# One pass per mode: (name, the label series are keyed by, extra exporter flags).
CKPT_MODES = [("runs", "app_id", ()), ("names", "app_name", ("--model.aggregate-by=app_name",))]
# The restarts of a pass, in order: the signals sent to one or two shards at once (which shards,
# when, and how many new logs arrive while they are down: the seed), and the reshard 3 -> 2 -> 3.
CKPT_PLAN = [("TERM",), ("KILL",), ("TERM", "KILL"), "reshard", ("KILL",), ("TERM",)]


def ckpt_names():
    """6 application names, 2 in each of the 3 shards (XXH32(name) mod 3), both of the 2 shards
    holding some: every shard of both layouts owns names."""
    names, per = [], [0, 0, 0]
    k = 0
    while len(names) < 6:
        n = f"nightly-report-{k}"
        k += 1
        if per[xxh32(n.encode()) % 3] < 2:
            per[xxh32(n.encode()) % 3] += 1
            names.append(n)
    assert {xxh32(n.encode()) % 2 for n in names} == {0, 1}
    return names


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


class CheckpointPass:
    """One mode's fleet: its event-log folder, its shared checkpoint folder, its shards (3, or 2
    during the reshard) and what it added when."""

    def __init__(self, a, tmp, res, procs, prom, mode, key, extra, ports, rng, names, ct):
        self.a, self.res, self.procs, self.prom, self.rng, self.names = a, res, procs, prom, rng, names
        self.ct = ct  # Prometheus ingests created timestamps (no _created series)
        self.mode, self.key, self.extra, self.ports = mode, key, extra, ports
        self.job = f"ckpt-{mode}"
        self.tmp = tmp
        self.folder = os.path.join(tmp, f"ckpt-{mode}-logs")
        self.staging = os.path.join(tmp, f"ckpt-{mode}-staging")
        self.ckpt = os.path.join(tmp, f"ckpt-{mode}-checkpoints", "state")
        for d in (self.folder, self.staging, os.path.dirname(self.ckpt)):
            os.makedirs(d)
        # One histogram bucket each, as in part A: a 1 s scrape of a debug build stays well
        # below its 1 s timeout on 2 cores.
        self.config = os.path.join(tmp, "ckpt-exporter.yml")
        with open(self.config, "w") as f:
            f.write("histograms:\n  duration_buckets: [60]\n  task_duration_buckets: [1]\n")
        text = open(SOURCE_LOG).read()
        lines = [line for line in text.splitlines() if line.strip()]
        start = next(json.loads(line) for line in lines if '"SparkListenerApplicationStart"' in line)
        end = next(json.loads(line) for line in lines if '"SparkListenerApplicationEnd"' in line)
        self.src = (text, start["App ID"], start["App Name"], end["Timestamp"])
        self.truth = log_truth(lines)
        self.logs = []          # {"app_id", "app_name", "size", "at", "when"}
        self.shards = {}        # index -> Proc, the current layout's
        self.started = {}       # index -> when it was ready
        self.handovers = []     # (first SIGTERM, every new shard ready) of each reshard
        self.n = 0
        self.restarts = 0
        self.base = {"runs": 1797100000000, "names": 1797200000000}[mode]

    # -- logs ------------------------------------------------------------------------------------

    def owner(self, log, count=3):
        return xxh32(log[self.key].encode()) % count

    def reads(self, i, log, count=3):
        """Whether shard i reads this log: by id, its owner only; by name, every shard (a log's
        name is known once it is read)."""
        return self.mode == "names" or self.owner(log, count) == i

    def add_log(self, owner=None, when="down"):
        """A new finished run, written atomically (beside the folder, then renamed into it: a
        half-written single-file log without .inprogress would be a finished one), that ended
        just now (the initial ones CKPT_OLD ago); with `owner`, one that shard `owner` of 3
        holds. `when`: "initial" (before the first start), "down" (while shards are down) or "up"
        (while all are up)."""
        while True:
            app_id = f"local-{self.base + self.n * 7919:013d}"
            self.n += 1
            if self.mode == "names":
                pick = [m for m in self.names if owner is None or xxh32(m.encode()) % 3 == owner]
                name = self.rng.choice(pick)
            else:
                name = self.rng.choice(self.names)
            if self.mode == "names" or owner is None or xxh32(app_id.encode()) % 3 == owner:
                break
        text, src_id, src_name, src_end = self.src
        end = time.time() - (CKPT_OLD if when == "initial" else 0)
        copy = log_copy(text, src_id, app_id, (src_name, name), int(end * 1000) - src_end)
        tmp = os.path.join(self.staging, app_id)
        with open(tmp, "w") as f:
            f.write(copy)
        os.rename(tmp, os.path.join(self.folder, app_id))
        log = {"app_id": app_id, "app_name": name, "size": len(copy.encode()), "at": time.time(), "when": when}
        self.logs.append(log)
        return log

    # -- shards ----------------------------------------------------------------------------------

    def start(self, i, count):
        self.restarts += 1
        port = self.ports[count][i]
        p = Proc(f"ckpt-{self.mode}-{i}-of-{count}-{self.restarts}",
                 [self.a.exporter, f"--web.listen-address=127.0.0.1:{port}", "--spark.url=",
                  f"--config.file={self.config}", f"--event-log.dir={self.folder}", f"--shard.count={count}", f"--shard.index={i}",
                  f"--checkpoint.path={self.ckpt}", "--checkpoint.interval=1s", "--web.openmetrics-created",
                  "--lifecycle.drain-scrapes=0", "--lifecycle.grace-period=10s", "--model.app-retention=24h",
                  f"--model.summary-after={CKPT_SUMMARY_AFTER}s",
                  *self.extra], self.tmp)
        self.procs.append(p)
        self.shards[i] = p
        return p

    def ready(self, i, count):
        """Wait for /readyz?complete: every log present at start read."""
        p, port = self.shards[i], self.ports[count][i]
        wait_for(lambda: p.p.poll() is not None or http_status(f"http://127.0.0.1:{port}/readyz?complete") == 200,
                 60, f"{p.name} ready")
        if p.p.poll() is not None:
            raise RuntimeError(f"{p.name} exited {p.p.returncode}: {p.tail(5)}")
        self.started[i] = time.time()

    def own_metrics(self, i, count):
        """(event-log bytes read, checkpoint loads by result) from the shard's own /metrics."""
        body = http_get(f"http://127.0.0.1:{self.ports[count][i]}/metrics")
        read, loads = None, {}
        for line in body.splitlines():
            if line.startswith("spark_exporter_eventlog_bytes_total "):
                read = float(line.split()[1])
            elif line.startswith("spark_exporter_checkpoint_loads_total{"):
                loads[line.split('result="')[1].split('"')[0]] = float(line.split()[-1])
        return read, loads

    def ckpt_file(self, i, count=3):
        return f"{self.ckpt}.{i}-of-{count}"

    def stop(self, i, sig):
        """SIGTERM (the drain ends with a checkpoint) or SIGKILL (the last periodic one stays):
        a SIGKILL comes once the shard's checkpoint is CKPT_KILL_MARGIN newer than the last log."""
        p = self.shards[i]
        if sig == "KILL":
            last = max((log["at"] for log in self.logs), default=0)
            wait_for(lambda: os.path.getmtime(self.ckpt_file(i)) >= max(last + CKPT_KILL_MARGIN, self.started[i] + 1.5),
                     30, f"a checkpoint of {p.name} newer than the last log")
        os.killpg(p.p.pid, signal.SIGTERM if sig == "TERM" else signal.SIGKILL)
        p.p.wait(30)
        return p.p.returncode

    def scraped(self, count, since, scrapes=2):
        """Wait until Prometheus scraped every shard of the layout `scrapes` times after `since`."""
        def seen():
            got = vector(self.prom, f'timestamp(up{{job="{self.job}",shard=~".*/{count}"}} == 1)', ("shard",))
            return len(got) == count and min(got.values()) >= since + (scrapes - 0.5) * CKPT_INTERVAL
        wait_for(seen, 30, f"Prometheus scraped the {count} {self.mode} shards")

    # -- the pass ---------------------------------------------------------------------------------

    def restart(self, k, sigs):
        idx = self.rng.sample(range(3), len(sigs))
        codes = {i: self.stop(i, s) for i, s in zip(idx, sigs)}
        down = time.time()
        # New runs end while they are down: one each of the down shards holds, maybe more.
        added = [self.add_log(owner=i) for i in idx]
        added += [self.add_log() for _ in range(self.rng.randint(0, 2))]
        time.sleep(self.rng.uniform(0.3, 1.5))
        for i in idx:
            self.start(i, 3)
        for i, s in zip(idx, sigs):
            self.ready(i, 3)
            read, loads = self.own_metrics(i, 3)
            new = [log for log in added if self.reads(i, log)]
            want = float(sum(log["size"] for log in new))
            old = [log for log in self.logs if log["at"] < down and self.reads(i, log)]
            ok = read == want and loads.get("loaded") == 1.0 and (s == "KILL" or codes[i] == 0)
            self.res.add(f"{self.mode}: restart {k}, shard {i}/3 after SIG{s}: checkpoint loaded, "
                         f"read only the {len(new)} logs that ended while it was down, none of its "
                         f"{len(old)} finished ones", ok,
                         f"exit {codes[i]}, read {read:.0f} bytes, new logs {want:.0f}, loads {loads}")
        return idx, down

    def reshard(self):
        """3 -> 2 -> 3: all three stop (SIGTERM), two start with --shard.count 2 and load their part
        of the three's checkpoints, get scraped, count two more runs, stop; three start again."""
        for count, new in ((3, 2), (2, 3)):
            ok = True
            handover = [time.time()]
            old = dict(self.shards)
            codes = {}
            for i, p in old.items():
                os.killpg(p.p.pid, signal.SIGTERM)
            for i, p in old.items():
                p.p.wait(30)
                codes[i] = p.p.returncode
            self.shards = {}
            for i in range(new):
                self.start(i, new)
            details = []
            for i in range(new):
                self.ready(i, new)
                read, loads = self.own_metrics(i, new)
                line = CKPT_HANDOVER in open(self.shards[i].log).read()
                ok = ok and line and read == 0.0 and loads.get("loaded") == 1.0
                details.append(f"{i}/{new}: handover line {'yes' if line else 'NO'}, read {read:.0f} bytes, loads {loads}")
            self.handovers.append((handover[0], time.time()))
            self.res.add(f"{self.mode}: reshard {count} -> {new}: the {count} exit 0, each new shard logs "
                         f"\"{CKPT_HANDOVER}\" and reads no finished log again",
                         all(c == 0 for c in codes.values()) and ok, f"exits {codes}; " + "; ".join(details))
            if new == 2:
                since = time.time()
                self.scraped(2, since, 3)
                want = float(sum(self.truth["job_ends"] for log in self.logs if self.counted(log)))
                total = f'sum(spark_jobs_total{{job="{self.job}",shard=~".*/2"}})'
                try:
                    wait_for(lambda: scalar(self.prom, total) == want, 10, "the 2 shards' job total")
                except TimeoutError:
                    pass
                got = scalar(self.prom, total)
                self.res.add(f"{self.mode}: with 2 shards, scraped 3 times, sum(spark_jobs_total) = the fleet's "
                             f"{want:.0f} before the reshard", got == want, f"{got}")
                # Two runs end while the 2 shards are up, counted by them, then handed back to 3.
                added = [self.add_log(when="up"), self.add_log(when="up")]
                wait_for(lambda: all(self.own_metrics(i, 2)[0] >= sum(log["size"] for log in added if self.reads(i, log, 2))
                                     for i in range(2)), 30, "the 2 shards read the 2 new logs")
                self.scraped(2, time.time(), 2)

    def counted(self, log):
        """Whether the run is in the fleet's counters: every run by id; by name, the runs that
        ended after the fleet first started (the 30 in the folder before it are not counted)."""
        return self.mode == "runs" or log["when"] != "initial"

    def run(self):
        print(f"e2e-fleet: checkpoints, {self.mode} mode: {CKPT_LOGS} logs, then 3 shards", flush=True)
        for _ in range(CKPT_LOGS):
            self.add_log(when="initial")
        time.sleep(0.05)  # the runs ended before the exporters started (name mode: not counted)
        began = time.time()
        for i in range(3):
            self.start(i, 3)
        for i in range(3):
            self.ready(i, 3)
        self.scraped(3, time.time(), 2)
        k = 0
        for step in CKPT_PLAN:
            time.sleep(self.rng.uniform(1.5, 3.0))
            if step == "reshard":
                self.reshard()
                continue
            k += 1
            idx, _ = self.restart(k, step)
            print(f"e2e-fleet: {self.mode}: restart {k}: shards {idx} after {'/'.join('SIG' + s for s in step)}, "
                  f"{len(self.logs)} logs now", flush=True)
        # The end: every shard up, every log read, scraped a few times.
        for i in range(3):
            self.ready(i, 3)

        def settled():
            now = [self.own_metrics(i, 3)[0] for i in range(3)]
            time.sleep(1.5)
            return now == [self.own_metrics(i, 3)[0] for i in range(3)]
        wait_for(settled, 30, "the shards read every log")
        self.scraped(3, time.time(), 3)
        # The time of the last scrape, once the last 3 of every shard succeeded (a failed one would
        # mark its series stale).
        ups = f'min_over_time(up{{job="{self.job}",shard=~".*/3"}}[{3 * CKPT_INTERVAL}s])'
        wait_for(lambda: list(vector(self.prom, ups, ("shard",)).values()) == [1.0] * 3, 30, "3 good scrapes")
        at = max(vector(self.prom, f'timestamp(up{{job="{self.job}",shard=~".*/3"}})', ("shard",)).values())
        self.check(began, at)

    # -- the assertions ---------------------------------------------------------------------------

    def check(self, began, at):
        res, job, key = self.res, self.job, self.key
        window = f"{int(at - began) + 5}s"
        counted = [log for log in self.logs if self.counted(log)]
        added = [log for log in self.logs if log["when"] != "initial"]
        print(f"e2e-fleet: {self.mode}: {len(self.logs)} logs ({len(added)} added during the run, "
              f"{sum(1 for log in added if log['when'] == 'down')} of them while shards were down), "
              f"{len(counted)} runs counted; window {window} at {at:.3f}", flush=True)
        families = dict(CKPT_FAMILIES)
        if self.mode == "names":
            families[CKPT_RUNS] = ("status",)
        regex = "|".join(families)
        # 1. resets() over the whole run, per series (instance included).
        resets = {fam: scalar(self.prom, f'sum(resets({fam}{{job="{job}"}}[{window}]))', at) for fam in families}
        series = {fam: scalar(self.prom, f'count(count_over_time({fam}{{job="{job}"}}[{window}]))', at) for fam in families}
        res.add(f"{self.mode}: resets() over the whole run is 0 for every series of {', '.join(families)}",
                all(v == 0.0 for v in resets.values()) and all(series.values()),
                f"sum(resets()) {resets}; series (with their instance) {series}")
        # 2. Raw samples: a series (labels without instance and shard) moves between instances at a
        # reshard; across all its instances, in time order, it never goes down, and it is never on
        # two instances at once.
        stitched = {}
        for fam in families:
            r = self.prom.query(f'{fam}{{job="{job}"}}[{window}]', at)
            for s in r["data"]["result"]:
                labels = tuple(sorted((n, v) for n, v in s["metric"].items() if n not in ("instance", "shard")))
                stitched.setdefault(labels, {})[s["metric"]["instance"]] = [(float(t), float(v)) for t, v in s["values"]]
        down, overlap, moved = [], [], 0
        for labels, by_instance in stitched.items():
            moved += len(by_instance) > 1
            # An instance's stretches of consecutive scrapes (a gap: it was down, or held none).
            spans = []
            for inst, samples in by_instance.items():
                if self.ct:  # the zero sample Prometheus adds at a series' _created time
                    samples[:] = [x for x in samples if x[1] != 0] or samples[-1:]
                first = samples[0][0]
                for (t0, _), (t1, _) in zip(samples, samples[1:]):
                    if t1 - t0 > 1.6 * CKPT_INTERVAL:
                        spans.append((first, t0, inst))
                        first = t1
                spans.append((first, samples[-1][0], inst))
            if any(a[2] != b[2] and a[0] <= b[1] and b[0] <= a[1] for a in spans for b in spans):
                overlap.append(dict(labels))
            merged = sorted(x for samples in by_instance.values() for x in samples)
            drops = [(t1, x, y) for (_, x), (t1, y) in zip(merged, merged[1:]) if y < x]
            if drops:
                down.append((dict(labels), drops[:2]))
        res.add(f"{self.mode}: raw samples: no series ever lower than before, across restarts and the instances "
                f"it moved between, never on two instances at once", stitched and not down and not overlap,
                f"{len(stitched)} series, {moved} on more than one instance; down {down[:2]}; overlap {overlap[:2]}")
        # 3. _created kept: one value per series over the whole run.
        created = {}
        r = self.prom.query(f'{{__name__=~"{regex.replace("_total", "_created")}",job="{job}"}}[{window}]', at)
        for s in r["data"]["result"]:
            labels = tuple(sorted((n, v) for n, v in s["metric"].items() if n not in ("instance", "shard")))
            created.setdefault(labels, set()).update(float(v) for _, v in s["values"])
        changed = [dict(k) for k, v in created.items() if len(v) > 1]
        if created or not self.ct:
            res.add(f"{self.mode}: every series' _created is the same over the whole run", created and not changed,
                    f"{len(created)} _created series; changed: {changed[:2]}")
        else:
            print(f"e2e-fleet: {self.mode}: no _created series (created timestamps ingested), not checked", flush=True)
        # 4. The numbers are the logs': the fleet's sum at the last scrape (every series was born
        # during the run and never reset, so its last value is its increase over the run).
        for fam, labels in families.items():
            want = {}
            for log in counted:
                if fam == CKPT_RUNS:
                    items = {("succeeded",): 1}
                else:
                    src = {"spark_jobs_total": self.truth["jobs"], "spark_stages_total": self.truth["stages"],
                           "spark_tasks_total": self.truth["tasks"]}[fam]
                    items = {(k if isinstance(k, tuple) else (k,)): n for k, n in src.items()}
                for k, n in items.items():
                    want[(log[key],) + k] = want.get((log[key],) + k, 0.0) + n
            by = (key,) + labels
            got = nonzero(vector(self.prom, f'sum by ({", ".join(by)}) ({fam}{{job="{job}"}})', by, at))
            want = nonzero(want)
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            res.add(f"{self.mode}: sum without (instance) ({fam}) by ({', '.join(by)}) = the logs'"
                    + (" (runs by name: the logs per name that ended after the first start)" if fam == CKPT_RUNS else ""),
                    got == want, f"{len(want)} series, total {sum(got.values()):.0f} vs {sum(want.values()):.0f}"
                    + (f"; differ: {[(k, got.get(k), want.get(k)) for k in diff[:3]]}" if diff else ""))
        if self.mode == "names":
            names = {k[0] for k in vector(self.prom, f'count by (app_name) (spark_jobs_total{{job="{job}"}})', ("app_name",), at)}
            res.add(f"{self.mode}: every name has series; the {CKPT_LOGS} runs that ended before the first start are not counted",
                    names == set(self.names), f"{sorted(names)}")
        during = [log["app_id"] for log in self.logs if any(t0 <= log["at"] <= t1 for t0, t1 in self.handovers)]
        print(f"e2e-fleet: {self.mode}: runs that ended during a reshard handover (which may be lost): "
              f"{len(during)} {during} (logs are added only while some shards are up)", flush=True)


def run_checkpoints(a, tmp, res, procs):
    rng = random.Random(a.seed)
    print(f"e2e-fleet: checkpoints, random seed {a.seed} (--seed)", flush=True)
    version = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    version = (version.stdout + version.stderr).splitlines()[0]
    helptext = subprocess.run(["prometheus", "--help"], capture_output=True, text=True)
    ct = "created-timestamp-zero-ingestion" in helptext.stdout + helptext.stderr
    flags = ["--enable-feature=created-timestamp-zero-ingestion"] if ct else []
    names = ckpt_names()
    ports = {m: {3: [free_port() for _ in range(3)], 2: [free_port() for _ in range(2)]} for m, _, _ in CKPT_MODES}
    keep = "spark_(jobs|stages|tasks|app_runs)_(total|created)|spark_exporter_(eventlog_bytes_total|checkpoint_.*)"
    scrape = "".join(
        f"  - job_name: ckpt-{m}\n    metric_relabel_configs:\n      - source_labels: [__name__]\n"
        f"        regex: '{keep}'\n        action: keep\n    static_configs:\n" +
        "".join(f"      - targets: [\"127.0.0.1:{p}\"]\n        labels: {{shard: \"{i}/{n}\"}}\n"
                for n, ps in ports[m].items() for i, p in enumerate(ps))
        for m, _, _ in CKPT_MODES)
    prom = start_prometheus(tmp, procs, "prometheus-checkpoints", scrape, CKPT_INTERVAL, flags)
    print(f"e2e-fleet: {version}; flags {' '.join(procs[-1].p.args[1:])}; scrape_interval {CKPT_INTERVAL}s, "
          f"OpenMetrics with _created; created-timestamp-zero-ingestion: "
          f"{'on' if ct else 'not supported by this version (_created scraped as series of their own)'}", flush=True)
    for mode, key, extra in CKPT_MODES:
        p = CheckpointPass(a, tmp, res, procs, prom, mode, key, extra, ports[mode], rng, names, ct)
        p.run()
        stop_all(list(p.shards.values()))


def main():
    return e2e_main("e2e-fleet", __doc__,
                    [("shards", run_shards), ("names", run_names), ("checkpoints", run_checkpoints)],
                    flags=lambda ap: ap.add_argument("--seed", type=int, default=CKPT_SEED,
                                                     help="part C's random seed (which shards restart, when)"),
                    tools=("prometheus", "zstd"),
                    modules=lambda a: () if a.only in ("shards", "checkpoints") else ("pyspark",))

if __name__ == "__main__":
    sys.exit(main())
