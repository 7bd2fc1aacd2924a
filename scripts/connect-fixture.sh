#!/usr/bin/env bash
# Writes a Spark Connect fixture from a REAL Spark Connect server and a REAL PySpark Connect
# client (scripts/connect_workload.py, user id `etl_bot`): the server's rolling zstd event log,
# and its REST answers taken before it stops (rest/: applications.json, app.json, jobs.json,
# stages.json, sql__details-false.json, allexecutors.json), which tests/it/connect.rs compares with.
#
#   scripts/connect-fixture.sh [PYTHON [OUT]]   # PYTHON: a Python whose pyspark has the Connect
#                                               # client deps (grpcio, grpcio-status,
#                                               # googleapis-common-protos, pandas, pyarrow,
#                                               # zstandard); default /work/venv/bin/python.
#                                               # OUT: default tests/data/connect-<version>
#   scripts/e2e-connect.sh runs it live into a temporary OUT and tests that.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-/work/venv/bin/python}"
home="$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
tmp="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ev" "$tmp/rest"
grpc=15099 ui=4099
SPARK_HOME="$home" "$home/bin/spark-submit" \
  --class org.apache.spark.sql.connect.service.SparkConnectServer \
  --master 'local[2]' --conf spark.eventLog.enabled=true --conf "spark.eventLog.dir=$tmp/ev" \
  --conf spark.eventLog.rolling.enabled=true --conf spark.eventLog.compression.codec=zstd \
  --conf "spark.connect.grpc.binding.port=$grpc" --conf "spark.ui.port=$ui" \
  spark-internal >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  curl -sf "http://localhost:$ui/api/v1/applications" >/dev/null && break
  sleep 1
done
"$py" "$root/scripts/connect_workload.py" "sc://localhost:$grpc/;user_id=etl_bot"
app="$(curl -s "http://localhost:$ui/api/v1/applications" | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')"
api="http://localhost:$ui/api/v1/applications"
# The status store follows the listener bus, a little behind: wait until every job has ended.
for _ in $(seq 1 60); do
  curl -sf "$api/$app/jobs" | "$py" -c 'import json,sys; sys.exit(any(j["status"] not in ("SUCCEEDED","FAILED") for j in json.load(sys.stdin)))' && break
  sleep 0.5
done
curl -sf "$api" >"$tmp/rest/applications.json"
curl -sf "$api/$app" >"$tmp/rest/app.json"
curl -sf "$api/$app/jobs" >"$tmp/rest/jobs.json"
curl -sf "$api/$app/stages" >"$tmp/rest/stages.json"
curl -sf "$api/$app/sql?details=false&offset=0&length=1000000" >"$tmp/rest/sql__details-false.json"
curl -sf "$api/$app/allexecutors" >"$tmp/rest/allexecutors.json"
kill -TERM "$server"; wait "$server" || true
out="${2:-$root/tests/data/connect-$version}"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp -r "$tmp/rest" "$out/rest"
echo "wrote $out"
