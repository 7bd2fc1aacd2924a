#!/usr/bin/env python3
"""Times the Spark History Server replaying event logs (helper of scripts/hs-bench.sh).

Starts a real History Server (`java -cp "$PYSPARK/jars/*" org.apache.spark.deploy.history.
HistoryServer`) on an empty log folder, with `spark.history.fs.update.interval=1s` and no
`spark.history.store.path` (so an application's UI is replayed into memory). Once its REST API
answers, for each LOG given, in order, in the same JVM:

  t0        the log is hard-linked into the log folder (nothing of it was read before);
  listed    the first `GET /api/v1/applications` that lists its application id (the provider's
            scan, every 1 s, parsed it for listing data: start, then the end event);
  replayed  `GET /api/v1/applications/<id>/jobs` returns all EXPECTED_JOBS jobs. The first such
            request makes the History Server load the application's UI, i.e. replay the whole
            log through its listeners into the in-memory store; the request returns when that
            replay is done. It is issued right after `listed`.

The first log replayed in a JVM runs with a cold JIT ("cold"), later ones with a warm one
("warm"). After timing, the replay is checked: the stages' complete tasks sum to EXPECTED_TASKS.
CPU is the JVM's user + system time (/proc/<pid>/stat) over t0..replayed. Prints one JSON line
per log. The JVM is stopped at the end.

Usage: hs-bench-replay.py --jars DIR --work DIR --heap 4g --expected-jobs N --expected-tasks N
                          LOG:APP_ID [LOG:APP_ID ...]
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--jars", required=True, help="pyspark's jars/ folder")
ap.add_argument("--work", required=True, help="scratch folder (log folder, History Server log)")
ap.add_argument("--heap", default="4g", help="-Xmx of the History Server JVM")
ap.add_argument("--expected-jobs", type=int, required=True)
ap.add_argument("--expected-tasks", type=int, required=True)
ap.add_argument("logs", nargs="+", help="LOG:APP_ID, replayed in this order")
a = ap.parse_args()

CLK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=3600):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK  # utime, stime


logdir = os.path.join(a.work, "logs")
os.makedirs(logdir, exist_ok=True)
for n in os.listdir(logdir):
    os.unlink(os.path.join(logdir, n))
port = free_port()
base = f"http://127.0.0.1:{port}/api/v1"
hs_log = open(os.path.join(a.work, "history-server.log"), "w")
hs = subprocess.Popen(
    [
        "java", f"-Xmx{a.heap}", "-cp", os.path.join(a.jars, "*"),
        f"-Dspark.history.fs.logDirectory=file:{os.path.abspath(logdir)}",
        "-Dspark.history.fs.update.interval=1s",
        f"-Dspark.history.ui.port={port}",
        "org.apache.spark.deploy.history.HistoryServer",
    ],
    stdout=hs_log, stderr=subprocess.STDOUT, start_new_session=True,
)
try:
    t_start = time.time()
    while True:
        try:
            get(base + "/version", timeout=2)
            break
        except OSError:
            if hs.poll() is not None or time.time() - t_start > 120:
                sys.exit(f"History Server did not start; see {hs_log.name}")
            time.sleep(0.2)
    print(f"hs-bench: History Server up in {time.time() - t_start:.1f}s on port {port}",
          file=sys.stderr, flush=True)
    for i, spec in enumerate(a.logs):
        path, app = spec.rsplit(":", 1)
        name = os.path.basename(path)
        c0, t0 = cpu_s(hs.pid), time.time()
        os.link(path, os.path.join(logdir, name))
        while not any(x["id"] == app for x in get(base + "/applications")):
            time.sleep(0.05)
        t_listed = time.time()
        jobs = []
        while len(jobs) != a.expected_jobs:
            jobs = get(f"{base}/applications/{app}/jobs")
            if len(jobs) != a.expected_jobs:
                time.sleep(0.05)
        t_replayed, c1 = time.time(), cpu_s(hs.pid)
        stages = get(f"{base}/applications/{app}/stages?details=false")
        tasks = sum(s["numCompleteTasks"] for s in stages)
        if tasks != a.expected_tasks:
            sys.exit(f"{name}: History Server shows {tasks} complete tasks, expected {a.expected_tasks}")
        print(json.dumps({
            "log": name,
            "jit": "cold" if i == 0 else "warm",
            "listed_s": round(t_listed - t0, 3),
            "replay_request_s": round(t_replayed - t_listed, 3),
            "total_s": round(t_replayed - t0, 3),
            "cpu_s": round(c1 - c0, 2),
            "jobs": len(jobs),
            "tasks": tasks,
        }), flush=True)
finally:
    os.killpg(hs.pid, signal.SIGTERM)
    try:
        hs.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(hs.pid, signal.SIGKILL)
        hs.wait()
