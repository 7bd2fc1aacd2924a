#!/usr/bin/env python3
"""The one source of truth for spark-exporter's Prometheus rules.

Writes, from the thresholds and rules below:
  alerts/spark-exporter.rules.yml  a plain Prometheus rule file (`rule_files:`)
  alerts/prometheusrule.yaml       the same groups as a prometheus-operator PrometheusRule

Usage:
  scripts/alerts-generate.py              rewrite both files
  scripts/alerts-generate.py --check      exit 1 (with a diff) if a file differs from the source
  scripts/alerts-generate.py --out-dir D --set STUCK_MINUTES=0.5 --set GC_FOR=0s
                                          test copies with other thresholds (never over the repo)

Only the Python standard library is needed. Edit this file, run it, commit the three files together;
`scripts/alerts-test.sh` (CI) fails when the generated files drift from this source.
"""
import argparse
import difflib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES_FILE = "alerts/spark-exporter.rules.yml"
OPERATOR_FILE = "alerts/prometheusrule.yaml"
RUNBOOK_FILE = "docs/runbook.md"

# ---------------------------------------------------------------------------------------------
# Thresholds. Every alert below reads its numbers from here; change them here (or per test run
# with --set NAME=VALUE) and regenerate. Durations are Prometheus durations ("30s", "15m", "0s").
# ---------------------------------------------------------------------------------------------
THRESHOLDS = {
    # SparkExecutorHighGCRatio: JVM GC time as a fraction of task run time, per executor, over 5m.
    # Below ~5% GC is healthy; above 10% for a sustained period executors are short of heap
    # (tasks slow down, then OOM). 0.10 is the usual "too much GC" line in the Spark tuning guide.
    "GC_RATIO": 0.10,
    # ... only for executors doing real work: at least this many task-seconds per second (0.1 =
    # one task slot busy 10% of the time). Keeps a 50 ms task with 10 ms GC from paging anyone.
    "GC_MIN_BUSY_SLOTS": 0.1,
    # ... and only when it lasts: one big shuffle can cause a few minutes of heavy GC.
    "GC_FOR": "10m",
    # SparkStageStuck: an active stage where no task has finished for this many minutes
    # (spark_stage_stalled_seconds, which also counts a stage waiting for executors). 15 minutes
    # is long for one Spark task; raise it for jobs whose single tasks legitimately run longer.
    "STUCK_MINUTES": 15,
    # SparkJobFailed, SparkStageFailures, SparkExecutorsLost, SparkExporterEventLogErrors: events
    # are counted over this window, so an alert stays active this long after the last event.
    "EVENT_WINDOW": "15m",
    # Failure counters only appear with the first failure, so `increase()` alone never sees it.
    # A series absent from [now - EVENT_WINDOW - NEW_SERIES_LOOKBACK, now - EVENT_WINDOW] counts
    # in full. Longer than any exporter restart or scrape gap, so a gap does not re-fire alerts.
    "NEW_SERIES_LOOKBACK": "1h",
    # SparkStageFailures: alert when more than this many stage attempts failed in the window.
    # Spark retries a stage after a FetchFailed; one retry is worth a look, so the default is 0.
    "STAGE_FAILURES": 0,
    # SparkExecutorsLost: alert when more than this many executors were removed for these reasons
    # in the window. killed_by_driver (dynamic allocation) and decommissioned are routine.
    "LOST_EXECUTORS": 0,
    "LOST_EXECUTOR_REASONS": "heartbeat_timeout|exited|lost|other",
    # SparkStageTaskSkew: max task duration / median task duration of a stage (the exporter computes
    # it from finished tasks, so it shows once the stragglers end). Up to ~3 is normal variation;
    # 5 means one partition holds several times the typical work.
    "SKEW_RATIO": 5,
    # ... and the straggler mattered: the stage went this many seconds without any task finishing
    # (while the slow tasks ran alone) within SKEW_WINDOW. Skew in a 2-second stage costs nothing.
    "SKEW_MIN_WAIT_SECONDS": 120,
    # ... looked up over this window, longer than the exporter's stage retention (5m) so that the
    # stall of the now finished stage is still in range while its skew series exists.
    "SKEW_WINDOW": "15m",
    # SparkHighSpill: bytes spilled to disk by one job group within SPILL_WINDOW. Small spills are
    # normal for big sorts; a GiB every 15 minutes means partitions do not fit execution memory.
    "SPILL_BYTES": 1024 ** 3,
    "SPILL_WINDOW": "15m",
    # SparkTaskFailureRatioHigh: failed / finished tasks over 5m per application. Spark retries
    # tasks (spark.task.maxFailures=4), so a few failures are survivable; 5% sustained is not.
    "TASK_FAILURE_RATIO": 0.05,
    "TASK_FAILURE_FOR": "10m",
    # SparkExporterTargetDown: a Spark UI / History Server the exporter polls is unreachable.
    # A driver UI also goes away when the application ends; 5m rides over driver restarts.
    "TARGET_DOWN_FOR": "5m",
    # SparkExporterDown: Prometheus cannot scrape the exporter. Match the scrape job's name.
    "EXPORTER_JOB_REGEX": ".*spark-exporter.*",
    "EXPORTER_DOWN_FOR": "5m",
    # SparkExporterEventLogErrors ignores these kinds: `unknown_event` counts events with names the
    # exporter does not know (custom listener events of libraries), which are harmless.
    "EVENTLOG_IGNORED_KINDS": "unknown_event",
    # SparkExporterEventLogLag: the newest event the tailer has read is older than this many seconds
    # although it is still reading (bytes read in the last 5m): it works through a backlog, and
    # every event-log-based metric (tasks, streaming) is late by as much. Without reading, an old
    # newest event only means no application is writing, which is not a problem.
    "EVENTLOG_LAG_SECONDS": 300,
    "EVENTLOG_LAG_FOR": "10m",
    # Where docs/runbook.md is served; each alert links to its section (#<alert name lowercased>).
    "RUNBOOK_BASE_URL": "https://github.com/spark-exporter/spark-exporter/blob/main/docs/runbook.md",
}

