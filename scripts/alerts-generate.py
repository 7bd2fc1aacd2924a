#!/usr/bin/env python3
"""The one source of truth for spark-exporter's Prometheus rules.

Writes, from the configuration and rules below:
  alerts/spark-exporter.rules.yml  a plain Prometheus rule file (`rule_files:`)
  alerts/prometheusrule.yaml       the same groups as a prometheus-operator PrometheusRule

Usage:
  scripts/alerts-generate.py              rewrite both files (default configuration)
  scripts/alerts-generate.py --check      exit 1 (with a diff) if a file differs from the source
  scripts/alerts-generate.py --out-dir D --config my-install.json --set STUCK_MINUTES=30
                                          your copy: the defaults, overridden by the config file,
                                          overridden by --set (never over the repository's files)
  scripts/alerts-generate.py --check --out-dir D --config my-install.json
                                          exit 1 if your copy in D is stale

The configuration works like a monitoring mixin's `_config`: every key of DEFAULTS below (the
exporter selector, the grouping labels kept on every alert, thresholds, runbook URL, extra alert
labels, the PrometheusRule's metadata) can be set in a config file (JSON; YAML too when PyYAML
is importable) or with --set NAME=VALUE. alerts/README.md lists the keys;
alerts/config.example.json is an example.

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

# The diagnose kinds, generated from the rule registry (scripts/diagnosis-kinds.json).
with open(os.path.join(ROOT, "scripts", "diagnosis-kinds.json"), encoding="utf-8") as _f:
    KINDS = json.load(_f)
RULES_FILE = "alerts/spark-exporter.rules.yml"
OPERATOR_FILE = "alerts/prometheusrule.yaml"
RUNBOOK_FILE = "docs/runbook.md"

# ---------------------------------------------------------------------------------------------
# Where the series come from and where the alerts go. Like the thresholds below, each key can be
# set in a config file (--config) or with --set NAME=VALUE.
# ---------------------------------------------------------------------------------------------
SETTINGS = {
    # SparkExporterDown: the matchers (without braces) that select the exporter's scrape targets
    # in `up`. The default matches any scrape job whose name contains spark-exporter: the plain
    # scrape config's `spark-exporter`, and the PodMonitor's `<namespace>/spark-exporter`.
    # The other alerts read metrics only spark-exporter serves, so they need no selector.
    "EXPORTER_SELECTOR": 'job=~".*spark-exporter.*"',
    # Labels every alert and every aggregating recording rule keeps (each `by (...)` and `on (...)`
    # starts with them), so that Alertmanager can route by them: a namespace-scoped
    # AlertmanagerConfig only receives alerts that carry its `namespace`. Labels the series lack
    # drop out of `by` by themselves, so installs without them need no change. `cluster` is on
    # the series in a global ruler (Thanos, Mimir); a Prometheus adds its external labels (often
    # `cluster`) to every alert it sends anyway.
    "GROUPING_LABELS": ["cluster", "namespace", "pod"],
    # Grouping labels that name one run rather than a place: in the sidecar deployment `pod` is
    # the driver pod of the run. Rules that compare runs of one application name (CROSS_RUN
    # below) leave these out of their `by (...)`, so two runs are one series.
    "RUN_LABELS": ["pod"],
    # Where docs/runbook.md is served; each alert links to its section (#<alert name lowercased>).
    "RUNBOOK_BASE_URL": "https://github.com/spark-exporter/spark-exporter/blob/main/docs/runbook.md",
    # Labels added to every alert, e.g. {"team": "data-platform"} for routing. `severity` is set
    # per alert (SEVERITIES below) and cannot be overridden here.
    "ALERT_LABELS": {},
    # The PrometheusRule object's name and labels. kube-prometheus-stack's Prometheus selects rules
    # labelled `release: <its Helm release>`; the default is the usual release name (the chart's
    # own name). Set yours. A configured PROMETHEUSRULE_LABELS replaces this whole set (not
    # merged), so it can also drop `release`.
    "PROMETHEUSRULE_NAME": "spark-exporter",
    "PROMETHEUSRULE_LABELS": {
        "app.kubernetes.io/name": "spark-exporter",
        "app.kubernetes.io/component": "alerting-rules",
        "release": "kube-prometheus-stack",
    },
}

# ---------------------------------------------------------------------------------------------
# Thresholds. Every alert below reads its numbers from here; change them here (or for one install
# with --config FILE / --set NAME=VALUE) and regenerate. Durations are Prometheus durations
# ("30s", "15m", "0s"): the keys ending in _FOR, _WINDOW and _LOOKBACK.
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
    # SparkExporterDown: Prometheus cannot scrape the exporter (targets: EXPORTER_SELECTOR).
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
    # SparkStreamingQueryFallingBehind: a query's mean micro-batch duration over 5m above this
    # fraction of its trigger interval (spark_streaming_trigger_interval_seconds: configured, or
    # inferred from batch starts). 0.8 is the rule of thumb of the Databricks Structured Streaming
    # debugging guide: past it, a burst of input makes batches overrun their trigger and the
    # backlog grows.
    "STREAMING_BATCH_TRIGGER_RATIO": 0.8,
    # ... for this long: one slow batch (a checkpoint, a compaction) is not a trend.
    "STREAMING_BEHIND_FOR": "10m",
    # SparkStreamingProcessingBelowInput: the processing rate averaged over STREAMING_RATE_WINDOW
    # below this fraction of the input rate (rows/s of the latest batches: Spark's
    # processedRowsPerSecond and inputRowsPerSecond). 1.0: slower than the input, literally.
    "STREAMING_PROCESSED_INPUT_RATIO": 1.0,
    "STREAMING_RATE_WINDOW": "10m",
    "STREAMING_RATE_FOR": "15m",
    # SparkStreamingWatermarkLagGrowing: the watermark lag (newest event time minus watermark)
    # grew by more than this many seconds within STREAMING_WATERMARK_WINDOW: batches take on more
    # event time each, so the query is consuming a growing backlog.
    "STREAMING_WATERMARK_LAG_GROWTH_SECONDS": 60,
    "STREAMING_WATERMARK_WINDOW": "15m",
    "STREAMING_WATERMARK_FOR": "15m",
    # --- Diagnosis (issue 18): conditions the Spark UI's top-down reading finds. ---
    # SparkJobGroupHighGCRatio: JVM GC time / task run time of one job group over 5m (the
    # spark_job_group:gc_ratio:rate5m rule). Same line as GC_RATIO, per group rather than per
    # executor, so it names the job to fix; only for groups busy at least GC_GROUP_MIN_BUSY_SLOTS
    # task-seconds per second over the 5m.
    "GC_GROUP_MIN_BUSY_SLOTS": 0.1,
    "GC_GROUP_FOR": "10m",
    # SparkSkewedStages: finished stages of one job group whose longest task ran more than
    # SKEW_RATIO times the median (spark_stage_skew_ratio; SKEW_RATIO must be one of its bucket
    # bounds) within SKEWED_STAGES_WINDOW, more than SKEWED_STAGES of them, in a group whose tasks
    # ran at least SKEWED_STAGES_MIN_TASK_SECONDS in the window (skew in a 2-second job costs
    # nothing; the first tasks of an application, which start Python workers and JIT, are often
    # skewed and short).
    "SKEWED_STAGES": 0,
    "SKEWED_STAGES_WINDOW": "1h",
    "SKEWED_STAGES_MIN_TASK_SECONDS": 300,
    # SparkJoinStrategyChanged: a description that ran a BroadcastHashJoin within
    # JOIN_HISTORY_WINDOW (any run of the same application name) now runs a shuffle join (SortMergeJoin,
    # ShuffledHashJoin) or a nested-loop join: the classic "10 minutes became an hour" regression,
    # usually a table that grew past spark.sql.autoBroadcastJoinThreshold or lost its statistics.
    "JOIN_SHUFFLE_STRATEGIES": "SortMergeJoin|ShuffledHashJoin|BroadcastNestedLoopJoin|CartesianProduct",
    "JOIN_WINDOW": "1h",
    "JOIN_HISTORY_WINDOW": "8d",
    # SparkPlanChanged: the physical plan fingerprint of a description (same application name)
    # changed within PLAN_CHANGE_WINDOW, across runs too (the fingerprint has no app_id). 26h
    # covers a daily job's previous run.
    "PLAN_CHANGE_WINDOW": "26h",
    # SparkLowCoreUtilization: task core-seconds used / executor core-seconds allocated over an
    # application's life so far below UTILIZATION_RATIO, once it has been allocated at least
    # UTILIZATION_MIN_CORE_SECONDS (one core-hour: a short application's start-up and shut-down
    # weigh too much), for UTILIZATION_FOR. What a platform pays for and nobody used: fewer or
    # smaller executors, or dynamic allocation, would cost less.
    "UTILIZATION_RATIO": 0.5,
    "UTILIZATION_MIN_CORE_SECONDS": 3600,
    "UTILIZATION_FOR": "30m",
    # --- Efficiency: what the final diagnosis findings cost (spark_diagnosis_cost_seconds_total). ---
    # SparkDiagnosisCostHigh: the findings of one kind of one application name (across its runs)
    # cost more than DIAGNOSIS_COST_SECONDS within DIAGNOSIS_COST_WINDOW. The cost's unit depends
    # on the kind (skew: the longest task's excess over the median one; spill, gc_pressure,
    # join_strategy, executor_loss: task-seconds; idle_cores: idle core-seconds; see
    # docs/runbook.md). Costs of different kinds overlap (a skewed stage that spills counts in
    # both), so they are compared per kind, never added up. An hour a day of one kind is worth a
    # ticket, not a page: the alerts are for budgeting (severity info). A finding is counted once
    # it is final (its stage attempt completed, or its application ended), so the counter of a
    # run often appears with its whole value: counted like the failure counters (`events()`:
    # NEW_SERIES_LOOKBACK).
    "DIAGNOSIS_COST_SECONDS": 3600,
    "DIAGNOSIS_COST_WINDOW": "1d",
    # SparkJobGroupDiagnosisCostHigh: the same per job group and description, above this many
    # seconds within DIAGNOSIS_COST_WINDOW ...
    "DIAGNOSIS_GROUP_COST_SECONDS": 3600,
    # ... leaving out the application-level kinds (a regex of kinds, from the rule registry):
    # their findings have no job group, and SparkDiagnosisCostHigh already names their
    # application.
    "DIAGNOSIS_APP_KINDS": "|".join(sorted(KINDS["ungrouped"])),
    # --- Runs that regress, and finding kinds new to an application name (issue 36). ---
    # SparkRunSlowerThanUsual, SparkRunCostlierThanUsual (model.aggregate_by app_name): the last
    # run of an application name (spark_app_last_run_duration_seconds,
    # spark_app_last_run_core_seconds) took, or was allocated, more than RUN_REGRESSION_RATIO
    # times the median of the name's runs that ended within RUN_HISTORY_WINDOW (the last one
    # included). The medians come from the per-name histograms (spark_app_run_duration_seconds,
    # spark_app_run_core_seconds: one observation per run), not from the gauges: a gauge repeats
    # its value at every scrape, so a median of its samples would weigh each run by how long it
    # stayed the last one. 2 is "twice as slow or as costly as usual", well above the run-cost
    # histogram's bucket error (19 %); the run-duration histogram has the buckets of
    # histograms.duration_buckets (docs/runbook.md says what that means for the duration alert).
    "RUN_REGRESSION_RATIO": 2,
    "RUN_HISTORY_WINDOW": "7d",
    # ... only with at least this many runs in the window, the last one included: the median of
    # fewer runs says little (a weekly job never has the history of a daily one).
    "RUN_HISTORY_MIN_RUNS": 5,
    # ... and while the last run ended less than this long ago: the gauges show the last run until
    # the next one ends, and the alert resolves by itself instead of firing until then.
    "RUN_REGRESSION_WINDOW": "6h",
    # SparkNewFindingKind: a diagnosis finding kind (spark_diagnosis_findings_total, summed by
    # application name and kind) with a series within NEW_FINDING_KIND_WINDOW and none in the
    # NEW_FINDING_KIND_LOOKBACK before it, of a name that had a run counted in that lookback (every
    # kind of a name's first run would be new). It fires for NEW_FINDING_KIND_WINDOW.
    "NEW_FINDING_KIND_WINDOW": "1h",
    "NEW_FINDING_KIND_LOOKBACK": "7d",
    # ... and the run counted at least this long before the window: a run's end findings are
    # counted after its end (by the diagnose pass, within 50 ms), so the scrape that first shows
    # a name's first run may not show its findings yet. Without the margin, when that run left
    # the window, its findings (one scrape later) were still in it and every kind it had fired
    # once. A few scrape intervals.
    "NEW_FINDING_KIND_SETTLE": "5m",
}

DEFAULTS = {**SETTINGS, **THRESHOLDS}
# Keys that were renamed: a config or --set naming the old key gets told the new one.
RENAMED = {"EXPORTER_JOB_REGEX": 'EXPORTER_SELECTOR (matchers, e.g. job=~".*spark-exporter.*")'}

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
    "SparkStreamingQueryFallingBehind": "warning",
    "SparkStreamingProcessingBelowInput": "warning",
    "SparkStreamingWatermarkLagGrowing": "warning",
    "SparkJobGroupHighGCRatio": "warning",
    "SparkSkewedStages": "info",
    "SparkJoinStrategyChanged": "warning",
    "SparkPlanChanged": "info",
    "SparkLowCoreUtilization": "info",
    "SparkDiagnosisCostHigh": "info",
    "SparkJobGroupDiagnosisCostHigh": "info",
    "SparkRunSlowerThanUsual": "warning",
    "SparkRunCostlierThanUsual": "info",
    "SparkNewFindingKind": "info",
}

APP = "app_id, app_name"
JOB = "app_id, app_name, job_group, job_description"
STAGE = "app_id, app_name, job_group, job_description, stage_id, stage_attempt"
QUERY = "app_id, app_name, query"


def by(c, *parts):
    """A `by (...)` / `on (...)` label list: the grouping labels, then `parts`, each label once."""
    labels = []
    for part in (*c["GROUPING_LABELS"], *parts):
        for label in part.split(","):
            label = label.strip()
            if label and label not in labels:
                labels.append(label)
    return ", ".join(labels)


def num(x):
    """A number as PromQL/YAML text: 15.0 -> 15, 0.1 -> 0.1."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def events(selector, c):
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
    return (f"(\n  max_over_time({selector}[{c['EVENT_WINDOW']}])\n  unless\n"
            f"  max_over_time({selector}[{c['NEW_SERIES_LOOKBACK']}] offset {c['EVENT_WINDOW']})\n)\n"
            f"or\nincrease({selector}[{c['EVENT_WINDOW']}])")


