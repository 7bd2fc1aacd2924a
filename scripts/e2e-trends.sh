#!/usr/bin/env bash
# End-to-end test of job-duration trends across runs: a real Prometheus scraping at 5 s with the
# shipped rules, one exporter, three runs of the same PySpark application; the per-run recording
# rules and increase() against Spark's own numbers. See tests/e2e_trends.py for what it asserts
# and needs (target/debug/spark-exporter, prometheus, $SPARK_E2E_PYTHON with pyspark, Java 17).
# About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_trends.py "$@"
