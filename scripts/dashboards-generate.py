#!/usr/bin/env python3
"""The source of spark-exporter's Grafana dashboards (dashboards/*.json).

Usage:
  scripts/dashboards-generate.py           rewrite dashboards/*.json
  scripts/dashboards-generate.py --check   exit 1 (with a diff) if a JSON file differs from this source

The JSON files are what users import or provision; they are generated so that every panel gets
the same datasource, template variables, units and layout rules. `scripts/dashboards-lint.py`
checks the JSON files themselves (it does not trust this generator).

Conventions:
- Every query filters by the template variables: `cluster` and `namespace` everywhere (the
  exporter's own metrics too), `app_name`, `app_id` on application metrics, plus `job_group` on
  job/stage/task metrics (SQL, executor and streaming metrics have no job group). The exporter's
  own metrics (`spark_up`, `spark_exporter_*`) are not per application. Each variable's query
  filters by the variables before it.
- Panels of sparse data (durations and ratios that exist only while jobs finish, one value per
  run) draw every sample as a point, so that a lone sample between gaps is still seen.
- Failure counters only appear with the first failure, so `rate()` misses that one: failure
  panels chart the cumulative counter (a step up per failure) rather than a rate.
- Ratios come from the recording rules of alerts/spark-exporter.rules.yml.
- The efficiency dashboard charts what the diagnosis findings cost. Costs of different kinds
  overlap, so every query keeps `kind` (the lint rejects a sum of costs that drops it); counters
  that appear with a run's findings count whole, as SparkDiagnosisCostHigh counts them.
- The fleet dashboard has a `job` variable (the exporters' scrape jobs) that every selector but the
  recording rules' filters too: sidecars and a fleet may export the same application. It counts
  distinct application ids and reads ended runs from each series' last value in the time range,
  since a run read whole from an ended log never grows between two samples.
"""
import argparse
import difflib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "dashboards")
SCHEMA_VERSION = 39
DS = {"type": "prometheus", "uid": "${datasource}"}
# Where the series come from: `cluster` and `namespace` are target labels (Kubernetes service
# discovery, relabelling, or a global view's external labels). Series without them still match,
# as `=~".*"` (the variables' All) matches the empty value.
SCOPE = 'cluster=~"$cluster", namespace=~"$namespace"'
APP = SCOPE + ', app_name=~"$app_name", app_id=~"$app_id"'
JOB = APP + ', job_group=~"$job_group"'
RI = "$__rate_interval"
# The fleet dashboard also filters by the exporters' scrape job: with sidecars and a fleet in one
# Prometheus (docs/deploy.md "Sidecar, fleet, or both") an application is exported by both, and picking
# the fleet's job keeps it from being counted twice. Recording rules keep no `job` label.
FSCOPE = SCOPE + ', job=~"$job"'
FAPP = FSCOPE + ', app_name=~"$app_name", app_id=~"$app_id"'
FJOB = FAPP + ', job_group=~"$job_group"'
# The exporters' scrape targets, as the SparkExporterDown alert finds them.
EXPORTER_JOBS = 'job=~".*spark-exporter.*"'
STUCK_SECONDS = 900  # SparkStageStuck default (STUCK_MINUTES in scripts/alerts-generate.py)
GC_RATIO = 0.10      # SparkExecutorHighGCRatio default
BATCH_TRIGGER_RATIO = 0.8  # SparkStreamingQueryFallingBehind default (STREAMING_BATCH_TRIGGER_RATIO)


# --- building blocks ---------------------------------------------------------------------------

def target(expr, legend="", instant=False, table=False):
    t = {"datasource": DS, "editorMode": "code", "expr": expr, "legendFormat": legend or "__auto",
         "range": not instant, "instant": instant}
    if table:
        t["format"] = "table"
    return t


def thresholds(*steps):
    """steps: (value, color) after the base green."""
    return {"mode": "absolute",
            "steps": [{"color": "green", "value": None}] + [{"color": c, "value": v} for v, c in steps]}


def panel(kind, title, description, unit, targets, w=12, h=8, **kw):
    p = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {},
        "targets": targets,
        "_size": (w, h),
    }
    d = p["fieldConfig"]["defaults"]
    if "decimals" in kw:
        d["decimals"] = kw["decimals"]
    if "min" in kw:
        d["min"] = kw["min"]
    d["thresholds"] = kw.get("thresholds") or thresholds()
    if kw.get("no_value") is not None:
        d["noValue"] = kw["no_value"]
    if kw.get("mappings"):
        d["mappings"] = kw["mappings"]
    return p


def ts(title, description, unit, targets, w=12, h=8, stack=False, threshold_line=None, sparse=False, **kw):
    """A time series panel. sparse: the series has gaps (NaN or absent between the intervals in
    which jobs finish) or single samples, so every sample is drawn as a point as well: a line
    needs two neighbouring samples, and a lone one would not show at all."""
    p = panel("timeseries", title, description, unit, targets, w, h,
              thresholds=thresholds((threshold_line, "red")) if threshold_line is not None else None, **kw)
    p["fieldConfig"]["defaults"]["color"] = {"mode": "palette-classic"}
    p["fieldConfig"]["defaults"]["custom"] = {
        "drawStyle": "line", "lineInterpolation": "linear", "lineWidth": 1,
        "fillOpacity": 20 if stack else 8, "showPoints": "always" if sparse else "never",
        "pointSize": 4 if sparse else 5, "spanNulls": False,
        "stacking": {"mode": "normal" if stack else "none", "group": "A"},
        "thresholdsStyle": {"mode": "line" if threshold_line is not None else "off"},
        "axisPlacement": "auto", "axisSoftMin": 0,
    }
    p["options"] = {
        "legend": {"displayMode": "table", "placement": "bottom", "showLegend": True,
                   "calcs": ["lastNotNull", "max"]},
        "tooltip": {"mode": "multi", "sort": "desc"},
    }
    return p


def stat(title, description, unit, targets, w=4, h=4, steps=(), no_value=None, mappings=None,
         text_mode="auto", graph=True, **kw):
    p = panel("stat", title, description, unit, targets, w, h, thresholds=thresholds(*steps),
              no_value=no_value, mappings=mappings, **kw)
    p["fieldConfig"]["defaults"]["color"] = {"mode": "thresholds"}
    p["options"] = {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "colorMode": "value", "graphMode": "area" if graph else "none", "justifyMode": "auto",
        "orientation": "auto", "textMode": text_mode, "showPercentChange": False,
        "wideLayout": True,
    }
    return p


def table(title, description, unit, targets, w=24, h=8, hide=(), rename=None, sort_by=None, merge=False,
          units=None, order=(), **kw):
    """merge: the queries return the same label sets; one row per label set, a column per query
    ("Value #A", ...). units: {column (after rename): unit} for columns unlike the default.
    order: the first columns, by their query names."""
    p = panel("table", title, description, unit, targets, w, h, **kw)
    p["fieldConfig"]["defaults"]["custom"] = {"align": "auto", "cellOptions": {"type": "auto"},
                                             "filterable": True}
    p["options"] = {"showHeader": True, "cellHeight": "sm",
                    "footer": {"show": False, "reducer": ["sum"], "countRows": False, "fields": ""}}
    if sort_by:
        p["options"]["sortBy"] = [{"displayName": sort_by, "desc": True}]
    exclude = {k: True for k in ("Time", "__name__", "instance", "job") + tuple(hide)}
    p["transformations"] = ([{"id": "merge", "options": {}}] if merge else []) + [{"id": "organize", "options": {
        "excludeByName": exclude, "indexByName": {k: i for i, k in enumerate(order)},
        "renameByName": rename or {}}}]
    p["fieldConfig"]["overrides"] = [
        {"matcher": {"id": "byName", "options": name},
         "properties": [{"id": "unit", "value": u}] + ([{"id": "decimals", "value": 0}] if u == "short" else [])}
        for name, u in (units or {}).items()]
    return p


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "_size": (24, 1)}


def text(title, description, content, w=24, h=5):
    """A markdown note: no query, no unit."""
    return {"type": "text", "title": title, "description": description,
            "options": {"mode": "markdown", "content": content,
                        "code": {"language": "plaintext", "showLineNumbers": False, "showMiniMap": False}},
            "_size": (w, h)}


def bargauge(title, description, unit, targets, w=8, h=9):
    """Horizontal bars, one per series of instant queries (the series' last value)."""
    p = panel("bargauge", title, description, unit, targets, w, h)
    p["fieldConfig"]["defaults"]["color"] = {"mode": "continuous-GrYlRd"}
    p["options"] = {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "orientation": "horizontal", "displayMode": "gradient", "valueMode": "color",
        "namePlacement": "auto", "showUnfilled": True, "sizing": "auto", "minVizWidth": 8,
        "minVizHeight": 16, "maxVizHeight": 300,
    }
    return p


def quantiles(metric, by, selector, legend, qs=((0.5, "p50"), (0.95, "p95"), (1, "max"))):
    """histogram_quantile targets over the rate of a histogram's buckets."""
    return [target(f"histogram_quantile({q}, sum by ({by}, le) (rate({metric}_bucket{{{selector}}}[{RI}])))",
                   f"{name} {legend}") for q, name in qs]


# --- per run: one point per application run -----------------------------------------------------
# Recording rules of alerts/spark-exporter.rules.yml over a run's finished jobs, per job group,
# labelled by cluster, namespace, pod (where the series have them), app_id, app_name, job_group:
# :sum (seconds of the run's jobs), :count (jobs ended), :mean (sum / count).
RUN_RULE = "spark_app_job_group:job_duration_seconds"
RUN_BY = "cluster, namespace, app_name, app_id, job_group"  # pod left out: a run is its app_id
RUN_KEY = "cluster, namespace, app_id"


def run_value(kind, rule_sel=None):
    """One series per run and job group: the run's value over the dashboard's range. sum and count
    only grow during a run, so their largest value is the run's (a counter reset when the exporter
    restarts cannot lower it); mean is sum / count, so its last value is the run's. rule_sel: the
    rules' selector (they keep no `job` label), default JOB."""
    fn = "last_over_time" if kind == "mean" else "max_over_time"
    return f"max by ({RUN_BY}) ({fn}({RUN_RULE}:{kind}{{{rule_sel or JOB}}}[$__range]))"


