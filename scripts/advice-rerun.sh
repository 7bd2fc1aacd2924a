#!/usr/bin/env bash
# The advice checked against Spark (issue 50): diagnose a real run of
# scripts/diagnosis_workload.py, apply the settings it suggests, run it again, and the findings
# they address cost at least half as much. See tests/advice_rerun.py for what it asserts and
# needs (target/debug/spark-exporter, $SPARK_E2E_PYTHON with pyspark, Java 17). About 3 minutes
# (--repeat 2: two runs before, two after).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/advice_rerun.py "$@"
