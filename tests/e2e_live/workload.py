#!/usr/bin/env python3
"""The PySpark application behind tests/it/jvm/eventlog_live.rs: a live application whose event log the
exporter tails while it grows.

It runs on a real local Spark (pip pyspark + the machine's Java 17), with Spark 4's default event
log layout made explicit (rolling `eventlog_v2_<app>/` folder, zstd parts) and the smallest part
size Spark accepts (10 MiB), with the UI on --ui-port. The jobs are paced over some seconds so a
tailer sees the log grow, and cover:

- job groups with several jobs, descriptions with dates (rewritten to {date} by the exporter);
- a shuffle join (two map stages and a result stage), a cached dataframe whose later jobs skip
  their map stages;
- one job of 400 tasks (task ends are most of a log's bytes);
- a job group whose jobs carry a 2 MB incompressible local property: Spark writes every local
  property into each job-start and stage-submitted event, so the zstd log passes 10 MiB and
  rolls into a second part while the application runs (a real part switch under the tailer);
- a job whose group is cancelled while its tasks sleep (interruptOnCancel): killed tasks, a
  failed stage and a failed job, task ends arriving after the stage ended;
- a job whose task fails on both allowed attempts (local[2,2]): failed tasks, stage and job;
- a job with no group at all.

Protocol with the test: writes --progress-file (JSON lines, one per finished step) as it goes;
when all jobs are done writes --done-marker (JSON: app id, UI URL, event-log folder, steps) and
keeps the driver and its UI alive until --release-marker exists or --hold-timeout seconds pass;
then stops Spark (which ends the log: ApplicationEnd, appstatus renamed) and exits 0.

Usage:
  workload.py --ui-port P --event-log-dir D --progress-file F --done-marker F --release-marker G
"""
import argparse
import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--ui-port", type=int, required=True, help="spark.ui.port")
ap.add_argument("--event-log-dir", required=True, help="spark.eventLog.dir (created if missing)")
ap.add_argument("--progress-file", required=True, help="one JSON line appended per finished step")
ap.add_argument("--done-marker", required=True, help="written (atomically) once all jobs ended")
ap.add_argument("--release-marker", required=True, help="the driver stops once this file exists")
ap.add_argument("--hold-timeout", type=float, default=120.0,
                help="stop anyway after this many seconds without a release marker")
ap.add_argument("--padding-mib", type=float, default=1.5,
                help="size of the incompressible local property of the 'wide_properties' group")
a = ap.parse_args()
log = sparkwork.logger("live-workload")
sparkwork.exit_with_parent(log)

from pyspark import InheritableThread  # noqa: E402 (after argument errors are reported)
from pyspark.sql import functions as F  # noqa: E402

t0 = time.time()
spark = sparkwork.session(
    # Two cores; a task may fail twice before its job fails (local[N,maxFailures]).
    "local[2,2]",
    "exporter-e2e-live",
    ui_port=a.ui_port,
    event_log_dir=a.event_log_dir,
    loopback=True,
    conf=[
        ("spark.port.maxRetries", "0"),
        # Spark 4's defaults, spelled out: rolling folder, zstd parts. 10m is the smallest part
        # size Spark accepts.
        ("spark.eventLog.rolling.enabled", "true"),
        ("spark.eventLog.rolling.maxFileSize", "10m"),
        ("spark.eventLog.compress", "true"),
        ("spark.eventLog.compression.codec", "zstd"),
        ("spark.sql.shuffle.partitions", "4"),
        ("spark.sql.autoBroadcastJoinThreshold", "-1"),
    ],
)
sc = spark.sparkContext
app_id = sc.applicationId
ui_url = sc.uiWebUrl
log(f"Spark up in {time.time() - t0:.1f}s: app {app_id}, UI {ui_url}")
steps = []


def done_step(name):
    """Record a finished step (the test reads these lines while the application runs)."""
    steps.append(name)
    with open(a.progress_file, "a") as f:
        f.write(json.dumps({"step": name, "t": round(time.time() - t0, 2)}) + "\n")
    log(f"Step done: {name} ({time.time() - t0:.1f}s)")
    # Pace the steps, so a tailer polling every 200 ms sees each one land separately.
    time.sleep(1.0)


# 1. A shuffle join per day, in one group; the day is in the description.
orders = spark.range(0, 40_000).select(
    F.col("id").alias("order_id"),
    (F.col("id") % 300).alias("customer_id"),
    (F.col("id") * 7 % 100).cast("double").alias("amount"),
)
customers = spark.range(0, 300).select(
    F.col("id").alias("customer_id"), (F.col("id") % 5).cast("string").alias("region")
)
joined = orders.join(customers, "customer_id")
for day in ["2026-11-01", "2026-11-02"]:
    sparkwork.set_group(sc, "etl_orders", f"load orders for {day}")
    joined.filter(F.col("amount") > int(day[-1])).groupBy("region").agg(F.sum("amount")).collect()