def run_start_ms(rule_sel=None, app_sel=None):
    """The run's start time in milliseconds (Grafana's time unit), with run_value()'s label set:
    the per-run series valued 0, plus their application's start time. The start time is taken once
    per run (max by), so two exporters exporting the same application cannot make the join
    many-to-many."""
    return (f"1000 * max by ({RUN_BY}) (count_over_time({RUN_RULE}:count{{{rule_sel or JOB}}}[$__range]) * 0"
            f" + on ({RUN_KEY}) group_left () max by ({RUN_KEY}) "
            f"(last_over_time(spark_app_start_time_seconds{{{app_sel or APP}}}[$__range])))")


def per_run(title, description, unit, kind, rule_sel=None, app_sel=None):
    """A time series panel with one point per run, at the run's start time. PromQL cannot move a
    sample to another time, so two instant table queries over the dashboard's range give each run's
    value (A) and start time (B) with the same labels; the transformations merge them into rows,
    make B the time field, and split the rows into one series per application and job group
    (app_id dropped, so that a series runs across the runs in start order)."""
    p = ts(title, description, unit, [target(run_value(kind, rule_sel), instant=True, table=True),
                                      target(run_start_ms(rule_sel, app_sel), instant=True, table=True)],
           w=8, sparse=True)
    # Points carry the data; the line only links the runs of a series (spanNulls: the series
    # come out of a join on time, with no value at the other series' runs).
    p["fieldConfig"]["defaults"]["custom"].update({"fillOpacity": 0, "pointSize": 6, "spanNulls": True})
    p["fieldConfig"]["defaults"]["displayName"] = "${__field.labels.app_name} ${__field.labels.job_group}"
    p["options"]["legend"]["calcs"] = ["lastNotNull", "mean", "max"]
    p["options"]["tooltip"] = {"mode": "single", "sort": "none"}
    p["transformations"] = [
        {"id": "merge", "options": {}},
        {"id": "organize", "options": {"excludeByName": {"Time": True, "app_id": True},
                                       "indexByName": {}, "renameByName": {}}},
        {"id": "convertFieldType", "options": {"fields": {}, "conversions": [
            {"targetField": "Value #B", "destinationType": "time"}]}},
        {"id": "prepareTimeSeries", "options": {"format": "multi"}},
    ]
    return p


def variables(by_job=False):
    """cluster, namespace, app_name, app_id, job_group: each one's query filters by the ones
    before it, and All is `.*`, which also matches series without the label. by_job: a `job`
    variable (the exporters' scrape job, as the SparkExporterDown alert finds them) after
    namespace, which the later ones filter by too, for the fleet dashboard."""
    def var(name, label, query):
        return {
            "type": "query", "name": name, "label": label, "datasource": DS,
            "query": query, "definition": query,
            "refresh": 2, "multi": True, "includeAll": True, "allValue": ".*", "sort": 1,
            "regex": "", "hide": 0, "options": [],
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        }
    scope, app = (FSCOPE, FAPP) if by_job else (SCOPE, APP)
    return [
        {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
         "refresh": 1, "regex": "", "hide": 0, "options": [], "current": {}},
        var("cluster", "Cluster", "label_values(spark_app_info, cluster)"),
        var("namespace", "Namespace", 'label_values(spark_app_info{cluster=~"$cluster"}, namespace)'),
    ] + ([var("job", "Exporter job", f'label_values(up{{{SCOPE}, {EXPORTER_JOBS}}}, job)')] if by_job else []) + [
        var("app_name", "Application", f"label_values(spark_app_info{{{scope}}}, app_name)"),
        var("app_id", "Application id", f'label_values(spark_app_info{{{scope}, app_name=~"$app_name"}}, app_id)'),
        var("job_group", "Job group",
            'label_values({__name__=~"spark_jobs_total|spark_jobs_active|spark_stages_active", '
            f"{app}}}, job_group)"),
    ]


def layout(panels):
    """Give panels ids and grid positions: left to right, wrapping at 24 columns."""
    x = y = row_h = 0
    out = []
    for i, p in enumerate(panels, 1):
        w, h = p.pop("_size")
        if x + w > 24 or p["type"] == "row":
            x, y, row_h = 0, y + row_h, 0
        p = {"id": i, "gridPos": {"h": h, "w": w, "x": x, "y": y}, **p}
        x += w
        row_h = max(row_h, h)
        if p["type"] == "row":
            x, y, row_h = 0, y + h, 0
        out.append(p)
    return out


def dashboard(uid, title, description, panels, by_job=False, time_from="now-3h", refresh="30s"):
    return {
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
            "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts",
            "type": "dashboard"}]},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [{"asDropdown": True, "includeVars": True, "keepTime": True, "tags": ["spark-exporter"],
                   "targetBlank": False, "title": "Spark dashboards", "type": "dashboards", "icon": "external link",
                   "tooltip": "", "url": ""}],
        "panels": layout(panels),
        "refresh": refresh,
        "schemaVersion": SCHEMA_VERSION,
        "tags": ["spark", "spark-exporter"],
        "templating": {"list": variables(by_job)},
        "time": {"from": time_from, "to": "now"},
        "timepicker": {},
        "timezone": "browser",
        "title": title,
        "uid": uid,
        "version": 1,
        "weekStart": "",
    }


UP_MAPPINGS = [{"type": "value", "options": {
    "0": {"text": "DOWN", "color": "red", "index": 0},
    "1": {"text": "UP", "color": "green", "index": 1}}}]


# --- dashboards --------------------------------------------------------------------------------

def overview():
    return dashboard("spark-exporter-overview", "Spark / Applications overview",
                     "Running and finished Spark applications, throughput, failures and the health of spark-exporter.", [
        row("Applications"),
        stat("Running applications", "Applications exported that have not ended (no end time yet).", "short",
             [target(f"count(spark_app_info{{{APP}}} unless on (app_id) spark_app_end_time_seconds{{{APP}}})")],
             no_value="0"),
        stat("Finished applications", "Ended applications still exported (kept for the exporter's app retention, 1h by default).",
             "short", [target(f"count(spark_app_end_time_seconds{{{APP}}})")], no_value="0"),
        stat("Active executors", "Executors alive in the selected applications (the driver counts as one in local mode).",
             "short", [target(f'sum(spark_executors{{{APP}, state="active"}})')], no_value="0"),
        stat("Active jobs", "Spark jobs running now.", "short", [target(f"sum(spark_jobs_active{{{JOB}}})")], no_value="0"),
        stat("Active stages", "Stages running now.", "short", [target(f"sum(spark_stages_active{{{JOB}}})")], no_value="0"),
        stat("Failed jobs", "Jobs that failed since their application started.", "short",
             [target(f'sum(spark_jobs_total{{{JOB}, status="failed"}})')], no_value="0", steps=((1, "red"),)),
        table("Applications", "One row per application: version, user and run time (until now while running).", "s",
              [target(f"((spark_app_end_time_seconds{{{APP}}} or (0 * spark_app_start_time_seconds{{{APP}}} + time()))"
                      f" - spark_app_start_time_seconds{{{APP}}})"
                      f" * on (instance, job, app_id, app_name) group_left (spark_version, user) spark_app_info{{{APP}}}",
                      instant=True, table=True)],
              h=6, rename={"Value": "Run time", "app_name": "Application", "app_id": "Id",
                           "spark_version": "Spark", "user": "User"}, sort_by="Run time"),
        row("Throughput"),
        ts("Tasks finished by status", "Tasks finishing per second, by application and status (succeeded, failed, killed).",
           "suffix: tasks/s", [target(f"sum by (app_name, status) (rate(spark_tasks_total{{{JOB}}}[{RI}]))",
                                      "{{app_name}} {{status}}")], w=8),
        ts("Jobs finished by status", "Jobs finishing per minute, by application and status.", "suffix: jobs/min",
           [target(f"sum by (app_name, status) (60 * rate(spark_jobs_total{{{JOB}}}[{RI}]))", "{{app_name}} {{status}}")], w=8),
        ts("Busy task slots", "Task-seconds run per second: how many cores are busy with tasks, per application.",
           "short", [target(f"sum by (app_name) (rate(spark_executor_task_time_seconds_total{{{APP}}}[{RI}]))",
                            "{{app_name}}")], w=8),
        ts("Executors by state", "Active and dead executors per application.", "short",
           [target(f"sum by (app_name, state) (spark_executors{{{APP}}})", "{{app_name}} {{state}}")], w=8),
        ts("Failed jobs, stages and tasks", "Cumulative failures per application since it started; every step up is a new failure.",
           "short", [target(f'sum by (app_name) (spark_jobs_total{{{JOB}, status="failed"}})', "jobs {{app_name}}"),
                     target(f'sum by (app_name) (spark_stages_total{{{JOB}, status="failed"}})', "stages {{app_name}}"),
                     target(f'sum by (app_name) (spark_tasks_total{{{JOB}, status="failed"}})', "tasks {{app_name}}")], w=8),
        ts("Task failure ratio", "Failed / finished tasks over 5m (recording rule spark_app:task_failure_ratio:rate5m).",
           "percentunit", [target(f"spark_app:task_failure_ratio:rate5m{{{APP}}}", "{{app_name}}")], w=8, threshold_line=0.05),
        row("Exporter health"),
        stat("REST targets", "Whether the exporter's last poll of each Spark UI / History Server succeeded (spark_up).",
             "none", [target(f"spark_up{{{SCOPE}}}", "{{target}}")], w=6, mappings=UP_MAPPINGS, graph=False,
             steps=((1, "green"),), text_mode="value_and_name"),
        stat("Exporter version", "Version of each running spark-exporter (spark_exporter_build_info).", "none",
             [target(f"spark_exporter_build_info{{{SCOPE}}}", "{{instance}} {{version}}")], w=6, graph=False, text_mode="name"),
        ts("Scrape errors by kind", "Failed REST polls per second, by target and kind of error.", "cps",
           [target(f"sum by (target, kind) (rate(spark_exporter_scrape_errors_total{{{SCOPE}}}[{RI}]))", "{{target}} {{kind}}")], w=6),
        ts("REST poll duration", "Duration of the last poll of each REST target.", "s",
           [target(f"spark_exporter_scrape_duration_seconds{{{SCOPE}}}", "{{target}}")], w=6),
        ts("REST requests", "REST API requests per second, by target.", "reqps",
           [target(f"sum by (target) (rate(spark_exporter_rest_requests_total{{{SCOPE}}}[{RI}]))", "{{target}}")], w=6),
        ts("REST response bytes", "Bytes of REST API responses per second, by target.", "Bps",
           [target(f"sum by (target) (rate(spark_exporter_rest_response_bytes_total{{{SCOPE}}}[{RI}]))", "{{target}}")], w=6),
        ts("Label overflow", "Label values folded into __other__ since the exporter started, by label "
           "(more distinct values per application than labels.max_values_per_label in the exporter's config).", "short",
           [target(f"sum by (instance, label) (spark_exporter_label_overflow_total{{{SCOPE}}})", "{{label}}")], w=6),
        ts("Event-log errors", "Event-log errors since the exporter started, by kind (cumulative).", "short",
           [target(f"sum by (instance, kind) (spark_exporter_eventlog_errors_total{{{SCOPE}}})", "{{kind}}")], w=6),
        ts("Event-log lag", "How far the event-log tailer is behind the newest event.", "s",
           [target(f"spark_exporter_eventlog_lag_seconds{{{SCOPE}}}", "{{instance}}")], w=6),
        ts("Event-log events", "Events parsed from event logs per second.", "cps",
           [target(f"sum by (instance) (rate(spark_exporter_eventlog_events_total{{{SCOPE}}}[{RI}]))", "{{instance}}")], w=6),
        ts("Event-log bytes", "Event-log bytes read per second (after decompression).", "Bps",
           [target(f"sum by (instance) (rate(spark_exporter_eventlog_bytes_total{{{SCOPE}}}[{RI}]))", "{{instance}}")], w=6),
        ts("Event-log files", "Event-log files known to the tailer, by state.", "short",
           [target(f"sum by (instance, state) (spark_exporter_eventlog_files{{{SCOPE}}})", "{{state}}")], w=6),
    ])


