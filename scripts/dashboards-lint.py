#!/usr/bin/env python3
"""Lint the Grafana dashboards in dashboards/*.json and extract their queries.

Usage:
  scripts/dashboards-lint.py [FILE...]            lint (default: dashboards/*.json); exit 1 on problems
  scripts/dashboards-lint.py --promtool [FILE...] also parse every query with `promtool check rules`
  scripts/dashboards-lint.py --queries [FILE...]  print every panel and variable query as JSON

Checks, per dashboard: valid JSON without `__inputs`; schemaVersion >= 39; unique uid and title;
a `datasource` variable of type datasource for prometheus; `cluster`, `namespace`, `app_name`,
`app_id`, `job_group` query variables (label_values, multi-select, include All with allValue
`.*`, datasource `${datasource}`), each one's query filtering by the ones before it; unique
panel ids and non-overlapping grid positions. Per panel (rows aside): a title, a description, a
unit, datasource `${datasource}` on the panel and on every query, at least one query; a time
series panel of sparse data (histogram_quantile, a ratio of rates, the per-run rules) draws
points (`showPoints: always`); a text panel (a note) has content and no query. Per query: only
metrics the exporter serves or the recording rules define; every selector filters on `$cluster` and `$namespace`, of an application metric
also on `$app_name` and `$app_id`, and of a job/stage/task metric also on `$job_group`; `up{...}` (the scrape targets) on `$cluster` and
`$namespace`. A dashboard with a `job` variable (the fleet's: sidecars and a fleet may export the
same application) also filters every selector but the recording rules' (which keep no `job`) and
the later variables' queries on `$job`. The jobs dashboard has per-run panels: each per-run recording rule charted with the
application's start time. A sum or average of the diagnosis findings' costs keeps `kind` (costs
of different kinds overlap) unless the query selects one kind.

Standard library only (plus promtool for --promtool). tests/e2e_prometheus.py imports this file
for `queries()` and `substitute()`.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "alerts", "spark-exporter.rules.yml")
MIN_SCHEMA_VERSION = 39
DS_UID = "${datasource}"
# In this order: each variable's query filters by the ones before it.
REQUIRED_VARS = ("cluster", "namespace", "app_name", "app_id", "job_group")
SCOPE_VARS = ("cluster", "namespace")  # every selector, the exporter's own metrics too
# Variables a dashboard may add; when it does, every selector (recording rules aside) and the
# required variables' queries filter on it. All is `.*` like the others.
OPTIONAL_VARS = ("job",)
# Per-run recording rules (one value per run and job group) that the jobs dashboard must chart,
# each with spark_app_start_time_seconds in the same panel (to place the run at its start).
PER_RUN_DASHBOARD = "spark-exporter-jobs"
PER_RUN_RULES = ("spark_app_job_group:job_duration_seconds:mean", "spark_app_job_group:job_duration_seconds:sum",
                 "spark_app_job_group:job_duration_seconds:count")
# Recording rules the dashboards may chart before alerts/spark-exporter.rules.yml defines them;
# accepted as known, with a note while missing. Empty: every rule charted must exist.
PENDING_RULES = ()

# Metric names from the exporter's contract (/metrics on :9809). Histograms are listed by base
# name; _bucket, _sum and _count are accepted.
HISTOGRAMS = {
    "spark_job_duration_seconds", "spark_stage_duration_seconds", "spark_task_duration_seconds",
    "spark_sql_execution_duration_seconds", "spark_streaming_batch_duration_seconds",
    "spark_app_run_duration_seconds", "spark_stage_skew_ratio", "spark_app_run_core_seconds",
}
JOB_METRICS = {  # labels app_id, app_name, job_group, job_description
    "spark_jobs_total", "spark_jobs_active", "spark_job_duration_seconds",
    "spark_stages_total", "spark_stages_active", "spark_stage_duration_seconds",
    "spark_stage_stalled_seconds", "spark_stage_tasks_active", "spark_stage_task_skew_ratio",
    "spark_tasks_total", "spark_task_duration_seconds",
    "spark_task_run_time_seconds_total", "spark_task_cpu_time_seconds_total",
    "spark_task_gc_time_seconds_total", "spark_task_input_bytes_total", "spark_task_output_bytes_total",
    "spark_task_shuffle_read_bytes_total", "spark_task_shuffle_write_bytes_total",
    "spark_task_memory_spilled_bytes_total", "spark_task_disk_spilled_bytes_total",
    "spark_stage_skew_ratio", "spark_task_locality_total", "spark_task_scheduler_delay_seconds_total",
    "spark_task_deserialize_time_seconds_total", "spark_task_shuffle_fetch_wait_seconds_total",
    "spark_task_peak_execution_memory_bytes_total", "spark_task_core_seconds_used_total",
    # SQL plans: SQL labels (app_id, app_name, job_group, description)
    "spark_sql_plans_total", "spark_sql_joins_total", "spark_sql_skew_joins_total",
    "spark_sql_exchanges_total", "spark_sql_aqe_partitions_total",
    # Diagnosis findings: app_id (none by application name), app_name, job_group and
    # job_description (empty for the application-level kinds), kind; the window gauges also query
    "spark_diagnosis_findings_total", "spark_diagnosis_cost_seconds_total",
    "spark_diagnosis_window_findings", "spark_diagnosis_window_cost_seconds",
    # ... and in money (issue 36; with prices configured), with `currency`
    "spark_diagnosis_cost_total",
}
NAME_METRICS = {  # labels app_name, job_group (no app_id: they span the runs of an application name)
    "spark_sql_plan_fingerprint",
}
APP_METRICS = {  # labels app_id, app_name (no job_group)
    "spark_app_info", "spark_app_start_time_seconds", "spark_app_end_time_seconds",
    "spark_app_runs_total", "spark_app_run_duration_seconds",
    "spark_executors", "spark_executor_removed_total",
    "spark_executor_task_time_seconds_total", "spark_executor_gc_time_seconds_total",
    "spark_executor_tasks_total", "spark_executor_active_tasks", "spark_executor_max_tasks",
    "spark_executor_storage_memory_used_bytes", "spark_executor_max_memory_bytes",
    "spark_executor_disk_used_bytes", "spark_executor_input_bytes_total",
    "spark_executor_shuffle_read_bytes_total", "spark_executor_shuffle_write_bytes_total",
    "spark_executor_peak_memory_bytes",
    "spark_sql_executions_total", "spark_sql_executions_active", "spark_sql_execution_duration_seconds",
    "spark_streaming_batches_total", "spark_streaming_input_rows_total",
    "spark_streaming_input_rows_per_second", "spark_streaming_processed_rows_per_second",
    "spark_streaming_batch_duration_seconds", "spark_streaming_batch_phase_seconds_total",
    "spark_streaming_watermark_seconds", "spark_streaming_watermark_lag_seconds",
    "spark_streaming_state_rows", "spark_streaming_state_memory_bytes",
    "spark_streaming_state_rows_dropped_by_watermark_total", "spark_streaming_source_input_rows_total",
    "spark_streaming_source_input_rows_per_second", "spark_streaming_source_processed_rows_per_second",
    "spark_streaming_trigger_interval_seconds",
    "spark_executor_core_seconds_allocated_total", "spark_executor_idle_core_seconds",
    "spark_rdd_cached_fraction", "spark_rdd_memory_bytes", "spark_rdd_disk_bytes",
    # runs that regress (issue 36; model.aggregate_by app_name) and money (with prices configured)
    "spark_app_run_core_seconds", "spark_app_last_run_duration_seconds", "spark_app_last_run_core_seconds",
    "spark_app_last_run_end_timestamp_seconds", "spark_app_last_run_cost",
    "spark_executor_memory_gib_seconds_allocated_total", "spark_app_cost_total",
}
SELF_METRICS = {  # the exporter's own health; not per application
    "spark_up", "spark_exporter_build_info", "spark_exporter_scrape_duration_seconds",
    "spark_exporter_scrape_errors_total", "spark_exporter_label_overflow_total",
    "spark_exporter_rest_response_bytes_total", "spark_exporter_rest_requests_total",
    "spark_exporter_eventlog_bytes_total", "spark_exporter_eventlog_events_total",
    "spark_exporter_eventlog_errors_total", "spark_exporter_eventlog_files",
    "spark_exporter_eventlog_lag_seconds", "spark_exporter_http_errors_total",
    "spark_exporter_otlp_exports_total", "spark_exporter_otlp_export_failures_total",
    "spark_exporter_store_up", "spark_exporter_store_requests_total",
    "spark_exporter_store_response_bytes_total", "spark_exporter_store_errors_total",
}
TARGET_METRICS = {"up"}  # Prometheus' own series of each scrape target
# Costs of the diagnosis findings per kind: they overlap across kinds (a skewed stage that spills
# counts in both), so a query that sums or averages them keeps `kind` (or selects one kind).
COST_METRICS = {"spark_diagnosis_cost_seconds_total", "spark_diagnosis_window_cost_seconds",
                "spark_diagnosis_cost_total"}
LABEL_NAMES = {"spark_version"}  # label names that look like metric names


def keeps_job_group(rule):
    """Whether a recording rule keeps job_group: its level (the part before the first colon) says."""
    return rule.split(":")[0] in ("spark_job_group", "spark_app_job_group")


def recording_rules(notes=None):
    """{record name: True if it keeps job_group} from the generated rule file, plus PENDING_RULES."""
    with open(RULES, encoding="utf-8") as f:
        names = re.findall(r"^\s*-\s*record:\s*(\S+)\s*$", f.read(), re.M)
    missing = [n for n in PENDING_RULES if n not in names]
    if notes is not None and missing:
        notes.append(f"not yet in {os.path.relpath(RULES, ROOT)} (accepted as PENDING_RULES): " + ", ".join(missing))
    return {n: keeps_job_group(n) for n in list(names) + missing}


def base_name(metric):
    for suffix in ("_bucket", "_sum", "_count"):
        if metric.endswith(suffix) and metric[: -len(suffix)] in HISTOGRAMS:
            return metric[: -len(suffix)]
    return metric


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def selectors(expr):
    """(metric, matcher text) for every `spark...` selector in a PromQL expression, and every
    `up{...}`."""
    out = []
    for m in re.finditer(r"(?<![\w:$])(spark_[A-Za-z0-9_:]*)(\s*\{([^}]*)\})?", expr):
        name = m.group(1)
        if name in LABEL_NAMES:
            continue
        out.append((name, m.group(3) or ""))
    for m in re.finditer(r"(?<![\w:$.\"])(up)\s*\{([^}]*)\}", expr):
        out.append((m.group(1), m.group(2)))
    return out


def check_query(expr, where, rules, problems, extra=()):
    """Known metrics; template variables on every application/job selector. extra: the dashboard's
    optional variables, which every selector but a recording rule's must filter too."""
    if not expr.strip():
        problems.append(f"{where}: empty query")
        return
    # Selector matchers may contain strings; check names on the string-free text, then matchers.
    names = {n for n, _ in selectors(strip_strings(expr))}
    for name, matchers in selectors(expr):
        base = base_name(name)
        if name in rules:
            needs = SCOPE_VARS + ("app_name", "app_id") + (("job_group",) if rules[name] else ())
        elif base in JOB_METRICS:
            needs = SCOPE_VARS + tuple(extra) + ("app_name", "app_id", "job_group")
        elif base in APP_METRICS:
            needs = SCOPE_VARS + tuple(extra) + ("app_name", "app_id")
        elif base in NAME_METRICS:
            needs = SCOPE_VARS + tuple(extra) + ("app_name", "job_group")
        elif base in SELF_METRICS or base in TARGET_METRICS:
            needs = SCOPE_VARS + tuple(extra)
        else:
            if name in names:
                problems.append(f"{where}: unknown metric {name}")
            continue
        for var in needs:
            if not re.search(rf'\b{var}=~"\${var}"', matchers):
                problems.append(f'{where}: selector {name}{{{matchers}}} does not filter {var}=~"${var}"')


