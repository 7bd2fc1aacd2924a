#!/usr/bin/env bash
# Prints the Python interpreter of .venv-versions/<version>/, a venv with pyspark==<version>,
# creating it when missing or holding another pyspark. PySpark 3.3 and 3.4 cannot pickle lambdas
# on Python 3.11+, so their venvs use Python 3.10 ($PY310, default pyenv's 3.10.13); the others
# use python3. Run PySpark with PYSPARK_PYTHON set to the printed interpreter, so Python workers
# match the driver. Install output goes to stderr.
# Usage: scripts/pyspark-venv.sh VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
v="${1:?usage: scripts/pyspark-venv.sh VERSION}"
dir=".venv-versions/$v"
base=python3
case "$v" in
  3.3.* | 3.4.*) base="${PY310:-$HOME/.pyenv/versions/3.10.13/bin/python}" ;;
esac
if ! "$dir/bin/python" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$v')" 2>/dev/null; then
  echo "pyspark-venv: creating $dir with pyspark==$v on $("$base" --version)" >&2
  "$base" -m venv "$dir" >&2
  "$dir/bin/pip" install -q "pyspark==$v" >&2
fi
echo "$PWD/$dir/bin/python"
