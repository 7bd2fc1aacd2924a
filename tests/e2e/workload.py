#!/usr/bin/env python3
"""The PySpark application behind tests/it/jvm/e2e_core.rs.

It runs a small, fixed set of jobs on a real local Spark (pip pyspark + the machine's Java 17),
with the UI on --ui-port and event logs in --event-log-dir, so the exporter sees every shape it
must handle: job groups, descriptions that change per query inside a group (with dates, numbers
and quotes, to exercise label rewriting and escaping), a job with no group, a SQL join with a
shuffle, a cached dataframe (skipped stages), a job whose task fails twice so the job, its stage
and its SQL execution fail, and a sort of wide rows so executor GC time is above zero.

When the jobs are done it writes --done-marker (JSON: app id, UI URL, what it ran) and keeps the
driver and its UI alive until --release-marker exists or --hold-timeout seconds pass, so the test
can compare the exporter with the live REST API. Then it stops Spark and exits 0.

Usage:
  workload.py --ui-port P --event-log-dir D --done-marker F --release-marker G [--hold-timeout S]
"""
import argparse
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--ui-port", type=int, required=True, help="spark.ui.port")
ap.add_argument("--event-log-dir", required=True, help="spark.eventLog.dir (created if missing)")
ap.add_argument("--done-marker", required=True, help="written (atomically) once all jobs ended")
ap.add_argument("--release-marker", required=True, help="the driver stops once this file exists")
ap.add_argument("--hold-timeout", type=float, default=180.0,
                help="stop anyway after this many seconds without a release marker")
a = ap.parse_args()
log = sparkwork.logger("workload")
sparkwork.exit_with_parent(log)

from pyspark.sql import functions as F  # noqa: E402 (import after argument errors are reported)

t0 = time.time()
spark = sparkwork.session(
    # Two cores, and a task may fail twice before its job fails (local[N,maxFailures]).
    "local[2,2]",
    "exporter-e2e-core",
    ui_port=a.ui_port,
    event_log_dir=a.event_log_dir,
    loopback=True,
    conf=[
        ("spark.sql.shuffle.partitions", "4"),
        # A real sort-merge join with a shuffle, not a broadcast.
        ("spark.sql.autoBroadcastJoinThreshold", "-1"),
    ],
)
sc = spark.sparkContext
app_id = sc.applicationId
ui_url = sc.uiWebUrl
log(f"Spark up in {time.time() - t0:.1f}s: app {app_id}, UI {ui_url}")
api = f"http://127.0.0.1:{ui_url.rsplit(':', 1)[1]}/api/v1/applications/{app_id}"
ran = []  # (job_group, description) of each step, for the marker and for humans


def step(group, desc):
    """Start a step: set (or clear) the job group, whose description is the group's default."""
    sparkwork.set_group(sc, group, desc)
    ran.append([group, desc])
    log(f"Step: group={group!r} description={desc!r} ({time.time() - t0:.1f}s)")


# 1. A SQL join with a shuffle and an aggregation, in one group.
step("ingest_orders", "Load orders for region EU")
orders = spark.range(0, 60_000).select(
    F.col("id").alias("order_id"),
    (F.col("id") % 500).alias("customer_id"),
    (F.col("id") * 7 % 100).cast("double").alias("amount"),
)
customers = spark.range(0, 500).select(
    F.col("id").alias("customer_id"), (F.col("id") % 5).cast("string").alias("region")
)
joined = orders.join(customers, "customer_id")
joined.groupBy("region").agg(F.sum("amount")).collect()

# 2. A cached dataframe, then one query per day inside the same group, each with its own
#    description (dates are rewritten to {date}); the last one has quotes and a backslash.
step("daily_report", "Daily report")
cached = joined.cache()
cached.count()
for day in ["2026-11-01", "2026-11-02", "2026-11-03"]:
    sc.setJobDescription(f"revenue for {day}")
    cached.filter(F.col("amount") > 50).groupBy("region").count().collect()
sc.setJobDescription('audit "EU" totals in C:\\reports')
cached.groupBy("region").agg(F.max("amount")).collect()
ran.append(["daily_report", 'audit "EU" totals in C:\\reports'])
cached.unpersist()

# 3. No job group, no description: the call site is the group (tests/it/jvm/e2e_core.rs pins line 98).
step(None, None)
spark.range(0, 10_000).selectExpr("sum(id)").collect()


def gc_ms():
    """GC time spent in tasks (stages' jvmGcTime). Not /allexecutors: for the live driver Spark
    reports the whole JVM's GC time there, which is above zero from the start."""
    with urllib.request.urlopen(api + "/stages?details=false", timeout=10) as r:
        return sum(s.get("jvmGcTime", 0) for s in json.load(r))


# 4. Garbage: sort wide rows, so tasks spend time in GC. Repeated (at most 4 times) until the
#    tasks report GC time, so the GC comparisons never compare zero with zero.
step("gc_pressure", "Sort wide rows batch 7")
for attempt in range(4):
    (
        spark.range(0, 150_000, numPartitions=4)
        .selectExpr("id", "uuid() AS k", "repeat(cast(id AS string), 40) AS w1",
                    "repeat(uuid(), 4) AS w2")
        .orderBy("k")
        .write.format("noop").mode("overwrite").save()
    )
    if gc_ms() > 0:
        break
log(f"Task GC time so far: {gc_ms()} ms")

# 5. A job that fails: one task raises on every attempt (2 attempts), so the stage, the job and
#    the SQL execution fail. raise_error runs in the JVM: no Python worker to start.
step("failing_job", "This job fails on purpose")
failed = False
try:
    spark.range(0, 100, numPartitions=4).select(
        F.when(F.col("id") == 13, F.raise_error(F.lit("bad record 13"))).otherwise(F.col("id"))
    ).collect()
except Exception as e:  # Py4J or pyspark error: the job failed as intended
    failed = True
    log(f"Failing job failed as intended: {type(e).__name__}")
if not failed:
    log("The failing job did not fail")
    spark.stop()
    sys.exit(3)

# Let the status store flush its last live updates before the test reads it.
time.sleep(1.0)
done = {
    "app_id": app_id,
    "ui_url": ui_url,
    "api": api,
    "event_log_dir": os.path.abspath(a.event_log_dir),
    "task_gc_time_ms": gc_ms(),
    "steps": ran,
    "seconds": round(time.time() - t0, 1),
}
sparkwork.write_json(a.done_marker, done)
log(f"Jobs done in {done['seconds']}s; holding the UI until {a.release_marker} exists")

if not sparkwork.wait_for_file(a.release_marker, a.hold_timeout):
    log("No release marker before the hold timeout; stopping anyway")
spark.stop()
log("Stopped")