def check_cost_kinds(expr, where, problems):
    """A sum or average over a cost metric must keep `kind` in its `by (...)`, unless every cost
    selector of the query picks one kind (kind="...")."""
    plain = strip_strings(expr)
    if not {n for n, _ in selectors(plain)} & COST_METRICS:
        return
    if all(re.search(r'\bkind\s*=\s*"[^"]+"', m) for n, m in selectors(expr) if n in COST_METRICS):
        return
    for m in re.finditer(r"\b(sum|avg)\s*(?:(by|without)\s*\(([^)]*)\))?\s*\(", plain):
        if m.group(2) != "by" or "kind" not in {x.strip() for x in m.group(3).split(",")}:
            problems.append(f"{where}: `{m.group(0).strip()}` adds up the costs of different finding kinds, "
                            f"which overlap: keep kind in by (...)")


def sparse(expr):
    """Whether a query's series have gaps or lone samples: quantiles and ratios of rates exist only
    in intervals in which something finished; per-run rules have one value per run."""
    e = strip_strings(expr)
    parts = e.split("/")
    return ("histogram_quantile(" in e or any(r in e for r in PER_RUN_RULES)
            or any("rate(" in a and "rate(" in b for a, b in zip(parts, parts[1:])))


def queries(path):
    """Every query of a dashboard: panels' targets and variables' label_values queries."""
    d = json.load(open(path, encoding="utf-8"))
    out = []
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            out.append({"dashboard": d["title"], "file": os.path.basename(path), "kind": "variable",
                        "panel": f"variable {v['name']}", "refId": v["name"], "expr": q or ""})
    for p in all_panels(d):
        for t in p.get("targets", []):
            out.append({"dashboard": d["title"], "file": os.path.basename(path), "kind": "panel",
                        "panel": p.get("title", ""), "panel_id": p.get("id"), "refId": t.get("refId"),
                        "expr": t.get("expr", ""), "instant": bool(t.get("instant"))})
    return out


