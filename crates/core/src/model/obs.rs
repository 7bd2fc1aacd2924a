//! Observations: what a source (REST poller or event-log tailer) saw about one Spark entity.
//!
//! Every source translates what it read into these types and hands them to
//! [`crate::model::Model`]. Fields a source does not know are `None`; the model merges what it
//! is given with what it already has, keyed by Spark's own ids, so the same fact seen twice (or by
//! two sources) counts once.

/// Which source produced an observation: its number in the exporter's registry of sources and
/// what it reads. The model keeps what each source delivered apart by number (`delivery.rs`);
/// cumulative values are merged with `max`, so REST totals and event-log sums of the same stage
/// never add up twice. The model knows no source by name: what it takes differently from a
/// source depends only on its [`Feed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source {
    number: u8,
    feed: Feed,
}

/// What a source reads, which decides the few things the model takes differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feed {
    /// A status API that says what is now (Spark's REST API, live or History Server): an
    /// application it lists without an end is running now.
    Status,
    /// A complete record of events (an event log): it reports on the application (its jobs are
    /// counted from it), and a stage of an ended job that it never saw submitted was skipped.
    Log,
}

impl Source {
    /// How many sources a registry may number (the model keeps one bit per source).
    pub const MAX: usize = 64;

    /// Source number `number` of the registry, reading `feed`.
    ///
    /// # Panics
    /// When `number` is [`Source::MAX`] or more (a registry test keeps it below).
    pub const fn new(number: usize, feed: Feed) -> Source {
        assert!(number < Source::MAX, "at most Source::MAX sources");
        Source {
            number: number as u8,
            feed,
        }
    }

    /// Its number in the registry.
    pub fn number(self) -> usize {
        usize::from(self.number)
    }

    /// What it reads.
    pub fn feed(self) -> Feed {
        self.feed
    }
}

pub use crate::clock::EpochMs;

use std::collections::BTreeMap;

/// An application (one attempt of it).
#[derive(Debug, Clone, Default)]
pub struct AppObs {
    /// `spark.app.id`, e.g. `local-1795981136444` or `spark-1f2e...`.
    pub app_id: String,
    /// `spark.app.name`.
    pub name: Option<String>,
    /// Spark version the application runs on.
    pub spark_version: Option<String>,
    /// User that runs the application.
    pub user: Option<String>,
    /// Start time.
    pub start_ms: Option<EpochMs>,
    /// End time; `Some` once the application has ended.
    pub end_ms: Option<EpochMs>,
    /// The driver's exit code, when Spark reports it (event log, Spark 4.0+).
    pub exit_code: Option<i32>,
}

/// Status of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum JobStatus {
    /// Submitted and not ended.
    Running,
    /// Ended with success.
    Succeeded,
    /// Ended with failure.
    Failed,
}

impl JobStatus {
    /// True once the job has ended.
    pub fn is_terminal(self) -> bool {
        !matches!(self, JobStatus::Running)
    }
    /// The `status` label value.
    pub fn label(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Failed => "failed",
        }
    }
}

/// A job.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobObs {
    /// Spark's job id (sequential per SparkContext).
    pub job_id: u64,
    /// `spark.jobGroup.id`, from `setJobGroup`.
    pub job_group: Option<String>,
    /// `spark.job.description`, from `setJobGroup` / `setJobDescription`.
    pub description: Option<String>,
    /// Current status.
    pub status: JobStatus,
    /// Submission time.
    pub submission_ms: Option<EpochMs>,
    /// Completion time (terminal jobs only).
    pub completion_ms: Option<EpochMs>,
    /// Ids of the stages this job runs (including ones that end up skipped).
    pub stage_ids: Vec<u64>,
    /// `spark.sql.execution.id`, when the job belongs to a SQL execution.
    pub sql_execution_id: Option<u64>,
    /// Job tags as Spark records them (`spark.job.tags`, REST `jobTags`; Spark 3.5+), internal
    /// ones included; Spark Connect operations add their session's tags (see `attribution.rs`).
    pub tags: Vec<String>,
    /// The job's name: the call site Spark records (`count at <stdin>:1`), from its last stage.
    pub name: Option<String>,
    /// A Spark Connect job's client application name (`spark.app.name` of its session; event
    /// logs only).
    pub client_app: Option<String>,
}

