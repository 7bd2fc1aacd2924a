//! Every stage attempt in full, for a diagnosis (`spark-exporter diagnose`): unlike
//! `AppView::stages`, which bounds the per-stage series an exposition carries, a diagnosis reads
//! every attempt, with its merged task totals and its task-duration spread.
//!
//! A stage attempt's [`StageDetail`] is a value, complete when the attempt **settles**: when the
//! event log reports it ended (its tasks' durations give the spread then), when REST's final task
//! summary of it arrives, or, failing both, when the model lets it go (`model.stage_retention`,
//! or its application's summary). A model asked to ([`super::Model::keep_settled_stages`]) keeps
//! each settled attempt's detail, once, until taken
//! ([`super::Model::take_settled_stages`]): so the diagnose rules of a stage can run when it
//! settles, whatever the model's retention.

use super::group::GroupKey;
use super::obs::{EpochMs, StageStatus, TaskCounts, TaskTotals};
use std::sync::Arc;

/// One stage attempt, read for a diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct StageDetail {
    /// Its job group's `(job_group, description)` label values.
    pub group: GroupKey,
    /// Stage id.
    pub stage_id: u64,
    /// Attempt number.
    pub attempt: u32,
    /// Stage name (length-capped).
    pub name: Arc<str>,
    /// Status.
    pub status: StageStatus,
    /// Submission time (Spark's clock).
    pub submission_ms: Option<EpochMs>,
    /// Completion time (Spark's clock).
    pub completion_ms: Option<EpochMs>,
    /// Task outcomes, both sources merged.
    pub tasks: TaskCounts,
    /// Task metric sums, both sources merged.
    pub totals: TaskTotals,
    /// Longest and median successful task duration (ms): the event log's exact ones for a
    /// complete attempt, else REST's task summary.
    pub longest_median_ms: Option<(f64, f64)>,
}

impl StageDetail {
    /// Wall-clock duration (s), when both ends are known.
    pub fn duration_seconds(&self) -> Option<f64> {
        match (self.submission_ms, self.completion_ms) {
            (Some(s), Some(c)) if c >= s => Some((c - s) as f64 / 1000.0),
            _ => None,
        }
    }
}
