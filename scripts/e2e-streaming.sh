#!/usr/bin/env bash
# End-to-end test of a Structured Streaming query falling behind its trigger: a live PySpark
# application (a query slower than its 1 s trigger and its healthy twin), the exporter tailing its
# event log, a real Prometheus scraping at 5 s with the shipped rules (STREAMING_BEHIND_FOR
# shortened to 60s). See tests/e2e_streaming.py for what it asserts and needs
# (target/debug/spark-exporter, prometheus, $SPARK_E2E_PYTHON with pyspark, Java 17).
# About 3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_streaming.py "$@"
