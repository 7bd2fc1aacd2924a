#!/usr/bin/env bash
# The live REST end-to-end test (tests/e2e_core.rs, through scripts/e2e-core.sh) on the oldest
# and the newest supported Spark (README, "Spark versions"); the versions in between are covered
# by the replayed fixtures of tests/version_matrix.rs. Prints each run's time.
# Usage: scripts/e2e-versions.sh [VERSION...]     (default: 3.3.4 4.3.0)
set -euo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.3.4 4.3.0)
cargo build --test e2e_core
for v in "${versions[@]}"; do
  echo "=== e2e-core on pyspark $v"
  start=$(date +%s)
  SPARK_E2E_PYTHON= PYSPARK_VERSION="$v" scripts/e2e-core.sh
  echo "=== e2e-core on pyspark $v passed in $(( $(date +%s) - start )) s"
done
