#!/usr/bin/env bash
# Writes tests/data/compare-<version>/ from three REAL PySpark runs of
# scripts/diagnosis_workload.py (application `diagnosis`, job groups join_smj, skew_join, spill,
# plan_stable and tiny_partitions; about a minute each) for `diagnose --compare` (issue 52):
#   base       local-cluster[2,1,1024], Spark's defaults
#   aqe_off    the same with spark.sql.adaptive.enabled=false for the whole application
#   one_exec   the same as base on local-cluster[1,1,1024]: one executor instead of two
# Their zstd rolling event logs (eventlog/<run>/) and meta.json (run -> application id).
#
#   scripts/compare-fixture.sh [PYTHON [OUT]]   # default .venv/bin/python, tests/data/compare-<version>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-$root/.venv/bin/python}"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
out="${2:-$root/tests/data/compare-$version}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
groups=join_smj,skew_join,spill,plan_stable,tiny_partitions
echo '{"application": {"spark.sql.adaptive.enabled": "false"}}' >"$tmp/aqe_off.json"
run() { # NAME [ARGS...]
  local name="$1"; shift
  "$py" "$root/scripts/diagnosis_workload.py" --apps diagnosis --only "$groups" \
    --event-log-dir "$tmp/ev/$name" --meta-out "$tmp/$name.json" --ui-port "${UI_PORT:-4113}" "$@"
}
run base
run aqe_off --settings "$tmp/aqe_off.json"
run one_exec --master 'local-cluster[1,1,1024]'
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog"
"$py" - "$tmp" "$out/meta.json" <<'PY'
import json, sys
tmp, out = sys.argv[1], sys.argv[2]
runs = {n: json.load(open(f"{tmp}/{n}.json"))["apps"]["diagnosis"] for n in ("base", "aqe_off", "one_exec")}
json.dump({"runs": runs}, open(out, "w"), indent=2)
PY
cat >"$out/README.md" <<MD
# Comparison fixture (PySpark $version)

Written by \`scripts/compare-fixture.sh\` from three real runs of \`scripts/diagnosis_workload.py\`
(application \`diagnosis\`; job groups $groups; the workload's docstring says what each does),
for \`diagnose --compare\` (tests/it/compare.rs). Do not edit by hand: regenerate.

- \`eventlog/base/\`: local-cluster[2,1,1024], Spark's defaults.
- \`eventlog/aqe_off/\`: the same with \`spark.sql.adaptive.enabled=false\` for the application.
- \`eventlog/one_exec/\`: the same as base on local-cluster[1,1,1024] (one executor).
- \`meta.json\`: run -> application id.
MD
du -sh "$out"/*
echo "wrote $out"
