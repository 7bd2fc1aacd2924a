//! One application: its summary (always kept) and its detail (dropped when it is summarised),
//! and how application observations change them.
//!
//! A job, stage attempt or SQL execution is counted once, when it is first seen terminal; the
//! ids already counted live in the summary's [`IdSet`]s, so Spark dropping old entities from its
//! UI (or a second source reporting them again) never counts them twice or takes a count back.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::hash::{Map, Set};

use super::executor::ExecutorState;
use super::group::{GroupAgg, GroupKey};
use super::hist::Hist;
use super::idset::IdSet;
use super::job::JobState;
use super::labels::LabelSets;
use super::obs::*;
use super::sql::{SqlAgg, SqlGroups, SqlKey, SqlState};
use super::stage::StageState;
use super::streaming::StreamAgg;

/// Everything known about one application: its summary, always kept, and its detail, dropped
/// when the application is summarised (`model.summary_level`, `summary.rs`): summarising is
/// `detail.take()` once the detail's counts are in the summary.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct AppState {
    /// What stays for as long as the application is held.
    pub(super) summary: AppSummary,
    /// Jobs, stages, executors, SQL executions, streaming queries; `None` once summarised.
    pub(super) detail: Option<Box<AppDetail>>,
}

/// What is always kept of an application: who it is, when it ran, its job groups' counters and
/// histograms, and the ids already counted (so nothing is counted twice after its detail went).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct AppSummary {
    /// Application id (Spark's, without the attempt).
    pub(super) id: Arc<str>,
    /// Attempt id, when Spark reports one (YARN; `None` on local, standalone, Kubernetes).
    pub(super) attempt: Option<Arc<str>>,
    /// Application name.
    pub(super) name: Arc<str>,
    /// Spark version.
    pub(super) spark_version: Arc<str>,
    /// User.
    pub(super) user: Arc<str>,
    /// Start time.
    pub(super) start_ms: Option<EpochMs>,
    /// End time (Spark's, or when the driver disappeared).
    pub(super) end_ms: Option<EpochMs>,
    /// When the model noticed the end (wall clock); drives expiry.
    pub(super) ended_seen_ms: Option<EpochMs>,
    /// Ended only because the REST target stopped listing it.
    pub(super) gone: bool,
    /// When the model first saw it (wall clock): the `_created` time of its counters and
    /// histograms, which all start at zero then.
    pub(super) created_ms: EpochMs,
    /// The event log reports on it (task durations are known only from there).
    pub(super) from_log: bool,
    /// Job ids already counted.
    pub(super) counted_jobs: IdSet,
    /// Task ids (TIDs, sequential per application) already applied from task-end events, so a
    /// log read twice (truncation, a retried step) never counts a task twice.
    pub(super) counted_tasks: IdSet,
    /// Stage attempts already counted (attempt 0 in an IdSet, retries in a set).
    pub(super) counted_stages: IdSet,
    /// Retried stage attempts already counted.
    #[serde(with = "crate::model::serial::sorted")]
    pub(super) counted_retries: Set<(u64, u32)>,
    /// SQL ids already counted.
    pub(super) counted_sql: IdSet,
    /// Per job group aggregates.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) groups: Map<GroupKey, GroupAgg>,
    /// `spark_executor_removed_total` by normalised reason.
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) executors_removed: BTreeMap<&'static str, u64>,
    /// Spark Connect jobs ended, by client application and user: `[succeeded, failed]`.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) connect_jobs: BTreeMap<(Arc<str>, Arc<str>), [u64; 2]>,
    /// Job ids counted in `connect_jobs`.
    pub(super) connect_counted: IdSet,
    /// The driver's exit code, when Spark reported it.
    pub(super) exit_code: Option<i32>,
    /// Executors known when the detail was dropped.
    pub(super) executors_seen: u64,
    /// Summarised at `model.summary_level: app`: its job groups are not shown (they stay, for
    /// its cost and its name's series).
    pub(super) groups_hidden: bool,
    /// Core-seconds allocated and `spark.task.cpus` (`cost.rs`).
    pub(super) cost: super::cost::Cost,
    /// What each source has delivered of it (`delivery.rs`).
    pub(super) delivery: super::delivery::Delivery,
    /// Its diagnosis findings, counted (`findings.rs`).
    #[serde(default)]
    pub(super) findings: super::findings::Findings,
}

