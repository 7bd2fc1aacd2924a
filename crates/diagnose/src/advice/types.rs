//! The advice's types: what a run was configured with, a suggestion, a code change, and the
//! application's settings.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a run was configured with, as its event log (or REST `/environment`) tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunConf {
    /// The application's Spark properties (`SparkListenerEnvironmentUpdate`); `None` when the
    /// log had no environment event.
    pub app: Option<BTreeMap<String, String>>,
    /// Each SQL execution's session settings that differ from the application's
    /// (`modifiedConfigs`, Spark 3.2+).
    pub sql: BTreeMap<u64, BTreeMap<String, String>>,
    /// The SQL execution of each stage (from its job's `spark.sql.execution.id`).
    pub stage_execution: BTreeMap<u64, u64>,
    /// The SQL executions of each job group (its label value).
    pub group_executions: BTreeMap<String, BTreeSet<u64>>,
    /// The shuffled joins (sort-merge and shuffled hash, the ones adaptive execution splits for
    /// skew) in each SQL execution's final plan; an execution absent had no plan in the log.
    pub shuffled_joins: BTreeMap<u64, u64>,
    /// Each stage's peaks over its executors and attempts (`SparkListenerStageExecutorMetrics`,
    /// the driver left out); absent where the log has none.
    pub stage_peaks: BTreeMap<u64, Peaks>,
    /// Each executor's peaks over its stages.
    pub executor_peaks: BTreeMap<String, Peaks>,
}

/// Peak memory as Spark's executor metrics record it, bytes; 0: not recorded, or sampled to 0
/// (the metrics are polled at heartbeats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peaks {
    /// `JVMHeapMemory`: the heap in use.
    pub jvm_heap: u64,
    /// The process tree's resident memory: `ProcessTreeJVMRSSMemory` +
    /// `ProcessTreePythonRSSMemory` + `ProcessTreeOtherRSSMemory` (with
    /// `spark.executor.processTreeMetrics.enabled`).
    pub process_rss: u64,
}

impl Peaks {
    /// The peaks of Spark's metrics `m` (by name).
    pub fn of<'a>(m: impl IntoIterator<Item = (&'a str, u64)>) -> Peaks {
        let mut p = Peaks::default();
        for (k, v) in m {
            match k {
                "JVMHeapMemory" => p.jvm_heap = p.jvm_heap.max(v),
                "ProcessTreeJVMRSSMemory"
                | "ProcessTreePythonRSSMemory"
                | "ProcessTreeOtherRSSMemory" => p.process_rss = p.process_rss.saturating_add(v),
                _ => {}
            }
        }
        p
    }

    /// Each the greater of the two.
    pub fn max(self, o: Peaks) -> Peaks {
        Peaks {
            jvm_heap: self.jvm_heap.max(o.jvm_heap),
            process_rss: self.process_rss.max(o.process_rss),
        }
    }
}

/// Where the value a run had came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The SQL execution's session settings (`modifiedConfigs`): `spark.conf.set` in the job.
    SqlExecution,
    /// The application's properties (`--conf`, `spark-defaults.conf`).
    Application,
    /// Not set: Spark's default (3.3 to 4.3).
    SparkDefault,
    /// Not known (no environment event in the log): Spark's default assumed.
    Assumed,
}

/// Who a setting is for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The application: `--conf key=value`.
    Application,
    /// One job group's queries: `spark.conf.set(key, value)` before them.
    JobGroup,
}

/// A setting to change for one finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Suggestion {
    /// The property.
    pub key: String,
    /// The value the run had, when it had one (`null`: unset, Spark's behaviour without it).
    pub ran_with: Option<String>,
    /// Where that value came from.
    pub origin: Origin,
    /// The SQL execution whose session settings gave it, when [`Origin::SqlExecution`].
    pub execution_id: Option<u64>,
    /// The value to try.
    pub to_try: String,
    /// Who it is for.
    pub scope: Scope,
    /// The job group, when [`Scope::JobGroup`].
    pub job_group: Option<String>,
    /// What the value is based on: the run's numbers, in words.
    pub basis: String,
}

/// A change to the job's code (not a setting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CodeChange {
    /// The change, as code.
    pub change: String,
    /// What it is based on.
    pub basis: String,
}

/// One value per property per scope, for the whole application, with the findings it serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingChange {
    /// The property.
    pub key: String,
    /// The value to try.
    pub to_try: String,
    /// The value the run had, when it had one.
    pub ran_with: Option<String>,
    /// Where that value came from.
    pub origin: Origin,
    /// Who it is for.
    pub scope: Scope,
    /// The job group, when [`Scope::JobGroup`].
    pub job_group: Option<String>,
    /// The findings it serves: their indexes in the application's `findings`.
    pub findings: Vec<usize>,
}

/// What an advisor gives for one finding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Advice {
    /// Settings.
    pub settings: Vec<Suggestion>,
    /// Code changes.
    pub code: Vec<CodeChange>,
}
