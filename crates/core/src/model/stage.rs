//! A stage attempt's state (its rules: `rules/stage.rs`).
//!
//! A stage attempt is counted once, when it is first seen terminal (the attempts already counted
//! live in the application's summary, so Spark dropping old stages from its UI, or a second
//! source reporting them again, never counts them twice). Its task counts and metric sums are
//! kept per source and merged with `max` (REST reports running totals, the event log sums task
//! ends); when the attempt retires, its merged totals fold into its job group's counters, so
//! group counters never go backwards. A REST stage whose job is not known yet waits for it
//! ([`ORPHAN_WAIT_MS`]). An ended attempt settles once (`details.rs`).

use std::sync::Arc;

use super::details::StageDetail;
use super::group::GroupKey;
use super::obs::*;

/// How long a stage whose job is unknown waits for the job before it is labelled from its own
/// description alone.
pub const ORPHAN_WAIT_MS: EpochMs = 30_000;

/// A stage attempt the model still holds (active, pending, or finished within retention).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StageState {
    /// Stage id.
    pub(super) stage_id: u64,
    /// Attempt.
    pub(super) attempt: u32,
    /// Labels.
    pub(super) group: GroupKey,
    /// Stage name, length-capped.
    pub(super) name: Arc<str>,
    /// Status.
    pub(super) status: StageStatus,
    /// Submission time (Spark's clock).
    pub(super) submission_ms: Option<EpochMs>,
    /// Completion time (Spark's clock).
    pub(super) completion_ms: Option<EpochMs>,
    /// When the model first saw the stage (wall clock).
    pub(super) first_seen_ms: EpochMs,
    /// When the model saw it end (wall clock); drives retirement.
    pub(super) ended_seen_ms: Option<EpochMs>,
    /// Running tasks (REST).
    pub(super) active_tasks: Option<u64>,
    /// Running tasks from the event log (starts minus ends).
    pub(super) log_running: u64,
    /// Task outcomes per source.
    pub(super) rest_counts: TaskCounts,
    /// Task outcomes from the event log.
    pub(super) log_counts: TaskCounts,
    /// Metric sums per source.
    pub(super) rest_totals: TaskTotals,
    /// Metric sums from the event log.
    pub(super) log_totals: TaskTotals,
    /// Last time a task of this stage was seen finishing.
    pub(super) last_task_end_ms: Option<EpochMs>,
    /// Task duration summary (REST).
    pub(super) summary: Option<TaskSummaryObs>,
    /// Skew-ratio bookkeeping (see `tasks.rs`).
    pub(super) skew: super::skew::StageSkew,
    /// Its detail was given out once settled (`details.rs`).
    pub(super) settled: bool,
    /// It would have settled, but its group was a broadcast placeholder (`details.rs`).
    pub(super) settle_due: bool,
}

impl StageState {
    /// A stage attempt first seen (wall clock `now`), active, with nothing counted yet.
    pub fn new(stage_id: u64, attempt: u32, group: GroupKey, name: Arc<str>, now: EpochMs) -> Self {
        StageState {
            stage_id,
            attempt,
            group,
            name,
            status: StageStatus::Active,
            submission_ms: None,
            completion_ms: None,
            first_seen_ms: now,
            ended_seen_ms: None,
            active_tasks: None,
            log_running: 0,
            rest_counts: TaskCounts::default(),
            log_counts: TaskCounts::default(),
            rest_totals: TaskTotals::default(),
            log_totals: TaskTotals::default(),
            last_task_end_ms: None,
            summary: None,
            skew: Default::default(),
            settled: false,
            settle_due: false,
        }
    }
    /// Running tasks: REST's count when REST reports the stage, else the event log's.
    pub fn running(&self) -> u64 {
        self.active_tasks.unwrap_or(self.log_running)
    }
    /// Task outcomes, both sources merged.
    pub fn counts(&self) -> TaskCounts {
        self.rest_counts.max(&self.log_counts)
    }
    /// Metric sums, both sources merged.
    pub fn totals(&self) -> TaskTotals {
        self.rest_totals.max(&self.log_totals)
    }
}

impl StageState {
    /// What a diagnosis reads of this attempt now.
    pub(super) fn detail(&self) -> StageDetail {
        StageDetail {
            group: self.group.clone(),
            stage_id: self.stage_id,
            attempt: self.attempt,
            name: self.name.clone(),
            status: self.status,
            submission_ms: self.submission_ms,
            completion_ms: self.completion_ms,
            tasks: self.counts(),
            totals: self.totals(),
            longest_median_ms: self
                .skew
                .longest_median_ms
                .map(|(l, m)| (f64::from(l), f64::from(m)))
                .or_else(|| self.summary.map(|s| (s.max_ms, s.median_ms))),
        }
    }

    /// Settle the attempt if it has ended and has not settled yet: its detail, once. An
    /// attempt of a broadcast job still waiting for its query's group (`broadcast.rs`) settles
    /// when the group is known ([`Self::settle_resolved`]).
    pub(super) fn settle(&mut self) -> Option<StageDetail> {
        if self.settled || !self.status.is_terminal() {
            return None;
        }
        if super::broadcast::is_placeholder(&self.group) {
            self.settle_due = true;
            return None;
        }
        self.settled = true;
        Some(self.detail())
    }

    /// The attempt's group is known now: if it was due to settle, it settles.
    pub(super) fn settle_resolved(&mut self) -> Option<StageDetail> {
        if std::mem::take(&mut self.settle_due) {
            self.settle()
        } else {
            None
        }
    }
}

/// Stage duration in seconds from Spark's own times.
pub fn span_secs(start: Option<EpochMs>, end: Option<EpochMs>) -> Option<f64> {
    match (start, end) {
        (Some(s), Some(e)) if e >= s && s > 0 => Some((e - s) as f64 / 1000.0),
        _ => None,
    }
}
