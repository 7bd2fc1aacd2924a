"""One run of the PySpark application of tests/e2e_trends.py: jobs longer than a scrape interval,
in two job groups, so a chart across runs has something to show.

    python tests/e2e_trends_workload.py --ui-port P --events DIR --truth FILE --load N --report M

Runs N jobs in group `load` and M in group `report` (each task sleeps, so a job lasts about
6 s), then writes --truth: the application id, its start time, and every job as Spark's own REST
API reports it (group, status, submission and completion time), and stops.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import sparkwork  # noqa: E402
from groups import rest_job_group  # noqa: E402

log = sparkwork.logger("trends-workload")

JOB_SECONDS = 6


def slow(x):
    time.sleep(JOB_SECONDS)
    return x


def rest(ui_port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/api/v1/{path}", timeout=10) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ui-port", type=int, required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--load", type=int, required=True)
    ap.add_argument("--report", type=int, required=True)
    a = ap.parse_args()
    sparkwork.exit_with_parent(log)
    spark = sparkwork.session("local[2]", "trends-e2e", ui_port=a.ui_port, event_log_dir=a.events,
                              loopback=True)
    sc = spark.sparkContext
    app = sc.applicationId
    log(f"application {app}: {a.load} load job(s), {a.report} report job(s)")
    for group, n in (("load", a.load), ("report", a.report)):
        for i in range(n):
            sparkwork.set_group(sc, group, f"{group} step")
            sc.parallelize(range(2), 2).map(slow).count()
    # Spark's own account, once its status store has every job's end.
    deadline = time.time() + 30
    while True:
        jobs = rest(a.ui_port, f"applications/{app}/jobs")
        if all(j["status"] in ("SUCCEEDED", "FAILED") for j in jobs) or time.time() > deadline:
            break
        time.sleep(0.2)
    info = rest(a.ui_port, f"applications/{app}")
    sparkwork.write_json(a.truth, {
        "app_id": app,
        "start_ms": info["attempts"][0]["startTimeEpoch"],
        "jobs": [{"group": rest_job_group(j), "status": j["status"].lower(),
                  "submission": j["submissionTime"], "completion": j["completionTime"]} for j in jobs],
    })
    spark.stop()
    log("stopped")


if __name__ == "__main__":
    main()
