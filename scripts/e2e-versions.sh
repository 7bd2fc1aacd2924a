#!/usr/bin/env bash
# The live REST end-to-end test (tests/it/jvm/e2e_core.rs, through scripts/e2e-core.sh) on other Spark
# versions than the 4.1.1 every other suite runs (docs/internals.md, "Spark versions"); every version is
# covered by the replayed real-run fixtures of tests/it/version_matrix.rs. scripts/test.sh runs the
# one representative case, the oldest supported Spark (3.3.4); the whole matrix:
#   scripts/e2e-versions.sh 3.3.4 3.4.4 3.5.9 4.0.5 4.2.1 4.3.0
# Prints each run's time.
# Usage: scripts/e2e-versions.sh [VERSION...]     (default: 3.3.4)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.3.4)
cargo build --test it
for v in "${versions[@]}"; do
  echo "=== e2e-core on pyspark $v"
  start=$(date +%s)
  SPARK_E2E_PYTHON= PYSPARK_VERSION="$v" scripts/e2e-core.sh
  echo "=== e2e-core on pyspark $v passed in $(( $(date +%s) - start )) s"
done
