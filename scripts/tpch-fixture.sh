#!/usr/bin/env bash
# Writes tests/data/tpch-<version>/ from a REAL PySpark run of scripts/tpch_workload.py
# (local-cluster[2,1,1024], one application `tpch` running the 22 TPC-H queries of DuckDB's tpch
# extension on tpchgen-cli data at scale factor 0.01 (SF, 2 parquet files per table), one job
# group q01..q22 per query, about 2 minutes): its zstd rolling event log (eventlog/), and the REST
# answers its live driver served once every job had ended (rest/<app-id>/: app.json, jobs.json,
# stages.json, stages__details-true.json, sql__details-false.json, allexecutors.json,
# applications.json, and raw.json with sql/<id>?details=true, storage/rdd, environment and every
# stage attempt's taskSummary). meta.json names the application and, per job group, its jobs and
# SQL executions. The TPC-H data is generated into a temporary folder and not kept.
# Installs tpchgen-cli, duckdb and duckdb-extension-tpch (pinned below) into PYTHON's venv when
# missing.
#
#   scripts/tpch-fixture.sh [PYTHON [OUT]]   # default .venv/bin/python, tests/data/tpch-<version>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-$root/.venv/bin/python}"
TPCHGEN_CLI_VERSION=4.0.0
DUCKDB_VERSION=1.5.5
DUCKDB_EXTENSION_TPCH_VERSION=1.5.5
for pin in "tpchgen-cli==$TPCHGEN_CLI_VERSION" "duckdb==$DUCKDB_VERSION" \
  "duckdb-extension-tpch==$DUCKDB_EXTENSION_TPCH_VERSION"; do
  "$py" -c "import importlib.metadata as m, sys; n, v = sys.argv[1].split('=='); sys.exit(m.version(n) != v)" \
    "$pin" 2>/dev/null || "$py" -m pip install -q "$pin"
done
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
out="${2:-$root/tests/data/tpch-$version}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/scripts/tpch_workload.py" --event-log-dir "$tmp/ev" --rest-out "$tmp/rest" \
  --meta-out "$tmp/meta.json" --ui-port "${UI_PORT:-4100}" --scale-factor "${SF:-0.01}"
# README.md is kept (it describes the fixture); everything else is replaced.
readme="$tmp/README.md"
[ -f "$out/README.md" ] && cp "$out/README.md" "$readme"
rm -rf "$out" && mkdir -p "$out"
[ -f "$readme" ] && cp "$readme" "$out/"
cp -r "$tmp/ev" "$out/eventlog" && cp -r "$tmp/rest" "$out/rest" && cp "$tmp/meta.json" "$out/"
du -sh "$out"/*
echo "wrote $out"
