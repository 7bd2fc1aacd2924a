"""The PySpark application of tests/e2e_drain.py: a short application whose last job fails.

    python tests/e2e_drain_workload.py --ui-port P --events DIR --truth FILE --go FILE [--hold S]

1. Job group `etl`: two jobs that succeed (an RDD sum and a DataFrame aggregation).
2. Prints READY and waits for the file --go (the test creates it right after a Prometheus scrape).
3. Job group `report`: one job whose task raises, so the job fails (local mode: no task retries).
4. Writes --truth: what Spark itself reports through its REST API, once every job has ended:
   jobs by (group, status) and tasks by (group, status), and when the failure was known.
5. Holds --hold seconds (so a REST poller at a 1 s interval can see the failure: REST samples,
   it cannot see what happens less than a poll before the driver goes), then stops Spark and
   exits. Event logs are written uncompressed, so the test can read the ApplicationEnd time.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import sparkwork  # noqa: E402

log = sparkwork.logger("drain-workload")


def fail_on_seven(x):
    if x == 7:
        raise ValueError("the report job fails on purpose")
    return x


def truth(sc, ui_port, groups):
    """Jobs and tasks by (group, status), as Spark's REST API reports them, once no job of
    `groups` is running any more (the status store is fed by the listener bus, a little behind).
    Tasks are the jobs' completed, failed and killed tasks (no stage is shared between jobs)."""
    url = f"http://127.0.0.1:{ui_port}/api/v1/applications/{sc.applicationId}/jobs"
    deadline = time.time() + 30
    while True:
        with urllib.request.urlopen(url, timeout=10) as r:
            data = json.load(r)
        jobs, tasks, running = {}, {}, False
        for j in data:
            g = j.get("jobGroup", "")
            if g not in groups:
                continue
            status = j["status"].lower()
            running |= status not in ("succeeded", "failed") or j["numActiveTasks"] > 0
            key = f"{g}\t{status}"
            jobs[key] = jobs.get(key, 0) + 1
            for s, n in (("succeeded", j["numCompletedTasks"]), ("failed", j["numFailedTasks"]),
                         ("killed", j["numKilledTasks"])):
                if n:
                    tasks[f"{g}\t{s}"] = tasks.get(f"{g}\t{s}", 0) + n
        if not running or time.time() > deadline:
            return {"jobs": jobs, "tasks": tasks, "running": running}
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ui-port", type=int, required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--go", required=True)
    ap.add_argument("--hold", type=float, default=1.5)
    a = ap.parse_args()
    sparkwork.exit_with_parent(log)
    spark = sparkwork.session("local[2]", "drain-e2e", ui_port=a.ui_port, event_log_dir=a.events,
                              loopback=True, conf=[("spark.eventLog.compress", "false"),
                                                   ("spark.ui.retainedJobs", "100")])
    sc = spark.sparkContext
    log(f"application {sc.applicationId}")

    sparkwork.set_group(sc, "etl", "load orders")
    sc.parallelize(range(1000), 4).map(lambda x: x * 2).sum()
    sparkwork.set_group(sc, "etl", "aggregate orders")
    spark.range(0, 20000, 1, 4).selectExpr("id % 10 AS k").groupBy("k").count().collect()
    print("READY", flush=True)
    if not sparkwork.wait_for_file(a.go, 180):
        log("no go file; exiting")
        sys.exit(3)

    sparkwork.set_group(sc, "report", "publish report")
    try:
        sc.parallelize(range(8), 2).map(fail_on_seven).collect()
        log("the report job did not fail")
        sys.exit(4)
    except Exception as e:  # noqa: BLE001 (Py4J wraps the task's error)
        log(f"the report job failed as planned: {type(e).__name__}")
    t = truth(sc, a.ui_port, ["etl", "report"])
    t["failed_known_ms"] = int(time.time() * 1000)
    t["app_id"] = sc.applicationId
    sparkwork.write_json(a.truth, t)
    log(f"truth {t}")
    time.sleep(a.hold)
    spark.stop()
    log("stopped")


if __name__ == "__main__":
    main()
