#!/usr/bin/env bash
# End-to-end test of the exporter against a real PySpark application (tests/e2e_core.rs).
#
# Uses the interpreter at $SPARK_E2E_PYTHON (default .venv/bin/python); when it is missing, creates
# that virtualenv and installs pyspark==$PYSPARK_VERSION into it. Needs Java 17 on PATH. Runs with
# SPARK_E2E_REQUIRED=1, so a broken environment fails instead of skipping. Extra arguments go to
# the test binary (e.g. `live` to run one test). Artefacts: target/tmp/e2e-core-<pid>/.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${SPARK_E2E_PYTHON:-.venv/bin/python}
PYSPARK_VERSION=${PYSPARK_VERSION:-4.1.1}

if ! command -v java >/dev/null; then
  echo "e2e-core: java not found; install Java 17" >&2
  exit 1
fi
if [ ! -x "$PY" ]; then
  venv=$(dirname "$(dirname "$PY")")
  echo "e2e-core: creating $venv with pyspark==$PYSPARK_VERSION" >&2
  python3 -m venv "$venv"
  "$PY" -m pip install --quiet "pyspark==$PYSPARK_VERSION"
fi

SPARK_E2E_PYTHON="$PY" SPARK_E2E_REQUIRED=1 exec cargo test --test e2e_core -- --nocapture "$@"
