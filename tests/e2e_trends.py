#!/usr/bin/env python3
"""End-to-end: job-duration trends across runs (issue 13).

    python3 tests/e2e_trends.py [--keep]

A real Prometheus (Debian's) scrapes every 5 s, with the shipped rules
(alerts/spark-exporter.rules.yml) evaluated every 5 s, one real exporter that follows three
runs, one after another, of the same PySpark application (tests/e2e_trends_workload.py: jobs of
about 6 s, longer than a scrape interval, in job groups `load` and `report`, a different number
of jobs per run) through the driver UI and the event logs.

Asserts, per run (app_id) and job group, against what Spark's own REST API reported:
  1. spark_app_job_group:job_duration_seconds:sum is one series per run and group, equal to the
     sum of the jobs' durations (completion - submission)
  2. spark_app_job_group:job_duration_seconds:count equals the number of jobs, and
     spark_app_job_group:job_duration_seconds:mean equals sum / count
  3. round(increase(spark_jobs_total[run])) equals the number of jobs: the counter series exist
     at zero before the first job ends, so increase() sees every job
Prints one line per assertion; exit 1 if any failed, 2 if a prerequisite is missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, Prom, Results, e2e_main, free_port, wait_for  # noqa: E402

WORKLOAD = os.path.join(ROOT, "tests", "e2e_trends_workload.py")
RULES = os.path.join(ROOT, "alerts", "spark-exporter.rules.yml")
INTERVAL = 5
# Jobs per run: (load, report).
RUNS = [(1, 2), (2, 1), (1, 1)]
RULE = "spark_app_job_group:job_duration_seconds"


def spark_time(s):
    """Epoch seconds of a Spark REST time such as 2026-11-30T19:00:00.123GMT."""
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fGMT").replace(tzinfo=timezone.utc).timestamp()


def healthy(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def scalar_by(prom, expr, key, at):
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


def main():
    return e2e_main("e2e-trends", __doc__, run)



def run(a, tmp, res, procs):
    ui, exp_port, prom_port = free_port(), free_port(), free_port()
    events = os.path.join(tmp, "events")
    os.makedirs(events)
    exporter = Proc("exporter", [a.exporter, f"--web.listen-address=127.0.0.1:{exp_port}",
                                 f"--spark.url=http://127.0.0.1:{ui}", "--spark.poll-interval=1s",
                                 f"--event-log.dir={events}", "--lifecycle.grace-period=2s"], tmp)
    procs.append(exporter)
    wait_for(lambda: healthy(exp_port), 30, "exporter healthy")
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: {INTERVAL}s
  evaluation_interval: {INTERVAL}s
rule_files:
  - {RULES}
scrape_configs:
  - job_name: spark-exporter
    static_configs:
      - targets: ["127.0.0.1:{exp_port}"]
""")
    procs.append(Proc("prometheus", ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/prom-data",
                                     f"--web.listen-address=127.0.0.1:{prom_port}"], tmp))
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    wait_for(lambda: prom.api("status/buildinfo").get("status") == "success", 30, "Prometheus")

    runs = []
    for i, (load, report) in enumerate(RUNS):
        truth = os.path.join(tmp, f"truth-{i}.json")
        began = time.time()
        w = Proc(f"workload-{i}", [a.python, WORKLOAD, "--ui-port", str(ui), "--events", events,
                                   "--truth", truth, "--load", str(load), "--report", str(report)], tmp)
        procs.append(w)
        w.p.wait(300)
        res.add(f"run {i + 1} ended with exit 0", w.p.returncode == 0, f"exit {w.p.returncode}")
        t = json.load(open(truth))
        t["began"], t["ended"] = began, time.time()
        runs.append(t)
        print(f"e2e-trends: run {i + 1} {t['app_id']}: {len(t['jobs'])} jobs", flush=True)
    # Two scrapes and two evaluations after the last run.
    time.sleep(3 * INTERVAL)
    at = time.time()
    key = ("app_id", "job_group")
    sums = scalar_by(prom, f"last_over_time({RULE}:sum[30m])", key, at)
    counts = scalar_by(prom, f"last_over_time({RULE}:count[30m])", key, at)
    means = scalar_by(prom, f"last_over_time({RULE}:mean[30m])", key, at)
    ids = {t["app_id"] for t in runs}
    res.add("the per-run rules hold exactly the three runs",
            {k[0] for k in sums} == ids and {k[0] for k in counts} == ids, f"{sorted(sums)}")
    for n, t in enumerate(runs, 1):
        for group in ("load", "report"):
            jobs = [j for j in t["jobs"] if j["group"] == group]
            want_sum = sum(spark_time(j["completion"]) - spark_time(j["submission"]) for j in jobs)
            k = (t["app_id"], group)
            got = sums.get(k)
            res.add(f"run {n} {group}: total job seconds = Spark's", got is not None and abs(got - want_sum) < 1e-6,
                    f"{got} vs {want_sum:.3f}")
            res.add(f"run {n} {group}: job count = Spark's", counts.get(k) == len(jobs), f"{counts.get(k)} vs {len(jobs)}")
            ok = means.get(k) is not None and abs(means[k] - want_sum / len(jobs)) < 1e-6
            res.add(f"run {n} {group}: mean job seconds = Spark's", ok, f"{means.get(k)} vs {want_sum / len(jobs):.3f}")
        # From before the run's start to now: the run's series start at zero (born when its
        # first job started) and stay flat after its end.
        window = int(at - t["began"] + INTERVAL)
        expr = f'round(sum by (app_id, job_group) (increase(spark_jobs_total{{app_id="{t["app_id"]}"}}[{window}s])))'
        inc = scalar_by(prom, expr, key, at)
        for group in ("load", "report"):
            want = len([j for j in t["jobs"] if j["group"] == group])
            got = inc.get((t["app_id"], group))
            res.add(f"run {n} {group}: round(increase(spark_jobs_total)) over the run = {want}", got == want, f"{got}")


if __name__ == "__main__":
    sys.exit(main())
