//! What `diagnose --compare` prints as JSON ([`Comparison`]): a run against its baseline, the
//! changes ranked by their share of the time difference, the settings apart. Its own versioned
//! document (`schemas/diagnose-compare.v1.schema.json`), generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The comparison document's version; a field removed, renamed or changed in meaning makes a
/// new one.
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// Where the schema is committed, from the repository's root.
pub const COMPARE_SCHEMA_PATH: &str = "schemas/diagnose-compare.v1.schema.json";

/// A run compared with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// Always 1 in this version.
    pub schema_version: u32,
    /// Always `comparison`.
    pub document: String,
    /// `spark-exporter <version>`.
    pub generator: String,
    /// The run.
    pub run: RunRef,
    /// What it is compared with.
    pub baseline: Baseline,
    /// Nothing changed beyond the thresholds (the same run compared with itself, say).
    pub unchanged: bool,
    /// Start to end, seconds (`null` where a run has no end).
    pub wall_seconds: Option<Delta>,
    /// Task time, seconds: what the ranked changes share.
    pub task_seconds: Delta,
    /// What changed, by share of the task-time difference, largest first: job groups grown,
    /// shrunk, added or gone, and the parts of task time (GC, shuffle fetch wait, scheduler
    /// delay) that changed.
    pub ranked: Vec<Change>,
    /// Settings that differ, those the advice's rules know first.
    pub settings: Vec<SettingDiff>,
    /// Spark's version, when it differs.
    pub spark_version: Option<TextDiff>,
    /// Executors, their cores each and the core-seconds they held, when any differs.
    pub capacity: Vec<MeasureDiff>,
    /// The whole run's measures that changed.
    pub measures: Vec<MeasureDiff>,
    /// SQL executions whose plan changed (matched by raw description and order).
    pub plans: Vec<PlanChange>,
    /// Findings the baseline did not have.
    pub findings_new: Vec<FindingDiff>,
    /// Findings of the baseline the run does not have.
    pub findings_gone: Vec<FindingDiff>,
    /// Job groups matched on both sides whose task time changed, most first, each with the
    /// stage that changed most in it.
    pub groups: Vec<GroupChange>,
    /// Job groups, stages and SQL executions only the run has.
    pub added: Vec<Unmatched>,
    /// Those only the baseline has.
    pub gone: Vec<Unmatched>,
    /// What the comparison could not see or assumed.
    pub notes: Vec<String>,
}

/// A run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRef {
    /// Application id.
    pub app_id: String,
    /// Application name.
    pub app_name: String,
    /// Spark's version.
    pub spark_version: String,
    /// Start, epoch ms.
    pub start_ms: Option<i64>,
}

/// The baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Baseline {
    /// `run`: one other run; `median`: per measure, the median over the name's previous runs.
    pub kind: String,
    /// The runs it is made of (application ids), oldest first.
    pub runs: Vec<String>,
    /// The run whose plans, settings and findings stand for the baseline: the one run, or the
    /// run closest to the medians (wall and task time).
    pub closest: String,
    /// Where the baseline was read.
    pub input: String,
}

/// A number on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Delta {
    /// The baseline's.
    pub baseline: f64,
    /// The run's.
    pub run: f64,
    /// Run minus baseline.
    pub change: f64,
    /// Run over baseline (`null`: the baseline's is 0).
    pub ratio: Option<f64>,
}

/// One measure on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeasureDiff {
    /// `task_seconds`, `tasks`, `failed_tasks`, `stages`, `gc_seconds`,
    /// `shuffle_fetch_wait_seconds`, `scheduler_delay_seconds`, `input_bytes`, `output_bytes`,
    /// `shuffle_read_bytes`, `shuffle_write_bytes`, `spill_bytes`, `input_rows`, `output_rows`,
    /// `shuffle_read_rows`, `shuffle_write_rows` (event logs only), `skew` (longest task over
    /// median); for capacity `executors`, `cores`, `core_seconds`.
    pub measure: String,
    /// `s`, `B`, `core-s` (core-seconds) or empty (a count, a ratio).
    pub unit: String,
    /// The values.
    #[serde(flatten)]
    pub delta: Delta,
}

