"""A real PySpark application that provokes each condition of the diagnosis signals (issue 18)
next to a healthy twin, for the diagnosis fixture (scripts/diagnosis-fixture.sh), the exactness
tests (tests/diagnosis_*.rs) and the end-to-end test (tests/e2e_diagnosis.py).

Three applications, one after the other (--apps: some of them), on local-cluster[2,1,1024] (two
separate executors of one core each):

`diagnosis` runs, each under its own job group (setJobGroup):
  warmup          the executors' first tasks (Python workers, JIT), which are slow anyway
  join_smj        a 100-row table joined to 2M rows, forced to SortMergeJoin
                  (autoBroadcastJoinThreshold=-1 for its queries; no hint, so the threshold
                  the diagnosis suggests decides on the re-run)
  join_broadcast  the same join with a broadcast hint: BroadcastHashJoin
  plan_change     one description run twice: a broadcast join, then the same join as a
                  SortMergeJoin (its plan changes between the runs)
  plan_stable     one description run twice with the same broadcast join
  skew_join       a join whose one key holds most rows, with adaptive skew-join handling on
  spill           a window over a few large partitions with the window buffer's spill threshold
                  at 40,000 rows: it spills
  no_spill        the same window with Spark's default threshold
  skewed          an RDD stage whose partition 0 holds 97% of the rows (per-row Python work)
  balanced        the same stage with the rows spread evenly
  gc_light        three times: 40M numbers counted per group (as much task time, little heap)
  gc_pressure     three times: collect_list of 4M long strings into four huge groups on a
                  512 MiB heap
  cache           a table cached with cacheTable (`In-memory table cached_orders`) and a
                  DataFrame cached with persist(), both read twice and still cached at the end
  no_cache        the same query on an uncached DataFrame
  tiny_partitions four aggregations into 200 shuffle partitions of a few KB each, with
                  adaptive execution off (scheduler delay: too many tiny tasks)
`diagnosis-idle` (job group idle_executor): one task sleeping --long-seconds: one executor
works, the other idles; then the driver works alone (sleeps) for half as long while both
executors idle (low core utilisation over the application's life, about a third).
`diagnosis-busy` (job group busy, its healthy twin): two tasks sleeping --long-seconds, which
keep both executors busy.

Each application ends with one SQL execution described as SENTINEL, without a job group. With
--rest-out DIR, each application's REST answers are written to DIR/<app-id>/ once every job
has ended and the sentinel is listed (see scripts/diagnosis-fixture.sh for the files). --meta-out gets the application ids.
--live-hook CMD: once each application's sentinel has run (and, with --rest-out, once its REST
answers have settled and been written), and before spark.stop(), CMD runs through the shell with
SPARK_APP_ID, SPARK_APP_NAME and SPARK_UI_URL (http://127.0.0.1:<UI port>) in its environment
(the end-to-end test runs `spark-exporter diagnose` against the live driver); the workload waits
for it (at most --live-hook-seconds), logs its exit status and carries on whatever it is.
--settings FILE: settings to run with (what `diagnose` suggested, for the re-run check,
tests/advice_rerun.py), as JSON {"application": {key: value}, "job_groups": {group: {key:
value}}}: the application's go to every application's session; a job group's are set with
spark.conf.set when the group starts (over the workload's own session settings for it) and
unset when the next group starts.
--master URL: another master than local-cluster[2,1,1024] (the comparison fixture's run on one
executor).
--hold FILE: after the busy application, wait (at most --hold-seconds) until FILE exists before
exiting (the end-to-end test scrapes meanwhile).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import sparkwork  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--event-log-dir", required=True)
p.add_argument("--ui-port", type=int, default=4097)
p.add_argument("--rest-out")
p.add_argument("--meta-out")
p.add_argument("--long-seconds", type=float, default=40,
               help="how long the tasks of diagnosis-idle and diagnosis-busy sleep")
p.add_argument("--plan-pause", type=float, default=0,
               help="seconds between the two runs of plan_change and of plan_stable")
p.add_argument("--only", help="comma-separated job groups to run (default: all)")
p.add_argument("--apps", help="comma-separated applications to run, of diagnosis, diagnosis-idle "
               "and diagnosis-busy (default: all; two workloads with different --apps can run at "
               "once, as tests/e2e_diagnosis.py does)")
p.add_argument("--live-hook", help="shell command run against each live application before it stops")
p.add_argument("--live-hook-seconds", type=float, default=120,
               help="how long --live-hook may run before it is killed")
p.add_argument("--settings", help="JSON file of settings to run with (see above)")
p.add_argument("--master", default="local-cluster[2,1,1024]",
               help="the master URL (the comparison fixture runs one on local-cluster[1,1,1024])")
p.add_argument("--hold")
p.add_argument("--hold-seconds", type=float, default=600)
a = p.parse_args()
log = sparkwork.logger("diagnosis")
sparkwork.exit_with_parent(log)
only = set(a.only.split(",")) if a.only else None
SETTINGS = {"application": {}, "job_groups": {}}
if a.settings:
    with open(a.settings) as f:
        SETTINGS.update(json.load(f))

CONF = [
    ("spark.executor.memory", "512m"),
    ("spark.sql.shuffle.partitions", "8"),
    ("spark.default.parallelism", "8"),
    ("spark.eventLog.logBlockUpdates.enabled", "true"),
    # Block updates flood the listener queues; Spark drops events from a full queue (an SQL
    # execution would then never end in REST), so the queues are larger than the default 10,000.
    ("spark.scheduler.listenerbus.eventqueue.capacity", "200000"),
    ("spark.eventLog.compress", "true"),
    ("spark.eventLog.compression.codec", "zstd"),
    ("spark.eventLog.rolling.enabled", "true"),
    ("spark.ui.retainedJobs", "100000"),
    ("spark.ui.retainedStages", "100000"),
    ("spark.ui.retainedTasks", "1000000"),
    ("spark.sql.ui.retainedExecutions", "100000"),
    # Executors register before the first job, so the first stages run on both.
    ("spark.scheduler.minRegisteredResourcesRatio", "1.0"),
    ("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s"),
]


SENTINEL = sparkwork.SENTINEL
get, settled = sparkwork.get, sparkwork.settled


def write_rest(api, app_id, out):
    """sparkwork.write_rest, logging here."""
    sparkwork.write_rest(api, app_id, out, log)


def live_hook(cmd, app_id, name, ui_url):
    """Run `cmd` through the shell against the live application, wait for it and log how it
    ended; never raise (the caller judges its output)."""
    env = dict(os.environ, SPARK_APP_ID=app_id, SPARK_APP_NAME=name, SPARK_UI_URL=ui_url)
    began = time.time()
    try:
        rc = subprocess.run(cmd, shell=True, env=env, timeout=a.live_hook_seconds).returncode
        how = f"exited {rc}"
    except subprocess.TimeoutExpired:
        how = f"killed after {a.live_hook_seconds:.0f} s"
    except OSError as e:
        how = f"could not run: {e}"
    log(f"live hook of {name} ({app_id}) {how} after {time.time() - began:.1f} s")


def wanted(group):
    return only is None or group in only


def run_main(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    sc = spark.sparkContext
    # Warm-up: the executors' first tasks (Python workers, JIT) are slow; not a finding.
    sparkwork.set_group(sc, "warmup", "warm-up")
    sc.parallelize(range(8), 8).map(lambda x: x).collect()
    spark.range(0, 1000, 1, 8).selectExpr("id % 4 AS k").groupBy("k").count().collect()

    given = {}  # the settings file's session settings of the group running now

    def group(name, desc):
        for k in given:
            spark.conf.unset(k)
        given.clear()
        given.update(SETTINGS["job_groups"].get(name, {}))
        for k, v in given.items():
            spark.conf.set(k, v)
        sparkwork.set_group(sc, name, desc)
        log(f"{name}: {desc}" + (f" (settings {given})" if given else ""))

    def conf(key, value):
        """The workload's own session setting, unless the settings file gave the group one."""
        if key not in given:
            spark.conf.set(key, value)

    def unconf(key):
        if key not in given:
            spark.conf.unset(key)

    big = spark.range(0, 2_000_000, 1, 8).selectExpr("id", "id % 100 AS k")
    small = spark.range(0, 100).selectExpr("id AS k", "concat('name', id) AS name")

    if wanted("join_smj"):
        group("join_smj", "small table joined by sort-merge")
        conf("spark.sql.autoBroadcastJoinThreshold", "-1")
        big.join(small, "k").agg(F.count("name")).collect()
        unconf("spark.sql.autoBroadcastJoinThreshold")

    if wanted("join_broadcast"):
        group("join_broadcast", "small table joined by broadcast")
        big.join(F.broadcast(small), "k").agg(F.count("name")).collect()

    def orders_join(broadcast):
        if broadcast:
            big.join(F.broadcast(small), "k").agg(F.count("name")).collect()
        else:
            conf("spark.sql.autoBroadcastJoinThreshold", "-1")
            big.join(small, "k").agg(F.count("name")).collect()
            unconf("spark.sql.autoBroadcastJoinThreshold")

    if wanted("plan_change"):
        group("plan_change", "orders join, plan changes")
        orders_join(True)
        time.sleep(a.plan_pause)
        group("plan_change", "orders join, plan changes")
        orders_join(False)

    if wanted("plan_stable"):
        group("plan_stable", "orders join, plan stable")
        orders_join(True)
        time.sleep(a.plan_pause)
        group("plan_stable", "orders join, plan stable")
        orders_join(True)

    if wanted("skew_join"):
        group("skew_join", "join on a skewed key, adaptive skew join")
        for k, v in [("spark.sql.autoBroadcastJoinThreshold", "-1"),
                     ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "64k"),
                     ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64k"),
                     ("spark.sql.adaptive.coalescePartitions.enabled", "false")]:
            conf(k, v)
        left = spark.range(0, 1_000_000, 1, 8).selectExpr(
            "id", "CASE WHEN id < 900000 THEN 0 ELSE id % 50 END AS k")
        right = spark.range(0, 50_000, 1, 4).selectExpr("id % 50 AS k", "id AS v")
        left.join(right, "k").agg(F.count("v")).collect()
        for k in ["spark.sql.autoBroadcastJoinThreshold",
                  "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
                  "spark.sql.adaptive.advisoryPartitionSizeInBytes",
                  "spark.sql.adaptive.coalescePartitions.enabled"]:
            unconf(k)

    rows = spark.range(0, 600_000, 1, 4).selectExpr("id", "id % 4 AS k",
                                                    "repeat('x', 40) AS pad")
    w = Window.partitionBy("k")
    if wanted("spill"):
        group("spill", "window that spills its buffer")
        conf("spark.sql.windowExec.buffer.spill.threshold", "40000")
        rows.withColumn("total", F.sum("id").over(w)).agg(F.max("total")).collect()
        unconf("spark.sql.windowExec.buffer.spill.threshold")

    if wanted("no_spill"):
        group("no_spill", "window that fits in memory")
        rows.withColumn("total", F.sum("id").over(w)).agg(F.max("total")).collect()

    n = 160_000

    def work(it):
        c = 0
        for _, v in it:
            for i in range(300):
                c += (v * i) % 7
        yield c

    if wanted("skewed"):
        group("skewed", "one partition holds most rows")
        sc.parallelize(range(n), 8).map(
            lambda x: (0 if x < n * 97 // 100 else x % 7 + 1, x)).partitionBy(
            8, lambda k: k).mapPartitions(work).collect()

    if wanted("balanced"):
        group("balanced", "rows spread evenly")
        sc.parallelize(range(n), 8).map(lambda x: (x % 8, x)).partitionBy(
            8, lambda k: k).mapPartitions(work).collect()

    strings = spark.range(0, 4_000_000, 1, 4).selectExpr(
        "id % 4 AS k", "concat(repeat('gc', 30), cast(id AS string)) AS s")
    # gc_light before gc_pressure: run after it, gc_light's tasks paid for gc_pressure's garbage
    # (old-generation collections on the same executors): 6.2% of its task time in GC in one CI
    # run on a loaded machine, over tests/e2e_diagnosis.py's line of 5%.
    if wanted("gc_light"):
        group("gc_light", "numbers counted, little heap")
        for _ in range(3):
            spark.range(0, 40_000_000, 1, 4).selectExpr("id % 4 AS k").groupBy("k").count().collect()

    if wanted("gc_pressure"):
        group("gc_pressure", "huge collect_list groups on a small heap")
        for _ in range(3):
            strings.groupBy("k").agg(F.collect_list("s").alias("l")).selectExpr(
                "k", "size(l) AS n").collect()

    if wanted("cache"):
        group("cache", "cached table and DataFrame read twice")
        spark.range(0, 400_000, 1, 4).selectExpr("id", "id % 10 AS k").createOrReplaceTempView(
            "cached_orders")
        spark.catalog.cacheTable("cached_orders")
        for _ in range(2):
            spark.table("cached_orders").groupBy("k").count().collect()
        persisted = spark.range(0, 200_000, 1, 2).selectExpr("id", "id * 2 AS twice")
        persisted.persist()
        for _ in range(2):
            persisted.agg(F.sum("twice")).collect()

    if wanted("no_cache"):
        group("no_cache", "the same query, not cached")
        plain = spark.range(0, 400_000, 1, 4).selectExpr("id", "id % 10 AS k")
        plain.groupBy("k").count().collect()

    if wanted("tiny_partitions"):
        group("tiny_partitions", "tiny shuffle partitions, adaptive execution off")
        conf("spark.sql.adaptive.enabled", "false")
        conf("spark.sql.shuffle.partitions", "200")
        tiny = spark.range(0, 20_000, 1, 4).selectExpr("id % 500 AS k", "id")
        for _ in range(4):
            tiny.groupBy("k").count().collect()
        unconf("spark.sql.adaptive.enabled")
        unconf("spark.sql.shuffle.partitions")
    for k in given:
        spark.conf.unset(k)


def run_idle(spark):
    sc = spark.sparkContext
    secs = a.long_seconds
    sparkwork.set_group(sc, "idle_executor", "one long task, one executor idle")
    log(f"idle_executor: one task of {secs} s")
    sc.parallelize([0], 1).map(lambda x: time.sleep(secs) or x).collect()
    log(f"idle_executor: the driver alone for {secs / 2} s")
    time.sleep(secs / 2)


def run_busy(spark):
    sc = spark.sparkContext
    secs = a.long_seconds
    sparkwork.set_group(sc, "busy", "both executors busy")
    log(f"busy: two tasks of {secs} s")
    sc.parallelize([0, 1], 2).map(lambda x: time.sleep(secs) or x).collect()


meta = {"apps": {}}
APPS = [("diagnosis", run_main, None), ("diagnosis-idle", run_idle, "idle_executor"),
        ("diagnosis-busy", run_busy, "busy")]
for name, body, own_group in APPS:
    if a.apps and name not in a.apps.split(","):
        continue
    if own_group is not None and not wanted(own_group):
        continue
    if own_group is None and only is not None and only <= {"idle_executor", "busy"}:
        continue
    conf = CONF + list(SETTINGS["application"].items())
    spark = sparkwork.session(a.master, name, conf=conf, ui_port=a.ui_port,
                              event_log_dir=a.event_log_dir, loopback=True)
    sc = spark.sparkContext
    app_id = sc.applicationId
    # The port the UI bound (Spark moves on from a taken spark.ui.port).
    ui_port = urllib.parse.urlparse(sc.uiWebUrl or "").port or a.ui_port
    ui_url = f"http://127.0.0.1:{ui_port}"
    api = f"{ui_url}/api/v1/applications"
    log(f"Application {name}: {app_id}, UI port {ui_port}")
    meta["apps"][name] = app_id
    body(spark)
    sparkwork.set_group(sc, None, SENTINEL)
    spark.range(1).collect()
    if a.rest_out:
        write_rest(api, app_id, a.rest_out)
    if a.live_hook:
        live_hook(a.live_hook, app_id, name, ui_url)
    spark.stop()
    log(f"{name} stopped")
    if a.meta_out:
        sparkwork.write_json(a.meta_out, meta)

if a.hold:
    log(f"Holding until {a.hold} exists")
    sparkwork.wait_for_file(a.hold, a.hold_seconds)
log("Done")
