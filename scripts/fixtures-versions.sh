#!/usr/bin/env bash
# Writes the Spark version matrix, tests/data/versions/spark-<version>/, from REAL PySpark: one
# run of scripts/versions_workload.py per Spark minor version (the latest patch of each), each
# leaving
#   <app-id>.zstd   its event log (single file, zstd)
#   rest/*.json     the live driver's REST API once every job had ended, before the driver stopped
#   meta.json       versions (PySpark, Python, Java), the application id, what the workload ran
# tests/it/version_matrix.rs replays them; CI never runs Spark for them.
#
# Needs Java 17 (no --add-opens options needed, 3.3 included: spark-submit adds them) and PyPI.
# Venvs: .venv-versions/<version>/, made by scripts/pyspark-venv.sh (Python 3.10 for 3.3 and 3.4,
# which cannot pickle lambdas on 3.11). The workload sets PYSPARK_PYTHON to its own interpreter,
# so Python workers match the driver. About a minute per version on an idle machine.
# Usage: scripts/fixtures-versions.sh [version-regex]     e.g. scripts/fixtures-versions.sh '^3\.'
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/data/versions
FILTER="${1:-.}"
# The latest patch of each minor version on PyPI (pip index versions pyspark, 2026-11-30).
VERSIONS=(3.3.4 3.4.4 3.5.9 4.0.5 4.1.4 4.2.1 4.3.0)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

for v in "${VERSIONS[@]}"; do
  [[ "$v" =~ $FILTER ]] || continue
  py="$(scripts/pyspark-venv.sh "$v")"
  name="spark-$v"
  tmp="$(mktemp -d)"
  echo "== $name ($("$py" --version))"
  start=$(date +%s)
  "$py" scripts/versions_workload.py --eventlog-dir "$tmp/log" --rest-out "$tmp/rest" \
    --meta-out "$tmp/meta.json" --ui-port "$(free_port)" > "$tmp/out.txt" 2>&1 \
    || { tail -40 "$tmp/out.txt"; exit 1; }
  # Hadoop's local file system leaves .crc side files; no reader needs them.
  find "$tmp/log" -name '.*.crc' -delete
  rm -rf "${OUT:?}/$name"
  mkdir -p "$OUT/$name"
  cp "$tmp/log/"* "$OUT/$name/"
  cp -r "$tmp/rest" "$OUT/$name/rest"
  cp "$tmp/meta.json" "$OUT/$name/meta.json"
  chmod -R u+rwX,go+rX "$OUT/$name"
  echo "   $(( $(date +%s) - start )) s, $(du -sh "$OUT/$name" | cut -f1)"
  rm -rf "$tmp"
done
