#!/usr/bin/env python3
"""The small PySpark application behind the Spark version matrix (tests/data/versions/).

One run per Spark version (scripts/fixtures-versions.sh), the same jobs each time, on `local[2]`:

  no job group   a job before any group is set ("warm up")
  etl_load       two RDD jobs (a count and a reduceByKey, so a shuffle)
  sql_report     a DataFrame join with a shuffle (broadcast joins off) and a spark.sql("SELECT ...")
                 statement that joins and aggregates: SQL executions under a job group
  failing_job    one job whose only task raises; the driver catches the failure
  broadcast_join three DataFrame joins with an explicit broadcast() hint (a BroadcastHashJoin
                 although spark.sql.autoBroadcastJoinThreshold is -1), each counted: a SQL
                 execution whose broadcast exchange runs its own job. On 3.0-3.4 Spark runs that
                 job under setJobGroup(<runId>, "broadcast exchange (runId <runId>)"), replacing
                 the user's group; on 3.5+ it keeps the user's group (a job tag marks it)
  nightly_etl    Spark 3.5+ only: no job group, the job tag "nightly_etl" (SparkContext.addJobTag)
                 on an RDD job and a DataFrame query (a SQL execution under a tag)
  no job group   a last job after the group is cleared ("cool down")

Group names and descriptions have no digits, so the exporter's default rewrite rules leave them
as they are.

Before the SparkContext stops, once the live REST API shows every job, stage and SQL execution
ended (and the same twice in a row), the REST API of the live driver is written to --rest-out,
one JSON file per endpoint in the layout of tests/data/spark-4.1.1-basic/rest-snapshots/NNNN/
(the endpoint after /api/v1/applications/<app-id>, `?` as `__`, `=` as `-`; `app.json` for the
application itself, `applications.json` for the list). --meta-out gets what the workload did:
versions, the application id, and per group the actions it ran and the job ids Spark's status
tracker gave them; for broadcast_join also its SQL executions (id, job ids, from the live REST
/sql) and the jobs of those executions that Spark ran under another job group (the broadcast
jobs on 3.0-3.4, none on 3.5+), with the group and description Spark gave each.

Usage: versions_workload.py --eventlog-dir DIR --rest-out DIR --meta-out FILE [--ui-port P]
"""
import argparse
import json
import os
import platform
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import sparkwork  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--eventlog-dir", required=True)
ap.add_argument("--rest-out", required=True)
ap.add_argument("--meta-out", required=True)
ap.add_argument("--ui-port", type=int, default=4040)
ap.add_argument("--conf", action="append", default=[], help="extra k=v Spark conf")
a = ap.parse_args()
log = sparkwork.logger("versions")

# Python workers must run the driver's interpreter: PySpark 3.3 and 3.4 need Python 3.10, and
# the machine's python3 is newer.
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable

import pyspark  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

t0 = time.time()
spark = sparkwork.session(
    "local[2]", "version-matrix", ui_port=a.ui_port, event_log_dir=a.eventlog_dir,
    loopback=True, driver_memory=None,
    conf=[("spark.sql.shuffle.partitions", "2"),
          ("spark.default.parallelism", "2"),
          # A real shuffle join, not a broadcast.
          ("spark.sql.autoBroadcastJoinThreshold", "-1"),
          # One small file: zstd, not rolling (4.x rolls by default).
          ("spark.eventLog.compress", "true"),
          ("spark.eventLog.compression.codec", "zstd"),
          ("spark.eventLog.rolling.enabled", "false")]
    + [tuple(kv.split("=", 1)) for kv in a.conf])
sc = spark.sparkContext
version = tuple(int(x) for x in spark.version.split(".")[:2])
app_id = sc.applicationId
port = sc.uiWebUrl.rsplit(":", 1)[1]
api = f"http://127.0.0.1:{port}/api/v1/applications"
log(f"Spark {spark.version} up in {time.time() - t0:.1f}s: {app_id}, UI port {port}")

# The workload's own bookkeeping: per group (None: no group), the actions it ran.
steps = []


def action(group, what, fn):
    steps.append({"group": group, "action": what})
    return fn()