def indent(text, n=2):
    return "\n".join(" " * n + line for line in text.split("\n"))


def sum_events(c, labels, selector, window=None):
    """Events per `labels` (after the grouping labels) in the window."""
    cc = dict(c, EVENT_WINDOW=window) if window else c
    return f"sum by ({by(c, labels)}) (\n{indent(events(selector, cc))}\n)"


def recording_rules(c):
    app, group = by(c, APP), by(c, APP, "job_group")
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
            "expr": (f"sum by ({app}) (rate(spark_executor_gc_time_seconds_total[5m]))\n/\n"
                     f"(sum by ({app}) (rate(spark_executor_task_time_seconds_total[5m])) > 0)"),
        },
        {
            "record": "spark_job_group:gc_ratio:rate5m",
            "expr": (f"sum by ({group}) (rate(spark_task_gc_time_seconds_total[5m]))\n/\n"
                     f"(sum by ({group}) (rate(spark_task_run_time_seconds_total[5m])) > 0)"),
        },
        {
            # The failed series only exists after the first failure; `or ... * 0` yields 0 until
            # then, so the ratio is charted as 0 instead of missing.
            "record": "spark_app:task_failure_ratio:rate5m",
            "expr": (f"(\n  sum by ({app}) (rate(spark_tasks_total{{status=\"failed\"}}[5m]))\n"
                     f"  or\n  sum by ({app}) (rate(spark_tasks_total[5m])) * 0\n)\n/\n"
                     f"(sum by ({app}) (rate(spark_tasks_total[5m])) > 0)"),
        },
    ]


