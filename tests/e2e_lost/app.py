"""PySpark application for tests/e2e_executor_lost.rs.

Runs on `local-cluster[2,1,1024]` (a standalone master and two workers inside the driver JVM,
each executor a separate JVM), so an executor can really be lost. Protocol on stdout:
  READY <app_id> <ui_url>   after a first short job; the long job starts right after.
  DONE <sum>                the long job finished (the expected sum is checked here too).
Then it waits for the file <run_dir>/release (at most 300 s) before stopping Spark.

Usage: app.py <event_log_dir> <run_dir>
"""
import os
import sys
import time

event_dir, run_dir = sys.argv[1], sys.argv[2]
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

spark = (
    SparkSession.builder.master("local-cluster[2,1,1024]")
    .appName("e2e-executor-lost")
    .config("spark.driver.memory", "1g")
    .config("spark.executor.memory", "512m")
    .config("spark.ui.port", "0")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.eventLog.enabled", "true")
    .config("spark.eventLog.dir", "file://" + os.path.abspath(event_dir))
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()
)
sc = spark.sparkContext
sc.setLogLevel("WARN")

# Job 1: short, proves both executors work.
assert sc.parallelize(range(100), 2).sum() == 4950
print("READY", sc.applicationId, sc.uiWebUrl, flush=True)


def slow(x):
    time.sleep(3)
    return x


# Job 2: 12 tasks of ~3 s on two 1-core executors (~18 s), long enough to lose one mid-way.
sc.setJobDescription("long job")
n = 12
total = sc.parallelize(range(n), n).map(slow).sum()
assert total == n * (n - 1) // 2, total
print("DONE", total, flush=True)

release = os.path.join(run_dir, "release")
end = time.time() + 300
while not os.path.exists(release) and time.time() < end:
    time.sleep(0.2)
spark.stop()
print("STOPPED", flush=True)