done_step("etl_orders")

# 2. A cached aggregate: the first job computes it, later ones skip its map stages.
sparkwork.set_group(sc, "cached_report", "Cached report")
cached = joined.groupBy("region", "customer_id").agg(F.sum("amount").alias("total")).cache()
cached.count()
for day in ["2026-11-01", "2026-11-02", "2026-11-03"]:
    sc.setJobDescription(f"revenue for {day}")
    cached.filter(F.col("total") > 10).groupBy("region").count().collect()
cached.unpersist()
done_step("cached_report")

# 3. Many small tasks.
sparkwork.set_group(sc, "many_tasks", "Sum over 400 partitions")
spark.range(0, 400_000, numPartitions=400).selectExpr("sum(id)").collect()
done_step("many_tasks")

# 4. A large incompressible local property: every job start and stage submission repeats it, so
#    the zstd part passes 10 MiB and Spark rolls to the next part while the application runs.
pad = base64.b64encode(os.urandom(int(a.padding_mib * 1024 * 1024 * 3 / 4))).decode()
sparkwork.set_group(sc, "wide_properties", "Jobs with a wide local property")
sc.setLocalProperty("e2e.padding", pad)
for i in range(4):
    spark.range(0, 1000, numPartitions=1).selectExpr("sum(id)").collect()
sc.setLocalProperty("e2e.padding", None)
done_step("wide_properties")

# 5. A job cancelled while its tasks sleep: killed tasks, failed stage and job.
group_name = "cancelled_scan"
sparkwork.set_group(sc, group_name, "Scan that gets cancelled", interrupt_on_cancel=True)
errors = []


def sleeper():
    try:
        # The sleep depends on `id`, so the optimizer cannot fold it into a driver-side constant.
        spark.range(0, 2, numPartitions=2).selectExpr(
            "reflect('java.lang.Thread', 'sleep', id + 60000)"
        ).collect()
    except Exception as e:  # cancelled, as intended
        errors.append(type(e).__name__)


# PySpark keeps local properties per Python thread: an InheritableThread carries the job group.
th = InheritableThread(target=sleeper)
th.start()
# Cancel once both tasks run (the REST API says so), or after 20 s anyway.
import urllib.request  # noqa: E402

api = f"http://127.0.0.1:{a.ui_port}/api/v1/applications/{app_id}"
deadline = time.time() + 20
while time.time() < deadline:
    try:
        with urllib.request.urlopen(api + "/stages?status=active&details=false", timeout=5) as r:
            if any(s.get("numActiveTasks", 0) >= 2 for s in json.load(r)):
                break
    except OSError:
        pass
    time.sleep(0.2)
sc.cancelJobGroup(group_name)
th.join(60)
if not errors:
    log("The cancelled job did not fail")
    spark.stop()
    sys.exit(3)
done_step("cancelled_scan")

# 6. A job that fails: one task raises on both attempts.
sparkwork.set_group(sc, "failing_job", "This job fails on purpose")
try:
    spark.range(0, 100, numPartitions=4).select(
        F.when(F.col("id") == 13, F.raise_error(F.lit("bad record 13"))).otherwise(F.col("id"))
    ).collect()
    log("The failing job did not fail")
    spark.stop()
    sys.exit(3)
except Exception as e:  # failed as intended
    log(f"Failing job failed as intended: {type(e).__name__}")
done_step("failing_job")

# 7. No group, no description: its call site is the group (eventlog_live.rs pins line 189).
sparkwork.set_group(sc, None, None)
spark.range(0, 10_000, numPartitions=3).selectExpr("sum(id)").collect()
done_step("no_group")

# Let the listener bus and the status store catch up with the last events.
time.sleep(1.0)
done = {
    "app_id": app_id,
    "ui_url": ui_url,
    "api": api,
    "event_log_dir": os.path.abspath(a.event_log_dir),
    "steps": steps,
    "seconds": round(time.time() - t0, 1),
}
sparkwork.write_json(a.done_marker, done)
log(f"Jobs done in {done['seconds']}s; holding the UI until {a.release_marker} exists")

if not sparkwork.wait_for_file(a.release_marker, a.hold_timeout):
    log("No release marker before the hold timeout; stopping anyway")
spark.stop()
log("Stopped")