def run_rules(c):
    """Per run (application id) and job group: the totals of the jobs that ended so far.

    Cumulative on purpose (the histogram's _sum and _count, no rate): a run's value is its total
    at any moment, and its last value is the run's result, to compare runs of one application
    (same app_name, one app_id each). Summed over status and job_description. The mean divides
    the raw sums rather than the two series recorded just before it, so it does not depend on
    the order in which a ruler evaluates the group.
    """
    key = by(c, APP, "job_group")
    total = f"sum by ({key}) (spark_job_duration_seconds_sum)"
    count = f"sum by ({key}) (spark_job_duration_seconds_count)"
    return [
        {"record": "spark_app_job_group:job_duration_seconds:sum", "expr": total},
        {"record": "spark_app_job_group:job_duration_seconds:count", "expr": count},
        {"record": "spark_app_job_group:job_duration_seconds:mean", "expr": f"{total}\n/\n({count} > 0)"},
    ]


def streaming_rules(c):
    """Per streaming query: the mean micro-batch duration, the trigger interval (configured or
    inferred, whichever the exporter has: `from` dropped), and their ratio.

    The ratio divides the raw expressions rather than the two series recorded before it, so it
    does not depend on the order in which a ruler evaluates the group.
    """
    key = by(c, QUERY)
    mean = (f"sum by ({key}) (rate(spark_streaming_batch_duration_seconds_sum[5m]))\n/\n"
            f"(sum by ({key}) (rate(spark_streaming_batch_duration_seconds_count[5m])) > 0)")
    interval = f"max by ({key}) (spark_streaming_trigger_interval_seconds)"
    return [
        {"record": "spark_streaming_query:batch_duration_seconds:mean5m", "expr": mean},
        {"record": "spark_streaming_query:trigger_interval_seconds", "expr": interval},
        {"record": "spark_streaming_query:batch_trigger_ratio:mean5m",
         "expr": f"(\n{indent(mean)}\n)\n/ on ({key})\n({interval} > 0)"},
    ]


def alert(c, name, expr, summary, description, for_=None):
    rule = {"alert": name, "expr": expr}
    if for_ and for_ not in ("0", "0s", "0m"):
        rule["for"] = for_
    labels = {"severity": SEVERITIES[name]}
    labels.update(c["ALERT_LABELS"])
    rule["labels"] = labels
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{c['RUNBOOK_BASE_URL']}#{name.lower()}",
    }
    return rule