def jobs():
    by = "app_name, job_group"
    return dashboard("spark-exporter-jobs", "Spark / Jobs and job groups",
                     "Job durations (from the duration histograms), outcomes and activity per job group and description.", [
        row("Outcomes"),
        stat("Active jobs", "Jobs running now.", "short", [target(f"sum(spark_jobs_active{{{JOB}}})")], w=6, no_value="0"),
        stat("Succeeded jobs", "Jobs that succeeded since their application started.", "short",
             [target(f'sum(spark_jobs_total{{{JOB}, status="succeeded"}})')], w=6, no_value="0"),
        stat("Failed jobs", "Jobs that failed since their application started.", "short",
             [target(f'sum(spark_jobs_total{{{JOB}, status="failed"}})')], w=6, no_value="0", steps=((1, "red"),)),
        stat("Job failure rate", "Failed / finished jobs since their application started.", "percentunit",
             [target(f'sum(spark_jobs_total{{{JOB}, status="failed"}}) / sum(spark_jobs_total{{{JOB}}})')],
             w=6, no_value="0", steps=((0.01, "orange"), (0.1, "red"))),
        row("Durations"),
        ts("Job duration by job group", "p50, p95 and max of job durations per job group, from the jobs that finished "
           "in each interval (histogram_quantile over the rate of spark_job_duration_seconds_bucket; max is the upper "
           "bound of the highest filled bucket).", "s",
           quantiles("spark_job_duration_seconds", by, JOB, "{{app_name}} {{job_group}}"), w=24, h=9, sparse=True),
        ts("Job duration p95 by description", "p95 of job durations per job group and description.", "s",
           quantiles("spark_job_duration_seconds", by + ", job_description", JOB,
                     "{{job_group}} / {{job_description}}", qs=((0.95, "p95"),)), w=12, sparse=True),
        ts("Mean job duration", "Mean duration of the jobs that finished in each interval, per job group.", "s",
           [target(f"sum by ({by}) (rate(spark_job_duration_seconds_sum{{{JOB}}}[{RI}]))"
                   f" / sum by ({by}) (rate(spark_job_duration_seconds_count{{{JOB}}}[{RI}]))",
                   "{{app_name}} {{job_group}}")], w=12, sparse=True),
        row("Per run"),
        per_run("Mean job duration per run", "Mean duration of a run's jobs, per job group: one point per run "
                f"(application id) at the run's start time, for the selected applications (recording rule "
                f"{RUN_RULE}:mean, its last value in the time range). Widen the time range to compare more "
                "runs; a run that started before the range is counted but drawn left of it.", "s", "mean"),
        per_run("Job time per run", "Seconds of all of a run's jobs, per job group: one point per run at the run's "
                f"start time (recording rule {RUN_RULE}:sum, its largest value in the time range).", "s", "sum"),
        per_run("Jobs per run", "Jobs ended in a run, per job group: one point per run at the run's start time "
                f"(recording rule {RUN_RULE}:count, its largest value in the time range).", "short", "count"),
        table("Runs by job group", "One row per run (application id) and job group, newest first: jobs ended, their "
              f"total and mean duration (recording rules {RUN_RULE}:count, :sum and :mean over the time range).", "s",
              [target(run_value("count"), instant=True, table=True), target(run_value("sum"), instant=True, table=True),
               target(run_value("mean"), instant=True, table=True), target(run_start_ms(), instant=True, table=True)],
              merge=True, order=("Value #D", "app_name", "app_id", "job_group", "Value #A", "Value #B", "Value #C"),
              rename={"Value #A": "Jobs", "Value #B": "Job time", "Value #C": "Mean job duration",
                      "Value #D": "Started", "app_name": "Application", "app_id": "Id", "job_group": "Job group",
                      "cluster": "Cluster", "namespace": "Namespace"},
              units={"Started": "dateTimeAsIso", "Jobs": "short"}, sort_by="Started"),
        row("Activity"),
        ts("Jobs finished by job group", "Jobs finishing per minute, per job group and status.", "suffix: jobs/min",
           [target(f"sum by ({by}, status) (60 * rate(spark_jobs_total{{{JOB}}}[{RI}]))",
                   "{{job_group}} {{status}}")], w=12),
        ts("Active jobs by job group", "Jobs running now, per job group.", "short",
           [target(f"sum by ({by}) (spark_jobs_active{{{JOB}}})", "{{app_name}} {{job_group}}")], w=12),
        ts("Failed jobs by job group", "Cumulative failed jobs per job group and description; each step is a failure.",
           "short", [target(f'sum by ({by}, job_description) (spark_jobs_total{{{JOB}, status="failed"}})',
                            "{{job_group}} / {{job_description}}")], w=12),
        table("Jobs by description", "Finished jobs per job group, description and status since the application started.",
              "short", [target(f"sum by (app_name, job_group, job_description, status) (spark_jobs_total{{{JOB}}})",
                               instant=True, table=True)], w=12,
              rename={"Value": "Jobs", "app_name": "Application", "job_group": "Job group",
                      "job_description": "Description", "status": "Status"}, sort_by="Jobs"),
        row("Tasks of the job groups"),
        ts("Busy task slots by job group", "Task run time per second (cores busy running the group's tasks).", "short",
           [target(f"sum by ({by}) (rate(spark_task_run_time_seconds_total{{{JOB}}}[{RI}]))",
                   "{{app_name}} {{job_group}}")], w=8),
        ts("CPU efficiency by job group", "Task CPU time / task run time: low values mean tasks wait on I/O, locks or GC.",
           "percentunit", [target(f"sum by ({by}) (rate(spark_task_cpu_time_seconds_total{{{JOB}}}[{RI}]))"
                                  f" / sum by ({by}) (rate(spark_task_run_time_seconds_total{{{JOB}}}[{RI}]))",
                                  "{{app_name}} {{job_group}}")], w=8, sparse=True),
        ts("GC ratio by job group", "JVM GC time / task run time over 5m (recording rule spark_job_group:gc_ratio:rate5m).",
           "percentunit", [target(f"spark_job_group:gc_ratio:rate5m{{{JOB}}}", "{{app_name}} {{job_group}}")],
           w=8, threshold_line=GC_RATIO),
        ts("Task duration by job group", "p50 and p95 of task durations per job group (from the event log; needs "
           "--event-log.dir).", "s",
           quantiles("spark_task_duration_seconds", by, JOB, "{{app_name}} {{job_group}}",
                     qs=((0.5, "p50"), (0.95, "p95"))), w=12, sparse=True),
        ts("Tasks finished by job group", "Tasks finishing per second, per job group and status.", "suffix: tasks/s",
           [target(f"sum by ({by}, status) (rate(spark_tasks_total{{{JOB}}}[{RI}]))", "{{job_group}} {{status}}")], w=12),
    ])


