#!/usr/bin/env bash
# End-to-end test of the exporter against a real PySpark application (tests/it/jvm/e2e_core.rs).
#
# Which PySpark:
#   - $PYSPARK_VERSION without $SPARK_E2E_PYTHON (e.g. PYSPARK_VERSION=3.3.4): .venv-versions/$PYSPARK_VERSION/
#     (scripts/pyspark-venv.sh creates it when missing; Python 3.10 for 3.3 and 3.4);
#   - else $SPARK_E2E_PYTHON, default .venv/bin/python; when missing, that venv is created
#     with pyspark==$PYSPARK_VERSION (default 4.1.1).
# PYSPARK_PYTHON is set to the same interpreter, so Python workers match the driver. Needs Java 17
# on PATH. Runs with SPARK_E2E_REQUIRED=1, so a broken environment fails instead of skipping.
# Extra arguments go to the test binary (e.g. `live` to run one test). Artefacts:
# target/tmp/e2e-core-<pid>/. scripts/e2e-versions.sh runs it on the oldest and newest Spark.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v java >/dev/null; then
  echo "e2e-core: java not found; install Java 17" >&2
  exit 1
fi
if [ -z "${SPARK_E2E_PYTHON:-}" ] && [ -n "${PYSPARK_VERSION:-}" ]; then
  PY="$(scripts/pyspark-venv.sh "$PYSPARK_VERSION")"
else
  PY=${SPARK_E2E_PYTHON:-.venv/bin/python}
  if [ ! -x "$PY" ]; then
    venv=$(dirname "$(dirname "$PY")")
    echo "e2e-core: creating $venv with pyspark==${PYSPARK_VERSION:-4.1.1}" >&2
    python3 -m venv "$venv"
    "$PY" -m pip install --quiet "pyspark==${PYSPARK_VERSION:-4.1.1}"
  fi
fi
echo "e2e-core: $("$PY" -c 'import pyspark, sys; print("pyspark", pyspark.__version__, "on Python", sys.version.split()[0])')" >&2

SPARK_E2E_PYTHON="$PY" PYSPARK_PYTHON="$PY" SPARK_E2E_REQUIRED=1 \
  exec cargo test --test it jvm::e2e_core:: -- --nocapture "$@"
