#!/usr/bin/env bash
# Writes tests/data/streaming-<version>/ from a REAL PySpark Structured Streaming run
# (scripts/streaming_workload.py, local[2], about a minute): its zstd event log, and the REST
# answers its live driver served once the queries had stopped (rest/), which tests/it/streaming.rs
# compares with.
#
#   scripts/streaming-fixture.sh [PYTHON] [SECONDS]   # default /work/venv/bin/python, 30 s
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-/work/venv/bin/python}"
seconds="${2:-30}"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/scripts/streaming_workload.py" --event-log-dir "$tmp/ev" --rest-out "$tmp/rest" \
  --checkpoints "$tmp/cp" --seconds "$seconds" --ui-port "${UI_PORT:-4098}"
out="$root/tests/data/streaming-$version"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp -r "$tmp/rest" "$out/rest"
du -sh "$out"/*
echo "wrote $out"