def stages():
    by = "app_name, job_group"
    stage_legend = "{{app_name}} stage {{stage_id}}.{{stage_attempt}} {{job_group}}"
    return dashboard("spark-exporter-stages", "Spark / Stages",
                     "Active and stalled stages, task skew, spill, shuffle and stage durations.", [
        row("Active stages"),
        stat("Active stages", "Stages running now.", "short", [target(f"sum(spark_stages_active{{{JOB}}})")],
             w=6, no_value="0"),
        stat("Longest stall", "Longest time any active stage has gone without finishing a task "
             f"(SparkStageStuck fires above {STUCK_SECONDS // 60} minutes by default).", "s",
             [target(f"max(spark_stage_stalled_seconds{{{JOB}}})")], w=6, no_value="0",
             steps=((STUCK_SECONDS / 3, "orange"), (STUCK_SECONDS, "red"))),
        stat("Failed stage attempts", "Stage attempts that failed since their application started.", "short",
             [target(f'sum(spark_stages_total{{{JOB}, status="failed"}})')], w=6, no_value="0", steps=((1, "red"),)),
        stat("Worst task skew", "Highest max/median task duration ratio among exported stages.", "suffix:×",
             [target(f"max(spark_stage_task_skew_ratio{{{JOB}}})")], w=6, decimals=1, steps=((3, "orange"), (5, "red"))),
        table("Stalled stages", "Active stages and the time since one of their tasks last finished (or since "
              "submission); the top rows are the stuck candidates.", "s",
              [target(f"spark_stage_stalled_seconds{{{JOB}}}", instant=True, table=True)],
              rename={"Value": "No task finished for", "app_name": "Application", "app_id": "Id",
                      "job_group": "Job group", "job_description": "Description", "stage_id": "Stage",
                      "stage_attempt": "Attempt", "stage_name": "Name"}, sort_by="No task finished for", h=7),
        ts("Stall per active stage", "Seconds since a task of each active stage last finished; the red line is the "
           "SparkStageStuck threshold.", "s",
           [target(f"spark_stage_stalled_seconds{{{JOB}}}", stage_legend + " {{stage_name}}")],
           threshold_line=STUCK_SECONDS),
        ts("Active tasks per stage", "Running tasks of each active stage.", "short",
           [target(f"spark_stage_tasks_active{{{JOB}}}", stage_legend)]),
        ts("Active stages by job group", "Stages running now, per job group.", "short",
           [target(f"sum by ({by}) (spark_stages_active{{{JOB}}})", "{{app_name}} {{job_group}}")]),
        ts("Task skew per stage", "Max / median task duration of each stage (1 = even; SparkStageTaskSkew fires "
           "above 5 for active stages).", "suffix:×",
           [target(f"spark_stage_task_skew_ratio{{{JOB}}}", stage_legend)], threshold_line=5),
        row("Durations and outcomes"),
        ts("Stage duration by job group", "p50, p95 and max of stage durations per job group (histogram_quantile over "
           "the rate of spark_stage_duration_seconds_bucket).", "s",
           quantiles("spark_stage_duration_seconds", by, JOB, "{{app_name}} {{job_group}}"), w=24, h=9, sparse=True),
        ts("Stages finished by status", "Stages finishing per minute, by status (complete, failed, skipped).",
           "suffix: stages/min", [target(f"sum by (app_name, status) (60 * rate(spark_stages_total{{{JOB}}}[{RI}]))",
                                         "{{app_name}} {{status}}")]),
        ts("Failed stage attempts by job group", "Cumulative failed stage attempts per job group; each step is a failure.",
           "short", [target(f'sum by ({by}) (spark_stages_total{{{JOB}, status="failed"}})',
                            "{{app_name}} {{job_group}}")]),
        row("Data movement"),
        ts("Shuffle read and write", "Shuffle bytes read and written per second by the tasks of each job group.", "Bps",
           [target(f"sum by ({by}) (rate(spark_task_shuffle_read_bytes_total{{{JOB}}}[{RI}]))", "read {{job_group}}"),
            target(f"sum by ({by}) (rate(spark_task_shuffle_write_bytes_total{{{JOB}}}[{RI}]))", "write {{job_group}}")], w=8),
        ts("Spill", "Bytes spilled per second, per job group: memory = in-memory size of the spilled data, disk = "
           "bytes written to local disk.", "Bps",
           [target(f"sum by ({by}) (rate(spark_task_memory_spilled_bytes_total{{{JOB}}}[{RI}]))", "memory {{job_group}}"),
            target(f"sum by ({by}) (rate(spark_task_disk_spilled_bytes_total{{{JOB}}}[{RI}]))", "disk {{job_group}}")], w=8),
        ts("Input and output", "Bytes read from sources and written to sinks per second, per job group.", "Bps",
           [target(f"sum by ({by}) (rate(spark_task_input_bytes_total{{{JOB}}}[{RI}]))", "input {{job_group}}"),
            target(f"sum by ({by}) (rate(spark_task_output_bytes_total{{{JOB}}}[{RI}]))", "output {{job_group}}")], w=8),
    ])


def executors():
    ex = "{{app_name}} executor {{executor_id}}"
    return dashboard("spark-exporter-executors", "Spark / Executors",
                     "Executor GC, task time, memory, disk and lifecycle. Executor metrics have no job group.", [
        row("Executors"),
        stat("Active executors", "Executors alive now.", "short",
             [target(f'sum(spark_executors{{{APP}, state="active"}})')], w=6, no_value="0"),
        stat("Dead executors", "Executors removed and still remembered by the driver.", "short",
             [target(f'sum(spark_executors{{{APP}, state="dead"}})')], w=6, no_value="0", steps=((1, "orange"),)),
        stat("GC ratio (worst application)", "Highest GC time / task time over 5m among the selected applications.",
             "percentunit", [target(f"max(spark_app:gc_ratio:rate5m{{{APP}}})")], w=6,
             steps=((GC_RATIO / 2, "orange"), (GC_RATIO, "red"))),
        stat("Executors removed", "Executor removals since the application started, all reasons.", "short",
             [target(f"sum(spark_executor_removed_total{{{APP}}})")], w=6, no_value="0", steps=((1, "orange"),)),
        row("GC and task time"),
        ts("GC ratio per executor", "JVM GC time / task time over 5m (recording rule spark_executor:gc_ratio:rate5m); "
           "the red line is the SparkExecutorHighGCRatio threshold.", "percentunit",
           [target(f"spark_executor:gc_ratio:rate5m{{{APP}}}", ex)], threshold_line=GC_RATIO),
        ts("GC ratio per application", "JVM GC time / task time over 5m of all executors of an application "
           "(recording rule spark_app:gc_ratio:rate5m).", "percentunit",
           [target(f"spark_app:gc_ratio:rate5m{{{APP}}}", "{{app_name}}")], threshold_line=GC_RATIO),
        ts("Task time per executor", "Task-seconds per second run by each executor (busy task slots).", "short",
           [target(f"rate(spark_executor_task_time_seconds_total{{{APP}}}[{RI}])", ex)], w=8),
        ts("Slot utilization per executor", "Busy task slots / task slots over 5m (recording rule "
           "spark_executor:utilization:rate5m).", "percentunit",
           [target(f"spark_executor:utilization:rate5m{{{APP}}}", ex)], w=8),
        ts("Active tasks per executor", "Tasks running now on each executor.", "short",
           [target(f"spark_executor_active_tasks{{{APP}}}", ex)], w=8),
        ts("Tasks finished per executor", "Tasks finishing per second on each executor, by status.", "suffix: tasks/s",
           [target(f"sum by (app_name, executor_id, status) (rate(spark_executor_tasks_total{{{APP}}}[{RI}]))",
                   ex + " {{status}}")], w=24),
        row("Memory and disk"),
        ts("Storage memory per executor", "Memory used by cached blocks, and the executor's storage memory limit.",
           "bytes", [target(f"spark_executor_storage_memory_used_bytes{{{APP}}}", "used " + ex),
                     target(f"spark_executor_max_memory_bytes{{{APP}}}", "limit " + ex)], w=8),
        ts("Peak JVM heap per executor", "Highest JVM heap use seen on each executor (peak memory metrics).", "bytes",
           [target(f'spark_executor_peak_memory_bytes{{{APP}, type="JVMHeapMemory"}}', ex)], w=8),
        ts("Disk used per executor", "Disk used by each executor's cached blocks.", "bytes",
           [target(f"spark_executor_disk_used_bytes{{{APP}}}", ex)], w=8),
        ts("Peak memory by type", "Highest peak of each memory kind over the executors of an application.", "bytes",
           [target(f"max by (app_name, type) (spark_executor_peak_memory_bytes{{{APP}}})", "{{app_name}} {{type}}")],
           w=24),
        row("Lifecycle and I/O"),
        ts("Executors by state", "Active and dead executors per application.", "short",
           [target(f"sum by (app_name, state) (spark_executors{{{APP}}})", "{{app_name}} {{state}}")], w=8),
        ts("Executor removals by reason", "Cumulative executor removals per reason (killed_by_driver and "
           "decommissioned are routine; the rest fire SparkExecutorsLost).", "short",
           [target(f"sum by (app_name, reason) (spark_executor_removed_total{{{APP}}})", "{{app_name}} {{reason}}")], w=8),
        ts("Shuffle and input per executor", "Shuffle read, shuffle write and input bytes per second on each executor.",
           "Bps", [target(f"rate(spark_executor_shuffle_read_bytes_total{{{APP}}}[{RI}])", "shuffle read " + ex),
                   target(f"rate(spark_executor_shuffle_write_bytes_total{{{APP}}}[{RI}])", "shuffle write " + ex),
                   target(f"rate(spark_executor_input_bytes_total{{{APP}}}[{RI}])", "input " + ex)], w=8),
    ])