def alerting_rules(c):
    w = c["EVENT_WINDOW"]
    stuck_s = num(float(c["STUCK_MINUTES"]) * 60)
    failed_jobs = 'spark_jobs_total{status="failed"}'
    failed_stages = 'spark_stages_total{status="failed"}'
    lost = 'spark_executor_removed_total{reason=~"%s"}' % c["LOST_EXECUTOR_REASONS"]
    eventlog_errors = 'spark_exporter_eventlog_errors_total{kind!~"%s"}' % c["EVENTLOG_IGNORED_KINDS"]
    # The stage's stall and its skew are joined per stage of one run; the grouping labels keep
    # runs of different clusters/namespaces apart even when their app ids collide.
    stage_key = by(c, "app_id, stage_id, stage_attempt")
    # Lag and bytes read come from the same target: instance and job with the grouping labels
    # (pod IPs, hence instances, repeat across clusters).
    target_key = by(c, "instance, job")
    return [
        alert(
            c, "SparkStageStuck",
            f"max by ({by(c, STAGE, 'stage_name')}) (spark_stage_stalled_seconds) > {stuck_s}",
            "Spark stage {{ $labels.stage_id }} of {{ $labels.app_name }} has not finished a task "
            f"for {num(c['STUCK_MINUTES'])} minutes",
            "Stage {{ $labels.stage_id }} (attempt {{ $labels.stage_attempt }}, {{ $labels.stage_name }}) "
            "of job group '{{ $labels.job_group }}' in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) is active but no task has finished for "
            "{{ $value | humanizeDuration }}. A task is hung or the stage is waiting for executors.",
        ),
        alert(
            c, "SparkJobFailed",
            sum_events(c, JOB, failed_jobs) + "\n> 0",
            "Spark job failed in {{ $labels.app_name }}",
            "{{ $value | printf \"%.0f\" }} job(s) of job group '{{ $labels.job_group }}' "
            "('{{ $labels.job_description }}') in application {{ $labels.app_name }} "
            f"({{{{ $labels.app_id }}}}) failed in the last {w}.",
        ),
        alert(
            c, "SparkStageFailures",
            sum_events(c, APP + ", job_group", failed_stages) + f"\n> {num(c['STAGE_FAILURES'])}",
            "Spark stage attempts failing in {{ $labels.app_name }}",
            "{{ $value | printf \"%.0f\" }} stage attempt(s) of job group '{{ $labels.job_group }}' in "
            f"application {{{{ $labels.app_name }}}} ({{{{ $labels.app_id }}}}) failed in the last {w}.",
        ),
        alert(
            c, "SparkExecutorsLost",
            sum_events(c, APP + ", reason", lost) + f"\n> {num(c['LOST_EXECUTORS'])}",
            "Spark executors lost in {{ $labels.app_name }} ({{ $labels.reason }})",
            "{{ $value | printf \"%.0f\" }} executor(s) of application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) were removed with reason {{ $labels.reason }} in the last "
            f"{w}. Their running tasks and cached/shuffle blocks are lost and get recomputed.",
        ),
        alert(
            # Both recording rules keep every label of the executor's series (no aggregation), and
            # `and` matches on all of them.
            c, "SparkExecutorHighGCRatio",
            f"spark_executor:gc_ratio:rate5m > {num(c['GC_RATIO'])}\n"
            f"and\nspark_executor:task_time_seconds:rate5m > {num(c['GC_MIN_BUSY_SLOTS'])}",
            "Executor {{ $labels.executor_id }} of {{ $labels.app_name }} spends "
            "{{ $value | humanizePercentage }} of task time in GC",
            "Executor {{ $labels.executor_id }} of application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) spent {{ $value | humanizePercentage }} of its task time in JVM "
            f"garbage collection over 5m (threshold {num(c['GC_RATIO'] * 100)}%).",
            for_=c["GC_FOR"],
        ),
        alert(
            c, "SparkTaskFailureRatioHigh",
            f"spark_app:task_failure_ratio:rate5m > {num(c['TASK_FAILURE_RATIO'])}",
            "{{ $value | humanizePercentage }} of tasks fail in {{ $labels.app_name }}",
            "{{ $value | humanizePercentage }} of the tasks that finished in application "
            "{{ $labels.app_name }} ({{ $labels.app_id }}) over 5m failed (threshold "
            f"{num(c['TASK_FAILURE_RATIO'] * 100)}%). Spark retries them, but the job slows down "
            "and fails once a task exhausts spark.task.maxFailures.",
            for_=c["TASK_FAILURE_FOR"],
        ),
        alert(
            c, "SparkStageTaskSkew",
            f"max by ({by(c, STAGE)}) (spark_stage_task_skew_ratio) > {num(c['SKEW_RATIO'])}\n"
            f"and on ({stage_key})\n"
            f"max by ({stage_key}) (max_over_time(spark_stage_stalled_seconds[{c['SKEW_WINDOW']}]))"
            f" > {num(c['SKEW_MIN_WAIT_SECONDS'])}",
            "Skewed tasks in stage {{ $labels.stage_id }} of {{ $labels.app_name }}",
            "The slowest task of stage {{ $labels.stage_id }} (attempt {{ $labels.stage_attempt }}, "
            "job group '{{ $labels.job_group }}') in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) ran {{ $value | printf \"%.1f\" }} times longer than the median "
            f"task and held the stage for over {num(c['SKEW_MIN_WAIT_SECONDS'])}s with no other task "
            "finishing: a few partitions hold most of the data.",
        ),
        alert(
            c, "SparkHighSpill",
            f"{sum_events(c, APP + ', job_group', 'spark_task_disk_spilled_bytes_total', c['SPILL_WINDOW'])}\n"
            f"> {num(c['SPILL_BYTES'])}",
            "Job group '{{ $labels.job_group }}' of {{ $labels.app_name }} spills to disk",
            "Tasks of job group '{{ $labels.job_group }}' in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) spilled {{ $value | humanize1024 }}B to disk in the last "
            f"{c['SPILL_WINDOW']}: their partitions do not fit in execution memory.",
        ),
        alert(
            c, "SparkExporterTargetDown",
            "spark_up == 0",
            "spark-exporter cannot reach {{ $labels.target }}",
            "spark-exporter {{ $labels.instance }} has failed to poll the Spark REST API at "
            f"{{{{ $labels.target }}}} for {c['TARGET_DOWN_FOR']}. Metrics of its applications are "
            "frozen (the driver may have ended, or the URL/network is wrong).",
            for_=c["TARGET_DOWN_FOR"],
        ),
        alert(
            c, "SparkExporterDown",
            f"up{{{c['EXPORTER_SELECTOR']}}} == 0",
            "Prometheus cannot scrape spark-exporter {{ $labels.instance }}",
            "The scrape of {{ $labels.instance }} (job {{ $labels.job }}) has failed for "
            f"{c['EXPORTER_DOWN_FOR']}: no Spark metrics and no Spark alerts from it.",
            for_=c["EXPORTER_DOWN_FOR"],
        ),
        alert(
            c, "SparkExporterEventLogErrors",
            sum_events(c, "instance, job, kind", eventlog_errors) + "\n> 0",
            "spark-exporter {{ $labels.instance }} fails to read event logs ({{ $labels.kind }})",
            "spark-exporter {{ $labels.instance }} counted {{ $value | printf \"%.0f\" }} event-log "
            f"error(s) of kind {{{{ $labels.kind }}}} in the last {w}. Events may be missing from "
            "the task, stage and streaming metrics.",
        ),
        alert(
            c, "SparkExporterEventLogLag",
            f"spark_exporter_eventlog_lag_seconds > {num(c['EVENTLOG_LAG_SECONDS'])}\n"
            f"and on ({target_key})\nrate(spark_exporter_eventlog_bytes_total[5m]) > 0",
            "spark-exporter {{ $labels.instance }} is behind on event logs",
            "The newest event the event-log tailer of {{ $labels.instance }} has read is "
            "{{ $value | humanizeDuration }} old while it is still reading: it works through a "
            "backlog, and event-log-based metrics are that late.",
            for_=c["EVENTLOG_LAG_FOR"],
        ),
        alert(
            c, "SparkStreamingQueryFallingBehind",
            f"spark_streaming_query:batch_trigger_ratio:mean5m > {num(c['STREAMING_BATCH_TRIGGER_RATIO'])}",
            "Streaming query {{ $labels.query }} of {{ $labels.app_name }} is falling behind its trigger",
            "Micro-batches of streaming query {{ $labels.query }} in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) took {{ $value | humanizePercentage }} of the trigger interval on "
            f"average over 5m (threshold {num(c['STREAMING_BATCH_TRIGGER_RATIO'] * 100)}%): a burst of "
            "input will make batches overrun their trigger and the backlog grow.",
            for_=c["STREAMING_BEHIND_FOR"],
        ),
        alert(
            c, "SparkStreamingProcessingBelowInput",
            f"avg_over_time(spark_streaming_processed_rows_per_second[{c['STREAMING_RATE_WINDOW']}])\n<\n"
            f"{num(c['STREAMING_PROCESSED_INPUT_RATIO'])} * avg_over_time(spark_streaming_input_rows_per_second"
            f"[{c['STREAMING_RATE_WINDOW']}])",
            "Streaming query {{ $labels.query }} of {{ $labels.app_name }} processes rows slower than they arrive",
            "Streaming query {{ $labels.query }} in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) processed {{ $value | printf \"%.1f\" }} rows/s on average over "
            f"{c['STREAMING_RATE_WINDOW']}, less than its input rate: its backlog grows.",
            for_=c["STREAMING_RATE_FOR"],
        ),
        alert(
            c, "SparkStreamingWatermarkLagGrowing",
            f"delta(spark_streaming_watermark_lag_seconds[{c['STREAMING_WATERMARK_WINDOW']}])\n"
            f"> {num(c['STREAMING_WATERMARK_LAG_GROWTH_SECONDS'])}",
            "The watermark of streaming query {{ $labels.query }} of {{ $labels.app_name }} falls behind",
            "The watermark lag (newest event time minus watermark) of streaming query "
            "{{ $labels.query }} in application {{ $labels.app_name }} ({{ $labels.app_id }}) grew by "
            f"{{{{ $value | humanizeDuration }}}} in {c['STREAMING_WATERMARK_WINDOW']}: each batch takes "
            "on more event time, so the query works through a growing backlog.",
            for_=c["STREAMING_WATERMARK_FOR"],
        ),
    ]


