//! Every stage attempt in full, for a diagnosis (`spark-exporter diagnose`): unlike
//! [`AppView::stages`], which bounds the per-stage series an exposition carries, a diagnosis reads
//! every attempt the model holds, with its merged task totals and its task-duration spread.

use std::sync::Arc;

use super::app::GroupKey;
use super::obs::{EpochMs, StageStatus, TaskCounts, TaskTotals};
use super::view::AppView;

/// One stage attempt, read for a diagnosis.
#[derive(Debug, Clone)]
pub struct StageDetail<'a> {
    /// Its job group's `(job_group, description)` label values.
    pub group: &'a GroupKey,
    /// Stage id.
    pub stage_id: u64,
    /// Attempt number.
    pub attempt: u32,
    /// Stage name (length-capped).
    pub name: &'a Arc<str>,
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

impl StageDetail<'_> {
    /// Wall-clock duration (s), when both ends are known.
    pub fn duration_seconds(&self) -> Option<f64> {
        match (self.submission_ms, self.completion_ms) {
            (Some(s), Some(c)) if c >= s => Some((c - s) as f64 / 1000.0),
            _ => None,
        }
    }
}

impl<'a> AppView<'a> {
    /// Every stage attempt the model holds, in `(stage_id, attempt)` order. Stages retire after
    /// `model.stage_retention` once their application's detail expires; a diagnosis reads a
    /// model that never expires anything.
    pub fn stage_details(&self) -> Vec<StageDetail<'a>> {
        let mut v: Vec<StageDetail<'a>> = self
            .d()
            .stages
            .values()
            .map(|sg| StageDetail {
                group: &sg.group,
                stage_id: sg.stage_id,
                attempt: sg.attempt,
                name: &sg.name,
                status: sg.status,
                submission_ms: sg.submission_ms,
                completion_ms: sg.completion_ms,
                tasks: sg.counts(),
                totals: sg.totals(),
                longest_median_ms: sg
                    .skew
                    .longest_median_ms
                    .map(|(l, m)| (f64::from(l), f64::from(m)))
                    .or_else(|| sg.summary.map(|s| (s.max_ms, s.median_ms))),
            })
            .collect();
        v.sort_by_key(|s| (s.stage_id, s.attempt));
        v
    }
}
