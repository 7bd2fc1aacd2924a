#!/usr/bin/env bash
# Checks the Grafana dashboards. Needs python3 and promtool (Debian package `prometheus`).
#
#  1. dashboards/*.json match scripts/dashboards-generate.py (no drift)
#  2. scripts/dashboards-lint.py: schema version, variables, unit/description/datasource on every
#     panel, known metrics, variables used in every selector; every query parsed by promtool
#  3. the lint can fail: copies with typical mistakes must be rejected, one problem per mistake
#  4. the per-run queries of the jobs dashboard, on made-up series of two runs (promtool test
#     rules): one row per run and job group, the run's value and its start time
#  5. the cost queries of the efficiency dashboard, on made-up runs (promtool test rules): a run's
#     counter that appears in the range counts whole, an older one its increase, a run exported
#     twice once, and costs of different kinds are never added up
set -euo pipefail
cd "$(dirname "$0")/.."
command -v promtool >/dev/null || { echo "promtool not found (apt-get install prometheus)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== 1. generated dashboards are up to date"
python3 scripts/dashboards-generate.py --check

echo "== 2. lint and promtool parse"
python3 scripts/dashboards-lint.py --promtool

echo "== 3. the lint rejects broken dashboards"
python3 - "$tmp/broken.json" "$tmp/broken2.json" "$tmp/broken3.json" "$tmp/broken4.json" <<'PY'
import json, sys
d = json.load(open("dashboards/spark-jobs.json"))
d["uid"] = "broken-copy"
d["title"] = "broken copy"
d["schemaVersion"] = 36
d["__inputs"] = []
d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "job_group"]
panels = [p for p in d["panels"] if p["type"] != "row"]
del panels[0]["description"]
del panels[1]["fieldConfig"]["defaults"]["unit"]
panels[2]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
panels[3]["targets"][0]["expr"] = 'sum(spark_jobs_totl{app_id=~"$app_id"})'
panels[4]["targets"][0]["expr"] = 'sum(spark_jobs_active{app_id=~"$app_id"})'
panels[5]["targets"][0]["expr"] = 'sum(rate(spark_tasks_total{app_name=~"$app_name", app_id=~"$app_id", job_group=~"$job_group"}[5m]) by'
json.dump(d, open(sys.argv[1], "w"))

# A second copy keeps the jobs dashboard's uid, which the per-run check looks for.
d = json.load(open("dashboards/spark-jobs.json"))
d["title"] = "broken copy 2"
d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "namespace"]
app_id = next(v for v in d["templating"]["list"] if v["name"] == "app_id")
app_id["query"] = app_id["definition"] = 'label_values(spark_app_info{app_name=~"$app_name"}, app_id)'
panels = {p["title"]: p for p in d["panels"] if p["type"] != "row"}
panels["Active jobs"]["targets"][0]["expr"] = \
    'sum(spark_jobs_active{app_name=~"$app_name", app_id=~"$app_id", job_group=~"$job_group"})'
panels["Mean job duration"]["fieldConfig"]["defaults"]["custom"]["showPoints"] = "never"
for p in panels.values():
    p["targets"] = [t for t in p["targets"] if "spark_app_start_time_seconds" not in t["expr"]] or p["targets"]
json.dump(d, open(sys.argv[2], "w"))

# The fleet dashboard filters by the exporters' job as well.
d = json.load(open("dashboards/spark-fleet.json"))
d["uid"], d["title"] = "broken-fleet", "broken fleet"
app_name = next(v for v in d["templating"]["list"] if v["name"] == "app_name")
app_name["query"] = app_name["definition"] = app_name["query"].replace(', job=~"$job"', "")
panels = {p["title"]: p for p in d["panels"] if p["type"] != "row"}
panels["Applications per shard"]["targets"][0]["expr"] = \
    'count by (instance) (spark_app_info{cluster=~"$cluster", namespace=~"$namespace", app_name=~"$app_name", app_id=~"$app_id"})'
panels["Scrape target up"]["targets"][0]["expr"] = 'up{job=~"$job"}'
json.dump(d, open(sys.argv[3], "w"))

# The efficiency dashboard never adds up the costs of different finding kinds; its note has content.
d = json.load(open("dashboards/spark-efficiency.json"))
d["uid"], d["title"] = "broken-efficiency", "broken efficiency"
panels = {p["title"]: p for p in d["panels"] if p["type"] != "row"}
sel = ('cluster=~"$cluster", namespace=~"$namespace", job=~"$job", app_name=~"$app_name", app_id=~"$app_id", '
       'job_group=~"$job_group"')
panels["Cost by kind over the time range"]["targets"][0]["expr"] = \
    f"sum by (app_name) (increase(spark_diagnosis_cost_seconds_total{{{sel}}}[$__range]))"