# Rules that compare the runs of one application name: they keep the grouping labels except
# RUN_LABELS (see `cross_run`), and their alerts carry only those.
CROSS_RUN = {"spark_sql_description:plan_fingerprint", "SparkJoinStrategyChanged", "SparkPlanChanged",
             "SparkDiagnosisCostHigh", "SparkJobGroupDiagnosisCostHigh",
             "spark_app_name:run_duration_seconds:history_median",
             "spark_app_name:run_core_seconds:history_median", "spark_app_name:runs:history_count",
             "SparkRunSlowerThanUsual", "SparkRunCostlierThanUsual", "SparkNewFindingKind"}


def cross_run(c, *parts):
    """`by(c, *parts)` without the RUN_LABELS: a label list that spans runs."""
    return by(dict(c, GROUPING_LABELS=[x for x in c["GROUPING_LABELS"] if x not in c["RUN_LABELS"]]), *parts)


def diagnosis_rules(c):
    """Per application: task core-seconds used over executor core-seconds allocated, over its
    life so far (cumulative on purpose: the question is what the whole run used of what it was
    given)."""
    app = by(c, APP)
    desc = cross_run(c, "app_name, job_group, description")
    return [
        {"record": "spark_sql_description:plan_fingerprint",
         "expr": f"max by ({desc}) (spark_sql_plan_fingerprint)"},
        {"record": "spark_app:core_utilization:ratio",
         "expr": (f"sum by ({app}) (spark_task_core_seconds_used_total)\n/\n"
                  f"(sum by ({app}) (spark_executor_core_seconds_allocated_total) > 0)")},
    ]


def diagnosis_alerts(c):
    group = by(c, APP, "job_group")
    desc = cross_run(c, "app_name, description")
    app = by(c, APP)
    sw = c["SKEWED_STAGES_WINDOW"]
    le = num(c["SKEW_RATIO"])
    # The exporter writes bucket bounds as floats (`5.0`), as Prometheus 3 also stores them.
    below = 'spark_stage_skew_ratio_bucket{le="%s"}' % float(c["SKEW_RATIO"])
    skewed = (f"(\n{indent(sum_events(c, APP + ', job_group', 'spark_stage_skew_ratio_count', sw))}\n"
              f"  -\n{indent(sum_events(c, APP + ', job_group', below, sw))}\n)")
    shuffle_joins = 'spark_sql_joins_total{strategy=~"%s"}' % c["JOIN_SHUFFLE_STRATEGIES"]
    return [
        alert(
            c, "SparkJobGroupHighGCRatio",
            f"spark_job_group:gc_ratio:rate5m > {num(c['GC_RATIO'])}\n"
            f"and on ({group})\n"
            f"sum by ({group}) (rate(spark_task_run_time_seconds_total[5m])) > {num(c['GC_GROUP_MIN_BUSY_SLOTS'])}",
            "Job group '{{ $labels.job_group }}' of {{ $labels.app_name }} spends "
            "{{ $value | humanizePercentage }} of task time in GC",
            "Tasks of job group '{{ $labels.job_group }}' in application {{ $labels.app_name }} "
            "({{ $labels.app_id }}) spent {{ $value | humanizePercentage }} of their run time in JVM "
            f"garbage collection over 5m (threshold {num(c['GC_RATIO'] * 100)}%): their executors "
            "are short of heap for what these tasks hold.",
            for_=c["GC_GROUP_FOR"],
        ),
        alert(
            c, "SparkSkewedStages",
            f"{skewed}\n> {num(c['SKEWED_STAGES'])}\n"
            f"and on ({group})\n"
            # Task time counted like the stages: a group new in the window counts in full.
            f"{sum_events(c, APP + ', job_group', 'spark_task_run_time_seconds_total', sw)}"
            f" > {num(c['SKEWED_STAGES_MIN_TASK_SECONDS'])}",
            "Skewed stages in job group '{{ $labels.job_group }}' of {{ $labels.app_name }}",
            "{{ $value | printf \"%.0f\" }} finished stage(s) of job group '{{ $labels.job_group }}' "
            "in application {{ $labels.app_name }} ({{ $labels.app_id }}) had a task running more "
            f"than {le} times the median task in the last {sw}: a few partitions hold most of the data.",
        ),
        alert(
            c, "SparkJoinStrategyChanged",
            f"sum by ({desc}) (\n{indent(events(shuffle_joins, dict(c, EVENT_WINDOW=c['JOIN_WINDOW'])))}\n) > 0\n"
            f"and on ({desc})\n"
            f"sum by ({desc}) (max_over_time(spark_sql_joins_total{{strategy=\"BroadcastHashJoin\"}}[{c['JOIN_HISTORY_WINDOW']}])) > 0",
            "A broadcast join of '{{ $labels.description }}' in {{ $labels.app_name }} became a shuffle join",
            "SQL description '{{ $labels.description }}' of application {{ $labels.app_name }} ran "
            "{{ $value | printf \"%.0f\" }} shuffle or nested-loop join(s) in the last "
            f"{c['JOIN_WINDOW']}, where it ran a BroadcastHashJoin within {c['JOIN_HISTORY_WINDOW']}: a "
            "table grew past spark.sql.autoBroadcastJoinThreshold or lost its statistics.",
        ),
        alert(
            c, "SparkPlanChanged",
            f"changes(spark_sql_description:plan_fingerprint[{c['PLAN_CHANGE_WINDOW']}]) > 0",
            "The plan of '{{ $labels.description }}' in {{ $labels.app_name }} changed",
            "The physical plan of SQL description '{{ $labels.description }}' (job group "
            "'{{ $labels.job_group }}') of application {{ $labels.app_name }} changed "
            f"{{{{ $value }}}} time(s) in the last {c['PLAN_CHANGE_WINDOW']}. If it got slower, "
            "compare the plans in the SQL tab of the two runs.",
        ),
        alert(
            c, "SparkLowCoreUtilization",
            f"spark_app:core_utilization:ratio < {num(c['UTILIZATION_RATIO'])}\n"
            f"and on ({app})\n"
            f"sum by ({app}) (spark_executor_core_seconds_allocated_total) >= {num(c['UTILIZATION_MIN_CORE_SECONDS'])}",
            "{{ $labels.app_name }} uses {{ $value | humanizePercentage }} of its executor cores",
            "Tasks of application {{ $labels.app_name }} ({{ $labels.app_id }}) used "
            "{{ $value | humanizePercentage }} of the executor core-seconds it was allocated over "
            f"its life so far (threshold {num(c['UTILIZATION_RATIO'] * 100)}%): executors idle "
            "while the platform pays for them.",
            for_=c["UTILIZATION_FOR"],
        ),
    ]


