"""A streaming query at several micro-batches a second, for scripts/bench-streaming-series.sh.

A rate-micro-batch source (50 rows a batch) -> a projection and filter (with --stateful: a
count per key of value % 10, kept in state, in update mode) -> the noop sink, with a 150 ms
processing-time trigger, on local[2], with the event log and the Spark UI on. Every micro-batch
runs a job (two stages with --stateful), so a driver followed for minutes makes thousands of
stage attempts: the churn that issue 17 item 3 bounds. Runs for --seconds, then stops the query
and the application.

    python scripts/streaming_series_workload.py --event-log-dir DIR --ui-port 4047 --seconds 660
"""

import argparse
import tempfile
import time

from pyspark.sql import SparkSession, functions as F


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--event-log-dir", required=True)
    p.add_argument("--ui-port", default="4047")
    p.add_argument("--seconds", type=float, default=660)
    p.add_argument("--trigger-ms", type=int, default=150)
    p.add_argument("--stateful", action="store_true", help="count per key with state (slower batches)")
    a = p.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("streaming-series-bench")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", a.event_log_dir)
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", a.ui_port)
        .config("spark.port.maxRetries", "0")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    # Not the `rate` source: its offsets advance once a second, so it has new rows for one
    # micro-batch a second whatever the trigger. `rate-micro-batch` (Spark 3.3+) has new rows for
    # every trigger.
    rows = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 50).load()
    if a.stateful:
        out = rows.groupBy((F.col("value") % 10).alias("k")).count()
        mode = "update"
    else:
        out = rows.select((F.col("value") % 10).alias("k"), F.col("timestamp")).where("k >= 0")
        mode = "append"
    q = (
        out.writeStream.queryName("rate_agg")
        .outputMode(mode)
        .format("noop")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="streaming-series-ckpt-"))
        .trigger(processingTime=f"{a.trigger_ms} milliseconds")
        .start()
    )
    end = time.time() + a.seconds
    while time.time() < end and q.isActive:
        time.sleep(1)
    last = q.lastProgress
    q.stop()
    if last:
        print(f"workload: last batch {last['batchId']}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