/// Status of a stage attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StageStatus {
    /// Known (part of a submitted job) but not submitted yet.
    Pending,
    /// Submitted and running.
    Active,
    /// Completed successfully.
    Complete,
    /// Failed.
    Failed,
    /// Never ran because its output already existed.
    Skipped,
}

impl StageStatus {
    /// True once the stage attempt has ended (or was skipped).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            StageStatus::Complete | StageStatus::Failed | StageStatus::Skipped
        )
    }
    /// The `status` label value.
    pub fn label(self) -> &'static str {
        match self {
            StageStatus::Pending => "pending",
            StageStatus::Active => "active",
            StageStatus::Complete => "complete",
            StageStatus::Failed => "failed",
            StageStatus::Skipped => "skipped",
        }
    }
}

/// Task-metric sums. From REST these are a stage's (or executor's) running totals; from the event
/// log they are the sum over the task-end events read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskTotals {
    /// Executor run time, milliseconds.
    pub run_time_ms: u64,
    /// Executor CPU time, nanoseconds.
    pub cpu_time_ns: u64,
    /// JVM GC time, milliseconds.
    pub gc_time_ms: u64,
    /// Bytes read from input sources.
    pub input_bytes: u64,
    /// Bytes written to output.
    pub output_bytes: u64,
    /// Shuffle bytes read (local + remote).
    pub shuffle_read_bytes: u64,
    /// Shuffle bytes written.
    pub shuffle_write_bytes: u64,
    /// Bytes spilled from memory (in-memory size).
    pub memory_spilled_bytes: u64,
    /// Bytes spilled to disk.
    pub disk_spilled_bytes: u64,
    /// Executor deserialization time (`Executor Deserialize Time`, REST
    /// `executorDeserializeTime`), milliseconds.
    pub deserialize_ms: u64,
    /// Time tasks waited for remote shuffle blocks (`Fetch Wait Time`, REST
    /// `shuffleFetchWaitTime`), milliseconds.
    pub fetch_wait_ms: u64,
    /// Sum of the tasks' peak execution memory (`Peak Execution Memory`, REST
    /// `peakExecutionMemory`, which is this sum too), bytes.
    pub peak_execution_memory_bytes: u64,
    /// Scheduler delay as the Spark UI computes it per task (`AppStatusUtils.schedulerDelay`),
    /// milliseconds. Event logs only: REST has no stage total of it (always 0 from REST).
    pub scheduler_delay_ms: u64,
}

impl TaskTotals {
    /// Field-wise maximum: how two sources' views of the same cumulative totals merge.
    pub fn max(&self, o: &TaskTotals) -> TaskTotals {
        TaskTotals {
            run_time_ms: self.run_time_ms.max(o.run_time_ms),
            cpu_time_ns: self.cpu_time_ns.max(o.cpu_time_ns),
            gc_time_ms: self.gc_time_ms.max(o.gc_time_ms),
            input_bytes: self.input_bytes.max(o.input_bytes),
            output_bytes: self.output_bytes.max(o.output_bytes),
            shuffle_read_bytes: self.shuffle_read_bytes.max(o.shuffle_read_bytes),
            shuffle_write_bytes: self.shuffle_write_bytes.max(o.shuffle_write_bytes),
            memory_spilled_bytes: self.memory_spilled_bytes.max(o.memory_spilled_bytes),
            disk_spilled_bytes: self.disk_spilled_bytes.max(o.disk_spilled_bytes),
            deserialize_ms: self.deserialize_ms.max(o.deserialize_ms),
            fetch_wait_ms: self.fetch_wait_ms.max(o.fetch_wait_ms),
            peak_execution_memory_bytes: self
                .peak_execution_memory_bytes
                .max(o.peak_execution_memory_bytes),
            scheduler_delay_ms: self.scheduler_delay_ms.max(o.scheduler_delay_ms),
        }
    }
    /// Field-wise sum (saturating).
    pub fn add(&mut self, o: &TaskTotals) {
        self.run_time_ms = self.run_time_ms.saturating_add(o.run_time_ms);
        self.cpu_time_ns = self.cpu_time_ns.saturating_add(o.cpu_time_ns);
        self.gc_time_ms = self.gc_time_ms.saturating_add(o.gc_time_ms);
        self.input_bytes = self.input_bytes.saturating_add(o.input_bytes);
        self.output_bytes = self.output_bytes.saturating_add(o.output_bytes);
        self.shuffle_read_bytes = self.shuffle_read_bytes.saturating_add(o.shuffle_read_bytes);
        self.shuffle_write_bytes = self
            .shuffle_write_bytes
            .saturating_add(o.shuffle_write_bytes);
        self.memory_spilled_bytes = self
            .memory_spilled_bytes
            .saturating_add(o.memory_spilled_bytes);
        self.disk_spilled_bytes = self.disk_spilled_bytes.saturating_add(o.disk_spilled_bytes);
        self.deserialize_ms = self.deserialize_ms.saturating_add(o.deserialize_ms);
        self.fetch_wait_ms = self.fetch_wait_ms.saturating_add(o.fetch_wait_ms);
        self.peak_execution_memory_bytes = self
            .peak_execution_memory_bytes
            .saturating_add(o.peak_execution_memory_bytes);
        self.scheduler_delay_ms = self.scheduler_delay_ms.saturating_add(o.scheduler_delay_ms);
    }
}