def sql_streaming():
    return dashboard("spark-exporter-sql-streaming", "Spark / SQL and streaming",
                     "SQL executions by description, and Structured Streaming rates, batch durations, phases, "
                     "state, watermarks and whether queries keep up with their trigger (streaming metrics come "
                     "from the event log). These metrics have no job group; a query's jobs count under its name "
                     "as job group on the Jobs dashboard.", [
        row("SQL"),
        stat("Active SQL executions", "SQL / DataFrame queries running now.", "short",
             [target(f"sum(spark_sql_executions_active{{{APP}}})")], w=8, no_value="0"),
        stat("Completed SQL executions", "SQL executions that completed since their application started.", "short",
             [target(f'sum(spark_sql_executions_total{{{APP}, status="completed"}})')], w=8, no_value="0"),
        stat("Failed SQL executions", "SQL executions that failed since their application started.", "short",
             [target(f'sum(spark_sql_executions_total{{{APP}, status="failed"}})')], w=8, no_value="0",
             steps=((1, "red"),)),
        ts("SQL execution duration by description", "p50 and p95 of SQL execution durations per description "
           "(histogram_quantile over the rate of spark_sql_execution_duration_seconds_bucket).", "s",
           quantiles("spark_sql_execution_duration_seconds", "app_name, description", APP, "{{description}}",
                     qs=((0.5, "p50"), (0.95, "p95"))), w=24, h=9, sparse=True),
        ts("SQL executions finished by status", "SQL executions finishing per minute, by status.", "suffix: queries/min",
           [target(f"sum by (app_name, status) (60 * rate(spark_sql_executions_total{{{APP}}}[{RI}]))",
                   "{{app_name}} {{status}}")], w=8),
        ts("Active SQL executions by description", "SQL executions running now, per description.", "short",
           [target(f"sum by (app_name, description) (spark_sql_executions_active{{{APP}}})", "{{description}}")], w=8),
        ts("Failed SQL executions by description", "Cumulative failed SQL executions per description; each step is a "
           "failure.", "short",
           [target(f'sum by (app_name, description) (spark_sql_executions_total{{{APP}, status="failed"}})',
                   "{{description}}")], w=8),
        table("SQL executions by description", "Finished SQL executions per description and status since the "
              "application started.", "short",
              [target(f"sum by (app_name, description, status) (spark_sql_executions_total{{{APP}}})",
                      instant=True, table=True)],
              rename={"Value": "Executions", "app_name": "Application", "description": "Description",
                      "status": "Status"}, sort_by="Executions"),
        row("Structured Streaming"),
        ts("Input rate", "Rows per second arriving from the sources, per streaming query (last progress report).",
           "suffix: rows/s", [target(f"spark_streaming_input_rows_per_second{{{APP}}}", "{{app_name}} {{query}}")]),
        ts("Processing rate", "Rows per second processed, per streaming query; below the input rate the query falls "
           "behind.", "suffix: rows/s",
           [target(f"spark_streaming_processed_rows_per_second{{{APP}}}", "{{app_name}} {{query}}")]),
        ts("Batch duration", "p50, p95 and max of micro-batch durations per streaming query.", "s",
           quantiles("spark_streaming_batch_duration_seconds", "app_name, query", APP, "{{query}}"), sparse=True),
        ts("Batches and rows", "Micro-batches completed per minute and input rows per second, per streaming query "
           "(from the counters).", "short",
           [target(f"sum by (app_name, query) (60 * rate(spark_streaming_batches_total{{{APP}}}[{RI}]))",
                   "batches/min {{query}}"),
            target(f"sum by (app_name, query) (rate(spark_streaming_input_rows_total{{{APP}}}[{RI}]))",
                   "rows/s {{query}}")]),
        row("Structured Streaming: keeping up"),
        ts("Batch duration / trigger interval", "Mean micro-batch duration over 5m divided by the query's trigger "
           "interval (recording rule spark_streaming_query:batch_trigger_ratio:mean5m). Above "
           f"{BATCH_TRIGGER_RATIO} for 10m fires SparkStreamingQueryFallingBehind; above 1 every batch overruns "
           "its trigger. No line for a query whose interval is neither configured nor inferable.", "percentunit",
           [target(f"spark_streaming_query:batch_trigger_ratio:mean5m{{{APP}}}", "{{app_name}} {{query}}")],
           threshold_line=BATCH_TRIGGER_RATIO, sparse=True),
        ts("Trigger interval", "The trigger interval per query: from=configured (streaming.trigger_intervals) or "
           "from=inferred (smallest spacing of on-schedule batch starts).", "s",
           [target(f"spark_streaming_trigger_interval_seconds{{{APP}}}", "{{app_name}} {{query}} ({{from}})")]),
        ts("Time per batch phase", "Seconds per second spent in each durationMs phase of the micro-batches, per "
           "query (triggerExecution, the whole batch, left out): addBatch is the query's work, walCommit and "
           "commitOffsets the checkpoint, latestOffset and getBatch the source.", "s",
           [target(f'sum by (app_name, query, phase) (rate(spark_streaming_batch_phase_seconds_total{{{APP}, '
                   f'phase!="triggerExecution"}}[{RI}]))', "{{query}} {{phase}}")], stack=True),
        ts("Per-source rates", "Input and processing rate of each source of each query (latest micro-batch).",
           "suffix: rows/s",
           [target(f"spark_streaming_source_input_rows_per_second{{{APP}}}", "in {{query}} {{source}}"),
            target(f"spark_streaming_source_processed_rows_per_second{{{APP}}}", "processed {{query}} {{source}}")]),
        ts("Watermark lag", "Newest event time minus the watermark of the latest batch with rows (queries with "
           "withWatermark), and how far the watermark trails the wall clock.", "s",
           [target(f"spark_streaming_watermark_lag_seconds{{{APP}}}", "lag behind events {{query}}"),
            target(f"time() - spark_streaming_watermark_seconds{{{APP}}}", "behind wall clock {{query}}")]),
        ts("State rows", "Rows held by each stateful operator (numRowsTotal of the latest batch).", "short",
           [target(f"spark_streaming_state_rows{{{APP}}}", "{{query}} {{operator}}")], w=8),
        ts("State memory", "Memory used by each stateful operator's state (memoryUsedBytes).", "bytes",
           [target(f"spark_streaming_state_memory_bytes{{{APP}}}", "{{query}} {{operator}}")], w=8),
        ts("Rows dropped by watermark", "Rows per second each stateful operator dropped as later than the "
           "watermark.", "suffix: rows/s",
           [target(f"rate(spark_streaming_state_rows_dropped_by_watermark_total{{{APP}}}[{RI}])",
                   "{{query}} {{operator}}")], w=8),
    ])


