//! The slices of Spark's event JSON that the exporter reads (`JsonProtocol.scala` for core
//! events; Jackson-serialised case classes for SQL and streaming events).
//!
//! Every struct names only the fields used; serde skips the rest (task accumulables, RDD infos,
//! plans) without building values. For the large events (job starts, stage events, SQL starts
//! and ends) a `Keep` list beside the struct names the same members, and the parser hands serde
//! only those (`scan::pick`): a test reads every such fixture line both ways. Strings borrow from
//! the line where they can. Every field that some Spark version may omit is optional or
//! defaulted, so 3.x and 4.x logs both parse.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::scan::Keep;

/// A number Spark wrote as a JSON long; negative or fractional values are clamped to `u64`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Count, E> {
                Ok(Count(v.max(0) as u64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Count, E> {
                Ok(Count(if v.is_finite() && v > 0.0 {
                    v as u64
                } else {
                    0
                }))
            }
            fn visit_unit<E>(self) -> Result<Count, E> {
                Ok(Count(0))
            }
        }
        d.deserialize_any(V)
    }
}

/// A double Jackson may have written as a number, a string (`"NaN"`, `"Infinity"`) or null.
#[derive(Debug, Default, Clone, Copy)]
pub struct Rate(pub Option<f64>);

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let f = match v {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.parse::<f64>().ok(),
            _ => None,
        };
        Ok(Rate(f.filter(|x| x.is_finite())))
    }
}

/// Only reads the event name (for lines whose `"Event"` key is not first).
#[derive(Deserialize)]
pub struct Head<'a> {
    #[serde(rename = "Event", borrow)]
    pub event: Cow<'a, str>,
}

/// `SparkListenerLogStart`.
#[derive(Deserialize)]
pub struct LogStart<'a> {
    #[serde(rename = "Spark Version", borrow)]
    pub version: Cow<'a, str>,
}

/// `SparkListenerApplicationStart`.
#[derive(Deserialize)]
pub struct AppStart<'a> {
    #[serde(rename = "App Name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "App ID", borrow, default)]
    pub app_id: Option<Cow<'a, str>>,
    #[serde(rename = "App Attempt ID", borrow, default)]
    pub attempt_id: Option<Cow<'a, str>>,
    #[serde(rename = "Timestamp", default)]
    pub time: Option<i64>,
    #[serde(rename = "User", borrow, default)]
    pub user: Option<Cow<'a, str>>,
}

/// `SparkListenerApplicationEnd`: its time, and the driver's exit code (Spark 4.0+).
#[derive(Deserialize)]
pub struct AppEnd {
    #[serde(rename = "Timestamp")]
    pub time: i64,
    #[serde(rename = "ExitCode", default)]
    pub exit_code: Option<i32>,
}

/// The job-level `Properties` the exporter labels by.
#[derive(Deserialize, Default)]
pub struct Props<'a> {
    #[serde(rename = "spark.jobGroup.id", borrow, default)]
    pub job_group: Option<Cow<'a, str>>,
    #[serde(rename = "spark.job.description", borrow, default)]
    pub description: Option<Cow<'a, str>>,
    #[serde(rename = "spark.job.tags", borrow, default)]
    pub tags: Option<Cow<'a, str>>,
    #[serde(rename = "spark.sql.execution.id", borrow, default)]
    pub sql_execution_id: Option<Cow<'a, str>>,
    /// The application name of the session (a Spark Connect client's own).
    #[serde(rename = "spark.app.name", borrow, default)]
    pub app_name: Option<Cow<'a, str>>,
}

/// The members of `Properties` that [`Props`] reads ([`super::scan::pick`]).
pub const PROPS_KEEP: Keep = Keep::Members(&[
    ("spark.jobGroup.id", Keep::All),
    ("spark.job.description", Keep::All),
    ("spark.job.tags", Keep::All),
    ("spark.sql.execution.id", Keep::All),
    ("spark.app.name", Keep::All),
]);

/// Only a stage id (job start's `Stage Infos`, read when `Stage IDs` is missing).
#[derive(Deserialize)]
pub struct StageIdOnly<'a> {
    #[serde(rename = "Stage ID")]
    pub stage_id: u64,
    #[serde(rename = "Stage Name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// The stages it reads the output of (Spark 1.x on).
    #[serde(rename = "Parent IDs", default)]
    pub parents: Option<Vec<u64>>,
}

