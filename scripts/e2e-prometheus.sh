#!/usr/bin/env bash
# End-to-end test of the dashboards and alerts on a real Spark application, the exporter and a
# real Prometheus: see tests/e2e_prometheus.py for what it asserts and needs
# (target/debug/spark-exporter, prometheus + promtool, $SPARK_E2E_PYTHON with pyspark, Java 17).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_prometheus.py "$@"