COST = "spark_diagnosis_cost_seconds_total"
# The labels of one finding series of one run (app_id: absent with model.aggregate_by app_name).
FINDING = "app_id, app_name, job_group, job_description, kind"


def cost_alerts(c):
    """What the final findings of each kind cost per application name (across its runs: RUN_LABELS
    left out) and per job group, over DIAGNOSIS_COST_WINDOW.

    Per series, what the counter counted in the window (`events()`: a run's series that appears
    with its first findings counts in full). Then the largest of the exporters of one run
    (`max by` the finding's labels with app_id, without instance, job and the RUN_LABELS), so that
    a run two exporters export, or that moved between shards, counts once. Then the sum over the
    runs and job groups of a name, per kind: costs of different kinds overlap and are never added.
    """
    w = c["DIAGNOSIS_COST_WINDOW"]
    cc = dict(c, EVENT_WINDOW=w)
    per_run = cross_run(c, FINDING)
    name = cross_run(c, "app_name, kind")
    group = cross_run(c, "app_name, job_group, job_description, kind")

    def cost(selector):
        return f"max by ({per_run}) (\n{indent(events(selector, cc))}\n)"

    grouped = '%s{kind!~"%s"}' % (COST, c["DIAGNOSIS_APP_KINDS"])
    return [
        alert(
            c, "SparkDiagnosisCostHigh",
            f"sum by ({name}) (\n{indent(cost(COST))}\n)\n> {num(c['DIAGNOSIS_COST_SECONDS'])}",
            "{{ $labels.app_name }}: {{ $labels.kind }} findings cost {{ $value | printf \"%.0f\" }} s "
            f"in {w}",
            "The final diagnosis findings of kind {{ $labels.kind }} of application {{ $labels.app_name }} "
            f"(all its runs) cost {{{{ $value | printf \"%.0f\" }}}} s in the last {w} (threshold "
            f"{num(c['DIAGNOSIS_COST_SECONDS'])} s). What a second is depends on the kind (see the "
            "runbook); costs of different kinds overlap and are not added up. "
            "`spark-exporter diagnose` on one of its runs lists the findings with their remedies.",
        ),
        alert(
            c, "SparkJobGroupDiagnosisCostHigh",
            f"sum by ({group}) (\n{indent(cost(grouped))}\n)\n> {num(c['DIAGNOSIS_GROUP_COST_SECONDS'])}",
            "Job group '{{ $labels.job_group }}' of {{ $labels.app_name }}: {{ $labels.kind }} findings "
            f"cost {{{{ $value | printf \"%.0f\" }}}} s in {w}",
            "The final diagnosis findings of kind {{ $labels.kind }} of job group '{{ $labels.job_group }}' "
            "('{{ $labels.job_description }}') of application {{ $labels.app_name }} (all its runs) cost "
            f"{{{{ $value | printf \"%.0f\" }}}} s in the last {w} (threshold "
            f"{num(c['DIAGNOSIS_GROUP_COST_SECONDS'])} s). What a second is depends on the kind (see the "
            "runbook); costs of different kinds overlap and are not added up. "
            "`spark-exporter diagnose` on one of its runs lists the findings with their remedies.",
        ),
    ]


def duration_seconds(d):
    """A Prometheus duration ("6h", "1h30m") in seconds."""
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(float(n) * unit[u] for n, u in re.findall(r"([0-9]+)(ms|s|m|h|d|w|y)", d))


def history_rules(c):
    """Per application name (model.aggregate_by app_name), over the runs that ended within
    RUN_HISTORY_WINDOW: the median run duration and core-seconds, and how many runs ended.

    From the histograms' increase over the window, one observation per run, rather than from the
    last-run gauges, whose samples would weigh each run by how long it stayed the last one.
    RUN_LABELS are left out (`pod`: the fleet shard), and the shards are summed: a name is counted
    by one shard at a time, and after a reshard its runs are in the old shard's series, then in
    the new one's.
    """
    w = c["RUN_HISTORY_WINDOW"]
    name = cross_run(c, "app_name")
    buckets = cross_run(c, "app_name, le")

    def median(h):
        return f"histogram_quantile(\n  0.5,\n  sum by ({buckets}) (increase({h}_bucket[{w}]))\n)"

    return [
        {"record": "spark_app_name:run_duration_seconds:history_median",
         "expr": median("spark_app_run_duration_seconds")},
        {"record": "spark_app_name:run_core_seconds:history_median",
         "expr": median("spark_app_run_core_seconds")},
        {"record": "spark_app_name:runs:history_count",
         "expr": f"sum by ({name}) (increase(spark_app_run_core_seconds_count[{w}]))"},
    ]