/// Task counts of a stage attempt, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskCounts {
    /// Tasks that succeeded.
    pub succeeded: u64,
    /// Tasks that failed.
    pub failed: u64,
    /// Tasks that were killed.
    pub killed: u64,
}

impl TaskCounts {
    /// Field-wise maximum.
    pub fn max(&self, o: &TaskCounts) -> TaskCounts {
        TaskCounts {
            succeeded: self.succeeded.max(o.succeeded),
            failed: self.failed.max(o.failed),
            killed: self.killed.max(o.killed),
        }
    }
    /// Field-wise sum (saturating).
    pub fn add(&mut self, o: &TaskCounts) {
        self.succeeded = self.succeeded.saturating_add(o.succeeded);
        self.failed = self.failed.saturating_add(o.failed);
        self.killed = self.killed.saturating_add(o.killed);
    }
    /// All finished tasks.
    pub fn finished(&self) -> u64 {
        self.succeeded + self.failed + self.killed
    }
}

/// A stage attempt as REST reports it (cumulative values), or as the event log's
/// `SparkListenerStageSubmitted` / `SparkListenerStageCompleted` report it (no totals).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StageObs {
    /// Stage id.
    pub stage_id: u64,
    /// Attempt number.
    pub attempt: u32,
    /// Status.
    pub status: StageStatus,
    /// Stage name (the call site, e.g. `collect at job.py:12`).
    pub name: Option<String>,
    /// Job group from the stage's properties (event log); REST derives it from the job.
    pub job_group: Option<String>,
    /// Job description from the stage's properties / REST `description`.
    pub description: Option<String>,
    /// Number of tasks in the stage.
    pub num_tasks: Option<u64>,
    /// Tasks running now (REST only).
    pub active_tasks: Option<u64>,
    /// Submission time.
    pub submission_ms: Option<EpochMs>,
    /// Completion time.
    pub completion_ms: Option<EpochMs>,
    /// Cumulative task outcomes (REST only; the event log counts task ends).
    pub task_counts: Option<TaskCounts>,
    /// Cumulative task metrics (REST only; the event log sums task ends).
    pub totals: Option<TaskTotals>,
}

/// A stage's task-duration summary (REST `taskSummary`), used for the skew ratio.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct TaskSummaryObs {
    /// Median task duration, milliseconds.
    #[serde(with = "crate::model::serial::exact")]
    pub median_ms: f64,
    /// Longest task duration, milliseconds.
    #[serde(with = "crate::model::serial::exact")]
    pub max_ms: f64,
    /// Fetched after the stage attempt ended: its final summary, which the
    /// `spark_stage_skew_ratio` histogram takes (an active stage's is partial).
    pub ended: bool,
    /// From task durations (`duration`, Spark 3.1+), not the executor-run-time fallback of
    /// older Sparks: only these go into the histogram, so both sources measure the same thing.
    pub of_duration: bool,
}