# 1. No job group.
sparkwork.set_group(sc, None, None)
action(None, "warm up: parallelize.sum", lambda: sc.parallelize(range(1000), 2).sum())

# 2. RDD jobs under a group: a count, and a shuffle (reduceByKey).
sparkwork.set_group(sc, "etl_load", "Load numbers")
nums = sc.parallelize(range(5000), 2).map(lambda x: x * 3)
action("etl_load", "rdd count", nums.count)
action("etl_load", "rdd reduceByKey collect",
       lambda: nums.map(lambda x: (x % 10, 1)).reduceByKey(lambda p, q: p + q).collect())

# 3. SQL under a group: a DataFrame join with a shuffle, and a SQL statement.
sparkwork.set_group(sc, "sql_report", "Join report")
orders = spark.range(0, 4000).select(F.col("id").alias("order_id"),
                                     (F.col("id") % 50).alias("customer_id"))
customers = spark.range(0, 50).select(F.col("id").alias("customer_id"),
                                      (F.col("id") % 5).cast("string").alias("region"))
action("sql_report", "dataframe join + groupBy collect",
       lambda: orders.join(customers, "customer_id").groupBy("region").count().collect())
orders.createOrReplaceTempView("orders")
customers.createOrReplaceTempView("customers")
action("sql_report", "spark.sql SELECT join + GROUP BY collect",
       lambda: spark.sql("SELECT c.region, count(*) AS n FROM orders o JOIN customers c "
                         "ON o.customer_id = c.customer_id GROUP BY c.region").collect())

# 4. A failing job: its only task raises (local[2]: one attempt), the driver catches it.
sparkwork.set_group(sc, "failing_job", "Fails on purpose")


def boom(x):
    if x == 13:
        raise ValueError("bad record")
    return x


try:
    action("failing_job", "rdd count, a task raises",
           lambda: sc.parallelize(range(20), 1).map(boom).count())
    raise SystemExit("the failing job did not fail")
except SystemExit:
    raise
except Exception as e:  # Py4J or PySpark error: failed as intended
    log(f"Failing job failed as intended: {type(e).__name__}")

# 5. Broadcast joins under a group. The workload turns automatic broadcasts off
# (autoBroadcastJoinThreshold -1); the explicit broadcast() hint still plans a BroadcastHashJoin.
sparkwork.set_group(sc, "broadcast_join", "Join with a broadcast")
big = spark.range(0, 3000).select((F.col("id") % 20).alias("k"), F.col("id").alias("v"))
small = spark.range(0, 20).select(F.col("id").alias("k"), (F.col("id") * 7).alias("w"))
for n in ("first", "second", "third"):
    joined = big.join(F.broadcast(small), "k")
    plan = joined._jdf.queryExecution().executedPlan().toString()
    if "BroadcastHashJoin" not in plan:
        raise SystemExit("no BroadcastHashJoin planned:\n" + plan)
    action("broadcast_join", f"{n} broadcast join count", joined.count)
sparkwork.set_group(sc, None, None)

# 6. Spark 3.5+: job tags, no job group.
tags = {}
sparkwork.set_group(sc, None, None)
if version >= (3, 5):
    sc.addJobTag("nightly_etl")
    action(None, "tag nightly_etl: rdd sum", lambda: sc.parallelize(range(100), 2).sum())
    action(None, "tag nightly_etl: dataframe groupBy collect",
           lambda: spark.range(0, 1000).groupBy((F.col("id") % 3).alias("k")).count().collect())
    sc.removeJobTag("nightly_etl")
    tags["nightly_etl"] = [s["action"] for s in steps if s["action"].startswith("tag nightly_etl")]

# 7. No job group again.
action(None, "cool down: parallelize.count", lambda: sc.parallelize(range(10), 2).count())


def get(path):
    with urllib.request.urlopen(api + path, timeout=10) as r:
        return r.read()