panels["Window cost"]["targets"][0]["expr"] = f"sum(spark_diagnosis_window_cost_seconds{{{sel}}})"
panels["Costs overlap across kinds"]["options"]["content"] = ""
json.dump(d, open(sys.argv[4], "w"))
PY
if python3 scripts/dashboards-lint.py --promtool "$tmp/broken.json" "$tmp/broken2.json" "$tmp/broken3.json" \
    "$tmp/broken4.json" > "$tmp/out.txt" 2>&1; then
  echo "FAIL: the lint accepted a broken dashboard" >&2; cat "$tmp/out.txt" >&2; exit 1
fi
for expected in "schemaVersion 36" "__inputs" "no template variable job_group" "no description" "no unit" \
                "datasource must be" "unknown metric spark_jobs_totl" 'does not filter app_name' \
                'does not filter job_group' "promtool rejects" "no template variable namespace" \
                'variable app_id must filter cluster' 'does not filter cluster' 'does not filter namespace' \
                "'Mean job duration': charts sparse data" \
                "no per-run panel charts spark_app_job_group:job_duration_seconds:mean" \
                'variable app_name must filter job=~"$job"' 'app_id=~"$app_id"} does not filter job=~"$job"' \
                'up{job=~"$job"} does not filter cluster' \
                "'Cost by kind over the time range' query A: \`sum by (app_name) (\` adds up the costs" \
                "'Window cost' query A: \`sum(\` adds up the costs" "'Costs overlap across kinds': text panel without content"; do
  grep -q -- "$expected" "$tmp/out.txt" || { echo "FAIL: lint did not report '$expected'" >&2; cat "$tmp/out.txt" >&2; exit 1; }
done
echo "ok: the lint reports every planted mistake"

echo "== 4. per-run queries on two made-up runs of one application"
# run-1: no cluster/namespace labels, its start time exported twice (two exporters); run-2: in a
# cluster and namespace, with a pod label on the rules, two job groups; run-9: another
# application, not selected. The recording rules are given as series (their values made up).
python3 - "$tmp/per-run.test.yml" <<'PY'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("lint", "scripts/dashboards-lint.py")
lint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lint)
R = "spark_app_job_group:job_duration_seconds"
run1 = 'app_name="etl", app_id="run-1"'
run2 = 'cluster="c1", namespace="spark", pod="etl-2-driver", app_name="etl", app_id="run-2"'
series = [
    (f'spark_app_start_time_seconds{{instance="a:9809", job="spark-exporter", {run1}}}', "60x19"),
    (f'spark_app_start_time_seconds{{instance="b:9809", job="spark-exporter", {run1}}}', "60x19"),
    (f'{R}:count{{{run1}, job_group="load"}}', "1 2 3x17"),
    (f'{R}:sum{{{run1}, job_group="load"}}', "10 30 60x17"),
    (f'{R}:mean{{{run1}, job_group="load"}}', "10 15 20x17"),
    (f'spark_app_start_time_seconds{{instance="10.0.0.7:9809", job="spark-exporter", {run2}}}', "_x30 1800x28"),
    (f'{R}:count{{{run2}, job_group="load"}}', "_x30 2 4x27"),
    (f'{R}:sum{{{run2}, job_group="load"}}', "_x30 50 90x27"),
    (f'{R}:mean{{{run2}, job_group="load"}}', "_x30 25 22.5x27"),
    (f'{R}:count{{{run2}, job_group="report"}}', "_x30 1x28"),
    (f'{R}:sum{{{run2}, job_group="report"}}', "_x30 5x28"),
    (f'{R}:mean{{{run2}, job_group="report"}}', "_x30 5x28"),
    ('spark_app_start_time_seconds{instance="a:9809", job="spark-exporter", app_name="other", app_id="run-9"}', "100x58"),
] + [(f'{R}:{k}{{app_name="other", app_id="run-9", job_group="load"}}', "1x58") for k in ("count", "sum", "mean")]
# What each query must return at 59m over the last hour: the run's value, or its start in ms.
rows = [('{app_name="etl", app_id="run-1", job_group="load"}', {"count": 3, "sum": 60, "mean": 20, "start": 60000}),
        ('{cluster="c1", namespace="spark", app_name="etl", app_id="run-2", job_group="load"}',
         {"count": 4, "sum": 90, "mean": 22.5, "start": 1800000}),
        ('{cluster="c1", namespace="spark", app_name="etl", app_id="run-2", job_group="report"}',
         {"count": 1, "sum": 5, "mean": 5, "start": 1800000})]
tests, panels = [], set()
for q in lint.queries("dashboards/spark-jobs.json"):
    if q["kind"] != "panel" or R not in q["expr"]:
        continue
    kind = "start" if "spark_app_start_time_seconds" in q["expr"] else q["expr"].split(R + ":")[1].split("{")[0]
    panels.add(q["panel"])
    tests.append({"expr": lint.substitute(q["expr"], {"app_name": ["etl"]}, range_="1h"), "eval_time": "59m",
                  "exp_samples": [{"labels": labels, "value": want[kind]} for labels, want in rows]})