/// Outcome of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOutcome {
    /// `Success`.
    Succeeded,
    /// Any failure reason other than a kill.
    Failed,
    /// `TaskKilled`.
    Killed,
}

/// A task launched (event log `SparkListenerTaskStart`): gives running-task gauges when only
/// the event log is read.
#[derive(Debug, Clone)]
pub struct TaskStartObs {
    /// Stage id.
    pub stage_id: u64,
    /// Stage attempt.
    pub attempt: u32,
    /// Task id.
    pub task_id: u64,
    /// Executor that runs it.
    pub executor_id: String,
}

/// One finished task (event log `SparkListenerTaskEnd`).
#[derive(Debug, Clone)]
pub struct TaskEndObs {
    /// Stage id.
    pub stage_id: u64,
    /// Stage attempt.
    pub attempt: u32,
    /// Task id (unique within the application).
    pub task_id: u64,
    /// Executor that ran it.
    pub executor_id: String,
    /// Outcome.
    pub outcome: TaskOutcome,
    /// Launch time.
    pub launch_ms: EpochMs,
    /// Finish time.
    pub finish_ms: EpochMs,
    /// Metrics (zero when the event had none, e.g. some failures).
    pub metrics: TaskTotals,
    /// `Task Info`.`Locality`, when the event has one.
    pub locality: Option<Locality>,
}

/// Where a task ran relative to its data (`Task Info`.`Locality`: Spark's `TaskLocality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Locality {
    /// `PROCESS_LOCAL`: data in the executor's own JVM (cached).
    ProcessLocal,
    /// `NODE_LOCAL`: data on the same node.
    NodeLocal,
    /// `RACK_LOCAL`: data in the same rack.
    RackLocal,
    /// `NO_PREF`: the task has no locality preference.
    NoPref,
    /// `ANY`: data elsewhere (fetched over the network).
    Any,
    /// Any other value (a newer Spark's).
    Other,
}

impl Locality {
    /// Every value, in `label` order as exported.
    pub const ALL: [Locality; 6] = [
        Locality::ProcessLocal,
        Locality::NodeLocal,
        Locality::RackLocal,
        Locality::NoPref,
        Locality::Any,
        Locality::Other,
    ];
    /// The `locality` label value: Spark's name, or `other`.
    pub fn label(self) -> &'static str {
        match self {
            Locality::ProcessLocal => "PROCESS_LOCAL",
            Locality::NodeLocal => "NODE_LOCAL",
            Locality::RackLocal => "RACK_LOCAL",
            Locality::NoPref => "NO_PREF",
            Locality::Any => "ANY",
            Locality::Other => "other",
        }
    }
    /// Spark's name (`PROCESS_LOCAL`, ...) to the value; anything else is `Other`.
    pub fn from_spark(name: &[u8]) -> Locality {
        match name {
            b"PROCESS_LOCAL" => Locality::ProcessLocal,
            b"NODE_LOCAL" => Locality::NodeLocal,
            b"RACK_LOCAL" => Locality::RackLocal,
            b"NO_PREF" => Locality::NoPref,
            b"ANY" => Locality::Any,
            _ => Locality::Other,
        }
    }
}