def fleet():
    """Spark / Fleet: every application of a platform, as a fleet of sharded exporters reads them from
    the event-log store (docs/deploy.md "Sidecar, fleet, or both"). Built for many short runs: counts are of
    distinct application ids (so two exporters of one application count it once), and the tables
    read each series' last value in the time range, which a run that was read whole at once has
    (rate() needs two samples of a growing series)."""
    up = f"up{{{FSCOPE}, {EXPORTER_JOBS}}}"
    # runs (app_id), or names with model.aggregate_by app_name, whose series have no app_id
    running = (f"count by (app_name, app_id) (spark_app_info{{{FAPP}}} unless on (app_name, app_id) "
               f"spark_app_end_time_seconds{{{FAPP}}})")
    ended = f"count by (app_name, app_id) (spark_app_end_time_seconds{{{FAPP}}})"
    rng = "[$__range]"
    run_time = (f"max by (app_name, app_id) (last_over_time(spark_app_end_time_seconds{{{FAPP}}}{rng})"
                f" - last_over_time(spark_app_start_time_seconds{{{FAPP}}}{rng}))")
    # per exporter, then the largest of the exporters: one application exported twice counts once
    failed = lambda metric: (f"max by (app_name, app_id) (sum by (instance, job, app_name, app_id) "
                             f'(last_over_time({metric}{{{FJOB}, status="failed"}}{rng})))')
    by = "app_name, job_group"
    last_hist = lambda q: (f"histogram_quantile({q}, sum by ({by}, le) "
                           f"(last_over_time(spark_job_duration_seconds_bucket{{{FJOB}}}{rng})))")
    shard = "{{instance}}"
    return dashboard("spark-exporter-fleet", "Spark / Fleet",
                     "Every application of a platform as the fleet's sharded exporters read it from the event-log "
                     "store: applications by status, failures, durations by application and job group, trends "
                     "across runs, and the shards. Pick the fleet's Exporter job where sidecars export the same "
                     "applications.", [
        row("Applications"),
        stat("Running applications", "Distinct applications exported that have not ended (no end time yet); "
             "application names with model.aggregate_by app_name.",
             "short", [target(f"count({running})")], no_value="0"),
        stat("Ended applications", "Distinct ended applications still exported (for model.app_retention after "
             "their end, 1h by default); application names with model.aggregate_by app_name.", "short",
             [target(f"count({ended})")], no_value="0"),
        stat("Application names", "Distinct application names exported: the jobs of the platform, each of "
             "which may have many runs.", "short",
             [target(f"count(count by (app_name) (spark_app_info{{{FAPP}}}))")], no_value="0"),
        stat("Failed runs", "Runs that ended failed, with an exit code other than 0 (spark_app_runs_total"
             "{status=\"failed\"}): of the runs exported (model.aggregate_by app_id), or since each shard started "
             "(app_name).", "short", [target(f'sum(spark_app_runs_total{{{FAPP}, status="failed"}})')],
             no_value="0", steps=((1, "red"),)),
        stat("Shards up", "Exporter scrape targets Prometheus reaches (up == 1) in the selected Exporter jobs "
             "(pick the fleet's: sidecars are targets too).", "short",
             [target(f"sum({up})")], no_value="0"),
        stat("Shards down", "Exporter scrape targets Prometheus cannot scrape (up == 0): their applications are "
             "missing (SparkExporterDown fires after 5m).", "short", [target(f"count(({up}) == 0)")],
             no_value="0", steps=((1, "red"),)),
        ts("Applications by status", "Distinct applications exported: running (no end time yet) and ended "
           "(kept for model.app_retention).", "short",
           [target(f"count({running})", "running"), target(f"count({ended})", "ended")], w=12),
        ts("Runs ended by status", "Runs that ended per application name and status: succeeded (exit code 0), "
           "failed (another), unknown (no exit code: Spark before 4.0, or a driver that vanished). Of the runs "
           "exported with model.aggregate_by app_id, since each shard started with app_name; each step up is a "
           "run.", "short",
           [target(f"sum by (app_name, status) (spark_app_runs_total{{{FAPP}}})", "{{app_name}} {{status}}")],
           w=12),
        table("Runs in the time range", "One row per run (application id) exported in the time range: start and "
              "end (empty while running), run time, failed jobs and stages (last values in the range; an "
              "application exported by two exporters counts once).", "s",
              [target(f"1000 * max by (app_name, app_id) (last_over_time(spark_app_start_time_seconds{{{FAPP}}}{rng}))",
                      instant=True, table=True),
               target(f"1000 * max by (app_name, app_id) (last_over_time(spark_app_end_time_seconds{{{FAPP}}}{rng}))",
                      instant=True, table=True),
               target(run_time, instant=True, table=True),
               target(failed("spark_jobs_total"), instant=True, table=True),
               target(failed("spark_stages_total"), instant=True, table=True)],
              merge=True, h=9, order=("Value #A", "app_name", "app_id", "Value #B", "Value #C", "Value #D", "Value #E"),
              rename={"Value #A": "Started", "Value #B": "Ended", "Value #C": "Run time", "Value #D": "Failed jobs",
                      "Value #E": "Failed stages", "app_name": "Application", "app_id": "Id"},
              units={"Started": "dateTimeAsIso", "Ended": "dateTimeAsIso", "Failed jobs": "short",
                     "Failed stages": "short"}, sort_by="Started"),
        row("Failures"),
        ts("Failed jobs and stages by application", "Failed jobs and failed stage attempts of the exported runs, "
           "per application name (cumulative; each step up is a failure).", "short",
           [target(f'sum by (app_name) (spark_jobs_total{{{FJOB}, status="failed"}})', "jobs {{app_name}}"),
            target(f'sum by (app_name) (spark_stages_total{{{FJOB}, status="failed"}})', "stages {{app_name}}")],
           w=12),
        table("Failures by application", "Per application name: runs ended and failed runs (spark_app_runs_total), "
              "failed jobs and stages, of the exported runs (model.aggregate_by app_id) or since each shard started "
              "(app_name).", "short",
              [target(f"sum by (app_name) (spark_app_runs_total{{{FAPP}}})", instant=True, table=True),
               target(f'sum by (app_name) (spark_app_runs_total{{{FAPP}, status="failed"}})', instant=True, table=True),
               target(f'sum by (app_name) (spark_jobs_total{{{FJOB}, status="failed"}})', instant=True, table=True),
               target(f'sum by (app_name) (spark_stages_total{{{FJOB}, status="failed"}})', instant=True, table=True)],
              w=12, merge=True, order=("app_name", "Value #A", "Value #B", "Value #C", "Value #D"),
              rename={"Value #A": "Runs ended", "Value #B": "Failed runs", "Value #C": "Failed jobs",
                      "Value #D": "Failed stages", "app_name": "Application"}, sort_by="Failed runs"),
        row("Durations"),
        ts("Job duration by application", "p50 and p95 of job durations per application name, from the jobs "
           "counted in each interval (histogram_quantile over the rate of spark_job_duration_seconds_bucket). "
           "A run read whole at once (an ended log) adds no rate with model.aggregate_by app_id: see the table.",
           "s", quantiles("spark_job_duration_seconds", "app_name", FJOB, "{{app_name}}",
                          qs=((0.5, "p50"), (0.95, "p95"))), sparse=True),
        ts("Run duration by application", "p50 and p95 of the durations of the runs ending in each interval, "
           "per application name (histogram_quantile over the rate of spark_app_run_duration_seconds_bucket; "
           "model.aggregate_by app_name only). With app_id, see the run times in Runs in the time range.", "s",
           quantiles("spark_app_run_duration_seconds", "app_name", FAPP, "{{app_name}}",
                     qs=((0.5, "p50"), (0.95, "p95"))), sparse=True),
        ts("Job duration p95 by job group", "p95 of job durations per application name and job group, from the "
           "jobs counted in each interval.", "s",
           quantiles("spark_job_duration_seconds", by, FJOB, "{{app_name}} {{job_group}}", qs=((0.95, "p95"),)),
           w=24, sparse=True),
        table("Job durations over the time range", "p50 and p95 of job durations and jobs counted, per application "
              "name and job group, from each histogram's last value in the time range: with model.aggregate_by "
              "app_id every run exported in the range, with app_name each name's totals since its shard started.",
              "s", [target(last_hist(0.5), instant=True, table=True), target(last_hist(0.95), instant=True, table=True),
                    target(f"sum by ({by}) (last_over_time(spark_job_duration_seconds_count{{{FJOB}}}{rng}))",
                           instant=True, table=True)],
              merge=True, order=("app_name", "job_group", "Value #A", "Value #B", "Value #C"),
              rename={"Value #A": "p50", "Value #B": "p95", "Value #C": "Jobs", "app_name": "Application",
                      "job_group": "Job group"}, units={"Jobs": "short"}, sort_by="p95"),
        row("Runs against their history (model.aggregate_by app_name)"),
        ts("Last run against its history", "Per application name: the duration of the run that ended last "
           "(spark_app_last_run_duration_seconds, set when a run ends) and the median duration of the name's "
           "runs over the last 7 days (recording rule spark_app_name:run_duration_seconds:history_median, "
           "within 19 % of the true median: the histogram's bucket error). SparkRunSlowerThanUsual fires when "
           "the first is over twice the second with at least 5 runs of history.", "s",
           [target(f"max by (app_name) (spark_app_last_run_duration_seconds{{{FAPP}}})", "last run {{app_name}}"),
            target(f"max by (app_name) (spark_app_name:run_duration_seconds:history_median{{{APP}}})",
                   "7-day median {{app_name}}")], w=12, sparse=True),
        table("Runs against their history", "Per application name, the run that ended last against the name's "
              "runs of the last 7 days: its duration and core-seconds, the 7-day medians (recording rules; the "
              "histograms' bucket error is 19 %), the ratios SparkRunSlowerThanUsual and "
              "SparkRunCostlierThanUsual compare with 2, and the runs in the history (at least 5 for the "
              "alerts). Model.aggregate_by app_name only.", "s",
              [target(f"max by (app_name) (spark_app_last_run_duration_seconds{{{FAPP}}})", instant=True, table=True),
               target(f"max by (app_name) (spark_app_name:run_duration_seconds:history_median{{{APP}}})",
                      instant=True, table=True),
               target(f"max by (app_name) (spark_app_last_run_duration_seconds{{{FAPP}}}) / on (app_name) "
                      f'max by (app_name) (spark_app_name:run_duration_seconds:history_median{{{APP}}} > 0)',
                      instant=True, table=True),
               target(f"max by (app_name) (spark_app_last_run_core_seconds{{{FAPP}}})", instant=True, table=True),
               target(f"max by (app_name) (spark_app_last_run_core_seconds{{{FAPP}}}) / on (app_name) "
                      f'max by (app_name) (spark_app_name:run_core_seconds:history_median{{{APP}}} > 0)',
                      instant=True, table=True),
               target(f'max by (app_name) (spark_app_name:runs:history_count{{{APP}}})',
                      instant=True, table=True)],
              w=12, merge=True, order=("app_name", "Value #A", "Value #B", "Value #C", "Value #D", "Value #E",
                                       "Value #F"),
              rename={"app_name": "Application", "Value #A": "Last run", "Value #B": "7-day median",
                      "Value #C": "Duration ratio", "Value #D": "Last run core-s", "Value #E": "Core-s ratio",
                      "Value #F": "Runs in 7 days"},
              units={"Duration ratio": "short", "Last run core-s": "short", "Core-s ratio": "short",
                     "Runs in 7 days": "short"}, sort_by="Duration ratio"),
        row("Per run"),
        per_run("Mean job duration per run", "Mean duration of a run's jobs per job group: one point per run at "
                f"its start time (recording rule {RUN_RULE}:mean). Needs app_id on the series "
                "(model.aggregate_by app_id, the default). Widen the time range to compare more runs.", "s",
                "mean", rule_sel=JOB, app_sel=FAPP),
        per_run("Job time per run", "Seconds of all of a run's jobs per job group: one point per run at its start "
                f"time (recording rule {RUN_RULE}:sum).", "s", "sum", rule_sel=JOB, app_sel=FAPP),
        per_run("Jobs per run", "Jobs ended in a run per job group: one point per run at its start time "
                f"(recording rule {RUN_RULE}:count).", "short", "count", rule_sel=JOB, app_sel=FAPP),
        row("Shards"),
        ts("Scrape target up", "1 while Prometheus scrapes each exporter (shard), 0 when it cannot.", "short",
           [target(up, shard)], w=8),
        ts("Applications per shard", "Applications each shard exports (names with model.aggregate_by "
           "app_name): shards share them by a hash of the application id (of the name with app_name), so they "
           "should be close.", "short",
           [target(f"count by (instance) (spark_app_info{{{FAPP}}})", shard)], w=8),
        ts("Event-log files per shard", "Event-log files each shard follows, by state (active, finished, error).",
           "short", [target(f"sum by (instance, state) (spark_exporter_eventlog_files{{{FSCOPE}}})",
                            shard + " {{state}}")], w=8),
        ts("Event-log lag per shard", "How far each shard's reading is behind the newest event it has read.", "s",
           [target(f"max by (instance) (spark_exporter_eventlog_lag_seconds{{{FSCOPE}}})", shard)], w=8),
        ts("Events read per shard", "Events parsed per second by each shard.", "cps",
           [target(f"sum by (instance) (rate(spark_exporter_eventlog_events_total{{{FSCOPE}}}[{RI}]))", shard)], w=8),
        ts("Event-log errors per shard", "Event-log problems skipped since each shard started, by kind "
           "(cumulative).", "short",
           [target(f"sum by (instance, kind) (spark_exporter_eventlog_errors_total{{{FSCOPE}}})",
                   shard + " {{kind}}")], w=8),
        ts("Object store up per shard", "1 if each shard's last listing of each object store (S3, GCS, Azure) "
           "succeeded; nothing for a local folder.", "short",
           [target(f"spark_exporter_store_up{{{FSCOPE}}}", shard + " {{store}}")], w=8),
        ts("Object-store requests per shard", "Object-store requests per second by each shard, by operation "
           "(list, head, get); retries included.", "reqps",
           [target(f"sum by (instance, op) (rate(spark_exporter_store_requests_total{{{FSCOPE}}}[{RI}]))",
                   shard + " {{op}}")], w=8),
        ts("Object-store errors per shard", "Failed object-store requests since each shard started, by kind "
           "(cumulative; each retry counts).", "short",
           [target(f"sum by (instance, kind) (spark_exporter_store_errors_total{{{FSCOPE}}})",
                   shard + " {{kind}}")], w=8),
    ], by_job=True)


