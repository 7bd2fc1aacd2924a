//! What a diagnosis says, in the shape `--format json` prints: versioned
//! ([`SCHEMA_VERSION`]), described by the committed JSON Schema
//! `schemas/diagnose-report.schema.json`, which the tests validate every report against.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The report format's version: a field removed, renamed or changed in meaning is a new
/// version; a field or a finding kind added is not (readers ignore what they do not know).
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report: one entry per application diagnosed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `spark-exporter <version>`.
    pub generator: String,
    /// Where the data came from.
    pub source: SourceInfo,
    /// The applications, in id order.
    pub applications: Vec<AppReport>,
}

/// Where a report's data came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// `rest` (a live driver or History Server) or `event_log`.
    pub kind: String,
    /// The URLs or paths read.
    pub inputs: Vec<String>,
    /// Event-log lines, blocks or files that could not be read and were skipped (damaged or
    /// unreadable input; the rest was diagnosed). 0 for REST.
    #[serde(default)]
    pub read_errors: u64,
}

/// One application's diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppReport {
    /// Application id.
    pub app_id: String,
    /// Application name.
    pub app_name: String,
    /// Spark version, when known.
    pub spark_version: String,
    /// Start (epoch ms), when known.
    pub start_ms: Option<i64>,
    /// End (epoch ms), when it has ended.
    pub end_ms: Option<i64>,
    /// The application's totals, for scale.
    pub summary: Summary,
    /// The stages with the most task time, most first (at most 5): where the time went.
    pub bottlenecks: Vec<Bottleneck>,
    /// The findings, most costly first.
    pub findings: Vec<Finding>,
    /// Task time by job group and description, most first: where the time went, per group.
    /// For the text only (the JSON report, schema v1, is unchanged).
    #[serde(skip)]
    pub group_times: Vec<GroupTime>,
    /// What the procedure could not check, and how to let it (a streaming query whose trigger
    /// interval is unknown, ...). For the text only.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// One job group's (and description's) share of an application's task time.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTime {
    /// Job group label value.
    pub job_group: String,
    /// Job description label value.
    pub description: String,
    /// Task run time, seconds.
    pub task_seconds: f64,
    /// Jobs ended.
    pub jobs: u64,
}

/// An application's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Jobs ended.
    pub jobs: u64,
    /// Stage attempts held (every one, for an event log or a one-shot REST read).
    pub stages: u64,
    /// Tasks ended (succeeded, failed, killed).
    pub tasks: u64,
    /// Task run time, seconds.
    pub task_seconds: f64,
    /// Task GC time, seconds.
    pub gc_seconds: f64,
    /// Core-seconds the executors held.
    pub allocated_core_seconds: f64,
    /// Core-seconds tasks used (run time × `spark.task.cpus`).
    pub used_core_seconds: f64,
    /// Used / allocated, when anything was allocated.
    pub core_utilization: Option<f64>,
}

/// A stage with much of the application's task time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// Where.
    #[serde(flatten)]
    pub at: Place,
    /// Its task run time, seconds.
    pub task_seconds: f64,
    /// Its share of the application's task run time.
    pub share: f64,
    /// Its wall-clock duration, seconds, when known.
    pub duration_seconds: Option<f64>,
    /// Its page in the Spark UI, when known.
    pub url: Option<String>,
}

/// Where a finding is: every field that applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Place {
    /// Job group label value (`""` for none).
    pub job_group: Option<String>,
    /// Job description label value.
    pub description: Option<String>,
    /// Stage id.
    pub stage_id: Option<u64>,
    /// Stage attempt.
    pub stage_attempt: Option<u32>,
    /// Stage name.
    pub stage_name: Option<String>,
    /// SQL execution id.
    pub execution_id: Option<u64>,
    /// Streaming query name.
    pub query: Option<String>,
    /// Executor removal reason, cached dataset, ... what else names the place.
    pub subject: Option<String>,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind (a stable identifier, see [`Kind`]).
    pub kind: Kind,
    /// One line for a human.
    pub title: String,
    /// The task time (or core time) it explains, seconds; the ranking key. `docs/diagnose.md`
    /// gives each kind's formula.
    pub cost_seconds: f64,
    /// Where.
    #[serde(flatten)]
    pub at: Place,
    /// The numbers behind it, by name (seconds, bytes, ratios, counts).
    pub numbers: BTreeMap<String, f64>,
    /// What the Spark tuning guides suggest.
    pub remedy: String,
    /// The stage or SQL page in the Spark UI, when known.
    pub url: Option<String>,
}

/// The finding kinds, in the procedure's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A stage whose longest task ran far longer than its median one.
    Skew,
    /// A stage that spilled to disk.
    Spill,
    /// A stage whose tasks spent much of their time in GC.
    GcPressure,
    /// Executors lost (not removed by the driver), and the tasks that failed.
    ExecutorLoss,
    /// A shuffled join (sort-merge, shuffled hash) whose smaller side was small enough to
    /// broadcast.
    JoinStrategy,
    /// One description ran with more than one plan shape.
    PlanChange,
    /// A cached dataset not fully in the cache.
    PartialCache,
    /// Many tasks ran far from their data.
    Locality,
    /// Tasks waited long for the scheduler.
    SchedulerDelay,
    /// Streaming batches near or over their trigger interval.
    StreamingTrigger,
    /// Cores the application held but did not use.
    IdleCores,
}

impl Kind {
    /// Every kind, in the procedure's order.
    pub const ALL: [Kind; 11] = [
        Kind::Skew,
        Kind::Spill,
        Kind::GcPressure,
        Kind::ExecutorLoss,
        Kind::JoinStrategy,
        Kind::PlanChange,
        Kind::PartialCache,
        Kind::Locality,
        Kind::SchedulerDelay,
        Kind::StreamingTrigger,
        Kind::IdleCores,
    ];

    /// The kind whose identifier is `s`.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind's identifier in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Skew => "skew",
            Kind::Spill => "spill",
            Kind::GcPressure => "gc_pressure",
            Kind::ExecutorLoss => "executor_loss",
            Kind::JoinStrategy => "join_strategy",
            Kind::PlanChange => "plan_change",
            Kind::PartialCache => "partial_cache",
            Kind::Locality => "locality",
            Kind::SchedulerDelay => "scheduler_delay",
            Kind::StreamingTrigger => "streaming_trigger",
            Kind::IdleCores => "idle_cores",
        }
    }
}
