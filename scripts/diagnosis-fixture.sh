#!/usr/bin/env bash
# Writes tests/data/diagnosis-<version>/ from a REAL PySpark run of scripts/diagnosis_workload.py
# (local-cluster[2,1,1024], two applications, about 3 minutes): their zstd rolling event logs
# (eventlog/), and per application the REST answers its live driver served once every job had
# ended (rest/<app-id>/: app.json, jobs.json, stages.json, stages__details-true.json,
# sql__details-false.json, allexecutors.json, applications.json, and raw.json with
# sql/<id>?details=true, storage/rdd, environment and every stage attempt's taskSummary), which
# the tests/diagnosis_*.rs exactness tests compare with. meta.json names the applications.
#
#   scripts/diagnosis-fixture.sh [PYTHON [OUT]]   # default /work/venv/bin/python,
#                                                 # tests/data/diagnosis-<version>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-/work/venv/bin/python}"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
out="${2:-$root/tests/data/diagnosis-$version}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/scripts/diagnosis_workload.py" --event-log-dir "$tmp/ev" --rest-out "$tmp/rest" \
  --meta-out "$tmp/meta.json" --ui-port "${UI_PORT:-4097}"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp -r "$tmp/rest" "$out/rest" && cp "$tmp/meta.json" "$out/"
du -sh "$out"/*
echo "wrote $out"