def diagnosis():
    """The Spark UI's top-down reading (issue 18), one row per step: bottleneck stages, skew and
    spill, GC and lost executors, joins and plans, cached data, task overheads, cost."""
    grp = "{{app_name}} {{job_group}}"
    by_grp = "app_name, app_id, job_group"
    rate_grp = lambda m, extra="": f"sum by ({by_grp}{extra}) (rate({m}{{{JOB}}}[{RI}]))"
    inc_grp = lambda m, extra="": f"sum by ({by_grp}{extra}) (increase({m}{{{JOB}}}[$__range]))"
    sql = "{{app_name}} {{description}}"
    return dashboard("spark-exporter-diagnosis", "Spark / Diagnosis",
                     "Why is this job slow? The Spark UI's top-down reading as panels: bottleneck stages, skew "
                     "and spill, GC and lost executors, join strategies and plan changes, cached data, task "
                     "overheads and locality, and what the cores cost. Each row names the alert and the runbook "
                     "section with the remedies.", [
        row("1. Bottleneck: where the time goes"),
        table("Job groups by task time", "Task run time, stage time, shuffle and spill per job group over the "
              "dashboard's range: the group at the top is where to look first.", "s",
              [target(inc_grp("spark_task_run_time_seconds_total"), instant=True, table=True),
               target(f"sum by ({by_grp}) (increase(spark_stage_duration_seconds_sum{{{JOB}}}[$__range]))",
                      instant=True, table=True),
               target(inc_grp("spark_task_shuffle_read_bytes_total"), instant=True, table=True),
               target(inc_grp("spark_task_disk_spilled_bytes_total"), instant=True, table=True)],
              merge=True, sort_by="task time", hide=("cluster", "namespace", "pod"),
              rename={"Value #A": "task time", "Value #B": "stage time", "Value #C": "shuffle read",
                      "Value #D": "spilled to disk"},
              units={"shuffle read": "bytes", "spilled to disk": "bytes"}),
        ts("Task time by job group", "Task-seconds per second per job group: busy cores.", "short",
           [target(rate_grp("spark_task_run_time_seconds_total"), grp)], w=12),
        ts("Shuffle by job group", "Shuffle bytes read and written per second per job group.", "Bps",
           [target(rate_grp("spark_task_shuffle_read_bytes_total"), "read " + grp),
            target(rate_grp("spark_task_shuffle_write_bytes_total"), "write " + grp)], w=12),
        row("2. Skew and spill (SparkSkewedStages, SparkHighSpill)"),
        ts("Stages by skew ratio", "Finished stages per job group, by their longest task / median task "
           "(spark_stage_skew_ratio): above 5 one partition holds most of the data.", "short",
           [target(f"sum by ({by_grp}) (increase(spark_stage_skew_ratio_count{{{JOB}}}[$__range])) - "
                   f"sum by ({by_grp}) (increase(spark_stage_skew_ratio_bucket{{{JOB}, le=\"5.0\"}}[$__range]))",
                   "skewed (> 5) " + grp),
            target(f"sum by ({by_grp}) (increase(spark_stage_skew_ratio_count{{{JOB}}}[$__range]))", "all " + grp)],
           w=8, sparse=True),
        ts("Worst skew ratio", "Highest max/median task duration of the finished stages of each job group, "
           "from the histogram (its upper bucket bound).", "short",
           [target(f"histogram_quantile(1, sum by ({by_grp}, le) (increase(spark_stage_skew_ratio_bucket{{{JOB}}}[$__range])))",
                   grp)], w=8, sparse=True),
        ts("Spill by job group", "Bytes spilled to disk and from memory per second: partitions that do not fit "
           "execution memory.", "Bps",
           [target(rate_grp("spark_task_disk_spilled_bytes_total"), "disk " + grp),
            target(rate_grp("spark_task_memory_spilled_bytes_total"), "memory " + grp)], w=8),
        row("3. Executors: GC and losses (SparkJobGroupHighGCRatio, SparkExecutorsLost)"),
        ts("GC share of task time by job group", "JVM GC time / task run time over 5m per job group "
           "(spark_job_group:gc_ratio:rate5m); the red line is the GC_RATIO threshold.", "percentunit",
           [target(f"spark_job_group:gc_ratio:rate5m{{{JOB}}}", grp)], threshold_line=GC_RATIO),
        ts("Executors by state, removals by reason", "Active and dead executors, and executor removals by "
           "normalised reason (killed_by_driver and decommissioned are routine; the rest are lost "
           "executors: their tasks and cached and shuffle blocks are recomputed).", "short",
           [target(f"sum by (app_name, state) (spark_executors{{{APP}}})", "{{app_name}} {{state}}"),
            target(f"sum by (app_name, reason) (spark_executor_removed_total{{{APP}}})",
                   "{{app_name}} removed: {{reason}}")]),
        row("4. SQL: joins, exchanges, adaptive execution, plan changes (SparkJoinStrategyChanged, SparkPlanChanged)"),
        table("Joins by strategy", "Join nodes of the final plans of finished SQL executions, per description and "
              "strategy (a SortMergeJoin where a broadcast would do is the classic regression).", "short",
              [target(f"sum by (app_name, job_group, description, strategy) (spark_sql_joins_total{{{JOB}}})",
                      instant=True, table=True)],
              w=12, hide=("cluster", "namespace", "pod"), rename={"Value": "joins"}),
        table("Exchanges by type", "Shuffle and broadcast exchanges of the final plans, per description (a "
              "reused exchange is not counted again).", "short",
              [target(f"sum by (app_name, job_group, description, type) (spark_sql_exchanges_total{{{JOB}}})",
                      instant=True, table=True)],
              w=12, hide=("cluster", "namespace", "pod"), rename={"Value": "exchanges"}),
        ts("Plan fingerprint by description", "Hash of each description's final physical plan (no app_id: "
           "runs of one application name share the series); a step is a plan change.", "short",
           [target(f'spark_sql_plan_fingerprint{{{SCOPE}, app_name=~"$app_name", job_group=~"$job_group"}}', sql)],
           w=12, sparse=True),
        ts("Adaptive execution", "Shuffle partitions adaptive execution coalesced, skewed partitions it found "
           "and the splits it made of them, per description (AQEShuffleRead of the final plans).", "short",
           [target(f"sum by (app_name, description, type) (spark_sql_aqe_partitions_total{{{JOB}}})",
                   "{{type}} {{app_name}} {{description}}")], w=12, sparse=True),
        row("5. Storage: cached data"),
        table("Cached datasets", "Cached RDDs and DataFrames: fraction of partitions cached, memory and disk.",
              "bytes",
              [target(f"spark_rdd_cached_fraction{{{APP}}}", instant=True, table=True),
               target(f"spark_rdd_memory_bytes{{{APP}}}", instant=True, table=True),
               target(f"spark_rdd_disk_bytes{{{APP}}}", instant=True, table=True)],
              w=12, merge=True, hide=("cluster", "namespace", "pod"),
              rename={"Value #A": "cached fraction", "Value #B": "memory", "Value #C": "disk"},
              units={"cached fraction": "percentunit"}),
        ts("Cached data against storage memory", "Memory held by the cached datasets, and the executors' "
           "storage memory limit (REST): cache near the limit crowds out execution memory (spill, GC).",
           "bytes",
           [target(f"sum by (app_name) (spark_rdd_memory_bytes{{{APP}}})", "cached {{app_name}}"),
            target(f"sum by (app_name) (spark_executor_max_memory_bytes{{{APP}}})", "limit {{app_name}}")],
           w=12),
        row("6. Task details: locality and overheads"),
        ts("Task locality", "Share of tasks per locality level (event logs): ANY and RACK_LOCAL read their "
           "input over the network.", "percentunit",
           [target(f"sum by (app_name, locality) (increase(spark_task_locality_total{{{JOB}}}[$__range])) / "
                   f"ignoring (locality) group_left sum by (app_name) (increase(spark_task_locality_total{{{JOB}}}[$__range]))",
                   "{{app_name}} {{locality}}")], w=8, sparse=True),
        ts("Task overheads by job group", "Per second of task run time: scheduler delay, deserialization and "
           "shuffle fetch wait. High scheduler delay: too many small tasks or a busy driver.", "percentunit",
           [target(f"{rate_grp('spark_task_scheduler_delay_seconds_total')} / {rate_grp('spark_task_run_time_seconds_total')}",
                   "scheduler delay " + grp),
            target(f"{rate_grp('spark_task_deserialize_time_seconds_total')} / {rate_grp('spark_task_run_time_seconds_total')}",
                   "deserialization " + grp),
            target(f"{rate_grp('spark_task_shuffle_fetch_wait_seconds_total')} / {rate_grp('spark_task_run_time_seconds_total')}",
                   "fetch wait " + grp)], w=8, sparse=True),
        ts("Peak execution memory by job group", "Sum of the tasks' peak execution memory per second, by job "
           "group (divide by tasks for the mean task's peak).", "Bps",
           [target(rate_grp("spark_task_peak_execution_memory_bytes_total"), grp)], w=8),
        row("7. Cost: cores allocated and used (SparkLowCoreUtilization)"),
        ts("Core utilisation over the application's life", "Task core-seconds used / executor core-seconds "
           "allocated since the application started (spark_app:core_utilization:ratio).", "percentunit",
           [target(f"spark_app:core_utilization:ratio{{{APP}}}", "{{app_name}} {{app_id}}")], w=8),
        ts("Core-seconds allocated and used", "Executor core-seconds allocated and task core-seconds used per "
           "second: the gap is what the platform pays for and nobody used.", "short",
           [target(f"sum by (app_name) (rate(spark_executor_core_seconds_allocated_total{{{APP}}}[{RI}]))",
                   "allocated {{app_name}}"),
            target(f"sum by (app_name) (rate(spark_task_core_seconds_used_total{{{JOB}}}[{RI}]))",
                   "used {{app_name}}")], w=8),
        ts("Idle core-seconds", "Executor core-seconds allocated and not used by any task so far.", "s",
           [target(f"spark_executor_idle_core_seconds{{{APP}}}", "{{app_name}} {{app_id}}")], w=8),
    ])


# --- efficiency: what the final diagnosis findings cost ---------------------------------------
# spark_diagnosis_findings_total and spark_diagnosis_cost_seconds_total (app_id, app_name, kind,
# job_group, job_description; no app_id with model.aggregate_by app_name) count a finding once it
# is final. Costs of different kinds overlap (a skewed stage that spills counts in both), so every
# query keeps `kind`: scripts/dashboards-lint.py rejects a sum of costs that drops it.
COST = "spark_diagnosis_cost_seconds_total"
# Money (issue 36): absent unless prices are configured (docs/metrics.md, *Money*).
APP_MONEY = "spark_app_cost_total"
FINDING_MONEY = "spark_diagnosis_cost_total"
FINDINGS = "spark_diagnosis_findings_total"
WINDOW_FINDINGS = "spark_diagnosis_window_findings"
WINDOW_COST = "spark_diagnosis_window_cost_seconds"
NEW_SERIES_LOOKBACK = "1h"  # NEW_SERIES_LOOKBACK of scripts/alerts-generate.py
# Application-level kinds: no job group (from the rule registry, scripts/diagnosis-kinds.json).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnosis-kinds.json"),
          encoding="utf-8") as _f:
    APP_KINDS = "|".join(sorted(json.load(_f)["ungrouped"]))
# The labels of one finding series of one run (no app_id by application name).
FINDING_BY = "cluster, namespace, app_id, app_name, job_group, job_description, kind"


def counted(metric, selector, window, by=FINDING_BY):
    """What a counter counted within `window`, per finding of a run, as SparkDiagnosisCostHigh
    counts it: a series that did not exist in the NEW_SERIES_LOOKBACK before the window counts
    whole (a run's counter appears with its first findings, and increase() would see nothing of
    it), older series their increase. Then the largest of the exporters of one run (a sidecar and
    a fleet, two shards), so that a run exported twice counts once."""
    s = f"{metric}{{{selector}}}"
    return (f"max by ({by}) ((max_over_time({s}[{window}]) unless "
            f"max_over_time({s}[{NEW_SERIES_LOOKBACK}] offset {window})) or increase({s}[{window}]))")


# The labels of one run's money series (no app_id by application name).
MONEY_BY = "cluster, namespace, app_id, app_name, currency, resource"
FINDING_MONEY_BY = FINDING_BY + ", currency"