if len(panels) < 2:
    sys.exit(f"expected per-run panels in spark-jobs.json, found {sorted(panels)}")
doc = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
    "interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series], "promql_expr_test": tests}]}
json.dump(doc, open(sys.argv[1], "w"), indent=1)  # JSON is YAML
print(f"{len(tests)} queries of {len(panels)} panels: " + ", ".join(sorted(panels)))
PY
promtool test rules "$tmp/per-run.test.yml"

echo "== 5. cost queries of the efficiency dashboard on made-up runs"
# etl: run r1 older than the range (its skew counter grows 10 s a minute), run r2 new in it (skew
# 1000 s, exported by its sidecar and, 5 minutes later, by a fleet shard; spill 500 s); r0 ended
# before the range. report: r5 new, skew 300 s in job group g, and idle cores (no job group).
python3 - "$tmp/efficiency.test.yml" <<'PY'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("lint", "scripts/dashboards-lint.py")
lint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lint)
C = "spark_diagnosis_cost_seconds_total"
side, fleet = 'instance="10.0.0.2:9809", job="spark-exporter"', 'instance="10.0.1.1:9809", job="spark-fleet"'
etl = 'app_name="etl", job_group="load", job_description="daily load"'
series = [
    (f'{C}{{{side}, {etl}, app_id="r1", kind="skew"}}', "0+10x120"),
    (f'{C}{{{side}, {etl}, app_id="r2", kind="skew"}}', "_x90 1000x30"),
    (f'{C}{{{fleet}, {etl}, app_id="r2", kind="skew"}}', "_x95 1000x25"),
    (f'{C}{{{side}, {etl}, app_id="r2", kind="spill"}}', "_x90 500x30"),
    (f'{C}{{{side}, {etl}, app_id="r0", kind="spill"}}', "9000x30"),
    (f'{C}{{{side}, app_name="report", job_group="g", job_description="render", app_id="r5", kind="skew"}}',
     "_x100 300x20"),
    (f'{C}{{{side}, app_name="report", app_id="r5", kind="idle_cores"}}', "_x100 7000x20"),
]
etl_l = 'app_name="etl", job_group="load", job_description="daily load"'
rep_l = 'app_name="report", job_group="g", job_description="render"'
# panel title -> (eval time, $__interval, expected {labels: value}) over a range of 1h
want = {
    "Cost by kind over the time range": ("119m", "1m", {'{kind="skew"}': 1900, '{kind="spill"}': 500,
                                                       '{kind="idle_cores"}': 7000}),
    "Top application names by cost, per kind": ("119m", "1m", {
        '{app_name="etl", kind="skew"}': 1600, '{app_name="report", kind="skew"}': 300,
        '{app_name="etl", kind="spill"}': 500, '{app_name="report", kind="idle_cores"}': 7000}),
    "Top job groups by cost, per kind": ("119m", "1m", {
        f'{{{etl_l}, kind="skew"}}': 1600, f'{{{etl_l}, kind="spill"}}': 500, f'{{{rep_l}, kind="skew"}}': 300}),
    "Costliest application names, job groups and kinds": ("119m", "1m", {
        f'{{{etl_l}, kind="skew"}}': 1600, f'{{{etl_l}, kind="spill"}}': 500, f'{{{rep_l}, kind="skew"}}': 300,
        '{app_name="report", kind="idle_cores"}': 7000}),
    # The 5 minutes up to 90m: r2 appears (1000 s of skew, 500 s of spill), r1 grows by 50 s.
    "Cost by kind": ("90m", "5m", {'{kind="skew"}': 1050, '{kind="spill"}': 500}),
}
tests, seen = [], set()
for q in lint.queries("dashboards/spark-efficiency.json"):
    if q["kind"] != "panel" or q["panel"] not in want or q["refId"] != "A":
        continue
    at, itv, rows = want[q["panel"]]
    seen.add(q["panel"])
    # round(): increase() extrapolates to the range's ends, a few ulps off the made-up values
    tests.append({"expr": "round(" + lint.substitute(q["expr"], {}, interval=itv, range_="1h") + ")",
                  "eval_time": at, "exp_samples": [{"labels": l, "value": v} for l, v in rows.items()]})
if seen != set(want):
    sys.exit(f"panels not found in spark-efficiency.json: {sorted(set(want) - seen)}")
doc = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
    "interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series], "promql_expr_test": tests}]}
json.dump(doc, open(sys.argv[1], "w"), indent=1)  # JSON is YAML
print(f"{len(tests)} queries: " + ", ".join(sorted(seen)))
PY
promtool test rules "$tmp/efficiency.test.yml"

echo "dashboards: all checks passed"
