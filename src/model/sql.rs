//! SQL executions of one application: the running ones and the aggregates per description.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::hist::Hist;
use super::obs::EpochMs;

/// A SQL execution not ended yet.
#[derive(Debug, Clone)]
pub struct SqlState {
    /// Description label.
    pub description: Arc<str>,
    /// Submission time.
    pub submission_ms: Option<EpochMs>,
}

/// Aggregates of one SQL description.
#[derive(Debug, Clone, Default)]
pub struct SqlAgg {
    /// Executions ended, by status label.
    pub ended: BTreeMap<&'static str, u64>,
    /// Durations by status label.
    pub duration: BTreeMap<&'static str, Hist>,
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
        }
    }
}
