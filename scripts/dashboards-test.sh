#!/usr/bin/env bash
# Checks the Grafana dashboards. Needs python3 and promtool (Debian package `prometheus`).
#
#  1. dashboards/*.json match scripts/dashboards-generate.py (no drift)
#  2. scripts/dashboards-lint.py: schema version, variables, unit/description/datasource on every
#     panel, known metrics, variables used in every selector; every query parsed by promtool
#  3. the lint can fail: a copy with typical mistakes must be rejected, one problem per mistake
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
python3 - "$tmp/broken.json" <<'PY'
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
PY
if python3 scripts/dashboards-lint.py --promtool "$tmp/broken.json" > "$tmp/out.txt" 2>&1; then
  echo "FAIL: the lint accepted a broken dashboard" >&2; cat "$tmp/out.txt" >&2; exit 1
fi
for expected in "schemaVersion 36" "__inputs" "no template variable job_group" "no description" "no unit" \
                "datasource must be" "unknown metric spark_jobs_totl" 'does not filter app_name' \
                'does not filter job_group' "promtool rejects"; do
  grep -q -- "$expected" "$tmp/out.txt" || { echo "FAIL: lint did not report '$expected'" >&2; cat "$tmp/out.txt" >&2; exit 1; }
done
echo "ok: the lint reports every planted mistake"

echo "dashboards: all checks passed"
