#!/usr/bin/env bash
# Writes small event logs from REAL Spark into tests/data/eventlogs/<name>/, one per
# (Spark version, codec, layout), each with counts.json: Spark's own decode of the log
# (EventLogFileReader.openEventLog), counted by event name. The Rust tests compare their own
# decode against it.
#
# Needs Java 17 and PyPI. Venvs (created when missing):
#   SPARK4_VENV (default .venv-fixtures)   pyspark==4.1.1
#   SPARK35_VENV (default .venv-fixtures35) pyspark==3.5.5
# Usage: scripts/eventlog-fixtures.sh [name-filter-regex]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/data/eventlogs
FILTER="${1:-.}"
SPARK4_VENV="${SPARK4_VENV:-.venv-fixtures}"
SPARK35_VENV="${SPARK35_VENV:-.venv-fixtures35}"

venv() { # dir version
  if [ ! -x "$1/bin/python" ]; then
    python3 -m venv "$1"
    "$1/bin/pip" install -q "pyspark==$2"
  fi
}

run() { # venv version codec layout
  local py="$1/bin/python" version="$2" codec="$3" layout="$4"
  local name="spark-$version-$codec-$layout"
  [[ "$name" =~ $FILTER ]] || return 0
  local tmp; tmp="$(mktemp -d)"
  local conf=(--conf "spark.eventLog.rolling.enabled=$([ "$layout" = rolling ] && echo true || echo false)")
  if [ "$codec" = none ]; then
    conf+=(--conf spark.eventLog.compress=false)
  else
    conf+=(--conf spark.eventLog.compress=true --conf "spark.eventLog.compression.codec=$codec")
  fi
  echo "== $name"
  "$py" scripts/eventlog_workload.py --eventlog-dir "$tmp/log" --counts-out "$tmp/counts.json" \
    "${conf[@]}" > "$tmp/out.txt" 2>&1 || { tail -30 "$tmp/out.txt"; exit 1; }
  rm -rf "${OUT:?}/$name"
  mkdir -p "$OUT/$name"
  # Hadoop's local file system leaves .crc side files; Spark never needs them to read a log.
  find "$tmp/log" -name '.*.crc' -delete
  cp -r "$tmp/log/." "$OUT/$name/"
  cp "$tmp/counts.json" "$OUT/$name/counts.json"
  chmod -R u+rwX,go+rX "$OUT/$name"
  du -sh "$OUT/$name"
  rm -rf "$tmp"
}

venv "$SPARK4_VENV" 4.1.1
venv "$SPARK35_VENV" 3.5.5
for codec in zstd lz4 snappy lzf none; do
  for layout in rolling single; do
    run "$SPARK4_VENV" 4.1.1 "$codec" "$layout"
  done
  run "$SPARK35_VENV" 3.5.5 "$codec" single
done
run "$SPARK35_VENV" 3.5.5 zstd rolling
