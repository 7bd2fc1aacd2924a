#!/usr/bin/env bash
# Measure the exporter's RSS and CPU as a sidecar would see them (idle, scraped, following a
# live local Spark application); prints the table for deploy/README.md "Measurements".
#   scripts/deploy-measure.sh [target/release/spark-exporter] [seconds]
# Builds nothing: run `cargo build --release` first. Uses ./.venv or ./.venv-deploy's pyspark.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/target/release/spark-exporter}"
secs="${2:-60}"
pyspark=""
for py in "$root/.venv/bin/python" "$root/.venv-deploy/bin/python"; do
  if [[ -x "$py" ]] && "$py" -c "import pyspark" 2>/dev/null; then pyspark="$py"; break; fi
done
exec python3 "$root/tests/deploy/measure_footprint.py" --exporter "$exe" --seconds "$secs" \
  ${pyspark:+--pyspark-python "$pyspark"}