/// `SparkListenerJobStart`.
#[derive(Deserialize)]
pub struct JobStart<'a> {
    #[serde(rename = "Job ID")]
    pub job_id: u64,
    #[serde(rename = "Submission Time", default)]
    pub submission: Option<i64>,
    #[serde(rename = "Stage IDs", default)]
    pub stage_ids: Option<Vec<u64>>,
    #[serde(rename = "Stage Infos", default)]
    #[serde(borrow)]
    pub stage_infos: Option<Vec<StageIdOnly<'a>>>,
    #[serde(rename = "Properties", borrow, default)]
    pub props: Option<Props<'a>>,
}

/// What [`JobStart`] reads of a line ([`super::scan::pick`]): not the stages' RDD infos,
/// accumulables and call sites, nor most properties.
pub const JOB_START_KEEP: Keep = Keep::Members(&[
    ("Job ID", Keep::All),
    ("Submission Time", Keep::All),
    ("Stage IDs", Keep::All),
    (
        "Stage Infos",
        Keep::Elements(&Keep::Members(&[
            ("Stage ID", Keep::All),
            ("Stage Name", Keep::All),
            ("Parent IDs", Keep::All),
        ])),
    ),
    ("Properties", PROPS_KEEP),
]);

/// `Stage Info`.
#[derive(Deserialize)]
pub struct StageInfo<'a> {
    #[serde(rename = "Stage ID")]
    pub stage_id: u64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub attempt: u32,
    #[serde(rename = "Stage Name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "Number of Tasks", default)]
    pub num_tasks: Option<u64>,
    #[serde(rename = "Submission Time", default)]
    pub submission: Option<i64>,
    #[serde(rename = "Completion Time", default)]
    pub completion: Option<i64>,
    #[serde(rename = "Failure Reason", borrow, default)]
    pub failure: Option<Cow<'a, str>>,
    /// Its accumulables (read at its completion, for the rows it read and wrote).
    #[serde(rename = "Accumulables", borrow, default)]
    pub accumulables: Option<Vec<Accumulable<'a>>>,
    /// The RDDs the stage computes (read for the persisted ones).
    #[serde(rename = "RDD Info", borrow, default)]
    pub rdd_info: Option<Vec<RddInfo<'a>>>,
}

/// One of a `Stage Info`'s `Accumulables`: its name and value (a number for Spark's internal
/// metrics, a string for SQL ones).
#[derive(Deserialize)]
pub struct Accumulable<'a> {
    #[serde(rename = "Name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "Value", default)]
    pub value: Option<serde_json::Value>,
}

/// `SparkListenerStageSubmitted` / `SparkListenerStageCompleted`.
#[derive(Deserialize)]
pub struct StageEvent<'a> {
    #[serde(rename = "Stage Info", borrow)]
    pub info: StageInfo<'a>,
    #[serde(rename = "Properties", borrow, default)]
    pub props: Option<Props<'a>>,
}

/// What [`StageInfo`] reads of a `Stage Info`, `RDD Info` last (see [`STAGE_NO_RDDS_KEEP`]).
const STAGE_INFO_KEEP: &[(&str, Keep)] = &[
    ("Stage ID", Keep::All),
    ("Stage Attempt ID", Keep::All),
    ("Stage Name", Keep::All),
    ("Number of Tasks", Keep::All),
    ("Submission Time", Keep::All),
    ("Completion Time", Keep::All),
    ("Failure Reason", Keep::All),
    // Names and values only: a completed stage's rows read and written (empty at submission).
    (
        "Accumulables",
        Keep::Elements(&Keep::Members(&[("Name", Keep::All), ("Value", Keep::All)])),
    ),
    ("RDD Info", Keep::Elements(&RDD_INFO_KEEP)),
];

/// What [`StageEvent`] reads of a line ([`super::scan::pick`]): of accumulables their names and
/// values, not call sites and most properties; of `RDD Info` what [`RddInfo`] reads.
pub const STAGE_EVENT_KEEP: Keep = Keep::Members(&[
    ("Stage Info", Keep::Members(STAGE_INFO_KEEP)),
    ("Properties", PROPS_KEEP),
]);

/// [`STAGE_EVENT_KEEP`] without `RDD Info`, for the lines whose RDDs are not read: a stage's
/// completion, and a submission none of whose RDDs can be persisted.
pub const STAGE_NO_RDDS_KEEP: Keep = Keep::Members(&[
    (
        "Stage Info",
        Keep::Members(match STAGE_INFO_KEEP.split_last() {
            Some((_, rest)) => rest,
            None => &[],
        }),
    ),
    ("Properties", PROPS_KEEP),
]);

/// `Executor Info`.
#[derive(Deserialize)]
pub struct ExecutorInfo {
    #[serde(rename = "Total Cores", default)]
    pub cores: Option<u64>,
    #[serde(rename = "Resource Profile Id", default)]
    pub resource_profile_id: Option<u64>,
}

