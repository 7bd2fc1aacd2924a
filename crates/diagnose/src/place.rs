//! Where a finding is and an application's totals: what the rules write (the rest of the
//! report, [`crate::report`], is built around their findings).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An application's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Jobs ended.
    pub jobs: u64,
    /// Stage attempts held (every one, for an event log or a one-shot REST read).
    pub stages: u64,
    /// Tasks ended (succeeded, failed, killed).
    pub tasks: u64,
    /// Task run time, seconds.
    #[schemars(range(min = 0))]
    pub task_seconds: f64,
    /// Task GC time, seconds.
    #[schemars(range(min = 0))]
    pub gc_seconds: f64,
    /// Core-seconds the executors held.
    #[schemars(range(min = 0))]
    pub allocated_core_seconds: f64,
    /// Core-seconds tasks used (run time × `spark.task.cpus`).
    #[schemars(range(min = 0))]
    pub used_core_seconds: f64,
    /// Used / allocated, when anything was allocated.
    #[schemars(range(min = 0))]
    pub core_utilization: Option<f64>,
}

/// Where a finding is: every field that applies, null otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
