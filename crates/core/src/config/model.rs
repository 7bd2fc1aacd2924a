//! The `model` section (what the model keeps, and for how long) and the `streaming` section.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::parse::Pattern;

/// Default time a finished application stays exported.
pub const DEFAULT_APP_RETENTION: Duration = Duration::from_secs(3600);
/// Default time a finished stage keeps its per-stage series.
pub const DEFAULT_STAGE_RETENTION: Duration = Duration::from_secs(300);
/// Default cap on finished stage attempts per application that keep their per-stage series.
pub const DEFAULT_MAX_FINISHED_STAGES: usize = 20;
/// Default longest-to-median task duration ratio at which a finished stage counts as skewed
/// (the shipped `SparkStageTaskSkew` alert's threshold).
pub const DEFAULT_STAGE_SKEW_RATIO: f64 = 5.0;
/// Default shortest longest task for a finished stage to count as skewed: skew in a stage of
/// millisecond tasks (a micro-batch) is noise, not a straggler.
pub const DEFAULT_STAGE_SKEW_MIN_DURATION: Duration = Duration::from_secs(10);
/// Default time an ended application keeps its detail (stages, executors, SQL, streaming)
/// before [`SummaryLevel`] applies.
pub const DEFAULT_SUMMARY_AFTER: Duration = Duration::from_secs(300);
/// Default time a dead executor keeps its series.
pub const DEFAULT_DEAD_EXECUTOR_RETENTION: Duration = Duration::from_secs(1800);

/// Retention of entities in the model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelConfig {
    /// How long a finished application stays exported.
    #[serde(with = "humantime_serde")]
    pub app_retention: Duration,
    /// How long a finished stage keeps its `stage_id` series (only the stages
    /// `max_finished_stages` lets through) and its task totals apart from its job group's.
    #[serde(with = "humantime_serde")]
    pub stage_retention: Duration,
    /// At most this many finished stage attempts per application keep per-stage series within
    /// `stage_retention`: failed ones, then skewed ones, then the application's longest. `0`:
    /// per-stage series for active stages only. Bounds a streaming application's exposition.
    pub max_finished_stages: usize,
    /// A finished stage whose longest task ran at least this many times its median task (and at
    /// least `stage_skew_min_duration`) counts as skewed, so it keeps its series.
    pub stage_skew_ratio: f64,
    /// The shortest longest task of a skewed stage: shorter stragglers cost nothing.
    #[serde(with = "humantime_serde")]
    pub stage_skew_min_duration: Duration,
    /// How long a dead executor keeps its `executor_id` series.
    #[serde(with = "humantime_serde")]
    pub dead_executor_retention: Duration,
    /// What an ended application keeps once `summary_after` has passed since its end.
    pub summary_level: SummaryLevel,
    /// How long after its end (Spark's time) an application keeps its full detail.
    #[serde(with = "humantime_serde")]
    pub summary_after: Duration,
    /// Only applications whose name matches this regex are kept (every source).
    pub app_name_filter: Option<Pattern>,
    /// Only applications that started within this long are kept; `None`: no limit.
    #[serde(with = "humantime_serde")]
    pub max_app_age: Option<Duration>,
    /// Series per application run (`app_id`), or per application name across runs.
    pub aggregate_by: AggregateBy,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            app_retention: DEFAULT_APP_RETENTION,
            stage_retention: DEFAULT_STAGE_RETENTION,
            max_finished_stages: DEFAULT_MAX_FINISHED_STAGES,
            stage_skew_ratio: DEFAULT_STAGE_SKEW_RATIO,
            stage_skew_min_duration: DEFAULT_STAGE_SKEW_MIN_DURATION,
            dead_executor_retention: DEFAULT_DEAD_EXECUTOR_RETENTION,
            summary_level: SummaryLevel::Groups,
            summary_after: DEFAULT_SUMMARY_AFTER,
            app_name_filter: None,
            max_app_age: None,
            aggregate_by: AggregateBy::AppId,
        }
    }
}

/// What an ended application keeps once its detail has been kept for `model.summary_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryLevel {
    /// Everything, until `model.app_retention`.
    Full,
    /// Application and job-group series; no stage, executor, SQL or streaming series.
    Groups,
    /// Application series only.
    App,
}

/// What the application series are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateBy {
    /// One set of series per application run, labelled `app_id` and `app_name`.
    AppId,
    /// One set per application name, across runs: an application counts into its name's
    /// series when it ends (only applications that end after the exporter started).
    AppName,
}

/// Structured Streaming queries.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamingConfig {
    /// Trigger interval per query name (an unnamed query: its stand-in, `query-1a8d25d9`).
    /// No Spark event or endpoint carries it; a query not listed has it inferred from its
    /// batch start times (`spark_streaming_trigger_interval_seconds{source}`).
    #[serde(serialize_with = "durations_map")]
    pub trigger_intervals: BTreeMap<String, Duration>,
}

/// A map of durations, printed as humantime strings.
fn durations_map<S: serde::Serializer>(
    m: &BTreeMap<String, Duration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(k, &humantime::format_duration(*v).to_string())?;
    }
    map.end()
}
