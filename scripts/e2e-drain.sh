#!/usr/bin/env bash
# End-to-end test of the application's end (docs/internals.md "The application's end"): one real PySpark
# application whose last job fails, five real exporters (SIGTERM at the end with REST and event
# logs, event logs alone, REST alone; classic mode with both and with REST alone), and a real
# Prometheus scraping at 10 s with the shipped rules. See tests/e2e_drain.py for what it asserts
# and needs (target/debug/spark-exporter, prometheus, $SPARK_E2E_PYTHON with pyspark, Java 17).
# About 1.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_drain.py "$@"