def efficiency():
    """Spark / Efficiency: what the final findings of the diagnosis cost across a fleet, by kind,
    application name and job group, and the window findings of the running applications."""
    rng, itv = "$__range", "$__interval"
    grouped = f'{FJOB}, kind!~"{APP_KINDS}"'
    idle_sel, lost_sel = f'{FJOB}, kind="idle_cores"', f'{FJOB}, kind="executor_loss"'
    overlap = ("Costs of different kinds overlap (a skewed stage that spills counts in both skew and "
               "spill): compare them per kind, never add them up.")
    note = (
        "**Costs overlap across kinds: never add them up over `kind`.** A skewed stage that spills counts in "
        "both `skew` and `spill`, and idle cores are partly skew; every panel here keeps the kind.\n\n"
        "What a second of cost is, per kind: `skew` the longest task's excess over the median task; `spill`, "
        "`gc_pressure`, `join_strategy`, `executor_loss` task-seconds; `idle_cores` idle core-seconds; "
        "`scheduler_delay` seconds of scheduler delay; `streaming_trigger` batch seconds over 80% of the "
        "trigger; `plan_change`, `partial_cache`, `locality` no cost (findings only).\n\n"
        "A finding counts once it is final: `skew`, `spill`, `gc_pressure` when their stage attempt completes, "
        "the others when the application ends. The window kinds (`locality`, `scheduler_delay`, "
        "`streaming_trigger`) are the current evaluation of a running application. Alerts: "
        "SparkDiagnosisCostHigh and SparkJobGroupDiagnosisCostHigh (docs/runbook.md); one run's findings "
        "in detail: `spark-exporter diagnose` (docs/diagnose.md).")
    p_cost_kind = ts("Cost by kind", "What the findings that became final in each interval cost, per kind "
                     "(spark_diagnosis_cost_seconds_total; a run's counter that appears counts whole). " + overlap,
                     "s", [target(f"sum by (kind) ({counted(COST, FJOB, itv)})", "{{kind}}")], sparse=True)
    p_find_kind = ts("Findings by kind", "Findings that became final in each interval, per kind "
                     "(spark_diagnosis_findings_total).", "short",
                     [target(f"sum by (kind) ({counted(FINDINGS, FJOB, itv)})", "{{kind}}")], sparse=True)
    p_idle = ts("Idle core-seconds by application name", "Core-seconds the executors held and no task used, "
                "counted when each run ends (kind idle_cores), per interval.", "s",
                [target(f"sum by (app_name, kind) ({counted(COST, idle_sel, itv)})",
                        "{{app_name}}")], w=8, sparse=True)
    p_lost = ts("Executor loss cost by application name", "Task-seconds of the tasks that failed with lost "
                "executors (kind executor_loss), counted when each run ends, per interval.", "s",
                [target(f"sum by (app_name, kind) ({counted(COST, lost_sel, itv)})",
                        "{{app_name}}")], w=8, sparse=True)
    for p in (p_cost_kind, p_find_kind, p_idle, p_lost):
        p["interval"] = "5m"  # increase() over an interval needs a few scrapes
        p["options"]["legend"]["calcs"] = ["sum", "max"]  # sum: the time range's total
    plan_sel = f'{FJOB}, kind=~"join_strategy|plan_change|partial_cache"'
    return dashboard("spark-exporter-efficiency", "Spark / Efficiency",
                     "What the diagnosis findings cost across a fleet: per kind, application name and job group, "
                     "over time and over the time range, and the window findings of the running applications. "
                     "Costs overlap across kinds (a skewed stage that spills counts in both): they are never "
                     "added up over kinds. Alerts: SparkDiagnosisCostHigh, SparkJobGroupDiagnosisCostHigh.", [
        text("Costs overlap across kinds", "How to read the costs: their unit per kind, and why they are never "
             "added up over kinds.", note),
        row("Cost by kind (costs of different kinds overlap: never add them up)"),
        p_cost_kind,
        p_find_kind,
        row("Where the cost is, over the time range (per kind)"),
        bargauge("Cost by kind over the time range", "What the findings that became final in the time range cost, "
                 "per kind. " + overlap, "s",
                 [target(f"sum by (kind) ({counted(COST, FJOB, rng)})", "{{kind}}", instant=True)]),
        bargauge("Top application names by cost, per kind", "The five costliest application names of each kind "
                 "over the time range (all their runs). " + overlap, "s",
                 [target(f"topk by (kind) (5, sum by (app_name, kind) ({counted(COST, FJOB, rng)}) > 0)",
                         "{{kind}}: {{app_name}}", instant=True)]),
        bargauge("Top job groups by cost, per kind", "The five costliest job groups of each kind over the time "
                 "range (all runs of their application name; the application-level kinds executor_loss, "
                 "idle_cores and partial_cache have no job group and are left out). " + overlap, "s",
                 [target(f"topk by (kind) (5, sum by (app_name, job_group, job_description, kind) "
                         f"({counted(COST, grouped, rng)}) > 0)",
                         "{{kind}}: {{app_name}} / {{job_group}} {{job_description}}", instant=True)]),
        table("Costliest application names, job groups and kinds", "Cost and findings over the time range per "
              "application name, job group, description and kind (all runs), the costliest first. " + overlap,
              "s",
              [target(f"sum by (app_name, job_group, job_description, kind) ({counted(COST, FJOB, rng)})",
                      instant=True, table=True),
               target(f"sum by (app_name, job_group, job_description, kind) ({counted(FINDINGS, FJOB, rng)})",
                      instant=True, table=True)],
              h=10, merge=True, order=("app_name", "job_group", "job_description", "kind", "Value #A", "Value #B"),
              rename={"Value #A": "Cost", "Value #B": "Findings", "app_name": "Application",
                      "job_group": "Job group", "job_description": "Description", "kind": "Kind"},
              units={"Findings": "short"}, sort_by="Cost"),
        row("Money (with prices configured: cost.prices)"),
        text("Money", "What money is here, and what it is not.",
             "Money is the executors' allocated core-seconds and memory GiB-seconds at the prices configured "
             "(`cost.prices`, `cost.currency`), each part of an executor's life at the price in effect then, so "
             "a price change never lowers what was counted (docs/metrics.md, *Money*). Without prices these "
             "panels are empty. The findings' money is an estimate: their cost at the core-hour price.", h=3),
        ts("Money by application name", "What the runs' executors cost in each interval per application name and "
           "currency (spark_app_cost_total, cores and memory; a run's counter that appears counts whole).",
           "short", [target(f"sum by (app_name, currency) ({counted(APP_MONEY, FAPP, itv, MONEY_BY)})",
                            "{{app_name}} {{currency}}")], w=12, sparse=True),
        bargauge("Top application names by money over the time range", "The ten application names whose runs' "
                 "executors cost the most over the time range, cores and memory (spark_app_cost_total).", "short",
                 [target(f"topk(10, sum by (app_name, currency) ({counted(APP_MONEY, FAPP, rng, MONEY_BY)}) > 0)",
                         "{{app_name}} {{currency}}", instant=True)], w=6),
        bargauge("Money by resource over the time range", "What the executors' cores and their memory cost over "
                 "the time range (spark_app_cost_total by resource).", "short",
                 [target(f"sum by (resource, currency) ({counted(APP_MONEY, FAPP, rng, MONEY_BY)})",
                         "{{resource}} {{currency}}", instant=True)], w=6),
        bargauge("Money the findings explain, per kind (estimate)", "The findings' cost over the time range at "
                 "the core-hour price (spark_diagnosis_cost_total): an estimate, per kind. " + overlap, "short",
                 [target(f"sum by (kind, currency) ({counted(FINDING_MONEY, FJOB, rng, FINDING_MONEY_BY)})",
                         "{{kind}} {{currency}}", instant=True)], w=12),
        row("Findings at the application's end"),
        p_idle,
        p_lost,
        table("Plan, join and cache findings over the time range", "Findings without a stage, counted when each "
              "run ends: join_strategy (a shuffle join of a broadcast candidate; cost: the description's "
              "task-seconds), plan_change (no cost), partial_cache (no cost), per application name, job group "
              "and description.", "short",
              [target(f"sum by (app_name, job_group, job_description, kind) ({counted(FINDINGS, plan_sel, rng)})",
                      instant=True, table=True),
               target(f"sum by (app_name, job_group, job_description, kind) ({counted(COST, plan_sel, rng)})",
                      instant=True, table=True)],
              w=8, merge=True, order=("app_name", "job_group", "job_description", "kind", "Value #A", "Value #B"),
              rename={"Value #A": "Findings", "Value #B": "Cost", "app_name": "Application",
                      "job_group": "Job group", "job_description": "Description", "kind": "Kind"},
              units={"Cost": "s"}, sort_by="Findings"),
        row("Window findings of the running applications (now, per run)"),
        ts("Window findings", "Current findings of the window kinds per run: locality and scheduler_delay per "
           "job group, streaming_trigger per streaming query (spark_diagnosis_window_findings).", "short",
           [target(f"max by (app_name, app_id, kind, job_group, query) ({WINDOW_FINDINGS}{{{FJOB}}})",
                   "{{kind}} {{app_name}} {{job_group}}{{query}}")]),
        ts("Window cost", "Current cost of the window kinds per run: scheduler_delay in seconds of scheduler "
           "delay, streaming_trigger in batch seconds over 80% of the trigger; locality has none "
           "(spark_diagnosis_window_cost_seconds). " + overlap, "s",
           [target(f"max by (app_name, app_id, kind, job_group, query) ({WINDOW_COST}{{{FJOB}}})",
                   "{{kind}} {{app_name}} {{job_group}}{{query}}")]),
        table("Window findings now", "The window findings of each run now, with their cost: streaming_trigger, "
              "locality and scheduler_delay.", "short",
              [target(f"max by (app_name, app_id, kind, job_group, job_description, query) "
                      f"({WINDOW_FINDINGS}{{{FJOB}}})", instant=True, table=True),
               target(f"max by (app_name, app_id, kind, job_group, job_description, query) "
                      f"({WINDOW_COST}{{{FJOB}}})", instant=True, table=True)],
              merge=True, order=("app_name", "app_id", "kind", "job_group", "job_description", "query",
                                 "Value #A", "Value #B"),
              rename={"Value #A": "Findings", "Value #B": "Cost", "app_name": "Application", "app_id": "Id",
                      "kind": "Kind", "job_group": "Job group", "job_description": "Description",
                      "query": "Query"},
              units={"Cost": "s"}, sort_by="Cost"),
    ], by_job=True, time_from="now-24h", refresh="5m")


DASHBOARDS = {
    "spark-overview.json": overview,
    "spark-jobs.json": jobs,
    "spark-stages.json": stages,
    "spark-executors.json": executors,
    "spark-sql-streaming.json": sql_streaming,
    "spark-fleet.json": fleet,
    "spark-diagnosis.json": diagnosis,
    "spark-efficiency.json": efficiency,
}


def render():
    out = {}
    for name, build in DASHBOARDS.items():
        d = build()
        for p in d["panels"]:
            for i, t in enumerate(p.get("targets", [])):
                t["refId"] = chr(ord("A") + i)
        out[name] = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if dashboards/*.json are stale")
    a = ap.parse_args()
    files = render()
    if a.check:
        stale = 0
        for name, text in files.items():
            path = os.path.join(OUT, name)
            current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if current != text:
                stale += 1
                sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                           "dashboards/" + name, "dashboards/" + name + " (generated)"))
        if stale:
            print(f"\n{stale} dashboard(s) differ from scripts/dashboards-generate.py; run it and commit the result.",
                  file=sys.stderr)
            return 1
        print("dashboards are up to date")
        return 0
    os.makedirs(OUT, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote dashboards/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
