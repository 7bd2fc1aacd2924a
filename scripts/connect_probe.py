#!/usr/bin/env python3
"""What a Spark Connect session leaves in the event log: a probe behind the "Spark
versions" table of docs/internals.md, and a real Connect log for tests (tests/data/connect/).

Starts a local Spark Connect server with `SparkSession.builder.remote("local[2]")` (PySpark 4.0+
with the `connect` extra: `pip install "pyspark[connect]==4.3.0"`; the pip packages of 3.4 and
3.5 have no Connect server), event logs on (single zstd file), then runs one DataFrame query under
the session tag `nightly_etl` (`spark.addTag`) and one without.

Usage: connect_probe.py EVENTLOG_DIR
"""
import os
import sys

os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

d = os.path.abspath(sys.argv[1])
os.makedirs(d, exist_ok=True)
spark = (SparkSession.builder.remote("local[2]").appName("connect-probe")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", "file://" + d)
         .config("spark.eventLog.rolling.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
print("version", spark.version)
spark.addTag("nightly_etl")
spark.range(0, 1000).groupBy((F.col("id") % 3).alias("k")).count().collect()
spark.removeTag("nightly_etl")
spark.range(0, 10).collect()
spark.stop()