/// An application's detail: what its live series and a diagnosis read, dropped when it is
/// summarised.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct AppDetail {
    /// Jobs not ended yet.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) running_jobs: Map<u64, JobState>,
    /// Task ids whose start was applied (running-task gauges from the event log).
    pub(super) started_tasks: IdSet,
    /// Stage attempts still held.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) stages: Map<(u64, u32), StageState>,
    /// The application's longest ended stage attempts so far, `(duration ms, stage id,
    /// attempt)`, longest first, at most `model.max_finished_stages`: those of them the model
    /// still holds keep their per-stage series once finished (see [`super::view`]). A new stage
    /// enters only if strictly longer than the shortest here, so equal micro-batches never
    /// take turns.
    pub(super) longest: Vec<(EpochMs, u64, u32)>,
    /// Stage id -> job group, from the jobs that list the stage.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) stage_groups: Map<u64, GroupKey>,
    /// REST stage observations whose job is not known yet (the job started between the jobs
    /// and the stages request), with when they were first held. Applied when a job lists the
    /// stage, or with fallback labels after [`ORPHAN_WAIT_MS`].
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) orphans: Map<(u64, u32), (StageObs, EpochMs)>,
    /// Executors.
    pub(super) executors: BTreeMap<String, ExecutorState>,
    /// SQL executions not ended yet.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) running_sql: Map<u64, SqlState>,
    /// SQL aggregates by job group and description labels.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) sql: Map<SqlKey, SqlAgg>,
    /// Job groups learnt from jobs for their SQL executions.
    pub(super) sql_groups: SqlGroups,
    /// Which SQL executions' plans are counted, and the ended ones waiting for theirs.
    pub(super) sql_plans: super::plan::PlanState,
    /// Streaming aggregates by query label.
    pub(super) streaming: BTreeMap<Arc<str>, StreamAgg>,
    /// Streaming queries by run id (the job group of their micro-batches).
    pub(super) stream_runs: super::streaming_labels::StreamRuns,
    /// Distinct label values (cardinality caps).
    pub(super) label_sets: LabelSets,
    /// Cached datasets (`cache.rs`).
    pub(super) cache: super::cache::CacheState,
    /// Broadcast jobs waiting for their query's group (`broadcast.rs`).
    pub(super) broadcasts: super::broadcast::Broadcasts,
    /// Stage attempts that settled as their broadcast group was resolved, not handed over yet
    /// (`details.rs`); empty between writes.
    #[serde(skip)]
    pub(super) resolved: Vec<super::details::StageDetail>,
}

/// Every run of one application name (`model.aggregate_by: app_name`, `names.rs`): a summary
/// that sums its runs, and what only a name has.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct NameAgg {
    /// The runs' summaries summed (the latest run's version and user).
    pub(super) summary: AppSummary,
    /// Runs ended, by [`RUN_STATUSES`].
    pub(super) runs: [u64; 3],
    /// Durations of the counted runs, on [`super::names::RUN_BOUNDS`] (a checkpoint written
    /// before them keeps its own bounds).
    pub(super) run_duration: Hist,
    /// Core-seconds allocated to each counted run, on [`super::names::RUN_BOUNDS`] (absent from
    /// checkpoints written before it: empty then).
    #[serde(default = "super::names::run_hist")]
    pub(super) run_cost: Hist,
    /// The counted run that ended last (absent from checkpoints written before it).
    #[serde(default)]
    pub(super) last_run: Option<LastRun>,
    /// The money of [`Self::last_run`] (with prices, when one applied to it).
    #[serde(default)]
    pub(super) last_run_money: Option<super::cost::Money>,
    /// The latest plan of each query per job group and description over its runs.
    #[serde(with = "crate::model::serial::pairs")]
    pub(super) plan_latest: BTreeMap<(Arc<str>, Arc<str>), super::plan::ByQuery>,
    /// Distinct label values (cardinality caps) of the name's job groups.
    pub(super) label_sets: LabelSets,
}

/// What a name keeps of its counted run that ended last (`spark_app_last_run_*`). Ordered by
/// end, then start, then allocation: the greatest of a name's runs is its last, whatever order
/// they are folded in (the accumulator first, then the runs the model still holds).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub(super) struct LastRun {
    /// Its end (Spark's, or when its driver disappeared).
    pub(super) end_ms: EpochMs,
    /// Its start, when known.
    pub(super) start_ms: Option<EpochMs>,
    /// Core-milliseconds allocated to its executors (`cost.rs`).
    pub(super) core_ms: u64,
}

/// How a run ended: exit code 0, another exit code, or not said (Spark before 4.0, REST, a
/// driver that vanished).
pub const RUN_STATUSES: [&str; 3] = ["succeeded", "failed", "unknown"];