def regression_alerts(c):
    """The last run of a name against its name's median (history_rules): their ratio above
    RUN_REGRESSION_RATIO, with RUN_HISTORY_MIN_RUNS runs in the window, while the last run ended
    less than RUN_REGRESSION_WINDOW ago. The gauges are the largest of the exporters of a name (one,
    but for the moments of a reshard)."""
    name = cross_run(c, "app_name")
    ratio = num(c["RUN_REGRESSION_RATIO"])
    w = c["RUN_HISTORY_WINDOW"]
    runs = num(c["RUN_HISTORY_MIN_RUNS"])
    recent = (f"and on ({name})\nspark_app_name:runs:history_count >= {runs}\n"
              f"and on ({name})\ntime() - max by ({name}) (spark_app_last_run_end_timestamp_seconds)"
              f" < {num(duration_seconds(c['RUN_REGRESSION_WINDOW']))}")

    def regressed(gauge, median):
        return f"max by ({name}) ({gauge})\n/ on ({name})\n({median} > 0)\n> {ratio}\n{recent}"

    return [
        alert(
            c, "SparkRunSlowerThanUsual",
            regressed("spark_app_last_run_duration_seconds", "spark_app_name:run_duration_seconds:history_median"),
            "The last run of {{ $labels.app_name }} took {{ $value | printf \"%.1f\" }} times its usual duration",
            "The run of application {{ $labels.app_name }} that ended last took {{ $value | printf \"%.1f\" }} "
            f"times the median duration of its runs in the last {w} (threshold {ratio}x, at least {runs} runs "
            f"in {w}). Compare it with an earlier run: its input, its job groups' durations, its diagnosis findings.",
        ),
        alert(
            c, "SparkRunCostlierThanUsual",
            regressed("spark_app_last_run_core_seconds", "spark_app_name:run_core_seconds:history_median"),
            "The last run of {{ $labels.app_name }} cost {{ $value | printf \"%.1f\" }} times its usual core-seconds",
            "The run of application {{ $labels.app_name }} that ended last was allocated "
            "{{ $value | printf \"%.1f\" }} times the median executor core-seconds of its runs in the last "
            f"{w} (threshold {ratio}x, at least {runs} runs in {w}). More executors, or executors held "
            "longer: compare its executors and its diagnosis findings with an earlier run's.",
        ),
    ]


def new_finding_alerts(c):
    """A finding kind new to an application name: summed by name and kind (over job groups, and
    runs in app_id mode; RUN_LABELS left out), a series within NEW_FINDING_KIND_WINDOW and none in
    the NEW_FINDING_KIND_LOOKBACK before it, the new-series test of `events()` per name and kind.
    Only for a name with a run counted in that lookback, NEW_FINDING_KIND_SETTLE before the
    window: all kinds of a name's first run are new."""
    w, lb = c["NEW_FINDING_KIND_WINDOW"], c["NEW_FINDING_KIND_LOOKBACK"]
    # The runs' history ends NEW_FINDING_KIND_SETTLE before the window (see SETTINGS).
    runs_offset = f"{num(duration_seconds(w) + duration_seconds(c['NEW_FINDING_KIND_SETTLE']))}s"
    kind = cross_run(c, "app_name, kind")
    name = cross_run(c, "app_name")
    findings = "spark_diagnosis_findings_total"
    return [
        alert(
            c, "SparkNewFindingKind",
            f"sum by ({kind}) (max_over_time({findings}[{w}]) > 0)\n"
            f"unless on ({kind})\n"
            f"sum by ({kind}) (max_over_time({findings}[{lb}] offset {w}) > 0)\n"
            f"and on ({name})\n"
            f"sum by ({name}) (max_over_time(spark_app_runs_total[{lb}] offset {runs_offset})) > 0",
            "{{ $labels.app_name }} has {{ $labels.kind }} findings, new to it",
            "Application {{ $labels.app_name }} has {{ $value | printf \"%.0f\" }} diagnosis finding(s) of "
            f"kind {{{{ $labels.kind }}}}, and had none of this kind in the {lb} before the last {w}. "
            "`spark-exporter diagnose` on its last run says where and why, with the remedy.",
        ),
    ]


