#!/usr/bin/env bash
# Writes tests/data/connect-<version>/ from a REAL Spark Connect server and a REAL PySpark Connect
# client (scripts/connect_workload.py): the server's rolling zstd event log, and its REST answers
# (applications, jobs, stages, sql) taken before it stops, which tests/connect.rs compares with.
#
#   scripts/connect-fixture.sh [PYTHON]   # a Python whose pyspark has the Connect client deps
#                                         # (grpcio, grpcio-status, googleapis-common-protos,
#                                         # pandas, pyarrow); default /work/venv/bin/python
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
curl -s "http://localhost:$ui/api/v1/applications" >"$tmp/rest/applications.json"
for e in jobs stages sql; do
  curl -s "http://localhost:$ui/api/v1/applications/$app/$e" >"$tmp/rest/$e.json"
done
kill -TERM "$server"; wait "$server" || true
out="$root/tests/data/connect-$version"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp -r "$tmp/rest" "$out/rest"
echo "wrote $out"
