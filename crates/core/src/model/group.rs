//! Job groups: the `(job_group, job_description)` label values a job or stage counts under, and
//! each group's counters and histograms (how a job or stage finds its group: `rules/group.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::hist::Hist;
use super::obs::*;

/// `(job_group, job_description)` label values after rewriting.
pub type GroupKey = (Arc<str>, Arc<str>);

/// Counters and histograms of one job group + description.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GroupAgg {
    /// Jobs ended, by status label (`succeeded`, `failed`).
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) jobs: BTreeMap<&'static str, u64>,
    /// Job durations by status label.
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) job_duration: BTreeMap<&'static str, Hist>,
    /// Stage attempts ended, by status label (`complete`, `failed`, `skipped`).
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) stages: BTreeMap<&'static str, u64>,
    /// Stage durations by status label (complete and failed).
    #[serde(deserialize_with = "crate::model::serial::static_keys")]
    pub(super) stage_duration: BTreeMap<&'static str, Hist>,
    /// Task outcomes of stages that have retired from the model.
    pub(super) retired_counts: TaskCounts,
    /// Task metric sums of stages that have retired from the model.
    pub(super) retired_totals: TaskTotals,
    /// Exact task durations (event log); `None` once a summarised application drops it.
    pub(super) task_duration: Option<Hist>,
    /// Skew ratios of complete stage attempts, one observation each (see `tasks.rs`); `None`
    /// once a summarised application drops it.
    pub(super) skew_ratio: Option<Hist>,
    /// Task ends by locality, in [`Locality::ALL`] order (event log).
    pub(super) locality: [u64; 6],
}

/// A job group with every count at zero and every histogram present (born at zero).
pub(super) fn zero_group(dur: &Arc<[f64]>, task: &Arc<[f64]>) -> GroupAgg {
    let zero = |statuses: &[&'static str]| -> BTreeMap<&'static str, Hist> {
        statuses
            .iter()
            .map(|s| (*s, Hist::new(dur.clone())))
            .collect()
    };
    GroupAgg {
        jobs: BTreeMap::new(),
        job_duration: zero(&[JobStatus::Succeeded.label(), JobStatus::Failed.label()]),
        stages: BTreeMap::new(),
        stage_duration: zero(&[StageStatus::Complete.label(), StageStatus::Failed.label()]),
        retired_counts: Default::default(),
        retired_totals: Default::default(),
        task_duration: Some(Hist::new(task.clone())),
        skew_ratio: Some(super::skew::skew_hist()),
        locality: [0; 6],
    }
}
