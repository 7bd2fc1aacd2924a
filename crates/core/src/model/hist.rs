//! Fixed-bucket histograms, as exported (cumulative buckets are computed at export time).

use std::sync::Arc;

/// A histogram over fixed upper bounds (seconds); the `+Inf` bucket is implicit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hist {
    /// Upper bounds, strictly increasing.
    #[serde(with = "crate::model::serial::exact::slice")]
    pub(super) bounds: Arc<[f64]>,
    /// Per-bucket (non-cumulative) counts; one more than `bounds` for `+Inf`.
    pub(super) counts: Vec<u64>,
    /// Sum of observations.
    #[serde(with = "crate::model::serial::exact")]
    pub(super) sum: f64,
    /// Number of observations.
    pub(super) count: u64,
}

impl Hist {
    /// Sum of observations.
    pub fn sum(&self) -> f64 {
        self.sum
    }
    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.count
    }
}

impl Hist {
    /// An empty histogram.
    pub fn new(bounds: Arc<[f64]>) -> Hist {
        let n = bounds.len() + 1;
        Hist {
            bounds,
            counts: vec![0; n],
            sum: 0.0,
            count: 0,
        }
    }

    /// Record one observation. Negative values (clock skew) count as zero.
    pub fn observe(&mut self, v: f64) {
        let v = if v.is_finite() && v > 0.0 { v } else { 0.0 };
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i] += 1;
        self.sum += v;
        self.count += 1;
    }

    /// Add `other`'s observations (same bounds; a histogram of other bounds is not added).
    pub fn merge(&mut self, other: &Hist) {
        if other.counts.len() != self.counts.len() {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.sum += other.sum;
        self.count += other.count;
    }

    /// `(upper bound, cumulative count)` pairs, ending with `+Inf`.
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        let mut out = Vec::with_capacity(self.counts.len());
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            out.push((self.bounds.get(i).copied().unwrap_or(f64::INFINITY), acc));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_le_and_cumulative() {
        let mut h = Hist::new(Arc::from(vec![1.0, 5.0]));
        for v in [0.5, 1.0, 2.0, 5.0, 9.0, -1.0] {
            h.observe(v);
        }
        assert_eq!(h.cumulative(), vec![(1.0, 3), (5.0, 5), (f64::INFINITY, 6)]);
        assert_eq!(h.count, 6);
        assert_eq!(h.sum, 17.5);
    }
}