/// An executor.
#[derive(Debug, Clone, Default)]
pub struct ExecutorObs {
    /// Executor id (`driver`, `0`, `1`, ...).
    pub executor_id: String,
    /// `Some(false)` once removed.
    pub active: Option<bool>,
    /// Removal reason as Spark gave it.
    pub remove_reason: Option<String>,
    /// Time it was added.
    pub add_ms: Option<EpochMs>,
    /// Time it was removed.
    pub remove_ms: Option<EpochMs>,
    /// Task slots.
    pub max_tasks: Option<u64>,
    /// Cores (REST `totalCores`, event log `Total Cores`): 0 for a cluster-mode driver, which
    /// runs no task.
    pub total_cores: Option<u64>,
    /// Tasks running now.
    pub active_tasks: Option<u64>,
    /// Cumulative completed tasks.
    pub completed_tasks: Option<u64>,
    /// Cumulative failed tasks.
    pub failed_tasks: Option<u64>,
    /// Cumulative task time (sum of task durations), milliseconds.
    pub task_time_ms: Option<u64>,
    /// Cumulative GC time, milliseconds.
    pub gc_time_ms: Option<u64>,
    /// Cumulative input bytes.
    pub input_bytes: Option<u64>,
    /// Cumulative shuffle bytes read.
    pub shuffle_read_bytes: Option<u64>,
    /// Cumulative shuffle bytes written.
    pub shuffle_write_bytes: Option<u64>,
    /// Storage memory used now.
    pub storage_memory_used_bytes: Option<u64>,
    /// Storage memory available.
    pub max_memory_bytes: Option<u64>,
    /// Disk used by cached blocks.
    pub disk_used_bytes: Option<u64>,
    /// `peakMemoryMetrics`: name and value.
    pub peak_memory: Vec<(String, u64)>,
    /// Its resource profile (REST `resourceProfileId`, event log `Executor Info` `Resource
    /// Profile Id`): the memory it holds is its profile's (`cost.rs`).
    pub resource_profile_id: Option<u64>,
}

/// Status of a SQL execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SqlStatus {
    /// Running.
    Running,
    /// Completed successfully.
    Completed,
    /// Failed.
    Failed,
}

impl SqlStatus {
    /// True once ended.
    pub fn is_terminal(self) -> bool {
        !matches!(self, SqlStatus::Running)
    }
    /// The `status` label value.
    pub fn label(self) -> &'static str {
        match self {
            SqlStatus::Running => "running",
            SqlStatus::Completed => "completed",
            SqlStatus::Failed => "failed",
        }
    }
}

/// A SQL execution.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SqlObs {
    /// Execution id.
    pub execution_id: u64,
    /// Description (the query text or what `setJobDescription` set).
    pub description: Option<String>,
    /// Status.
    pub status: SqlStatus,
    /// Submission time.
    pub submission_ms: Option<EpochMs>,
    /// Duration, once ended (milliseconds).
    pub duration_ms: Option<u64>,
    /// Its jobs (REST `runningJobIds`, `successJobIds`, `failedJobIds`).
    pub job_ids: Vec<u64>,
}

/// The final plan of a SQL execution (event log: its last plan; REST: `/sql/{id}?details=true`),
/// summarised (see `plan.rs`). Counts once per execution, whichever source tells first.
#[derive(Debug, Clone)]
pub struct SqlPlanObs {
    /// Execution id.
    pub execution_id: u64,
    /// What its plan adds to the execution's SQL aggregate.
    pub plan: super::plan::PlanSummary,
}

/// A structured-streaming query started (`QueryStartedEvent`).
#[derive(Debug, Clone)]
pub struct StreamingStartObs {
    /// Query id (stable across restarts of the query).
    pub query_id: String,
    /// Query name, when the user set one.
    pub name: Option<String>,
    /// Run id (new at every restart): the job group of the run's micro-batches.
    pub run_id: Option<String>,
}

/// One structured-streaming micro-batch (`QueryProgressEvent`).
#[derive(Debug, Clone, Default)]
pub struct StreamingProgressObs {
    /// Query id (stable across restarts of the query).
    pub query_id: String,
    /// Query name, when the user set one.
    pub name: Option<String>,
    /// Batch id.
    pub batch_id: u64,
    /// When the batch's trigger started (`timestamp`).
    pub start_ms: Option<EpochMs>,
    /// Rows read in this batch.
    pub num_input_rows: u64,
    /// Input rows per second.
    pub input_rows_per_second: f64,
    /// Processed rows per second.
    pub processed_rows_per_second: f64,
    /// `durationMs.triggerExecution`, milliseconds.
    pub batch_duration_ms: u64,
    /// Every `durationMs` entry (`triggerExecution`, `addBatch`, `commitOffsets`, ...), ms.
    pub phases_ms: Vec<(String, u64)>,
    /// `eventTime.watermark`; `None` without `withWatermark`, and for Spark's initial
    /// watermark (the epoch) before the first batch with data set one.
    pub watermark_ms: Option<EpochMs>,
    /// `eventTime.max`: the newest event time of the batch (absent in empty batches).
    pub event_time_max_ms: Option<EpochMs>,
    /// `stateOperators`, in Spark's order.
    pub state_operators: Vec<StateOperatorObs>,
    /// `sources`, in Spark's order.
    pub sources: Vec<SourceProgressObs>,
}

