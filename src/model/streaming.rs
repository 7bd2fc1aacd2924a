//! Structured-streaming queries of one application: batches, rows, rates and batch durations.

use std::collections::BTreeMap;

use super::hist::Hist;

/// Aggregates of one streaming query.
#[derive(Debug, Clone)]
pub struct StreamAgg {
    /// Highest batch id counted, per query id (a query name can have several runs).
    pub last_batch: BTreeMap<String, u64>,
    /// Batches counted.
    pub batches: u64,
    /// Input rows counted.
    pub input_rows: u64,
    /// Latest input rate.
    pub input_rows_per_second: f64,
    /// Latest processing rate.
    pub processed_rows_per_second: f64,
    /// Batch durations.
    pub batch_duration: Hist,
}

impl StreamAgg {
    /// A query's aggregate on first sight: every counter and the histogram at zero.
    pub fn new(bounds: std::sync::Arc<[f64]>) -> StreamAgg {
        StreamAgg {
            last_batch: BTreeMap::new(),
            batches: 0,
            input_rows: 0,
            input_rows_per_second: 0.0,
            processed_rows_per_second: 0.0,
            batch_duration: Hist::new(bounds),
        }
    }
}
