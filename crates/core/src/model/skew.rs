//! The skew ratio's arithmetic and a stage attempt's bookkeeping for it (see `tasks.rs` for the
//! rules): a leaf, so the stage state (`app.rs`) can hold it.

use std::sync::{Arc, LazyLock};

use super::hist::Hist;
use super::obs::{Locality, TaskSummaryObs};

/// Upper bounds of the `spark_stage_skew_ratio` buckets: ratios, not seconds. 1 is a perfectly
/// even stage; the default `model.stage_skew_ratio` (5) is a bound.
pub const SKEW_BOUNDS: [f64; 9] = [1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0];

/// Most successful task durations kept per open stage attempt (4 bytes each: 800 KB).
pub const MAX_DURATIONS: usize = 200_000;

static BOUNDS: LazyLock<Arc<[f64]>> = LazyLock::new(|| Arc::from(&SKEW_BOUNDS[..]));

/// An empty skew-ratio histogram.
pub(super) fn skew_hist() -> Hist {
    Hist::new(BOUNDS.clone())
}

/// A stage attempt's skew bookkeeping.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct StageSkew {
    /// Successful task durations (ms) from the event log, while the log shows the attempt open
    /// (from its `StageSubmitted`); `None` before, after, or once over [`MAX_DURATIONS`].
    pub(super) durations: Option<Vec<u32>>,
    /// The attempt has been observed in its group's histogram (or decided to have no ratio).
    pub(super) observed: bool,
    /// Longest and median successful task duration (ms) from the event log, once the attempt
    /// completed (for a diagnosis; REST's is the stage's `summary`).
    pub(super) longest_median_ms: Option<(u32, u32)>,
}

impl StageSkew {
    /// A successful task of the attempt ended after `ms`.
    pub(super) fn push(&mut self, ms: u64) {
        if let Some(d) = &mut self.durations {
            if d.len() >= MAX_DURATIONS {
                self.durations = None;
            } else {
                d.push(u32::try_from(ms).unwrap_or(u32::MAX));
            }
        }
    }
}

/// Longest / median of `durations` with `taskSummary`'s quantiles (see `tasks.rs`);
/// `None` without tasks or with a median of 0. Reorders `durations`.
pub fn skew_ratio(durations: &mut [u32]) -> Option<f64> {
    let (max, median) = longest_median(durations)?;
    (median > 0).then(|| f64::from(max) / f64::from(median))
}

/// Longest and median of `durations` with `taskSummary`'s quantiles; `None` without tasks.
/// Reorders `durations`.
pub fn longest_median(durations: &mut [u32]) -> Option<(u32, u32)> {
    let n = durations.len();
    let max = *durations.iter().max()?;
    // `(0.5 * n).toLong` in Spark: floor(n / 2), at most n - 1.
    let at = (n / 2).min(n - 1);
    let (_, median, _) = durations.select_nth_unstable(at);
    Some((max, *median))
}

/// Longest / median of a REST summary; `None` with a median of 0.
pub fn summary_ratio(sum: &TaskSummaryObs) -> Option<f64> {
    (sum.median_ms > 0.0).then(|| sum.max_ms / sum.median_ms)
}

/// Index of a locality in [`Locality::ALL`].
pub fn locality_index(l: Locality) -> usize {
    Locality::ALL.iter().position(|x| *x == l).unwrap_or(5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_uses_task_summary_quantiles() {
        // n = 4: the median is index 2 (the 3rd shortest), as Spark's taskSummary gives.
        assert_eq!(skew_ratio(&mut [40, 10, 20, 30]), Some(40.0 / 30.0));
        // n = 5: index 2.
        assert_eq!(skew_ratio(&mut [1, 2, 3, 4, 100]), Some(100.0 / 3.0));
        assert_eq!(skew_ratio(&mut [7]), Some(1.0));
        assert_eq!(skew_ratio(&mut [0, 5]), Some(1.0));
        assert_eq!(skew_ratio(&mut [0, 0, 5]), None, "median 0");
        assert_eq!(skew_ratio(&mut []), None);
    }

    #[test]
    fn durations_are_capped() {
        let mut s = StageSkew {
            durations: Some(vec![1; MAX_DURATIONS - 1]),
            ..Default::default()
        };
        s.push(5);
        assert_eq!(s.durations.as_ref().map(Vec::len), Some(MAX_DURATIONS));
        s.push(5);
        assert!(s.durations.is_none(), "over the cap: no ratio from the log");
        s.push(5);
        assert!(s.durations.is_none());
    }

    #[test]
    fn locality_index_follows_all() {
        for (i, l) in Locality::ALL.iter().enumerate() {
            assert_eq!(locality_index(*l), i);
        }
    }
}
