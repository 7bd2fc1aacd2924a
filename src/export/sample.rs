//! The neutral form of exported data: typed samples with shared label sets, as every output
//! (Prometheus text, OpenMetrics, OTLP) renders them.

use std::sync::Arc;

/// Metric type, as Prometheus knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Monotonic; the Prometheus name gets `_total`.
    Counter,
    /// Point-in-time value.
    Gauge,
    /// Cumulative buckets, sum and count.
    Histogram,
    /// Constant 1 with descriptive labels; the Prometheus name gets `_info`.
    Info,
}

impl Kind {
    /// The type word of the classic text format and of the `docs/metrics.md` table.
    pub fn classic_type(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge | Kind::Info => "gauge",
            Kind::Histogram => "histogram",
        }
    }
    /// The type word of OpenMetrics.
    pub fn openmetrics_type(self) -> &'static str {
        match self {
            Kind::Info => "info",
            k => k.classic_type(),
        }
    }
    /// The suffix samples (and the classic format's family name) add to the family name.
    pub fn suffix(self) -> &'static str {
        match self {
            Kind::Counter => "_total",
            Kind::Info => "_info",
            Kind::Gauge | Kind::Histogram => "",
        }
    }
}

/// A sample's value.
#[derive(Debug, Clone)]
pub enum Value {
    /// Integer (counts, bytes).
    Int(u64),
    /// Float (seconds, ratios).
    Float(f64),
    /// Histogram: `(upper bound, cumulative count)` ending with `+Inf`, sum, count.
    Hist(Vec<(f64, u64)>, f64, u64),
}

impl Value {
    /// As a float (histograms give their count).
    pub fn as_f64(&self) -> f64 {
        match self {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Hist(_, _, c) => *c as f64,
        }
    }
}

/// Label pairs of one sample. Shared: the many families of one job group or executor hold the
/// same set, allocated once per export.
pub type Labels = Arc<[(&'static str, Arc<str>)]>;

/// `l` followed by `extra`.
pub fn plus(l: &[(&'static str, Arc<str>)], extra: &[(&'static str, Arc<str>)]) -> Labels {
    l.iter().chain(extra).cloned().collect()
}

/// `l` followed by one more pair.
pub fn plus1(l: &[(&'static str, Arc<str>)], k: &'static str, v: &str) -> Labels {
    plus(l, &[(k, Arc::from(v))])
}

/// One series.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Labels, in a fixed order.
    pub labels: Labels,
    /// Value.
    pub value: Value,
    /// When the series started counting (epoch ms; 0 if unknown): the OpenMetrics `_created`
    /// of counters and histograms.
    pub created_ms: i64,
}