def all_panels(d):
    for p in d.get("panels", []):
        yield p
        for sub in p.get("panels", []) or []:  # collapsed rows keep their panels inside
            yield sub


def substitute(expr, values, rate_interval="1m", interval="15s", range_="1h"):
    """Replace Grafana variables like Grafana does: a multi-value list becomes (a|b) with regex
    metacharacters escaped, All becomes the variable's allValue `.*`."""
    def fmt(v):
        if v is None:
            return ".*"
        if isinstance(v, (list, tuple)):
            vals = [re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\\\1", x) for x in v]
            return vals[0] if len(vals) == 1 else "(" + "|".join(vals) + ")"
        return v
    builtins = {"__rate_interval": rate_interval, "__interval": interval, "__range": range_}
    def repl(m):
        name = m.group(1) or m.group(2)
        if name in builtins:
            return builtins[name]
        if name in values or name in REQUIRED_VARS or name in OPTIONAL_VARS:
            return fmt(values.get(name))
        return m.group(0)
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", repl, expr)


def lint(path, seen, rules):
    problems = []
    where = os.path.relpath(path, ROOT)
    try:
        raw = open(path, encoding="utf-8").read()
        d = json.loads(raw)
    except (OSError, ValueError) as e:
        return [f"{where}: not valid JSON: {e}"]
    if "__inputs" in d or "__requires" in d:
        problems.append(f"{where}: has __inputs/__requires (export for sharing); must be importable as-is")
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < MIN_SCHEMA_VERSION:
        problems.append(f"{where}: schemaVersion {d.get('schemaVersion')} < {MIN_SCHEMA_VERSION}")
    for key in ("uid", "title"):
        if not d.get(key):
            problems.append(f"{where}: no {key}")
        elif d[key] in seen[key]:
            problems.append(f"{where}: {key} {d[key]!r} also used by {seen[key][d[key]]}")
        else:
            seen[key][d[key]] = where
    if d.get("id") is not None:
        problems.append(f"{where}: id must be null so imports do not collide")

    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append(f"{where}: needs a 'datasource' variable of type datasource with query prometheus")
    for i, name in enumerate(REQUIRED_VARS):
        v = variables.get(name)
        if not v:
            problems.append(f"{where}: no template variable {name}")
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") != "query" or not re.match(r"^label_values\(.*,\s*" + name + r"\)$", q or ""):
            problems.append(f"{where}: variable {name} must be a label_values(..., {name}) query")
        if (v.get("datasource") or {}).get("uid") != DS_UID:
            problems.append(f"{where}: variable {name} must use datasource {DS_UID}")
        if not v.get("multi") or not v.get("includeAll") or v.get("allValue") != ".*":
            problems.append(f"{where}: variable {name} must be multi-select with All = '.*'")
        for before in REQUIRED_VARS[:i]:
            if not re.search(rf'\b{before}=~"\${before}"', q or ""):
                problems.append(f'{where}: variable {name} must filter {before}=~"${before}"')
    extra = tuple(n for n in OPTIONAL_VARS if n in variables)
    order = [v.get("name") for v in d.get("templating", {}).get("list", [])]
    for name in extra:
        v = variables[name]
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") != "query" or not re.match(r"^label_values\(.*,\s*" + name + r"\)$", q or ""):
            problems.append(f"{where}: variable {name} must be a label_values(..., {name}) query")
        if (v.get("datasource") or {}).get("uid") != DS_UID:
            problems.append(f"{where}: variable {name} must use datasource {DS_UID}")
        if not v.get("multi") or not v.get("includeAll") or v.get("allValue") != ".*":
            problems.append(f"{where}: variable {name} must be multi-select with All = '.*'")
        for before in SCOPE_VARS:
            if not re.search(rf'\b{before}=~"\${before}"', q or ""):
                problems.append(f'{where}: variable {name} must filter {before}=~"${before}"')
        # the required variables after it filter by it
        for later in REQUIRED_VARS:
            if later in order and order.index(later) > order.index(name):
                lq = variables[later].get("query")
                lq = lq.get("query") if isinstance(lq, dict) else lq
                if not re.search(rf'\b{name}=~"\${name}"', lq or ""):
                    problems.append(f'{where}: variable {later} must filter {name}=~"${name}"')

    ids, cells = set(), {}
    for p in all_panels(d):
        title = p.get("title") or f"panel id {p.get('id')}"
        pw = f"{where}: panel '{title}'"
        if p.get("id") in ids:
            problems.append(f"{pw}: duplicate id {p.get('id')}")
        ids.add(p.get("id"))
        g = p.get("gridPos") or {}
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] + g["w"] > 24 or g["w"] < 1:
            problems.append(f"{pw}: bad gridPos {g}")
        else:
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    if (x, y) in cells:
                        problems.append(f"{pw}: overlaps panel '{cells[(x, y)]}'")
                        break
                    cells[(x, y)] = title
                else:
                    continue
                break
        if p.get("type") == "row":
            continue
        if not p.get("title"):
            problems.append(f"{pw}: no title")
        if not (p.get("description") or "").strip():
            problems.append(f"{pw}: no description")
        if p.get("type") == "text":  # a note: no query, no unit
            if not ((p.get("options") or {}).get("content") or "").strip():
                problems.append(f"{pw}: text panel without content")
            if p.get("targets"):
                problems.append(f"{pw}: a text panel has no queries")
            continue
        if not ((p.get("fieldConfig") or {}).get("defaults") or {}).get("unit"):
            problems.append(f"{pw}: no unit (fieldConfig.defaults.unit)")
        if (p.get("datasource") or {}).get("uid") != DS_UID:
            problems.append(f"{pw}: datasource must be {DS_UID}")
        targets = p.get("targets") or []
        if not targets:
            problems.append(f"{pw}: no queries")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            problems.append(f"{pw}: refIds must be set and unique: {refs}")
        for t in targets:
            if (t.get("datasource") or {}).get("uid") != DS_UID:
                problems.append(f"{pw} query {t.get('refId')}: datasource must be {DS_UID}")
            check_query(t.get("expr", ""), f"{pw} query {t.get('refId')}", rules, problems, extra)
            check_cost_kinds(t.get("expr", ""), f"{pw} query {t.get('refId')}", problems)
        custom = ((p.get("fieldConfig") or {}).get("defaults") or {}).get("custom") or {}
        if p.get("type") == "timeseries" and any(sparse(t.get("expr", "")) for t in targets) \
                and custom.get("showPoints") != "always":
            problems.append(f"{pw}: charts sparse data (quantiles, ratios of rates, per-run values) but does not "
                            f"draw points: set fieldConfig.defaults.custom.showPoints to always")
    if d.get("uid") == PER_RUN_DASHBOARD:
        exprs = [[strip_strings(t.get("expr", "")) for t in p.get("targets") or []] for p in all_panels(d)]
        for rule in PER_RUN_RULES:
            if not any(any(rule in e for e in es) and any("spark_app_start_time_seconds" in e for e in es)
                       for es in exprs):
                problems.append(f"{where}: no per-run panel charts {rule} with spark_app_start_time_seconds "
                                f"(one point per run at its start time)")
    return problems