impl AppSummary {
    /// The summary of an application known only by its model key so far ([`app_key`]), first
    /// seen at `now`.
    pub(super) fn new(key: &str, now: EpochMs) -> AppSummary {
        let empty: Arc<str> = Arc::from("");
        let (id, attempt) = split_key(key);
        AppSummary {
            id: Arc::from(id),
            attempt: attempt.map(Arc::from),
            name: empty.clone(),
            spark_version: empty.clone(),
            user: empty,
            start_ms: None,
            end_ms: None,
            ended_seen_ms: None,
            gone: false,
            created_ms: now,
            from_log: false,
            counted_jobs: IdSet::default(),
            counted_tasks: IdSet::default(),
            counted_stages: IdSet::default(),
            counted_retries: Set::default(),
            counted_sql: IdSet::default(),
            groups: Map::default(),
            executors_removed: BTreeMap::new(),
            connect_jobs: BTreeMap::new(),
            connect_counted: IdSet::default(),
            exit_code: None,
            executors_seen: 0,
            groups_hidden: false,
            cost: Default::default(),
            delivery: Default::default(),
            findings: Default::default(),
        }
    }

    /// Index in [`RUN_STATUSES`] of how this run ended; `None` while it runs.
    pub(super) fn outcome(&self) -> Option<usize> {
        self.end_ms?;
        Some(match self.exit_code {
            Some(0) if !self.gone => 0,
            Some(_) if !self.gone => 1,
            _ => 2,
        })
    }

    /// True once the stage attempt has been counted as ended.
    pub(super) fn stage_counted(&self, stage_id: u64, attempt: u32) -> bool {
        if attempt == 0 {
            self.counted_stages.contains(stage_id)
        } else {
            self.counted_retries.contains(&(stage_id, attempt))
        }
    }

    pub(super) fn mark_stage_counted(&mut self, stage_id: u64, attempt: u32) {
        if attempt == 0 {
            self.counted_stages.insert(stage_id);
        } else {
            self.counted_retries.insert((stage_id, attempt));
        }
    }

    /// True once the application has ended.
    pub(super) fn ended(&self) -> bool {
        self.end_ms.is_some()
    }
}

impl AppDetail {
    /// `f` on the executor `id`, created (as active) on first sight, with `id` copied only then
    /// (every task's start and end updates its executor).
    pub(super) fn with_executor<R>(
        &mut self,
        id: &str,
        f: impl FnOnce(&mut ExecutorState) -> R,
    ) -> R {
        match self.executors.get_mut(id) {
            Some(ex) => f(ex),
            None => f(self.executor(id)),
        }
    }

    /// The executor `id`, created (as active) on first sight.
    pub(super) fn executor(&mut self, id: &str) -> &mut ExecutorState {
        self.executors
            .entry(id.to_string())
            .or_insert_with(|| ExecutorState {
                active: true,
                ..Default::default()
            })
    }

    /// Record an ended stage attempt's duration among the application's `cap` longest.
    pub(super) fn note_stage_duration(
        &mut self,
        stage_id: u64,
        attempt: u32,
        ms: EpochMs,
        cap: usize,
    ) {
        if cap == 0 || self.longest.len() >= cap && self.longest.last().is_some_and(|l| ms <= l.0) {
            return;
        }
        // Longest first; among equals, the earlier one first (it got there first).
        let at = self.longest.partition_point(|l| l.0 >= ms);
        self.longest.insert(at, (ms, stage_id, attempt));
        self.longest.truncate(cap);
    }
}

impl AppState {
    /// An application known only by its model key so far ([`app_key`]), first seen at `now`,
    /// with its detail.
    pub(super) fn new(key: &str, now: EpochMs) -> AppState {
        AppState {
            summary: AppSummary::new(key, now),
            detail: Some(Box::default()),
        }
    }

    /// The summary and the detail (`None` once summarised), borrowed apart.
    pub(super) fn parts(&mut self) -> (&mut AppSummary, Option<&mut AppDetail>) {
        (&mut self.summary, self.detail.as_deref_mut())
    }
}

/// The key an application attempt is known by in the model and to the collectors: Spark's
/// application id, plus `/` and the attempt id when Spark reports one (as in the REST path
/// `/applications/{id}/{attempt}`; no application id holds a `/`).
pub fn app_key(app_id: &str, attempt: Option<&str>) -> String {
    match attempt.filter(|a| !a.is_empty()) {
        Some(a) => format!("{app_id}/{a}"),
        None => app_id.to_string(),
    }
}

/// The application id and attempt of a key made by [`app_key`].
pub fn split_key(key: &str) -> (&str, Option<&str>) {
    match key.split_once('/') {
        Some((id, a)) if !a.is_empty() => (id, Some(a)),
        _ => (key, None),
    }
}
