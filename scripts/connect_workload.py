"""The Spark Connect client of scripts/connect-fixture.sh: a PySpark Connect session that tags
its work as a user would (`spark.addTag`), with a DataFrame aggregation and a `spark.sql(...)`
statement under "nightly_etl", then a `limit` under "adhoc_report".

Usage: python connect_workload.py "sc://localhost:PORT/;user_id=USER"
"""
import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.remote(sys.argv[1]).appName("client-app").getOrCreate()
spark.addTag("nightly_etl")
print(spark.range(10000).selectExpr("id % 7 as k").groupBy("k").count().collect()[:2])
spark.sql("SELECT count(*) FROM range(100)").collect()
spark.removeTag("nightly_etl")
spark.addTag("adhoc_report")
print(spark.range(50).limit(5).collect())
spark.stop()