/// A changed thing's part of the task-time difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// `job_group` (matched, grown or shrunk), `job_group_added`, `job_group_gone`, or a
    /// part of task time: `gc_seconds`, `shuffle_fetch_wait_seconds`,
    /// `scheduler_delay_seconds`.
    pub kind: String,
    /// The job group (raw; empty: none), for the job-group kinds.
    pub job_group: Option<String>,
    /// Its description (raw), for the job-group kinds.
    pub description: Option<String>,
    /// Its task-time change, seconds (negative: less).
    pub seconds: f64,
    /// That over the whole task-time change (negative where it went the other way).
    pub share: Option<f64>,
    /// One line: what grew, where.
    pub detail: String,
}

/// A setting on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingDiff {
    /// The property.
    pub key: String,
    /// `application`, or `sql` for a SQL execution's session setting.
    pub scope: String,
    /// For `sql`: the execution's raw description and its order among those of that
    /// description (`"<description> #<n>"`).
    pub query: Option<String>,
    /// The baseline's value (`null`: not set there).
    pub baseline: Option<String>,
    /// The run's.
    pub run: Option<String>,
    /// Spark's default, when the advice's rules know the property (then it is listed first).
    pub default: Option<String>,
    /// The advice's rules know the property.
    pub known: bool,
}

/// A value on both sides, as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TextDiff {
    /// The baseline's.
    pub baseline: String,
    /// The run's.
    pub run: String,
}

/// A SQL execution whose plan changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanChange {
    /// Its raw description.
    pub description: String,
    /// Its order among the executions of that description (0 first).
    pub order: u32,
    /// Its job group (raw; empty: none).
    pub job_group: String,
    /// Its execution id in the baseline and in the run.
    pub execution_ids: [u64; 2],
    /// The plan fingerprints, baseline's and run's.
    pub fingerprints: [u64; 2],
    /// What differs: `SortMergeJoin 0 -> 1`, `shuffle exchanges 2 -> 3`, `adaptive coalesced
    /// partitions 12 -> 0`, ...; empty when only the shape's fingerprint differs.
    pub changes: Vec<String>,
}

/// A finding on one side only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingDiff {
    /// Its kind.
    pub kind: String,
    /// Its job group (as reported; empty: application-wide).
    pub job_group: String,
    /// Its description (as reported).
    pub description: String,
    /// How many findings of that kind there.
    pub count: u32,
    /// What they cost, seconds.
    pub cost_seconds: f64,
    /// The first one's title.
    pub title: String,
}

/// A job group on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupChange {
    /// The job group (raw; empty: none).
    pub job_group: String,
    /// Its description (raw).
    pub description: String,
    /// Its task time.
    pub task_seconds: Delta,
    /// Its tasks.
    pub tasks: Delta,
    /// Its other measures that changed.
    pub grew: Vec<MeasureDiff>,
    /// The stage whose task time changed most in it.
    pub stage: Option<StageChange>,
}

/// A stage, matched by its place in its job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageChange {
    /// Its job's order in the job group (0 first).
    pub job: u32,
    /// Its position in that job's stages (0 first).
    pub position: u32,
    /// Its stage ids, baseline's and run's.
    pub stage_ids: [u64; 2],
    /// Its name in the run.
    pub name: String,
    /// Its task time.
    pub task_seconds: Delta,
    /// Its measures that changed.
    pub grew: Vec<MeasureDiff>,
}

/// Something on one side only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Unmatched {
    /// `job_group`, `stage` or `sql`.
    pub what: String,
    /// The job group (raw; empty: none).
    pub job_group: String,
    /// The description (raw).
    pub description: String,
    /// For a stage: its job's order and position, its id and name (`job 1, stage 2: id 14
    /// <name>`); for a SQL execution: its order.
    pub at: Option<String>,
    /// Its task time, seconds (0 for a SQL execution).
    pub task_seconds: f64,
}
