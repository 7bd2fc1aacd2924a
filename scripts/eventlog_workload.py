#!/usr/bin/env python3
"""A small real PySpark application whose event log becomes a test fixture.

Exercises what the event-log tailer must understand: job groups and descriptions, a shuffle,
a cached RDD (so a later job skips a stage), SQL executions (one failing), a failed job, executor
add/remove, and a structured-streaming query (rate source) for a few micro-batches.

After the application stops, the log is decoded by Spark itself
(`EventLogFileReader.openEventLog`, which picks the codec from the file name exactly as the
History Server does) and the per-file count of each event name is written to
`--counts-out`: an independent decode the Rust tests compare against.

Usage: eventlog_workload.py --eventlog-dir DIR --counts-out FILE [--conf k=v ...]
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--eventlog-dir", required=True)
ap.add_argument("--counts-out", required=True)
ap.add_argument("--conf", action="append", default=[], help="extra k=v Spark conf")
ap.add_argument("--batches", type=int, default=3, help="streaming micro-batches to run")
a = ap.parse_args()

from pyspark.sql import functions as F  # noqa: E402

spark = sparkwork.session(
    "local[2,2]", "eventlog-fixture", event_log_dir=a.eventlog_dir, driver_memory=None,
    conf=[("spark.sql.shuffle.partitions", "4"),
          ("spark.task.maxFailures", "2"),
          ("spark.ui.enabled", "false")]
    + [tuple(kv.split("=", 1)) for kv in a.conf])
sc = spark.sparkContext
jvm = sc._jvm

# 1. A cached RDD and a shuffle; the second collect skips the shuffle-map stage.
sparkwork.set_group(sc, "etl_load", "Load numbers 2026-01-01")
nums = sc.parallelize(range(20_000), 4).map(lambda x: x * 3).cache()
nums.count()
sparkwork.set_group(sc, "shuffle_agg", "Aggregate by key")
pairs = nums.map(lambda x: (x % 10, 1)).reduceByKey(lambda p, q: p + q)
pairs.collect()
pairs.collect()

# 2. SQL under a job group, with per-query descriptions.
sparkwork.set_group(sc, "sql_report", "Report")
for region in ["eu", "us"]:
    sc.setJobDescription(f"report for {region}")
    spark.range(0, 5000).withColumn("k", F.col("id") % 7).groupBy("k").count().collect()
sc.setJobDescription(None)

# 3. A failed job (every attempt of one task raises) and a failed SQL execution.
sparkwork.set_group(sc, "failing_job", "This job fails on purpose")
def boom(x):
    if x == 13:
        raise ValueError("bad record 13")
    return x
try:
    sc.parallelize(range(100), 4).map(boom).count()
except Exception:
    pass
boom_udf = F.udf(lambda x: boom(x), "long")
try:
    spark.range(0, 50, numPartitions=2).select(boom_udf("id")).collect()
except Exception:
    pass
sparkwork.set_group(sc, None, None)

# 4. Structured streaming: a rate source for a few micro-batches.
q = (spark.readStream.format("rate").option("rowsPerSecond", 20).load()
     .writeStream.format("noop").queryName("rate_fixture")
     .trigger(processingTime="500 milliseconds").start())
deadline = time.time() + 60
while len(q.recentProgress) < a.batches and time.time() < deadline:
    time.sleep(0.2)
q.stop()

spark.stop()

# Decode every event-log file with Spark's own reader and count events by name.
conf = jvm.org.apache.hadoop.conf.Configuration()
reader = jvm.org.apache.spark.deploy.history.EventLogFileReader
counts = {}
for root, _dirs, files in os.walk(a.eventlog_dir):
    for f in sorted(files):
        if f.startswith(".") or f.startswith("appstatus_"):
            continue
        full = os.path.join(root, f)
        path = jvm.org.apache.hadoop.fs.Path("file://" + os.path.abspath(full))
        stream = reader.openEventLog(path, path.getFileSystem(conf))
        text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        stream.close()
        c = {}
        for line in text.splitlines():
            if line.strip():
                name = json.loads(line)["Event"]
                c[name] = c.get(name, 0) + 1
        counts[os.path.relpath(full, a.eventlog_dir)] = {
            "lines": sum(c.values()), "bytes": len(text.encode("utf-8")), "events": c}
with open(a.counts_out, "w") as out:
    json.dump({"spark_version": spark.version, "files": counts}, out, indent=1, sort_keys=True)
print("decoded", json.dumps({k: v["lines"] for k, v in counts.items()}))