/// `SparkListenerExecutorAdded` / `SparkListenerExecutorRemoved`.
#[derive(Deserialize)]
pub struct ExecutorEvent<'a> {
    #[serde(rename = "Timestamp", default)]
    pub time: Option<i64>,
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Cow<'a, str>,
    #[serde(rename = "Executor Info", default)]
    pub info: Option<ExecutorInfo>,
    #[serde(rename = "Removed Reason", borrow, default)]
    pub reason: Option<Cow<'a, str>>,
}

/// `SparkListenerSQLExecutionStart` / `SparkListenerSQLExecutionEnd`.
#[derive(Deserialize)]
pub struct SqlEvent<'a> {
    #[serde(rename = "executionId")]
    pub execution_id: u64,
    /// Job tags (Spark 4.x SQL starts).
    #[serde(rename = "jobTags", default)]
    pub job_tags: Option<Vec<String>>,
    #[serde(borrow, default)]
    pub description: Option<Cow<'a, str>>,
    #[serde(default)]
    pub time: Option<i64>,
    #[serde(rename = "errorMessage", borrow, default)]
    pub error: Option<Cow<'a, str>>,
    /// The session settings the execution ran with that differ from the application's
    /// (Spark 3.2+ SQL starts); values that are not strings are left out.
    #[serde(rename = "modifiedConfigs", default)]
    pub modified_configs: Option<std::collections::BTreeMap<String, serde_json::Value>>,
}

/// What [`SqlEvent`] reads of a line ([`super::scan::pick`]): not the plan and its text.
pub const SQL_EVENT_KEEP: Keep = Keep::Members(&[
    ("executionId", Keep::All),
    ("jobTags", Keep::All),
    ("description", Keep::All),
    ("time", Keep::All),
    ("errorMessage", Keep::All),
    ("modifiedConfigs", Keep::All),
]);

/// One entry of `sources`: Spark's progress rates are sums over the sources.
#[derive(Deserialize, Default)]
pub struct SourceProgress<'a> {
    #[serde(borrow, default)]
    pub description: Option<Cow<'a, str>>,
    #[serde(rename = "numInputRows", default)]
    pub num_input_rows: Count,
    #[serde(rename = "inputRowsPerSecond", default)]
    pub input_rate: Rate,
    #[serde(rename = "processedRowsPerSecond", default)]
    pub processed_rate: Rate,
}

/// One entry of `stateOperators`.
#[derive(Deserialize, Default)]
pub struct StateOperator<'a> {
    #[serde(rename = "operatorName", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "numRowsTotal", default)]
    pub rows_total: Count,
    #[serde(rename = "memoryUsedBytes", default)]
    pub memory_bytes: Count,
    #[serde(rename = "numRowsDroppedByWatermark", default)]
    pub dropped_by_watermark: Count,
}

/// `eventTime`: ISO-8601 instants; `watermark` only with `withWatermark`, `max` only when the
/// batch read rows with an event time.
#[derive(Deserialize, Default)]
pub struct EventTime<'a> {
    #[serde(borrow, default)]
    pub watermark: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub max: Option<Cow<'a, str>>,
}

/// `progress` of a `QueryProgressEvent`.
#[derive(Deserialize)]
pub struct Progress<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// When the trigger started (ISO-8601).
    #[serde(borrow, default)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "batchId")]
    pub batch_id: u64,
    #[serde(rename = "numInputRows", default)]
    pub num_input_rows: Option<Count>,
    #[serde(rename = "inputRowsPerSecond", default)]
    pub input_rate: Rate,
    #[serde(rename = "processedRowsPerSecond", default)]
    pub processed_rate: Rate,
    /// Every phase's milliseconds (the keys vary by version and source).
    #[serde(rename = "durationMs", default)]
    pub durations: Option<std::collections::BTreeMap<String, Count>>,
    #[serde(rename = "eventTime", borrow, default)]
    pub event_time: Option<EventTime<'a>>,
    #[serde(rename = "stateOperators", borrow, default)]
    pub state_operators: Option<Vec<StateOperator<'a>>>,
    #[serde(borrow, default)]
    pub sources: Option<Vec<SourceProgress<'a>>>,
}

/// `StreamingQueryListener$QueryStartedEvent`.
#[derive(Deserialize)]
pub struct QueryStarted<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(rename = "runId", borrow, default)]
    pub run_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
}

/// `StreamingQueryListener$QueryProgressEvent`.
#[derive(Deserialize)]
pub struct ProgressEvent<'a> {
    #[serde(borrow)]
    pub progress: Progress<'a>,
}

