#!/usr/bin/env bash
# Spark Connect, live: a real Spark Connect server (PySpark's jars) and a real PySpark Connect
# client (scripts/connect-fixture.sh, scripts/connect_workload.py), then tests/it/connect.rs on that
# run (SPARK_CONNECT_FIXTURE): jobs, tasks and SQL executions by the user's tag from the server's
# event log and from its REST answers equal Spark's REST numbers; jobs by client application and
# user; no plan dump or internal tag in any label.
# Uses .venv (scripts/test.sh makes it) and adds the Connect client's packages to it.
# Usage: scripts/e2e-connect.sh [--install-only]   (--install-only: the packages only, as
# scripts/test.sh does before the tests start)
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "e2e-connect: no $py (scripts/test.sh creates it)" >&2; exit 1; }
if ! "$py" -c 'from pyspark.sql.connect.utils import check_dependencies; check_dependencies("x")' 2>/dev/null; then
  "$py" -m pip install -q "grpcio==1.85.3" "grpcio-status==1.85.3" "googleapis-common-protos==1.76.0" \
    "pandas==3.1.1" "pyarrow==26.0.1" "zstandard==0.25.0"
fi
[ "${1:-}" != --install-only ] || exit 0
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
scripts/connect-fixture.sh "$PWD/$py" "$out/run"
SPARK_CONNECT_FIXTURE="$out/run" cargo test --test it connect::
echo "e2e-connect: passed in $(( $(date +%s) - start )) s"
