#!/usr/bin/env python3
"""A tiny PySpark driver for tests/it/jvm/faults_spark_ui.rs: a real local Spark (pip pyspark, the
machine's Java 17) whose UI and REST API the exporter polls while the test injects faults.

It starts Spark with its UI on --ui-port (spark.port.maxRetries=0: if the port is taken Spark
fails instead of moving to the next one, so "the same UI port" is guaranteed), writes
<state-dir>/ui.json (app id, UI port, python and JVM pids), then runs jobs in job groups:

  --mode batch    a fixed set of jobs, which differs with --gen (so two drivers' counts differ):
                  group "etl" (gen 1: three jobs, gen 2: two), group "report" (a shuffle; gen 1:
                  two jobs, gen 2: three), group "bad_input" (one job that fails), and one job
                  in no group.
  --mode trickle  small jobs one after another in groups "stream_a", "stream_b" and "stream_c"
                  (every seventh fails), until <state-dir>/stop-jobs exists.

Every job has a description without digits, so the exporter's default label rewriting leaves it
as is. When the jobs are done it writes <state-dir>/done.json and keeps the UI up until
<state-dir>/release exists (or --hold-timeout seconds pass), then stops Spark.

Usage: driver.py --ui-port P --state-dir D --gen N --mode batch|trickle [--hold-timeout S]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--ui-port", type=int, required=True)
ap.add_argument("--state-dir", required=True)
ap.add_argument("--gen", type=int, default=1)
ap.add_argument("--mode", choices=["batch", "trickle"], default="batch")
ap.add_argument("--hold-timeout", type=float, default=300.0)
a = ap.parse_args()
os.makedirs(a.state_dir, exist_ok=True)
log = sparkwork.logger(f"driver gen{a.gen}")


def marker(name, data):
    sparkwork.write_json(os.path.join(a.state_dir, name), data)


def exists(name):
    return os.path.exists(os.path.join(a.state_dir, name))


sparkwork.exit_with_parent(log)

from pyspark.sql import functions as F  # noqa: E402

t0 = time.time()
spark = sparkwork.session(
    "local[2]",
    f"faults-driver-gen{a.gen}",
    ui_port=a.ui_port,
    loopback=True,
    conf=[
        ("spark.port.maxRetries", "0"),
        ("spark.eventLog.enabled", "false"),
        ("spark.sql.shuffle.partitions", "2"),
    ],
)
sc = spark.sparkContext
ui_port = int(sc.uiWebUrl.rsplit(":", 1)[1])
jvm_pid = sc._jvm.java.lang.ProcessHandle.current().pid()
marker("ui.json", {"app_id": sc.applicationId, "ui_port": ui_port, "python_pid": os.getpid(), "jvm_pid": jvm_pid})
log(f"Spark up in {time.time() - t0:.1f}s: app {sc.applicationId}, UI port {ui_port}, JVM pid {jvm_pid}")

jobs_run = 0


def job(group, desc, fail=False, shuffle=False):
    global jobs_run
    sparkwork.set_group(sc, group, desc)
    df = spark.range(0, 20_000, numPartitions=2)
    try:
        if fail:
            df.select(F.when(F.col("id") == 13, F.raise_error(F.lit("bad record"))).otherwise(F.col("id"))).collect()
        elif shuffle:
            df.groupBy((F.col("id") % 5).alias("k")).count().collect()
        else:
            df.selectExpr("sum(id)").collect()
    except Exception as e:  # the failing job fails as intended
        if not fail:
            raise
        log(f"Job in {group!r} failed as intended: {type(e).__name__}")
    jobs_run += 1


if a.mode == "batch":
    for name in (["alpha", "beta", "gamma"] if a.gen == 1 else ["delta", "epsilon"]):
        job("etl", f"load part {name}")
    for _ in range(2 if a.gen == 1 else 3):
        job("report", "report by bucket", shuffle=True)
    job("bad_input", "this job fails on purpose", fail=True)
    job(None, "no group at all")
else:
    groups = ["stream_a", "stream_b", "stream_c"]
    i = 0
    while not exists("stop-jobs") and time.time() - t0 < a.hold_timeout:
        job(groups[i % 3], "tick", fail=(i % 7 == 6))
        i += 1
        time.sleep(0.2)

# Let the status store take its last live updates before the test reads it.
time.sleep(1.0)
marker("done.json", {"app_id": sc.applicationId, "jobs_run": jobs_run, "seconds": round(time.time() - t0, 1)})
log(f"{jobs_run} job calls done in {time.time() - t0:.1f}s; holding the UI")
sparkwork.wait_for_file(os.path.join(a.state_dir, "release"), a.hold_timeout)
spark.stop()
log("Stopped")
