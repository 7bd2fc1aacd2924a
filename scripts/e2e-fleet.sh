#!/usr/bin/env bash
# End-to-end test of fleet mode (issue 15) with a real Prometheus: A (--only shards) three shard
# exporters and an unsharded one over 200 applications, then two shards (nothing counted twice,
# every number Spark's); B (--only names) aggregation by application name over seven runs of a real
# PySpark application, with an exporter restart in the middle (increase() exact), the sixth slow on
# purpose with a skewed stage (the shipped rules: SparkRunSlowerThanUsual, SparkRunCostlierThanUsual
# and SparkNewFindingKind fire for it, and only for it); C (--only checkpoints) checkpoints (issue
# 34): three shards, per run and by name, restarted with SIGTERM and SIGKILL while new runs end and
# resharded 3 -> 2 -> 3 (no reset, _created kept, no finished log read again, every number the
# logs'; --seed N picks the restarts). See tests/e2e_fleet.py for what it asserts and needs
# (target/debug/spark-exporter or --exporter PATH, prometheus, zstd; for B $SPARK_E2E_PYTHON with
# pyspark, Java 17). About 3 to 4 minutes on 2 cores for A and B (B about 3), 1.5 more for C.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/e2e_fleet.py "$@"