/// One stateful operator of a micro-batch (`stateOperators[]`).
#[derive(Debug, Clone, Default)]
pub struct StateOperatorObs {
    /// `operatorName` (`stateStoreSave`, `dedupe`, `symmetricHashJoin`, ...).
    pub name: String,
    /// `numRowsTotal`: rows in the state now.
    pub rows_total: u64,
    /// `memoryUsedBytes`: memory of the state now.
    pub memory_bytes: u64,
    /// `numRowsDroppedByWatermark` in this batch.
    pub dropped_by_watermark: u64,
}

/// One source of a micro-batch (`sources[]`).
#[derive(Debug, Clone, Default)]
pub struct SourceProgressObs {
    /// `description` (`KafkaV2[Subscribe[orders]]`, `RateStreamV2[...]`).
    pub description: String,
    /// Rows read from it in this batch.
    pub input_rows: u64,
    /// Its input rate, when Spark computed one.
    pub input_rows_per_second: Option<f64>,
    /// Its processing rate, when Spark computed one.
    pub processed_rows_per_second: Option<f64>,
}

// --- Application properties and cached data (issue 18: cost and cache) ---

/// The application's properties that change how its numbers read (event log
/// `SparkListenerEnvironmentUpdate` `Spark Properties`, REST `/environment` `sparkProperties`),
/// read once per application, and its resource profiles (event log
/// `SparkListenerResourceProfileAdded`, REST `/environment` `resourceProfiles`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppPropsObs {
    /// `spark.task.cpus`: cores each task holds (Spark's default: 1).
    pub task_cpus: Option<u64>,
    /// Every Spark property, when this observation carries them (the memory rule and
    /// `cost.property` read them, `cost.rs`); `None`: a profile alone.
    pub properties: Option<BTreeMap<String, String>>,
    /// Resource profiles told with it.
    pub profiles: Vec<ResourceProfileObs>,
}

impl AppPropsObs {
    /// The properties from the raw `spark.task.cpus` value, read as Spark reads it: a positive
    /// integer (anything else: not said).
    pub fn from_task_cpus(raw: Option<&str>) -> AppPropsObs {
        AppPropsObs {
            task_cpus: raw
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|c| *c > 0),
            ..AppPropsObs::default()
        }
    }

    /// Every Spark property of the application (`spark.task.cpus` read as
    /// [`Self::from_task_cpus`] reads it).
    pub fn from_properties(props: BTreeMap<String, String>) -> AppPropsObs {
        AppPropsObs {
            properties: Some(props.clone()),
            ..AppPropsObs::from_task_cpus(props.get("spark.task.cpus").map(String::as_str))
        }
    }

    /// A resource profile alone (event log `SparkListenerResourceProfileAdded`).
    pub fn from_profile(p: ResourceProfileObs) -> AppPropsObs {
        AppPropsObs {
            profiles: vec![p],
            ..AppPropsObs::default()
        }
    }
}

/// The memory an executor of one resource profile asks for, MiB (`Executor Resource Requests`,
/// REST `executorResources`): each `None` when the profile does not list it. Spark lists
/// `memoryOverhead` only when `spark.executor.memoryOverhead` is set, `offHeap` always (0 unless
/// `spark.memory.offHeap.enabled`), `pyspark.memory` when `spark.executor.pyspark.memory` is
/// set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceProfileObs {
    /// Resource profile id (0: the default profile).
    pub id: u64,
    /// `memory`: the heap (`spark.executor.memory`).
    pub memory_mib: Option<u64>,
    /// `memoryOverhead`.
    pub overhead_mib: Option<u64>,
    /// `offHeap`.
    pub off_heap_mib: Option<u64>,
    /// `pyspark.memory`.
    pub pyspark_mib: Option<u64>,
}