# Severity per alert: "critical" pages someone, "warning" goes to a channel, "info" is for context.
SEVERITIES = {
    "SparkStageStuck": "critical",
    "SparkJobFailed": "warning",
    "SparkStageFailures": "warning",
    "SparkExecutorsLost": "warning",
    "SparkExecutorHighGCRatio": "warning",
    "SparkTaskFailureRatioHigh": "warning",
    "SparkStageTaskSkew": "info",
    "SparkHighSpill": "info",
    "SparkExporterTargetDown": "warning",
    "SparkExporterDown": "warning",
    "SparkExporterEventLogErrors": "warning",
    "SparkExporterEventLogLag": "warning",
}

# Labels added to every alert (e.g. {"team": "data-platform"}) and to the PrometheusRule object
# (kube-prometheus-stack selects rules by its release label by default).
EXTRA_ALERT_LABELS = {}
PROMETHEUSRULE_METADATA = {
    "name": "spark-exporter",
    "labels": {
        "app.kubernetes.io/name": "spark-exporter",
        "app.kubernetes.io/component": "alerting-rules",
        "release": "prometheus",
    },
}

APP = "app_id, app_name"
JOB = "app_id, app_name, job_group, job_description"
STAGE = "app_id, app_name, job_group, job_description, stage_id, stage_attempt"


