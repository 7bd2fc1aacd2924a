import json, os, sys, urllib.request, shutil
from pyspark.sql import SparkSession, functions as F
out = "/tmp/plans/out"
shutil.rmtree(out, ignore_errors=True); os.makedirs(out + "/ev")
spark = (SparkSession.builder.master("local[2]").appName("plans")
  .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", out + "/ev")
  .config("spark.sql.adaptive.enabled", "true")
  .config("spark.sql.shuffle.partitions", "20")
  .config("spark.sql.warehouse.dir", out + "/wh")
  .config("spark.eventLog.rolling.enabled", "true")
  .config("spark.ui.port", "4077").getOrCreate())
sc = spark.sparkContext
def run(group, f):
    sc.setJobGroup(group, group)
    f()
big = spark.range(0, 200000).withColumn("k", F.col("id") % 1000)
small = spark.range(0, 1000).withColumnRenamed("id", "k").withColumn("v", F.col("k") * 2)
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
run("join_smj", lambda: big.join(small, "k").agg(F.sum("v")).collect())
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "10485760")
run("join_broadcast", lambda: big.join(small, "k").agg(F.sum("v")).collect())
# skew
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1k")
spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2")
spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "2k")
skew = spark.range(0, 300000).withColumn("k", F.when(F.col("id") < 280000, F.lit(1)).otherwise(F.col("id") % 500))
other = spark.range(0, 500).withColumnRenamed("id", "k").withColumn("w", F.col("k"))
run("skewed", lambda: skew.join(other, "k").agg(F.count("*")).collect())
spark.conf.unset("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes")
spark.conf.unset("spark.sql.adaptive.skewJoin.skewedPartitionFactor")
spark.conf.unset("spark.sql.adaptive.advisoryPartitionSizeInBytes")
# reuse: self join of an aggregate
agg = big.groupBy("k").count()
run("reuse", lambda: agg.alias("a").join(agg.alias("b"), "k").count())
# shj
spark.conf.set("spark.sql.join.preferSortMergeJoin", "false")
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "100k")
run("shj", lambda: big.join(small.hint("shuffle_hash"), "k").count())
spark.conf.set("spark.sql.join.preferSortMergeJoin", "true")
# nested loop / cartesian
run("bnlj", lambda: small.alias("a").join(small.alias("b").limit(10), F.col("a.k") < F.col("b.k")).count())
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
run("cartesian", lambda: small.limit(50).crossJoin(small.limit(40).withColumnRenamed("k","k2").withColumnRenamed("v","v2")).count())
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "10485760")
# writes
run("ctas", lambda: big.join(small, "k").write.mode("overwrite").saveAsTable("t_ctas"))
run("write", lambda: big.join(small, "k").write.mode("overwrite").parquet(out + "/p"))
big.join(small, "k").createOrReplaceTempView("j")
run("cache", lambda: spark.sql("CACHE TABLE cj AS SELECT k, count(*) c FROM j GROUP BY k"))
run("cache_read", lambda: spark.sql("SELECT a.k, a.c FROM cj a JOIN cj b ON a.k = b.k").collect())
run("subq", lambda: spark.sql("SELECT count(*) FROM j WHERE v > (SELECT avg(v) FROM j)").collect())
base = "http://localhost:4077/api/v1/applications/" + sc.applicationId
def get(p):
    return json.load(urllib.request.urlopen(base + p))
sqls = get("/sql?details=false&planDescription=false")
json.dump(sqls, open(out + "/sql.json", "w"), indent=1)
for e in sqls:
    d = get("/sql/%d?details=true&planDescription=true" % e["id"])
    json.dump(d, open(out + "/sql_%d.json" % e["id"], "w"), indent=1)
fx = "/tmp/plans/fixture/rest/" + sc.applicationId
os.makedirs(fx, exist_ok=True)
for name, p in [("app.json", ""), ("jobs.json", "/jobs"), ("stages.json", "/stages?details=false"),
                ("sql__details-false.json", "/sql?details=false"), ("allexecutors.json", "/allexecutors")]:
    json.dump(get(p), open(fx + "/" + name, "w"))
raw = {}
for e in sqls:
    raw["sql/%d?details=true" % e["id"]] = get("/sql/%d?details=true&planDescription=true" % e["id"])
json.dump(raw, open(fx + "/raw.json", "w"))
spark.stop()
shutil.copytree(out + "/ev", "/tmp/plans/fixture/eventlog", dirs_exist_ok=True)
