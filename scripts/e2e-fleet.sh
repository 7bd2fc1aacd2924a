#!/usr/bin/env bash
# End-to-end test of fleet mode (issue 15) with a real Prometheus: three shard exporters and an
# unsharded one over 200 applications, then two shards (nothing counted twice, every number
# Spark's); and aggregation by application name over five runs of a real PySpark application,
# with an exporter restart in the middle (increase() exact). See tests/e2e_fleet.py for what it
# asserts and needs (target/debug/spark-exporter, prometheus, zstd, $SPARK_E2E_PYTHON with
# pyspark, Java 17). About 2 to 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_fleet.py "$@"