def groups(c):
    return [
        {"name": "spark-exporter.recording", "rules": recording_rules(c)},
        # Evaluated at the ruler's default interval, like the others.
        {"name": "spark-exporter.runs", "rules": run_rules(c)},
        {"name": "spark-exporter.streaming", "rules": streaming_rules(c)},
        {"name": "spark-exporter.alerts", "rules": alerting_rules(c)},
        {"name": "spark-exporter.diagnosis", "rules": diagnosis_rules(c) + diagnosis_alerts(c) + cost_alerts(c)},
        # The alerts read this evaluation's medians: rules of a group are evaluated in order.
        {"name": "spark-exporter.history",
         "rules": history_rules(c) + regression_alerts(c) + new_finding_alerts(c)},
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


HEADER = ("# Generated by scripts/alerts-generate.py from its configuration; do not edit by hand.\n"
          "# Change the generator (or your config file), run it, and commit the generated files with it.\n")


def header(c):
    """HEADER, plus the settings that differ from the defaults (so a copy says how it was made)."""
    changed = [f"#   {k}={num(c[k]) if isinstance(c[k], (int, float)) else json.dumps(c[k])}"
               for k in DEFAULTS if c[k] != DEFAULTS[k]]
    return HEADER + ("# Settings other than the defaults:\n" + "\n".join(changed) + "\n" if changed else "")


def render(c):
    g = groups(c)
    rules = header(c) + "\n".join(emit({"groups": g})) + "\n"
    operator = header(c) + "\n".join(emit({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": c["PROMETHEUSRULE_NAME"], "labels": c["PROMETHEUSRULE_LABELS"]},
        "spec": {"groups": g},
    })) + "\n"
    return {RULES_FILE: rules, OPERATOR_FILE: operator}


# --- configuration: defaults < config file < --set, every problem reported at once ---------------
LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DURATION = re.compile(r"^(0|([0-9]+(ms|s|m|h|d|w|y))+)$")
# Kubernetes label keys (optional DNS prefix, then a name of up to 63 characters) and values.
K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
K8S_LABEL_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{K8S_NAME}$")
K8S_LABEL_VALUE = re.compile(rf"^({K8S_NAME})?$")
K8S_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def is_duration_key(key):
    return key.endswith(("_FOR", "_WINDOW", "_LOOKBACK", "_SETTLE"))


def from_text(key, text):
    """A --set value as the type of the key's default (lists: comma-separated or JSON; maps: JSON)."""
    default = DEFAULTS[key]
    if isinstance(default, (int, float)):
        return float(text)
    if isinstance(default, list):
        if text.strip().startswith("["):
            return json.loads(text)
        return [x.strip() for x in text.split(",") if x.strip()]
    if isinstance(default, dict):
        return json.loads(text)
    return text


def check_value(key, v):
    """Problems with the value `v` of `key` (a list of sentences, empty when it is fine)."""
    default = DEFAULTS[key]
    if isinstance(default, (int, float)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
            return [f"{key}: expected a number, got {v!r}"]
        return [] if v >= 0 else [f"{key}: must not be negative, got {v!r}"]
    if isinstance(default, list):
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            return [f"{key}: expected a list of label names, got {v!r}"]
        return [f"{key}: {x!r} is not a Prometheus label name" for x in v
                if not LABEL_NAME.match(x) or x.startswith("__")]
    if isinstance(default, dict):
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in list(v) + list(v.values())):
            return [f"{key}: expected a map of strings to strings, got {v!r}"]
        if key == "ALERT_LABELS":
            return ([f"{key}: {k!r} is not a Prometheus label name" for k in v
                     if not LABEL_NAME.match(k) or k.startswith("__")]
                    + [f"{key}: {k} is set per alert by the generator, not here" for k in v
                       if k in ("severity", "alertname")])
        return ([f"{key}: {k!r} is not a Kubernetes label key" for k in v if not K8S_LABEL_KEY.match(k)]
                + [f"{key}: {x!r} (of {k}) is not a Kubernetes label value" for k, x in v.items()
                   if not K8S_LABEL_VALUE.match(x)])
    if not isinstance(v, str):
        return [f"{key}: expected a string, got {v!r}"]
    if is_duration_key(key) and not DURATION.match(v):
        return [f"{key}: {v!r} is not a Prometheus duration (e.g. 30s, 15m, 1h30m, 0s)"]
    if key == "EXPORTER_SELECTOR":
        if not v.strip():
            return [f"{key}: must not be empty (e.g. job=~\".*spark-exporter.*\")"]
        if v.strip().startswith("{"):
            return [f"{key}: write the matchers without braces, e.g. job=\"spark-exporter\""]
    if key == "RUNBOOK_BASE_URL" and (not v or "#" in v):
        return [f"{key}: a URL without #fragment (each alert appends #<alert name>)"]
    if key == "PROMETHEUSRULE_NAME" and not K8S_OBJECT_NAME.match(v):
        return [f"{key}: {v!r} is not a Kubernetes object name"]
    return []


def read_config_file(path):
    """(settings dict, problems) from a JSON file, or YAML when PyYAML is importable."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return {}, [f"{path}: {e.strerror}"]
    try:
        data = json.loads(text)
    except ValueError as json_error:
        if path.endswith(".json"):
            return {}, [f"{path}: not valid JSON: {json_error}"]
        try:
            import yaml  # optional: only for YAML config files
        except ImportError:
            return {}, [f"{path}: not JSON, and PyYAML is not installed to read it as YAML"]
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            return {}, [f"{path}: not valid YAML: {e}"]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, [f"{path}: expected a map of settings at the top level"]
    return data, []


def configure(config_path, sets):
    """The settings (DEFAULTS, then the config file, then --set NAME=VALUE) and every problem."""
    c = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
         for k, v in DEFAULTS.items()}
    problems = []

    def apply(where, items):
        for k, v in items:
            if k in RENAMED:
                problems.append(f"{where}: {k} was renamed to {RENAMED[k]}")
            elif k not in DEFAULTS:
                problems.append(f"{where}: unknown setting {k}; known: {', '.join(sorted(DEFAULTS))}")
            else:
                p = check_value(k, v)
                problems.extend(f"{where}: {x}" for x in p)
                if not p:
                    c[k] = v

    if config_path:
        data, p = read_config_file(config_path)
        problems.extend(p)
        apply(config_path, data.items())
    # --set values are text: typed after the key's default before they are checked.
    items = []
    for kv in sets:
        k, eq, text = kv.partition("=")
        if not eq:
            problems.append(f"--set {kv}: expected NAME=VALUE")
            continue
        try:
            items.append((k, from_text(k, text) if k in DEFAULTS else text))
        except ValueError:
            kind = "a number" if isinstance(DEFAULTS[k], (int, float)) else "JSON"
            problems.append(f"--set: {k}: expected {kind}, got {text!r}")
    apply("--set", items)
    return c, problems


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


def lint(c):
    """Problems that make a rule useless: missing annotations, dead runbook links, no severity,
    an aggregation or join that drops the grouping labels (the alert could not be routed)."""
    problems = []
    anchors = runbook_anchors()
    names = set()
    for g in groups(c):
        for r in g["rules"]:
            name = r.get("alert") or r["record"]
            for clause, labels in re.findall(r"\b(by|on|without|ignoring)\s*\(([^)]*)\)", r["expr"]):
                kept = {x.strip() for x in labels.split(",")}
                if clause in ("without", "ignoring"):
                    problems.append(f"{name}: use by/on, not {clause}, so the kept labels are explicit")
                    continue
                want = set(c["GROUPING_LABELS"]) - (set(c["RUN_LABELS"]) if name in CROSS_RUN else set())
                if not want <= kept:
                    problems.append(f"{name}: `{clause} ({labels})` drops grouping labels "
                                    f"{', '.join(sorted(want - kept))}")
            # Costs of different finding kinds overlap: a rule that aggregates them keeps `kind`.
            if COST in r["expr"]:
                for labels in re.findall(r"\bby\s*\(([^)]*)\)", r["expr"]):
                    if "kind" not in {x.strip() for x in labels.split(",")}:
                        problems.append(f"{name}: `by ({labels})` adds up the costs of different finding kinds")
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
    ap.add_argument("--check", action="store_true",
                    help="fail if the generated files (in the repository, or in --out-dir) are stale")
    ap.add_argument("--out-dir", help="write here instead of the repository (your copy, or a test copy)")
    ap.add_argument("--config", metavar="FILE",
                    help="settings (JSON, or YAML with PyYAML) over the defaults; needs --out-dir")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a setting, after --config (needs --out-dir); lists comma-separated "
                         "or JSON, maps JSON")
    a = ap.parse_args()

    if (a.set or a.config) and not a.out_dir:
        ap.error("--config and --set need --out-dir: the repository files keep the defaults")
    c, problems = configure(a.config, a.set)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    problems = lint(c)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1

    files = render(c)
    out = a.out_dir or ROOT

    def target(path):
        return os.path.join(out, os.path.basename(path) if a.out_dir else path)

    if a.check:
        stale = 0
        for path, text in files.items():
            full = target(path)
            current = open(full, encoding="utf-8").read() if os.path.exists(full) else ""
            if current != text:
                stale += 1
                sys.stdout.writelines(difflib.unified_diff(
                    current.splitlines(True), text.splitlines(True), full, full + " (generated)"))
        if stale:
            print(f"\n{stale} generated rule file(s) differ from scripts/alerts-generate.py; "
                  "run it and commit the result.", file=sys.stderr)
            return 1
        print("generated rule files are up to date")
        return 0

    for path, text in files.items():
        full = target(path)
        os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {full}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
