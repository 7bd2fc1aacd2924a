"""A real PySpark Structured Streaming application for the streaming fixture
(scripts/streaming-fixture.sh) and the streaming end-to-end test (tests/e2e_streaming.py).

Four queries on rate sources, local[2], 1 s processing-time triggers:
  windowed_counts  named; withWatermark + a windowed count (stateful, one state operator)
  (unnamed)        stateless projection, no name, no watermark
  slow_sink        named; foreachBatch that sleeps --slow-seconds (longer than its 1 s trigger)
  healthy_sink     named; the same foreachBatch without the sleep (the slow query's healthy twin)

Runs --seconds, then stops the queries, waits until REST shows every job ended, and with
--rest-out writes what the live driver's REST API served (app.json, jobs.json, stages.json,
sql__details-false.json, allexecutors.json, applications.json), as scripts/versions_workload.py does.
With --only-keepup only slow_sink and healthy_sink run (the end-to-end test).
"""
import argparse
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import sparkwork  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--event-log-dir", required=True)
p.add_argument("--ui-port", type=int, default=4098)
p.add_argument("--seconds", type=float, default=40)
p.add_argument("--slow-seconds", type=float, default=1.6)
p.add_argument("--rest-out")
p.add_argument("--checkpoints", required=True)
p.add_argument("--only-keepup", action="store_true")
p.add_argument("--compression", default="zstd", help="spark.eventLog.compression.codec, or none")
a = p.parse_args()
log = sparkwork.logger("streaming")
sparkwork.exit_with_parent(log)

conf = [("spark.sql.shuffle.partitions", "2"), ("spark.ui.retainedJobs", "100000"),
        ("spark.ui.retainedStages", "100000"), ("spark.sql.ui.retainedExecutions", "100000"),
        ("spark.sql.streaming.stateStore.providerClass",
         "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider")]
if a.compression == "none":
    conf.append(("spark.eventLog.compress", "false"))
else:
    conf += [("spark.eventLog.compress", "true"), ("spark.eventLog.compression.codec", a.compression)]
spark = sparkwork.session("local[2]", "streaming-fixture", conf=conf, ui_port=a.ui_port,
                          event_log_dir=a.event_log_dir, loopback=True)
sc = spark.sparkContext
app_id = sc.applicationId
api = f"http://127.0.0.1:{a.ui_port}/api/v1/applications"
log(f"Application {app_id}, UI port {a.ui_port}")


def rate(rows):
    return spark.readStream.format("rate").option("rowsPerSecond", rows).option("numPartitions", 2).load()


def checkpoint(name):
    return os.path.join(a.checkpoints, name)


queries = []
if not a.only_keepup:
    # A named stateful query: watermark 2 s behind the newest event, 2 s tumbling windows.
    from pyspark.sql.functions import window
    counts = (rate(20).withWatermark("timestamp", "2 seconds")
              .groupBy(window("timestamp", "2 seconds")).count())
    queries.append(counts.writeStream.queryName("windowed_counts").outputMode("append")
                   .format("noop").option("checkpointLocation", checkpoint("windowed_counts"))
                   .trigger(processingTime="1 second").start())
    # An unnamed stateless query.
    queries.append(rate(5).selectExpr("value * 2 AS v").writeStream.format("noop")
                   .option("checkpointLocation", checkpoint("unnamed"))
                   .trigger(processingTime="1 second").start())

slow_seconds = a.slow_seconds


def slow(df, batch_id):
    df.count()
    time.sleep(slow_seconds)


def healthy(df, batch_id):
    df.count()


queries.append(rate(5).writeStream.queryName("slow_sink").foreachBatch(slow)
               .option("checkpointLocation", checkpoint("slow_sink"))
               .trigger(processingTime="1 second").start())
queries.append(rate(5).writeStream.queryName("healthy_sink").foreachBatch(healthy)
               .option("checkpointLocation", checkpoint("healthy_sink"))
               .trigger(processingTime="1 second").start())
for q in queries:
    log(f"Started query name={q.name} id={q.id} runId={q.runId}")

deadline = time.time() + a.seconds
while time.time() < deadline:
    time.sleep(1)
    for q in queries:
        if q.exception() is not None:
            raise SystemExit(f"query {q.name} failed: {q.exception()}")
for q in queries:
    q.stop()
log("Queries stopped")


def get(path):
    with urllib.request.urlopen(api + path, timeout=10) as r:
        return r.read()


def idle_state():
    jobs = json.loads(get(f"/{app_id}/jobs"))
    stages = json.loads(get(f"/{app_id}/stages"))
    sql = json.loads(get(f"/{app_id}/sql?details=false&offset=0&length=1000000"))
    if any(j["status"] not in ("SUCCEEDED", "FAILED") for j in jobs):
        return None
    if any(s["status"] not in ("COMPLETE", "FAILED", "SKIPPED") for s in stages):
        return None
    if any(x["status"] not in ("COMPLETED", "FAILED") for x in sql):
        return None
    return (jobs, stages, sql)


if a.rest_out:
    settle = time.time() + 60
    prev = None
    while True:
        cur = idle_state()
        if cur is not None and cur == prev:
            break
        if time.time() > settle:
            raise SystemExit("REST never settled")
        prev = cur
        time.sleep(1.0)
    os.makedirs(a.rest_out, exist_ok=True)
    for name, path in [("applications.json", ""), ("app.json", f"/{app_id}"),
                       ("jobs.json", f"/{app_id}/jobs"), ("stages.json", f"/{app_id}/stages"),
                       ("sql__details-false.json", f"/{app_id}/sql?details=false&offset=0&length=1000000"),
                       ("allexecutors.json", f"/{app_id}/allexecutors")]:
        body = json.loads(get(path))
        with open(os.path.join(a.rest_out, name), "w") as f:
            json.dump(body, f, separators=(",", ":"), sort_keys=True)
            f.write("\n")
    log(f"REST written to {a.rest_out}")
spark.stop()
log("Done")
