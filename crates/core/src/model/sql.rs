//! SQL executions of one application: the running ones and the aggregates per job group and
//! description.
//!
//! An execution counts under the job group of its jobs (the first one seen: the event log's
//! `spark.sql.execution.id` job property, or REST's job ids of the execution), because REST
//! `/sql` has no group or tags. An execution that runs no job (a command, a result reused)
//! counts under the empty group, from either source: REST cannot tell its group, and both
//! sources must label it alike (Spark 4.x event logs name one in `jobGroupId`, REST does not).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::hist::Hist;
use super::obs::EpochMs;

/// Job group and description labels of a SQL aggregate.
pub type SqlKey = (Arc<str>, Arc<str>);

/// Most jobs and executions whose group is remembered for the executions still to come.
const REMEMBERED: usize = 2048;

/// Job groups learnt from jobs, for the SQL executions they belong to.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SqlGroups {
    /// Execution id -> the group of its first job (event logs).
    by_execution: BTreeMap<u64, Arc<str>>,
    /// Job id -> its group (REST, whose executions list their jobs).
    by_job: BTreeMap<u64, Arc<str>>,
    /// Execution id -> the raw group of its first job ([`super::plan::raw_hash`]), for the
    /// query's identity (absent from checkpoints written before).
    #[serde(default)]
    raw_by_execution: BTreeMap<u64, u64>,
    /// Job id -> its raw group's hash (REST).
    #[serde(default)]
    raw_by_job: BTreeMap<u64, u64>,
}

impl SqlGroups {
    /// Remember that job `job_id` (of SQL execution `execution`, when known) counts under
    /// `group`. The first job of an execution decides.
    /// `raw` is the hash of the group as Spark gave it ([`super::plan::raw_hash`]).
    pub fn saw_job(&mut self, job_id: u64, execution: Option<u64>, group: &Arc<str>, raw: u64) {
        match execution {
            Some(e) => {
                self.by_execution.entry(e).or_insert_with(|| group.clone());
                self.raw_by_execution.entry(e).or_insert(raw);
                bound(&mut self.by_execution);
                bound(&mut self.raw_by_execution);
            }
            None => {
                self.by_job.insert(job_id, group.clone());
                self.raw_by_job.insert(job_id, raw);
                bound(&mut self.by_job);
                bound(&mut self.raw_by_job);
            }
        }
    }

    /// The raw group's hash of execution `execution` (as [`SqlGroups::of`]), if a job told.
    pub fn raw_of(&self, execution: u64, job_ids: &[u64]) -> Option<u64> {
        self.raw_by_execution.get(&execution).copied().or_else(|| {
            let first = job_ids
                .iter()
                .filter(|j| self.raw_by_job.contains_key(j))
                .min()?;
            self.raw_by_job.get(first).copied()
        })
    }

    /// The group of execution `execution`, whose jobs are `job_ids` (REST), if a job told.
    pub fn of(&self, execution: u64, job_ids: &[u64]) -> Option<Arc<str>> {
        self.by_execution.get(&execution).cloned().or_else(|| {
            let first = job_ids
                .iter()
                .filter(|j| self.by_job.contains_key(j))
                .min()?;
            self.by_job.get(first).cloned()
        })
    }

    /// Forget execution `execution` (it ended).
    pub fn ended(&mut self, execution: u64) {
        self.by_execution.remove(&execution);
        self.raw_by_execution.remove(&execution);
    }
}

/// Drop the lowest ids beyond [`REMEMBERED`].
fn bound<V>(m: &mut BTreeMap<u64, V>) {
    while m.len() > REMEMBERED {
        m.pop_first();
    }
}

/// A SQL execution not ended yet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SqlState {
    /// Job group label, once known (from its start, or its first job).
    pub(super) group: Option<Arc<str>>,
    /// Description label.
    pub(super) description: Arc<str>,
    /// Submission time.
    pub(super) submission_ms: Option<EpochMs>,
    /// Its final plan, when a source told it before the execution ended.
    pub(super) plan: Option<super::plan::PlanSummary>,
    /// Its raw group's hash, once known with its group ([`super::plan::raw_hash`]).
    #[serde(default)]
    pub(super) raw_group: Option<u64>,
    /// The hash of its description as Spark gave it ([`super::plan::raw_hash`]).
    #[serde(default)]
    pub(super) raw_description: u64,
}

/// Aggregates of one SQL description.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SqlAgg {
    /// Executions ended, by status label.
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) ended: BTreeMap<&'static str, u64>,
    /// Durations by status label.
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) duration: BTreeMap<&'static str, Hist>,
    /// The final plans of its ended executions (`plan.rs`).
    pub(super) plans: super::plan::PlanAgg,
}

impl SqlAgg {
    /// A description's aggregate on first sight: no execution ended, and a zero duration
    /// histogram for every final status, so each series exists before its first observation.
    pub fn new(bounds: &Arc<[f64]>) -> SqlAgg {
        use super::obs::SqlStatus;
        SqlAgg {
            ended: BTreeMap::new(),
            duration: [SqlStatus::Completed, SqlStatus::Failed]
                .into_iter()
                .map(|s| (s.label(), Hist::new(bounds.clone())))
                .collect(),
            plans: Default::default(),
        }
    }
}