impl ResourceProfileObs {
    /// A profile from its executor requests, `(resource name, amount)`, MiB: a negative,
    /// infinite or absurd amount (1e15 MiB or more) is left out.
    pub fn from_requests<'a>(id: u64, requests: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        let mut p = ResourceProfileObs {
            id,
            ..Default::default()
        };
        for (name, amount) in requests {
            let mib = (0.0..1e15).contains(&amount).then_some(amount as u64);
            match name {
                "memory" => p.memory_mib = mib,
                "memoryOverhead" => p.overhead_mib = mib,
                "offHeap" => p.off_heap_mib = mib,
                "pyspark.memory" => p.pyspark_mib = mib,
                _ => {}
            }
        }
        p
    }
}

/// A cached dataset as REST `/storage/rdd` lists it (`RDDStorageInfo`): Spark's own totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RddObs {
    /// RDD id.
    pub rdd_id: u64,
    /// RDD name: for a cached DataFrame its whole physical plan text.
    pub name: String,
    /// Partitions of the RDD.
    pub partitions: u64,
    /// Partitions with at least one cached block.
    pub cached_partitions: u64,
    /// Bytes cached in memory (on and off heap), every replica.
    pub memory_bytes: u64,
    /// Bytes cached on disk, every replica.
    pub disk_bytes: u64,
}

/// A persisted RDD a stage computes (event log `SparkListenerStageSubmitted` `RDD Info` whose
/// `Storage Level` uses memory or disk): from then on its blocks are tracked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RddInfoObs {
    /// RDD id.
    pub rdd_id: u64,
    /// RDD name.
    pub name: String,
    /// Partitions of the RDD.
    pub partitions: u64,
}

/// One RDD block's new state on one executor (event log `SparkListenerBlockUpdated` of a block
/// `rdd_<rdd>_<partition>`, logged with `spark.eventLog.logBlockUpdates.enabled`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockObs {
    /// RDD id.
    pub rdd_id: u64,
    /// Partition index.
    pub partition: u64,
    /// The block manager's executor.
    pub executor_id: String,
    /// Bytes in memory, when the level uses memory (0 otherwise).
    pub memory_bytes: u64,
    /// Bytes on disk, when the level uses disk (0 otherwise).
    pub disk_bytes: u64,
    /// False when the level uses neither memory nor disk: the block was removed.
    pub stored: bool,
}

/// The rows a completed stage attempt read and wrote, from its `Stage Info`'s accumulables
/// (`internal.metrics.input.recordsRead`, ...): the event log's only; `diagnose` compares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageRecordsObs {
    /// Stage id.
    pub stage_id: u64,
    /// Stage attempt.
    pub attempt: u32,
    /// Rows read as input (`input.recordsRead`).
    pub input: u64,
    /// Rows written as output (`output.recordsWritten`).
    pub output: u64,
    /// Shuffle rows read (`shuffle.read.recordsRead`).
    pub shuffle_read: u64,
    /// Shuffle rows written (`shuffle.write.recordsWritten`).
    pub shuffle_write: u64,
}

impl StageRecordsObs {
    /// Count `value` under Spark's accumulator `name`, if it is one of the four.
    pub fn add(&mut self, name: &str, value: u64) {
        let slot = match name {
            "internal.metrics.input.recordsRead" => &mut self.input,
            "internal.metrics.output.recordsWritten" => &mut self.output,
            "internal.metrics.shuffle.read.recordsRead" => &mut self.shuffle_read,
            "internal.metrics.shuffle.write.recordsWritten" => &mut self.shuffle_write,
            _ => return,
        };
        *slot = value;
    }
}

/// An executor's peak memory metrics over one stage attempt (`SparkListenerStageExecutorMetrics`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StagePeaksObs {
    /// Stage id.
    pub stage_id: u64,
    /// Stage attempt.
    pub attempt: u32,
    /// Executor id (`driver` for the driver).
    pub executor_id: String,
    /// The metrics by Spark's name (`JVMHeapMemory`, `ProcessTreeJVMRSSMemory`, ...), bytes.
    pub metrics: Vec<(String, u64)>,
}
