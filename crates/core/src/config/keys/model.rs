//! The `model` and `streaming` sections: its keys.

use crate::config::key::Key;
use crate::config::model::{AggregateBy, SummaryLevel};
use crate::config::parse::{self, Problems};

/// The `model` and `streaming` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("model.app_retention", |s, v| {
        s.model.app_retention = parse::positive(v)?;
        Ok(())
    })
    .flag("model.app-retention")
    .doc("How long a finished application (or one whose driver went away) stays exported."),
    Key::one("model.summary_level", |s, v| {
        s.model.summary_level = parse::one_of(
            v,
            &[
                ("full", SummaryLevel::Full),
                ("groups", SummaryLevel::Groups),
                ("app", SummaryLevel::App),
            ],
        )?;
        Ok(())
    })
    .choices(&["full", "groups", "app"])
    .flag("model.summary-level")
    .brief("What an ended application keeps after model.summary-after: full, groups or app.")
    .doc(
        "What an ended application keeps once `model.summary_after` has passed since its end: \
         `full` (everything, until `model.app_retention`), `groups` (application and job-group \
         series: jobs, stages and tasks by outcome, job durations, task totals; its stage, \
         executor, SQL and streaming series go, so do its stage and task duration histograms \
         and every histogram still empty (in name mode histograms stay), and its executor \
         count stays in `spark_executors{state=\"dead\"}`), `app` (application series only: \
         info, start, end, `spark_app_runs_total`, executors). Counts never change when the \
         detail goes: stages fold into their job group, and later observations of the dropped \
         detail are ignored. `dump` follows it too; `--model.summary-level full` shows every \
         detail of an old log.",
    ),
    Key::one("model.summary_after", |s, v| {
        s.model.summary_after = parse::duration(v)?;
        Ok(())
    })
    .flag("model.summary-after")
    .brief("How long after its end (Spark's time) an application keeps its detail.")
    .doc(
        "How long after its end (Spark's end time, not when the exporter read it) an \
         application keeps its detail: a sidecar's last scrapes see everything, and a fleet \
         reading a store of old logs summarises each as it is read, so memory stays bounded \
         (see [Sidecar, fleet, or both](deploy.md#sidecar-fleet-or-both) and BENCHMARKS.md). \
         `0s`: at once.",
    ),
    Key::one("model.app_name_filter", |s, v| {
        s.model.app_name_filter = parse::regex(v)?;
        Ok(())
    })
    .flag("model.app-name-filter")
    .doc(
        "Regex; only applications whose name matches are kept, from every source (an event \
         log is still read, its events ignored).",
    ),
    Key::one("model.max_app_age", |s, v| {
        s.model.max_app_age = match v {
            "" | "0" | "0s" => None,
            _ => Some(parse::positive(v)?),
        };
        Ok(())
    })
    .flag("model.max-app-age")
    .brief("Only applications that started within this long are kept (older logs are not read).")
    .doc(
        "Only applications that started within this long are kept; older ones are dropped as \
         they age out (in name mode their counts stay in their name's series). A log last \
         modified longer ago is not read at all (a local file or folder, or an object; a \
         rolling folder on an object store has no time and is read).",
    ),
    Key::one("model.aggregate_by", |s, v| {
        s.model.aggregate_by = parse::one_of(
            v,
            &[
                ("app_id", AggregateBy::AppId),
                ("app_name", AggregateBy::AppName),
            ],
        )?;
        Ok(())
    })
    .choices(&["app_id", "app_name"])
    .flag("model.aggregate-by")
    .brief("Series per run (app_id) or per application name across runs (app_name).")
    .doc(
        "`app_id`: series per run. `app_name`: series per application name across runs, \
         without `app_id` (see [Trends across runs](metrics.md#trends-across-runs)); shards \
         then go by `XXH32(app_name)`.",
    ),
    Key::one("model.stage_retention", |s, v| {
        s.model.stage_retention = parse::positive(v)?;
        Ok(())
    })
    .doc(
        "How long a finished stage is held apart from its job group: the finished stages \
         `model.max_finished_stages` lets through keep their `stage_id` series that long; \
         every stage's totals stay in its job group.",
    ),
    Key::one("model.max_finished_stages", |s, v| {
        let n = v
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("{v:?} is not a whole number"))?;
        if n > 10_000 {
            return Err("must be at most 10000".into());
        }
        s.model.max_finished_stages = n;
        Ok(())
    })
    .flag("model.max-finished-stages")
    .brief(
        "Finished stage attempts per application that keep per-stage series (failed, skewed, \
        longest; 0: active only).",
    )
    .doc(
        "Per application, at most this many finished stage attempts keep per-stage series \
         (within `model.stage_retention`): only those worth a look, failed ones first (newest \
         first), then skewed ones (newest first), then the application's longest (its \
         `max_finished_stages` longest stage attempts so far; an equal one never displaces an \
         earlier one). Active stages always have them; `spark_stage_tasks_active` and \
         `spark_stage_stalled_seconds` are for active stages only. Keeps a streaming query's \
         exposition bounded: see BENCHMARKS.md \"Streaming: per-stage series\". `0`: active \
         stages only. At most `10000`.",
    ),
    Key::one("model.stage_skew_ratio", |s, v| {
        s.model.stage_skew_ratio = match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 1.0 => x,
            _ => return Err(format!("{v:?} is not a number of at least 1")),
        };
        Ok(())
    })
    .doc(
        "A finished stage is skewed, so worth a look, when its longest task ran at least this \
         many times its median (REST task summary), as the `SparkStageTaskSkew` alert's \
         `SKEW_RATIO`. At least `1`.",
    ),
    Key::one("model.stage_skew_min_duration", |s, v| {
        s.model.stage_skew_min_duration = parse::duration(v)?;
        Ok(())
    })
    .doc(
        "... and its longest task ran at least this long: a 50 ms straggler among 5 ms tasks \
         (a micro-batch) is noise.",
    ),
    Key::one("model.dead_executor_retention", |s, v| {
        s.model.dead_executor_retention = parse::positive(v)?;
        Ok(())
    })
    .doc("How long a dead executor keeps its `executor_id` series."),
    Key::map("streaming.trigger_intervals", |s, m| {
        let mut bad = vec![];
        for (name, v) in m {
            match parse::positive(&v) {
                Ok(d) => {
                    s.streaming.trigger_intervals.insert(name, d);
                }
                Err(e) => bad.push((format!(".{name}"), e)),
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(Problems(bad))
        }
    })
    .doc(
        "Trigger interval per streaming query name (`{orders_to_delta: 30s}`; an unnamed query \
         by its stand-in, `query-1a8d25d9`; `name=30s,other=1m` in the environment): \
         `spark_streaming_trigger_interval_seconds{from=\"configured\"}`. A query not listed \
         has its interval inferred from its batch start times (see [Structured \
         Streaming](internals.md#structured-streaming)). Each value a positive duration.",
    ),
];
