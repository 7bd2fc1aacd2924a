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
import time

ap = argparse.ArgumentParser()
ap.add_argument("--eventlog-dir", required=True)
ap.add_argument("--counts-out", required=True)
ap.add_argument("--conf", action="append", default=[], help="extra k=v Spark conf")
ap.add_argument("--batches", type=int, default=3, help="streaming micro-batches to run")
a = ap.parse_args()

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

os.makedirs(a.eventlog_dir, exist_ok=True)
b = (SparkSession.builder.master("local[2,2]").appName("eventlog-fixture")
     .config("spark.eventLog.enabled", "true")
     .config("spark.eventLog.dir", a.eventlog_dir)
     .config("spark.sql.shuffle.partitions", "4")
     .config("spark.task.maxFailures", "2")
     .config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false"))
for kv in a.conf:
    k, v = kv.split("=", 1)
    b = b.config(k, v)
spark = b.getOrCreate()
sc = spark.sparkContext
sc.setLogLevel("ERROR")
jvm = sc._jvm

# 1. A cached RDD and a shuffle; the second collect skips the shuffle-map stage.
sc.setJobGroup("etl_load", "Load numbers 2026-01-01")
nums = sc.parallelize(range(20_000), 4).map(lambda x: x * 3).cache()
nums.count()
sc.setJobGroup("shuffle_agg", "Aggregate by key")
pairs = nums.map(lambda x: (x % 10, 1)).reduceByKey(lambda p, q: p + q)
pairs.collect()
pairs.collect()

# 2. SQL under a job group, with per-query descriptions.
sc.setJobGroup("sql_report", "Report")
for region in ["eu", "us"]:
    sc.setJobDescription(f"report for {region}")
    spark.range(0, 5000).withColumn("k", F.col("id") % 7).groupBy("k").count().collect()
sc.setJobDescription(None)

# 3. A failed job (every attempt of one task raises) and a failed SQL execution.
sc.setJobGroup("failing_job", "This job fails on purpose")
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
sc.setLocalProperty("spark.jobGroup.id", None)
sc.setLocalProperty("spark.job.description", None)

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