def promtool_check(all_queries):
    """Parse every query with promtool: each becomes a recording rule of a throw-away file."""
    lines = ["groups:", "  - name: dashboard-queries", "    rules:"]
    for i, q in enumerate(all_queries):
        expr = q["expr"]
        m = re.match(r"^label_values\((.*),\s*\w+\)$", expr)
        if q["kind"] == "variable":
            if not m:
                continue
            expr = f"count({m.group(1)})"
        expr = substitute(expr, {})
        lines += [f"      - record: dashboard:query_{i}:check", f"        expr: {json.dumps(expr)}"]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        return [f"promtool rejects a dashboard query:\n{r.stdout}{r.stderr}"]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--queries", action="store_true", help="print all queries as JSON and exit")
    ap.add_argument("--promtool", action="store_true", help="also parse the queries with promtool")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(ROOT, "dashboards", "*.json")))
    if not files:
        print("no dashboards found", file=sys.stderr)
        return 1
    if a.queries:
        print(json.dumps([q for f in files for q in queries(f)], indent=2))
        return 0

    notes = []
    rules = recording_rules(notes)
    seen = {"uid": {}, "title": {}}
    problems, all_q = [], []
    for f in files:
        p = lint(f, seen, rules)
        problems += p
        if not any("not valid JSON" in x for x in p):
            q = queries(f)
            all_q += q
            panels = len({x["panel_id"] for x in q if x["kind"] == "panel"})
            print(f"{os.path.relpath(f, ROOT)}: {panels} panels, {len(q)} queries, {len(p)} problem(s)")
    if a.promtool and all_q:
        problems += promtool_check(all_q)
        if not problems:
            print(f"promtool parsed all {len(all_q)} queries")
    used = {base_name(n) for q in all_q for n, _ in selectors(strip_strings(q["expr"]))}
    unused = sorted((JOB_METRICS | APP_METRICS | SELF_METRICS | set(rules)) - used)
    if unused:
        print("not queried directly by a panel (some are charted through recording rules): " + ", ".join(unused))
    for n in notes:
        print("note: " + n)
    for p in problems:
        print("PROBLEM " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
