#!/usr/bin/env bash
# Checks the alerting/recording rules. Needs python3 and promtool (Debian package `prometheus`).
#
#  1. the generated rule files match scripts/alerts-generate.py (no drift)
#  2. `promtool check rules` on the plain rule file and on the PrometheusRule's spec
#  3. `promtool test rules` on tests/alerts/*.test.yml
#  4. every alert has a firing and a must-not-fire test case
#  5. the tests can fail: rules generated with wrong thresholds, or with a naive `increase() > 0`
#     that misses the first failure, must make `promtool test rules` fail
set -euo pipefail
cd "$(dirname "$0")/.."
command -v promtool >/dev/null || { echo "promtool not found (apt-get install prometheus)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== 1. generated files are up to date"
python3 scripts/alerts-generate.py --check

echo "== 2. promtool check rules"
promtool check rules alerts/spark-exporter.rules.yml
# The PrometheusRule's spec is a rule file indented by two spaces under `spec:`.
awk 'found { print substr($0, 3) } /^spec:$/ { found = 1 }' alerts/prometheusrule.yaml > "$tmp/operator-spec.yml"
grep -q '^groups:$' "$tmp/operator-spec.yml" || { echo "no spec.groups in alerts/prometheusrule.yaml" >&2; exit 1; }
promtool check rules "$tmp/operator-spec.yml"
grep -q '^apiVersion: monitoring.coreos.com/v1$' alerts/prometheusrule.yaml
grep -q '^kind: PrometheusRule$' alerts/prometheusrule.yaml
# Same groups in both files, byte for byte.
awk '/^groups:$/ { found = 1 } found' alerts/spark-exporter.rules.yml | diff - "$tmp/operator-spec.yml"

echo "== 3. promtool test rules"
promtool test rules tests/alerts/*.test.yml

echo "== 4. coverage"
python3 scripts/alerts-coverage.py alerts/spark-exporter.rules.yml tests/alerts/*.test.yml

echo "== 5. the tests detect broken rules"
# Run the unit tests against a different rule file (copies of the tests point at it).
run_tests_against() {
  local rules=$1 dir
  dir=$(mktemp -d -p "$tmp")
  for t in tests/alerts/*.test.yml; do
    sed "s#\.\./\.\./alerts/spark-exporter\.rules\.yml#$rules#" "$t" > "$dir/$(basename "$t")"
  done
  promtool test rules "$dir"/*.test.yml > "$dir/out.txt" 2>&1
}
expect_failure() {  # description, rules file
  if run_tests_against "$2"; then
    echo "FAIL: the unit tests still pass with $1" >&2
    exit 1
  fi
  echo "ok: the unit tests fail with $1"
}
for mutation in STUCK_MINUTES=20 GC_RATIO=0.25 GC_MIN_BUSY_SLOTS=0.01 EVENT_WINDOW=5m \
                NEW_SERIES_LOOKBACK=1m SKEW_RATIO=10 SKEW_MIN_WAIT_SECONDS=300 SPILL_BYTES=4294967296 \
                TASK_FAILURE_RATIO=0.2 TARGET_DOWN_FOR=10m EXPORTER_JOB_REGEX=.* \
                EVENTLOG_LAG_SECONDS=600 LOST_EXECUTOR_REASONS=.+ STAGE_FAILURES=5 EVENTLOG_IGNORED_KINDS=none; do
  mdir=$(mktemp -d -p "$tmp")
  python3 scripts/alerts-generate.py --out-dir "$mdir" --set "$mutation" > /dev/null
  expect_failure "$mutation" "$mdir/spark-exporter.rules.yml"
done
# Without the new-series branch, a counter that appears with its first failure is never seen.
python3 - alerts/spark-exporter.rules.yml "$tmp/naive.rules.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
naive, n = re.subn(r"\(\n\s*(\S+)\n\s*unless\n\s*max_over_time\(\S+\[\S+\] offset \S+\)\n\s*\)\n\s*or\n", "", text)
assert n >= 5, f"expected the new-series branch in >= 5 rules, found {n}"
open(sys.argv[2], "w").write(naive)
EOF
promtool check rules "$tmp/naive.rules.yml" > /dev/null
expect_failure "naive increase() > 0 failure alerts" "$tmp/naive.rules.yml"

echo "alerts: all checks passed"
