"""PySpark application for tests/it/jvm/e2e_executor_lost.rs.

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import sparkwork  # noqa: E402

event_dir, run_dir = sys.argv[1], sys.argv[2]
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

spark = sparkwork.session(
    "local-cluster[2,1,1024]",
    "e2e-executor-lost",
    ui_port=0,
    event_log_dir=event_dir,
    conf=[("spark.executor.memory", "512m"), ("spark.sql.shuffle.partitions", "2")],
    log_level="WARN",
)
sc = spark.sparkContext

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

sparkwork.wait_for_file(os.path.join(run_dir, "release"), 300)
spark.stop()
print("STOPPED", flush=True)
