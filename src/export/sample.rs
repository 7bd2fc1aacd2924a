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

/// A sample's labels: a shared set, and maybe one pair more whose value is a fixed word (a
/// status, a locality level), so the many samples that differ from their job group's set only
/// by that word allocate nothing (a 1,000-application render built 88,000 sets for it).
#[derive(Debug, Clone)]
pub struct SampleLabels {
    set: Labels,
    extra: Option<(&'static str, &'static str)>,
}

impl SampleLabels {
    /// `set` followed by `key="value"`.
    pub fn with(set: &Labels, key: &'static str, value: &'static str) -> SampleLabels {
        SampleLabels {
            set: set.clone(),
            extra: Some((key, value)),
        }
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.set.iter().map(|(k, v)| (*k, &**v)).chain(self.extra)
    }

    /// How many pairs.
    pub fn len(&self) -> usize {
        self.set.len() + usize::from(self.extra.is_some())
    }

    /// No pairs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of label `key`, if the sample has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl<const N: usize> From<[(&'static str, Arc<str>); N]> for SampleLabels {
    fn from(pairs: [(&'static str, Arc<str>); N]) -> SampleLabels {
        SampleLabels::from(Labels::from(pairs))
    }
}

impl FromIterator<(&'static str, Arc<str>)> for SampleLabels {
    fn from_iter<I: IntoIterator<Item = (&'static str, Arc<str>)>>(pairs: I) -> SampleLabels {
        SampleLabels::from(pairs.into_iter().collect::<Labels>())
    }
}

impl From<Labels> for SampleLabels {
    fn from(set: Labels) -> SampleLabels {
        SampleLabels { set, extra: None }
    }
}

/// One series.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Labels, in a fixed order.
    pub labels: SampleLabels,
    /// Value.
    pub value: Value,
    /// When the series started counting (epoch ms; 0 if unknown): the OpenMetrics `_created`
    /// of counters and histograms.
    pub created_ms: i64,
}
