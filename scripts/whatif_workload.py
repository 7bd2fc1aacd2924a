"""A real PySpark application whose tasks wait rather than compute, run once per executor count,
for the what-if fixture (scripts/whatif-fixture.sh) and its test (tests/it/whatif.rs): each run's
prediction of the other's wall time is checked against it.

Its tasks sleep in the JVM (SQL's reflect('java.lang.Thread', 'sleep', ms), one call per row), as
I/O-bound tasks wait: on a 2-core machine, executors that compute contend for the cores with
each other and the driver, which no schedule predicts; waiting tasks do not. Jobs, one after the
other, the driver sleeping 1.5 s between them:

  warmup     a few rows, no sleep (the executors' first tasks)
  etl        16 tasks of 4 rows x 150 ms, then a shuffle into 8 groups and 400 ms per group
  skewed     8 tasks: one of 2 rows x 2 s, seven of 2 rows x 100 ms
  tiny       200 tasks of one 10 ms row
  straggler  8 tasks: one of 5 s, seven of 500 ms

    python scripts/whatif_workload.py --event-log-dir DIR [--executors 1,2] [--meta-out FILE]

One application per executor count (`whatif-<n>` on local-cluster[<n>,1,1024]), one after the
other; --meta-out gets {"apps": {"whatif-1": id, ...}}.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import sparkwork  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--event-log-dir", required=True)
p.add_argument("--executors", default="1,2")
p.add_argument("--meta-out")
p.add_argument("--ui-port", type=int, default=4111)
a = p.parse_args()
log = sparkwork.logger("whatif")
sparkwork.exit_with_parent(log)

CONF = [
    ("spark.executor.memory", "512m"),
    ("spark.sql.shuffle.partitions", "8"),
    ("spark.eventLog.compress", "true"),
    ("spark.eventLog.compression.codec", "zstd"),
    ("spark.eventLog.rolling.enabled", "true"),
    # Every executor registered before the first job, as a cluster's would be.
    ("spark.scheduler.minRegisteredResourcesRatio", "1.0"),
    ("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s"),
]


def sleep(ms):
    """A SQL expression that sleeps `ms` (an expression of the row) in the JVM and is 0."""
    return f"length(coalesce(reflect('java.lang.Thread', 'sleep', cast({ms} AS bigint)), '')) * 0"


def run(spark):
    sc = spark.sparkContext
    jobs = [
        ("warmup", lambda: spark.range(0, 8, 1, 8).selectExpr("id % 2 AS k").groupBy("k").count().collect()),
        # The sums are in the output: a column nothing reads is pruned, and its sleeps with it.
        ("etl", lambda: spark.range(0, 64, 1, 16)
            .selectExpr("id % 8 AS k", f"{sleep(150)} AS z")
            .groupBy("k").agg({"z": "sum"}).withColumnRenamed("sum(z)", "s")
            .selectExpr("k", f"s + {sleep(400)} AS w").collect()),
        ("skewed", lambda: spark.range(0, 16, 1, 8)
            .selectExpr(f"{sleep('CASE WHEN id < 2 THEN 2000 ELSE 100 END')} AS z").agg({"z": "sum"}).collect()),
        ("tiny", lambda: spark.range(0, 200, 1, 200).selectExpr(f"{sleep(10)} AS z").agg({"z": "sum"}).collect()),
        ("straggler", lambda: spark.range(0, 8, 1, 8)
            .selectExpr(f"{sleep('CASE WHEN id = 7 THEN 5000 ELSE 500 END')} AS z").agg({"z": "sum"}).collect()),
    ]
    for name, job in jobs:
        sparkwork.set_group(sc, name, name)
        began = time.time()
        job()
        log(f"{name}: {time.time() - began:.1f} s")
        time.sleep(1.5)


meta = {"apps": {}}
for n in [int(x) for x in a.executors.split(",")]:
    name = f"whatif-{n}"
    spark = sparkwork.session(f"local-cluster[{n},1,1024]", name, conf=CONF, ui_port=a.ui_port,
                              event_log_dir=a.event_log_dir, loopback=True)
    meta["apps"][name] = spark.sparkContext.applicationId
    log(f"{name}: {meta['apps'][name]}")
    run(spark)
    spark.stop()
    if a.meta_out:
        sparkwork.write_json(a.meta_out, meta)
log("Done")
