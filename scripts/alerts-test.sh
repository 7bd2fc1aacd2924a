#!/usr/bin/env bash
# Checks the alerting/recording rules. Needs python3 and promtool (Debian package `prometheus`).
#
#  1. the generated rule files match scripts/alerts-generate.py (no drift)
#  2. `promtool check rules` on the plain rule file and on the PrometheusRule's spec
#  3. `promtool test rules` on tests/alerts/*.test.yml
#  4. every alert has a firing and a must-not-fire test case, and a firing case whose alerts
#     carry cluster, namespace and pod
#  5. the tests can fail: rules generated with wrong thresholds, with a naive `increase() > 0`
#     that misses the first failure, without the grouping labels, or with joins that ignore
#     them, must make `promtool test rules` fail (the last two: in a test of every rule concerned)
#  6. configuration: alerts/config.example.json generates valid rules carrying its settings
#     (read as YAML too when PyYAML is there); a config with mistakes is refused, each named
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
# Run the unit tests against a different rule file (copies of the tests point at it): the test
# files that can see the change, those naming a changed rule or one that reads it
# (scripts/alerts-affected.py); the others evaluate only unchanged rules and would pass as before.
# None of them: the change goes unseen, which counts as the tests passing.
run_tests_against() {
  local rules=$1 dir affected
  dir=$(mktemp -d -p "$tmp")
  last_out="$dir/out.txt"
  affected=$(python3 scripts/alerts-affected.py alerts/spark-exporter.rules.yml "$rules" tests/alerts/*.test.yml)
  last_files=$(echo $affected | wc -w)
  if [ -z "$affected" ]; then
    echo "no test file names a rule that changed" > "$last_out"
    return 0
  fi
  for t in $affected; do
    sed "s#\.\./\.\./alerts/spark-exporter\.rules\.yml#$rules#" "$t" > "$dir/$(basename "$t")"
  done
  promtool test rules "$dir"/*.test.yml > "$last_out" 2>&1
}
expect_failure() {  # description, rules file
  if run_tests_against "$2"; then
    echo "FAIL: the unit tests still pass with $1" >&2
    exit 1
  fi
  echo "ok: the unit tests fail with $1 (of the $last_files test files that name what changed)"
}
# A mutation's test files take 0.2 to 5 s of promtool on one core: the mutations run side by side,
# one per core, and their output is printed once all have ended.
mutations=(STUCK_MINUTES=20 GC_RATIO=0.25 GC_MIN_BUSY_SLOTS=0.01 EVENT_WINDOW=5m \
                NEW_SERIES_LOOKBACK=1m SKEW_RATIO=10 SKEW_MIN_WAIT_SECONDS=300 SPILL_BYTES=4294967296 \
                TASK_FAILURE_RATIO=0.2 TARGET_DOWN_FOR=10m 'EXPORTER_SELECTOR=job=~".*"' \
                EVENTLOG_LAG_SECONDS=600 LOST_EXECUTOR_REASONS=.+ STAGE_FAILURES=5 EVENTLOG_IGNORED_KINDS=none \
                STREAMING_BATCH_TRIGGER_RATIO=2.5 STREAMING_BEHIND_FOR=20m STREAMING_PROCESSED_INPUT_RATIO=0.5 \
                STREAMING_WATERMARK_LAG_GROWTH_SECONDS=200 GC_GROUP_MIN_BUSY_SLOTS=2 SKEWED_STAGES_MIN_TASK_SECONDS=10 \
                SKEWED_STAGES=100 PLAN_CHANGE_WINDOW=1m UTILIZATION_RATIO=0.2 UTILIZATION_MIN_CORE_SECONDS=1 \
                JOIN_HISTORY_WINDOW=1m DIAGNOSIS_COST_SECONDS=7200 DIAGNOSIS_COST_WINDOW=1h \
                DIAGNOSIS_GROUP_COST_SECONDS=7200 DIAGNOSIS_APP_KINDS=none RUN_REGRESSION_RATIO=3 \
                RUN_HISTORY_WINDOW=3d RUN_HISTORY_MIN_RUNS=4 RUN_REGRESSION_WINDOW=4h \
                NEW_FINDING_KIND_WINDOW=2h NEW_FINDING_KIND_LOOKBACK=1h)
mutate() {  # mutation
  local mdir
  mdir=$(mktemp -d -p "$tmp")
  python3 scripts/alerts-generate.py --out-dir "$mdir" --set "$1" > /dev/null
  expect_failure "$1" "$mdir/spark-exporter.rules.yml"
}
running=0; failed=0; outs=()
for mutation in "${mutations[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then wait -n || failed=1; running=$((running - 1)); fi
  out="$tmp/mutation.${#outs[@]}.out"; outs+=("$out")
  (mutate "$mutation") > "$out" 2>&1 &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
cat "${outs[@]}"
[ "$failed" -eq 0 ] || exit 1
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

# The routing tests must catch every rule that aggregates or joins dropping cluster/namespace/pod:
# the run fails and names each such rule among its failures. (SparkExporterTargetDown,
# SparkExporterDown and SparkExecutorHighGCRatio keep the series' labels whatever the setting.)
expect_failures_of() {  # description, rules file, texts that must be in promtool's failures...
  local desc=$1 rules=$2
  shift 2
  expect_failure "$desc" "$rules"
  for name in "$@"; do
    grep -qF -- "$name" "$last_out" || { echo "FAIL: with $desc, no test of $name failed" >&2; cat "$last_out" >&2; exit 1; }
  done
}
mdir=$(mktemp -d -p "$tmp")
python3 scripts/alerts-generate.py --out-dir "$mdir" --set GROUPING_LABELS= > /dev/null
expect_failures_of "GROUPING_LABELS empty" "$mdir/spark-exporter.rules.yml" \
  "alertname: SparkStageStuck," "alertname: SparkJobFailed," "alertname: SparkStageFailures," \
  "alertname: SparkExecutorsLost," "alertname: SparkTaskFailureRatioHigh," "alertname: SparkStageTaskSkew," \
  "alertname: SparkHighSpill," "alertname: SparkExporterEventLogErrors," "alertname: SparkExporterEventLogLag," \
  "spark_app:gc_ratio:rate5m" "spark_job_group:gc_ratio:rate5m" "spark_app:task_failure_ratio:rate5m" \
  "spark_app_job_group:job_duration_seconds:sum" "spark_app_job_group:job_duration_seconds:count" \
  "spark_app_job_group:job_duration_seconds:mean" "alertname: SparkStreamingQueryFallingBehind," \
  "spark_streaming_query:batch_duration_seconds:mean5m" "spark_streaming_query:trigger_interval_seconds" \
  "spark_streaming_query:batch_trigger_ratio:mean5m" "alertname: SparkJobGroupHighGCRatio," \
  "alertname: SparkSkewedStages," "alertname: SparkJoinStrategyChanged," "alertname: SparkPlanChanged," \
  "alertname: SparkLowCoreUtilization," "spark_app:core_utilization:ratio" \
  "alertname: SparkDiagnosisCostHigh," "alertname: SparkJobGroupDiagnosisCostHigh," \
  "spark_app_name:run_duration_seconds:history_median" "spark_app_name:run_core_seconds:history_median" \
  "spark_app_name:runs:history_count" "alertname: SparkRunSlowerThanUsual," \
  "alertname: SparkRunCostlierThanUsual," "alertname: SparkNewFindingKind,"
# The grouping labels kept by the aggregations but not by the joins (`and on (...)`).
sed 's/ on (cluster, namespace, \(pod, \)\?/ on (/' alerts/spark-exporter.rules.yml > "$tmp/on.rules.yml"
[[ $(grep -c ' on (' alerts/spark-exporter.rules.yml) -eq 15 && $(grep -c ' on (cluster' "$tmp/on.rules.yml") -eq 0 ]] \
  || { echo "expected fifteen joins (SparkStageTaskSkew, SparkExporterEventLogLag, the streaming ratio, four diagnosis alerts, three in each run regression alert and two in SparkNewFindingKind) to mutate" >&2; exit 1; }
# (The run regression alerts fail with an evaluation error, "rule: NAME, ...": two clusters' series
# of one name match many-to-many.)
expect_failures_of "joins on (...) without the grouping labels" "$tmp/on.rules.yml" \
  "alertname: SparkStageTaskSkew," "alertname: SparkExporterEventLogLag," \
  "spark_streaming_query:batch_trigger_ratio:mean5m" "alertname: SparkJobGroupHighGCRatio," \
  "alertname: SparkSkewedStages," "alertname: SparkJoinStrategyChanged," "alertname: SparkLowCoreUtilization," \
  "SparkRunSlowerThanUsual," "SparkRunCostlierThanUsual," "alertname: SparkNewFindingKind,"

echo "== 6. configuration"
example="$tmp/example"
python3 scripts/alerts-generate.py --out-dir "$example" --config alerts/config.example.json > /dev/null
promtool check rules "$example/spark-exporter.rules.yml"
python3 - alerts/config.example.json "$example" <<'EOF'
import json, sys
cfg = json.load(open(sys.argv[1]))
rules = open(sys.argv[2] + "/spark-exporter.rules.yml").read()
operator = open(sys.argv[2] + "/prometheusrule.yaml").read()
grouping = ", ".join(cfg["GROUPING_LABELS"])
want = [(rules, f"sum by ({grouping}, app_id, app_name, job_group) (spark_job_duration_seconds_sum)"),
        (rules, f"runbook_url: \"{cfg['RUNBOOK_BASE_URL']}#sparkjobfailed\""),
        (rules, json.dumps("up{%s} == 0" % cfg["EXPORTER_SELECTOR"])),
        (rules, f'(spark_stage_stalled_seconds) > {cfg["STUCK_MINUTES"] * 60}"'),
        (rules, "increase(spark_diagnosis_cost_seconds_total[1d])\n            )\n          )\n"
                f'          > {cfg["DIAGNOSIS_COST_SECONDS"]}\n'),
        (operator, f"\n  name: {cfg['PROMETHEUSRULE_NAME']}\n")]
want += [(rules, f"\n          {k}: {v}\n") for k, v in cfg["ALERT_LABELS"].items()]
want += [(operator, f"\n    {k}: {v}\n") for k, v in cfg["PROMETHEUSRULE_LABELS"].items()]
missing = [w for text, w in want if w not in text]
assert not missing, f"settings of the example config missing from the generated rules: {missing}"
print("ok: alerts/config.example.json generates rules with its settings")
EOF
if python3 -c 'import yaml' 2> /dev/null; then
  # JSON is YAML: the same settings through the YAML reader make the same files.
  cp alerts/config.example.json "$tmp/config.yaml"
  python3 scripts/alerts-generate.py --check --out-dir "$example" --config "$tmp/config.yaml" > /dev/null
  echo "ok: the example config read as YAML generates the same files"
fi
cat > "$tmp/bad.json" <<'EOF'
{"GC_FOR": "ten minutes", "GROUPING_LABELS": ["name-space"], "ALERT_LABELS": {"severity": "page"},
 "EXPORTER_JOB_REGEX": ".*", "PROMETHEUSRULE_LABELS": {"release": "has space"}, "SPILL_BYTES": "1Gi"}
EOF
if python3 scripts/alerts-generate.py --out-dir "$tmp/bad" --config "$tmp/bad.json" --set NOPE=1 2> "$tmp/bad.txt"; then
  echo "FAIL: a config with mistakes was accepted" >&2; exit 1
fi
for m in "GC_FOR: 'ten minutes'" "'name-space' is not a Prometheus label name" "ALERT_LABELS: severity" \
         "EXPORTER_JOB_REGEX was renamed" "'has space' (of release)" "SPILL_BYTES: expected a number" \
         "unknown setting NOPE"; do
  grep -qF -- "$m" "$tmp/bad.txt" || { echo "FAIL: no problem reported for $m" >&2; cat "$tmp/bad.txt" >&2; exit 1; }
done
[[ ! -e "$tmp/bad" ]] || { echo "FAIL: a refused config wrote files" >&2; exit 1; }
echo "ok: a config with 7 mistakes is refused, each named"

echo "alerts: all checks passed"
