#!/usr/bin/env bash
# End-to-end test of the diagnosis signals (issue 18): scripts/diagnosis_workload.py live on
# local-cluster (each condition next to its healthy twin), the exporter tailing its event logs, a
# real Prometheus scraping at 2 s with the shipped rules (windows and thresholds shortened for a
# four-minute run), the Diagnosis dashboard's queries, and the exactness tests on the run's own
# output. See tests/e2e_diagnosis.py for what it asserts and needs (target/debug/spark-exporter,
# prometheus, $SPARK_E2E_PYTHON with pyspark, Java 17, cargo). About 4 minutes (the idle and busy applications run beside the main one).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_diagnosis.py "$@"