def num(x):
    """A number as PromQL/YAML text: 15.0 -> 15, 0.1 -> 0.1."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def events(selector, t):
    """Events counted by `selector` (a counter) in the last EVENT_WINDOW, per series.

    A series that did not exist in the lookback before the window is new: its whole value counts
    (the counter appeared with the first event, so `increase` would see 0). Older series count
    their `increase`. The first branch wins for new series because `or` keeps the left side.

    The new series' value is its newest in the window (`max_over_time`, a counter's newest), not
    the instant value: an application that ends between two scrapes shows its last failure in
    the exporter's final scrape only, and the series goes stale one scrape later, when the
    exporter has exited. Rules evaluated less often than that (kube-prometheus-stack evaluates
    every 30 s, scrapes at 10 s) would never see it as an instant vector.
    """
    return (f"(\n  max_over_time({selector}[{t['EVENT_WINDOW']}])\n  unless\n"
            f"  max_over_time({selector}[{t['NEW_SERIES_LOOKBACK']}] offset {t['EVENT_WINDOW']})\n)\n"
            f"or\nincrease({selector}[{t['EVENT_WINDOW']}])")


def indent(text, n=2):
    return "\n".join(" " * n + line for line in text.split("\n"))


def sum_events(by, selector, t, window=None):
    tt = dict(t, EVENT_WINDOW=window) if window else t
    return f"sum by ({by}) (\n{indent(events(selector, tt))}\n)"


def recording_rules(t):
    return [
        {
            "record": "spark_executor:task_time_seconds:rate5m",
            "expr": "rate(spark_executor_task_time_seconds_total[5m])",
        },
        {
            "record": "spark_executor:utilization:rate5m",
            "expr": "rate(spark_executor_task_time_seconds_total[5m])\n/\n(spark_executor_max_tasks > 0)",
        },
        {
            "record": "spark_executor:gc_ratio:rate5m",
            "expr": ("rate(spark_executor_gc_time_seconds_total[5m])\n/\n"
                     "(rate(spark_executor_task_time_seconds_total[5m]) > 0)"),
        },
        {
            "record": "spark_app:gc_ratio:rate5m",
            "expr": (f"sum by ({APP}) (rate(spark_executor_gc_time_seconds_total[5m]))\n/\n"
                     f"(sum by ({APP}) (rate(spark_executor_task_time_seconds_total[5m])) > 0)"),
        },
        {
            "record": "spark_job_group:gc_ratio:rate5m",
            "expr": (f"sum by ({APP}, job_group) (rate(spark_task_gc_time_seconds_total[5m]))\n/\n"
                     f"(sum by ({APP}, job_group) (rate(spark_task_run_time_seconds_total[5m])) > 0)"),
        },
        {
            # The failed series only exists after the first failure; `or ... * 0` yields 0 until
            # then, so the ratio is charted as 0 instead of missing.
            "record": "spark_app:task_failure_ratio:rate5m",
            "expr": (f"(\n  sum by ({APP}) (rate(spark_tasks_total{{status=\"failed\"}}[5m]))\n"
                     f"  or\n  sum by ({APP}) (rate(spark_tasks_total[5m])) * 0\n)\n/\n"
                     f"(sum by ({APP}) (rate(spark_tasks_total[5m])) > 0)"),
        },
    ]


def alert(name, expr, t, summary, description, for_=None, extra_labels=None):
    rule = {"alert": name, "expr": expr}
    if for_ and for_ not in ("0", "0s", "0m"):
        rule["for"] = for_
    labels = {"severity": SEVERITIES[name]}
    labels.update(EXTRA_ALERT_LABELS)
    labels.update(extra_labels or {})
    rule["labels"] = labels
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{t['RUNBOOK_BASE_URL']}#{name.lower()}",
    }
    return rule


def alerting_rules(t):
    w = t["EVENT_WINDOW"]
    stuck_s = num(float(t["STUCK_MINUTES"]) * 60)
    failed_jobs = 'spark_jobs_total{status="failed"}'
    failed_stages = 'spark_stages_total{status="failed"}'
    lost = 'spark_executor_removed_total{reason=~"%s"}' % t["LOST_EXECUTOR_REASONS"]
    eventlog_errors = 'spark_exporter_eventlog_errors_total{kind!~"%s"}' % t["EVENTLOG_IGNORED_KINDS"]
    return [
        alert(
            "SparkStageStuck",
            f"max by ({STAGE}, stage_name) (spark_stage_stalled_seconds) > {stuck_s}",
            t,
            "Spark stage {{ $labels.stage_id }} of {{ $labels.app_name }} has not finished a task "
            f"for {num(t['STUCK_MINUTES'])} minutes",
            "Stage {{ $labels.stage_id }} (attempt {{ $labels.stage_attempt }}, {{ $labels.stage_name }}) "
            "of job group '{{ $labels.job_group }}' in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) is active but no task has finished for "
            "{{ $value | humanizeDuration }}. A task is hung or the stage is waiting for executors.",
        ),
        alert(
            "SparkJobFailed",
            sum_events(JOB, failed_jobs, t) + "\n> 0",
            t,
            "Spark job failed in {{ $labels.app_name }}",
            "{{ $value | printf \"%.0f\" }} job(s) of job group '{{ $labels.job_group }}' "
            "('{{ $labels.job_description }}') in application {{ $labels.app_name }} "
            f"({{{{ $labels.app_id }}}}) failed in the last {w}.",
        ),
        alert(
            "SparkStageFailures",
            sum_events(APP + ", job_group", failed_stages, t) + f"\n> {num(t['STAGE_FAILURES'])}",
            t,
            "Spark stage attempts failing in {{ $labels.app_name }}",
            "{{ $value | printf \"%.0f\" }} stage attempt(s) of job group '{{ $labels.job_group }}' in "
            f"application {{{{ $labels.app_name }}}} ({{{{ $labels.app_id }}}}) failed in the last {w}.",
        ),
        alert(
            "SparkExecutorsLost",
            sum_events(APP + ", reason", lost, t) + f"\n> {num(t['LOST_EXECUTORS'])}",
            t,
            "Spark executors lost in {{ $labels.app_name }} ({{ $labels.reason }})",
            "{{ $value | printf \"%.0f\" }} executor(s) of application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) were removed with reason {{ $labels.reason }} in the last "
            f"{w}. Their running tasks and cached/shuffle blocks are lost and get recomputed.",
        ),
        alert(
            "SparkExecutorHighGCRatio",
            f"spark_executor:gc_ratio:rate5m > {num(t['GC_RATIO'])}\n"
            f"and\nspark_executor:task_time_seconds:rate5m > {num(t['GC_MIN_BUSY_SLOTS'])}",
            t,
            "Executor {{ $labels.executor_id }} of {{ $labels.app_name }} spends "
            "{{ $value | humanizePercentage }} of task time in GC",
            "Executor {{ $labels.executor_id }} of application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) spent {{ $value | humanizePercentage }} of its task time in JVM "
            f"garbage collection over 5m (threshold {num(t['GC_RATIO'] * 100)}%).",
            for_=t["GC_FOR"],
        ),
        alert(
            "SparkTaskFailureRatioHigh",
            f"spark_app:task_failure_ratio:rate5m > {num(t['TASK_FAILURE_RATIO'])}",
            t,
            "{{ $value | humanizePercentage }} of tasks fail in {{ $labels.app_name }}",
            "{{ $value | humanizePercentage }} of the tasks that finished in application "
            "{{ $labels.app_name }} ({{ $labels.app_id }}) over 5m failed (threshold "
            f"{num(t['TASK_FAILURE_RATIO'] * 100)}%). Spark retries them, but the job slows down "
            "and fails once a task exhausts spark.task.maxFailures.",
            for_=t["TASK_FAILURE_FOR"],
        ),
        alert(
            "SparkStageTaskSkew",
            f"max by ({STAGE}) (spark_stage_task_skew_ratio) > {num(t['SKEW_RATIO'])}\n"
            "and on (app_id, stage_id, stage_attempt)\n"
            f"max by (app_id, stage_id, stage_attempt) (max_over_time(spark_stage_stalled_seconds[{t['SKEW_WINDOW']}]))"
            f" > {num(t['SKEW_MIN_WAIT_SECONDS'])}",
            t,
            "Skewed tasks in stage {{ $labels.stage_id }} of {{ $labels.app_name }}",
            "The slowest task of stage {{ $labels.stage_id }} (attempt {{ $labels.stage_attempt }}, "
            "job group '{{ $labels.job_group }}') in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) ran {{ $value | printf \"%.1f\" }} times longer than the median "
            f"task and held the stage for over {num(t['SKEW_MIN_WAIT_SECONDS'])}s with no other task "
            "finishing: a few partitions hold most of the data.",
        ),
        alert(
            "SparkHighSpill",
            f"{sum_events(APP + ', job_group', 'spark_task_disk_spilled_bytes_total', t, t['SPILL_WINDOW'])}\n"
            f"> {num(t['SPILL_BYTES'])}",
            t,
            "Job group '{{ $labels.job_group }}' of {{ $labels.app_name }} spills to disk",
            "Tasks of job group '{{ $labels.job_group }}' in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) spilled {{ $value | humanize1024 }}B to disk in the last "
            f"{t['SPILL_WINDOW']}: their partitions do not fit in execution memory.",
        ),
        alert(
            "SparkExporterTargetDown",
            "spark_up == 0",
            t,
            "spark-exporter cannot reach {{ $labels.target }}",
            "spark-exporter {{ $labels.instance }} has failed to poll the Spark REST API at "
            f"{{{{ $labels.target }}}} for {t['TARGET_DOWN_FOR']}. Metrics of its applications are "
            "frozen (the driver may have ended, or the URL/network is wrong).",
            for_=t["TARGET_DOWN_FOR"],
        ),
        alert(
            "SparkExporterDown",
            f"up{{job=~\"{t['EXPORTER_JOB_REGEX']}\"}} == 0",
            t,
            "Prometheus cannot scrape spark-exporter {{ $labels.instance }}",
            "The scrape of {{ $labels.instance }} (job {{ $labels.job }}) has failed for "
            f"{t['EXPORTER_DOWN_FOR']}: no Spark metrics and no Spark alerts from it.",
            for_=t["EXPORTER_DOWN_FOR"],
        ),
        alert(
            "SparkExporterEventLogErrors",
            sum_events("instance, job, kind", eventlog_errors, t) + "\n> 0",
            t,
            "spark-exporter {{ $labels.instance }} fails to read event logs ({{ $labels.kind }})",
            "spark-exporter {{ $labels.instance }} counted {{ $value | printf \"%.0f\" }} event-log "
            f"error(s) of kind {{{{ $labels.kind }}}} in the last {w}. Events may be missing from "
            "the task, stage and streaming metrics.",
        ),
        alert(
            "SparkExporterEventLogLag",
            f"spark_exporter_eventlog_lag_seconds > {num(t['EVENTLOG_LAG_SECONDS'])}\n"
            "and on (instance, job)\nrate(spark_exporter_eventlog_bytes_total[5m]) > 0",
            t,
            "spark-exporter {{ $labels.instance }} is behind on event logs",
            "The newest event the event-log tailer of {{ $labels.instance }} has read is "
            "{{ $value | humanizeDuration }} old while it is still reading: it works through a "
            "backlog, and event-log-based metrics are that late.",
            for_=t["EVENTLOG_LAG_FOR"],
        ),
    ]


def groups(t):
    return [
        {"name": "spark-exporter.recording", "rules": recording_rules(t)},
        {"name": "spark-exporter.alerts", "rules": alerting_rules(t)},
    ]


# --- a small YAML emitter: block style, double-quoted scalars, literal blocks for multi-line ---
PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./:-]*$")
RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return num(v)
    if PLAIN.match(v) and v.lower() not in RESERVED:
        return v
    return json.dumps(v)


def emit(obj, level=0):
    """Lines of `obj` (dict/list/scalars) at indentation `level`."""
    pad = "  " * level
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = scalar(k)
            if isinstance(v, str) and "\n" in v:
                out.append(f"{pad}{key}: |-")
                out.extend(f"{pad}  {line}" if line else "" for line in v.split("\n"))
            elif isinstance(v, (dict, list)):
                if not v:
                    out.append(f"{pad}{key}: {'{}' if isinstance(v, dict) else '[]'}")
                else:
                    out.append(f"{pad}{key}:")
                    out.extend(emit(v, level + 1))
            else:
                out.append(f"{pad}{key}: {scalar(v)}")
    elif isinstance(obj, list):
        for item in obj:
            sub = emit(item, level + 1)
            # "- " takes the place of the first line's indentation.
            out.append(f"{pad}- {sub[0][len(pad) + 2:]}")
            out.extend(sub[1:])
    else:
        out.append(pad + scalar(obj))
    return out


HEADER = ("# Generated by scripts/alerts-generate.py from its thresholds; do not edit by hand.\n"
          "# Change the generator, run it, and commit the generator with both generated files.\n")


def render(t):
    g = groups(t)
    rules = HEADER + "\n".join(emit({"groups": g})) + "\n"
    operator = HEADER + "\n".join(emit({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": PROMETHEUSRULE_METADATA,
        "spec": {"groups": g},
    })) + "\n"
    return {RULES_FILE: rules, OPERATOR_FILE: operator}


def runbook_anchors():
    """GitHub anchors of docs/runbook.md headings."""
    anchors = set()
    with open(os.path.join(ROOT, RUNBOOK_FILE), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#+\s+(.*?)\s*$", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                anchors.add(slug)
    return anchors


def lint(t):
    """Problems that make a rule useless: missing annotations, dead runbook links, no severity."""
    problems = []
    anchors = runbook_anchors()
    names = set()
    for g in groups(t):
        for r in g["rules"]:
            if "alert" not in r:
                continue
            names.add(r["alert"])
            for k in ("summary", "description", "runbook_url"):
                if not r["annotations"].get(k):
                    problems.append(f"{r['alert']}: annotation {k} is empty")
            anchor = r["annotations"]["runbook_url"].rsplit("#", 1)[-1]
            if anchor not in anchors:
                problems.append(f"{r['alert']}: no section '#{anchor}' in {RUNBOOK_FILE}")
            if r["labels"].get("severity") not in ("critical", "warning", "info"):
                problems.append(f"{r['alert']}: severity must be critical, warning or info")
    for name in set(SEVERITIES) - names:
        problems.append(f"SEVERITIES names {name}, which is not an alert")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if the generated files are stale")
    ap.add_argument("--out-dir", help="write here instead of the repository (for test copies)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a threshold (only together with --out-dir)")
    a = ap.parse_args()

    t = dict(THRESHOLDS)
    for kv in a.set:
        k, _, v = kv.partition("=")
        if k not in t:
            ap.error(f"unknown threshold {k}; known: {', '.join(sorted(t))}")
        t[k] = float(v) if isinstance(t[k], (int, float)) else v
    if a.set and not a.out_dir:
        ap.error("--set needs --out-dir: the repository files keep the default thresholds")

    problems = lint(t)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1

    files = render(t)
    if a.check:
        stale = 0
        for path, text in files.items():
            full = os.path.join(ROOT, path)
            current = open(full, encoding="utf-8").read() if os.path.exists(full) else ""
            if current != text:
                stale += 1
                sys.stdout.writelines(difflib.unified_diff(
                    current.splitlines(True), text.splitlines(True), path, path + " (generated)"))
        if stale:
            print(f"\n{stale} generated rule file(s) differ from scripts/alerts-generate.py; "
                  "run it and commit the result.", file=sys.stderr)
            return 1
        print("generated rule files are up to date")
        return 0

    out = a.out_dir or ROOT
    for path, text in files.items():
        full = os.path.join(out, path if not a.out_dir else os.path.basename(path))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {full}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