def idle_state():
    """Jobs, stages and SQL executions as REST shows them, or None while any is running."""
    jobs = json.loads(get(f"/{app_id}/jobs"))
    stages = json.loads(get(f"/{app_id}/stages"))
    sql = json.loads(get(f"/{app_id}/sql?details=false&offset=0&length=1000000"))
    if any(j["status"] not in ("SUCCEEDED", "FAILED") for j in jobs):
        return None
    if any(s["status"] not in ("COMPLETE", "FAILED", "SKIPPED") for s in stages):
        return None
    if any(x["status"] not in ("COMPLETED", "FAILED") for x in sql):
        return None
    return (jobs, stages, sql)


# Wait until REST shows everything ended, twice the same 1 s apart.
deadline = time.time() + 60
prev = None
while True:
    cur = idle_state()
    if cur is not None and cur == prev:
        break
    if time.time() > deadline:
        raise SystemExit("REST never settled: " + json.dumps(cur)[:2000])
    prev = cur
    time.sleep(1.0)

os.makedirs(a.rest_out, exist_ok=True)
for name, path in [("applications.json", ""), ("app.json", f"/{app_id}"),
                   ("jobs.json", f"/{app_id}/jobs"), ("stages.json", f"/{app_id}/stages"),
                   ("sql__details-false.json", f"/{app_id}/sql?details=false&offset=0&length=1000000"),
                   ("executors.json", f"/{app_id}/executors"),
                   ("allexecutors.json", f"/{app_id}/allexecutors")]:
    body = json.loads(get(path))
    with open(os.path.join(a.rest_out, name), "w") as f:
        json.dump(body, f, indent=1, sort_keys=True)
        f.write("\n")

tracker = sc.statusTracker()
groups = {}
for s in steps:
    g = groups.setdefault(s["group"] or "", {"actions": []})
    g["actions"].append(s["action"])
for g in groups:
    groups[g]["job_ids"] = sorted(tracker.getJobIdsForGroup(g or None))
    groups[g]["jobs"] = len(groups[g]["job_ids"])
# broadcast_join: its SQL executions (those holding a job of the group) as the live REST /sql
# listed them, and their jobs that Spark ran under another group (the broadcast exchange's
# runId on 3.0-3.4), as the live REST /jobs listed them.
rest_jobs, _, rest_sql = cur
by_id = {j["jobId"]: j for j in rest_jobs}
bj = groups["broadcast_join"]
mine = set(bj["job_ids"])
bj["sql_executions"] = []
bj["other_group_job_ids"] = []
bj["other_group_jobs"] = {}
for x in sorted(rest_sql, key=lambda x: x["id"]):
    ids = sorted(x.get("successJobIds", []) + x.get("failedJobIds", [])
                 + x.get("runningJobIds", []))
    if not mine.intersection(ids):
        continue
    bj["sql_executions"].append({"id": x["id"], "job_ids": ids})
    for i in ids:
        if i not in mine:
            bj["other_group_job_ids"].append(i)
            bj["other_group_jobs"][str(i)] = {"jobGroup": by_id[i].get("jobGroup"),
                                              "description": by_id[i].get("description")}
if len(bj["sql_executions"]) != 3:
    raise SystemExit("broadcast_join: not three SQL executions: " + json.dumps(bj))
# Job tags (3.5+): the Scala tracker's getJobIdsForTag (PySpark's tracker has no such call).
for t in list(tags):
    ids = sorted(sc._jsc.sc().statusTracker().getJobIdsForTag(t))
    tags[t] = {"actions": tags[t], "job_ids": ids, "jobs": len(ids)}
jvm_version = sc._jvm.java.lang.System.getProperty("java.version")
meta = {
    "pyspark_version": pyspark.__version__,
    "spark_version": spark.version,
    "python_version": platform.python_version(),
    "java_version": jvm_version,
    "app_id": app_id,
    "master": "local[2]",
    "groups": groups,
    "job_tags": tags,
    # For the lead: once jobs are grouped by job tag (Spark Connect / addJobTag), the jobs with no
    # job group can be asserted per tag group too; tests/it/version_matrix.rs only sums them now.
    "todo": "jobs with no job group are asserted only as totals over all groups; "
            + ("tag groups to tighten: " + ", ".join(sorted(tags)) if tags
               else "this Spark version has no job tags"),
}
spark.stop()
with open(a.meta_out, "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
log(f"Done in {time.time() - t0:.1f}s")