/// `SparkListenerConnectOperationStarted` / `…Closed` (Spark Connect 3.4+).
#[derive(Deserialize)]
pub struct ConnectOperation<'a> {
    /// The operation's job tag (on every job and SQL execution it runs).
    #[serde(rename = "jobTag", borrow)]
    pub job_tag: Cow<'a, str>,
    /// The operation's plan as protobuf text.
    #[serde(rename = "statementText", borrow, default)]
    pub statement: Option<Cow<'a, str>>,
    /// The session's tags as the user wrote them (`spark.addTag`, 4.x).
    #[serde(rename = "sparkSessionTags", default)]
    pub session_tags: Option<Vec<String>>,
}

// --- Application properties and cached data (issue 18: cost and cache) ---

/// `Storage Level` (`JsonProtocol.storageLevelToJson`).
#[derive(Deserialize, Default, Clone, Copy)]
pub struct StorageLevel {
    #[serde(rename = "Use Disk", default)]
    pub use_disk: bool,
    #[serde(rename = "Use Memory", default)]
    pub use_memory: bool,
    #[serde(rename = "Replication", default)]
    pub replication: Option<u64>,
}

impl StorageLevel {
    /// Spark's `StorageLevel.isValid`: stored somewhere (off-heap also says `Use Memory`).
    pub fn valid(&self) -> bool {
        (self.use_memory || self.use_disk) && self.replication.unwrap_or(1) > 0
    }
}

/// One entry of a stage's `RDD Info`.
#[derive(Deserialize)]
pub struct RddInfo<'a> {
    #[serde(rename = "RDD ID", default)]
    pub id: Option<u64>,
    #[serde(rename = "Name", borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(rename = "Storage Level", default)]
    pub level: Option<StorageLevel>,
    #[serde(rename = "Number of Partitions", default)]
    pub partitions: Option<u64>,
}

/// The members of an `RDD Info` entry that [`RddInfo`] reads ([`super::scan::pick`]).
pub const RDD_INFO_KEEP: Keep = Keep::Members(&[
    ("RDD ID", Keep::All),
    ("Name", Keep::All),
    ("Storage Level", Keep::All),
    ("Number of Partitions", Keep::All),
]);

/// `SparkListenerEnvironmentUpdate`: only `Spark Properties` (every one whose value is a
/// string; the model picks what it reads).
#[derive(Deserialize)]
pub struct EnvironmentUpdate {
    #[serde(rename = "Spark Properties", default)]
    pub props: Option<std::collections::BTreeMap<String, serde_json::Value>>,
}

/// `SparkListenerResourceProfileAdded`: its id and executor requests.
#[derive(Deserialize)]
pub struct ResourceProfileAdded {
    #[serde(rename = "Resource Profile Id")]
    pub id: u64,
    #[serde(rename = "Executor Resource Requests", default)]
    pub executor: Option<std::collections::BTreeMap<String, ResourceRequest>>,
}

/// One executor resource request (`{"Resource Name", "Amount", ...}`).
#[derive(Deserialize)]
pub struct ResourceRequest {
    #[serde(rename = "Amount", default)]
    pub amount: Option<f64>,
}

/// `Block Manager ID`.
#[derive(Deserialize)]
pub struct BlockManagerId<'a> {
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Cow<'a, str>,
}

/// `Block Updated Info`.
#[derive(Deserialize)]
pub struct BlockUpdatedInfo<'a> {
    #[serde(rename = "Block Manager ID", borrow)]
    pub manager: BlockManagerId<'a>,
    #[serde(rename = "Block ID", borrow)]
    pub block_id: Cow<'a, str>,
    #[serde(rename = "Storage Level", default)]
    pub level: StorageLevel,
    #[serde(rename = "Memory Size", default)]
    pub memory: Count,
    #[serde(rename = "Disk Size", default)]
    pub disk: Count,
}

/// `SparkListenerBlockUpdated`.
#[derive(Deserialize)]
pub struct BlockUpdated<'a> {
    #[serde(rename = "Block Updated Info", borrow)]
    pub info: BlockUpdatedInfo<'a>,
}

/// `SparkListenerStageExecutorMetrics`: an executor's peaks over one stage attempt.
#[derive(Deserialize)]
pub struct StageExecutorMetrics<'a> {
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Cow<'a, str>,
    #[serde(rename = "Stage ID")]
    pub stage_id: u64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub attempt: u32,
    /// Metrics by name; a value that is not a whole number of bytes is left out.
    #[serde(rename = "Executor Metrics", default)]
    pub metrics: BTreeMap<String, serde_json::Value>,
}

/// `SparkListenerUnpersistRDD`.
#[derive(Deserialize)]
pub struct UnpersistRdd {
    #[serde(rename = "RDD ID")]
    pub rdd_id: u64,
}
