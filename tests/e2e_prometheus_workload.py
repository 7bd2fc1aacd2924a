#!/usr/bin/env python3
"""The PySpark application that tests/e2e_prometheus.py watches through the exporter.

Small on purpose (local[2], 1 GiB driver) but it makes every dashboard panel and the alerts under
test have something to show:
  etl_ingest   SQL join + aggregation (SQL executions, shuffle)
  gc_heavy     a JVM-side sort of wide string rows written to parquet and read back: lots of
               short-lived objects (JVM GC time), spill (sorters are forced to spill every 20000
               records), output and input bytes; a DISK_ONLY cache (executor disk used)
  reports      many small jobs and SQL executions with distinct descriptions (more than the
               exporter's label cap the harness sets: label overflow)
  failing_job  a Python UDF raises: failed task, stage, job and SQL execution
  skewed       one partition sleeps: task skew
  stuck_stage  one task sleeps --stuck-seconds (less once --release-file exists) while the others
               finish at once: a stalled stage;
               meanwhile a rate-source Structured Streaming query runs a few micro-batches
Prints `APP_ID <id>`, `APP_NAME <name>`, `PHASE <name> <unix time>` lines, `WORKLOAD_DONE` when all
jobs are over, then keeps the application (and its UI) up until --stop-file exists or --hold
seconds pass, and prints `STOPPED` after SparkContext.stop().
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--ui-port", type=int, required=True)
ap.add_argument("--eventlog-dir", required=True)
ap.add_argument("--scratch-dir", required=True, help="parquet output and Spark local dirs")
ap.add_argument("--app-name", default="e2e-prometheus")
ap.add_argument("--stuck-seconds", type=float, default=75)
ap.add_argument("--stream-seconds", type=float, default=20)
ap.add_argument("--report-count", type=int, default=14, help="distinct report descriptions")
ap.add_argument("--stop-file", help="stop the application once this file exists")
ap.add_argument("--release-file", help="the hanging task of stuck_stage ends early once this file exists")
ap.add_argument("--hold", type=float, default=600, help="longest wait for --stop-file, seconds")
a = ap.parse_args()

from pyspark import InheritableThread, StorageLevel  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402


def say(*words):
    print(*words, flush=True)


def phase(name):
    say("PHASE", name, f"{time.time():.3f}")


spark = sparkwork.session(
    "local[2]", a.app_name, ui_port=a.ui_port, event_log_dir=a.eventlog_dir,
    conf=[("spark.sql.shuffle.partitions", "4"),
          ("spark.sql.adaptive.enabled", "false"),
          ("spark.local.dir", os.path.join(a.scratch_dir, "local")),
          # Sorters spill after this many records whatever the free memory: spill metrics.
          # Shuffles with few partitions would take the bypass-merge path, which never spills.
          ("spark.shuffle.spill.numElementsForceSpillThreshold", "20000"),
          ("spark.shuffle.sort.bypassMergeThreshold", "1")])
sc = spark.sparkContext
say("APP_ID", sc.applicationId)
say("APP_NAME", a.app_name)


def group(gid, desc):
    sparkwork.set_group(sc, gid, desc)
    phase(gid)


group("etl_ingest", "Load orders")
orders = spark.range(0, 300_000).select(
    F.col("id").alias("order_id"), (F.col("id") % 1000).alias("customer_id"),
    (F.rand(7) * 100).alias("amount"))
customers = spark.range(0, 1000).select(
    F.col("id").alias("customer_id"), (F.col("id") % 5).cast("string").alias("region"))
orders.join(customers, "customer_id").groupBy("region").agg(F.sum("amount")).collect()

group("gc_heavy", "Sort wide rows")
sorted_path = os.path.join(a.scratch_dir, "sorted.parquet")
for _ in range(2):
    # Written out, so the optimizer cannot drop the sort (it would before an aggregate).
    (spark.range(0, 600_000, numPartitions=4)
     .selectExpr("id", "repeat(uuid(), 6) AS s", "array_repeat(cast(id AS string), 8) AS a")
     .orderBy("s")
     .write.mode("overwrite").parquet(sorted_path))
spark.read.parquet(sorted_path).selectExpr("sum(length(s)) + sum(size(a))").collect()
cached = spark.range(0, 200_000).selectExpr("id", "cast(id AS string) AS s").persist(StorageLevel.DISK_ONLY)
cached.count()

group("reports", "Daily reports")
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
small = spark.range(0, 20_000).selectExpr("id % 7 AS k", "id AS v")
for w in words[: a.report_count]:
    sc.setJobDescription(f"report {w}")
    small.groupBy("k").sum("v").collect()
sc.setJobDescription(None)

group("failing_job", "Fails on purpose")
# A job that succeeds first, and time for a few polls and scrapes: the group's failed-task counter
# is then scraped at 0 before the failure, as for any long-running group, so rate() sees the
# failure (a counter first scraped at 1 shows no increase, and SparkTaskFailureRatioHigh could
# only fire if a scrape happened to fall between the job's start and its task's failure).
spark.range(0, 10).count()
time.sleep(4)


@F.udf("long")
def boom(x):
    if x == 13:
        raise ValueError("bad record 13")
    return x


try:
    spark.range(0, 100, numPartitions=4).select(boom("id").alias("x")).agg(F.sum("x")).collect()
    say("ERROR the failing job did not fail")
except Exception:
    pass

group("skewed", "Skewed partitions")


def slow_first(idx, it):
    if idx == 0:
        time.sleep(6)
    return [sum(1 for _ in it)]


sc.parallelize(range(40_000), 8).mapPartitionsWithIndex(slow_first).collect()


def hang():
    sparkwork.set_group(sc, "stuck_stage", "A task that hangs")

    release, secs = a.release_file, a.stuck_seconds

    def maybe_sleep(x):
        if x == 0:
            # Hangs --stuck-seconds, or until --release-file exists (the test has seen its alert).
            end = time.time() + secs
            while time.time() < end and not (release and os.path.exists(release)):
                time.sleep(0.5)
        return x

    sc.parallelize(range(4), 4).map(maybe_sleep).collect()


phase("stuck_started")
stuck = InheritableThread(target=hang)
stuck.start()
time.sleep(2)

# The other core runs a small Structured Streaming query while the stage hangs.
phase("streaming")
sparkwork.set_group(sc, "streaming", "Rate source")
query = (spark.readStream.format("rate").option("rowsPerSecond", 50).load()
         .selectExpr("value % 10 AS k").groupBy("k").count()
         .writeStream.format("noop").outputMode("complete").queryName("e2e_rate")
         .trigger(processingTime="1 second").start())
time.sleep(a.stream_seconds)
query.stop()
phase("streaming_stopped")

stuck.join()
phase("stuck_finished")
say("WORKLOAD_DONE")

sparkwork.wait_for_file(a.stop_file, a.hold, every=0.5)
spark.stop()
say("STOPPED")
sys.exit(0)
