//! A running job's state (its rules: `rules/job.rs`).

use super::group::GroupKey;
use super::obs::*;

/// A job that has not ended yet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct JobState {
    /// Labels.
    pub(super) group: GroupKey,
    /// Submission time.
    pub(super) submission_ms: Option<EpochMs>,
    /// Stage ids.
    pub(super) stage_ids: Vec<u64>,
}
