//! Metric families to OTLP data: a [`Snapshot`] is `collect()` at one instant in OTLP names and
//! attributes; [`Snapshot::resource_metrics`] turns it into the SDK's `ResourceMetrics`, with
//! deltas against a [`Baseline`] (the last snapshot the collector accepted) when asked.
//!
//! Values are carried over exactly: integer counts stay integers, histogram buckets are the
//! model's buckets (cumulative `le` counts turned into per-bucket counts), seconds become
//! milliseconds only where the receiver's metric is in `ms`, and the model holds milliseconds.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::{InstrumentationScope, Key, KeyValue, StringValue, Value as AttrValue};
use opentelemetry_sdk::metrics::data::{
    Aggregation, Gauge, GaugeDataPoint, Histogram, HistogramDataPoint, Metric, ResourceMetrics,
    ScopeMetrics, Sum, SumDataPoint,
};
use opentelemetry_sdk::metrics::Temporality as SdkTemporality;
use opentelemetry_sdk::Resource;

use super::mapping::{self, AttrType, Instrument, Scale};
use crate::export::families::{Family, Value};

/// A number as it goes on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// Unsigned count (counters).
    U(u64),
    /// Signed integer (gauges and up-down counters).
    I(i64),
    /// Float.
    F(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

/// Explicit-bucket histogram: `counts` has one more entry than `bounds` (the `+Inf` bucket).
#[derive(Debug, Clone, PartialEq)]
pub struct Hist {
    /// Upper bounds.
    pub bounds: Vec<f64>,
    /// Count per bucket (not cumulative).
    pub counts: Vec<u64>,
    /// Sum of observations.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
}

/// One point's value.
#[derive(Debug, Clone, PartialEq)]
pub enum PointValue {
    /// Sum or gauge.
    Num(Num),
    /// Histogram.
    Hist(Hist),
}

/// One series at the snapshot instant.
#[derive(Debug, Clone)]
pub struct Point {
    /// Attributes, renamed.
    pub attrs: Vec<KeyValue>,
    /// Identity of the series within its metric (for deltas).
    pub key: String,
    /// Value.
    pub value: PointValue,
}

/// One OTLP metric (one or more families that share a name).
#[derive(Debug, Clone)]
pub struct MetricSnap {
    /// OTLP name.
    pub name: &'static str,
    /// Description (the first family's HELP).
    pub description: Cow<'static, str>,
    /// UCUM unit.
    pub unit: &'static str,
    /// Instrument.
    pub instrument: Instrument,
    /// Points.
    pub points: Vec<Point>,
}

/// The families at one instant, in OTLP form.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When `collect()` ran.
    pub at: SystemTime,
    /// Metrics with at least one point.
    pub metrics: Vec<MetricSnap>,
}

/// Cumulative values of the last accepted snapshot, per (metric, series), for deltas.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    at: Option<SystemTime>,
    values: HashMap<(&'static str, String), PointValue>,
}

impl Baseline {
    /// The counters and histograms of `snap`, as the reference for the next delta.
    pub fn of(snap: &Snapshot) -> Baseline {
        let mut values = HashMap::new();
        for m in snap
            .metrics
            .iter()
            .filter(|m| has_temporality(m.instrument))
        {
            for p in &m.points {
                values.insert((m.name, p.key.clone()), p.value.clone());
            }
        }
        Baseline {
            at: Some(snap.at),
            values,
        }
    }
}

fn has_temporality(i: Instrument) -> bool {
    matches!(i, Instrument::Counter | Instrument::Histogram)
}

fn attr_value(t: AttrType, v: &Arc<str>) -> AttrValue {
    match (t, v.parse::<i64>()) {
        (AttrType::Int, Ok(i)) => AttrValue::I64(i),
        _ => AttrValue::String(StringValue::from(v.clone())),
    }
}

fn num(v: &Value, instrument: Instrument, scale: Scale) -> Option<Num> {
    Some(match (v, instrument, scale) {
        (Value::Hist(..), _, _) => return None,
        (v, _, Scale::SecondsToMillis) => Num::U((v.as_f64() * 1000.0).round().max(0.0) as u64),
        (Value::Int(i), Instrument::Counter, _) => Num::U(*i),
        (Value::Int(i), _, _) => Num::I(i64::try_from(*i).unwrap_or(i64::MAX)),
        (Value::Float(f), _, _) => Num::F(*f),
    })
}

fn hist(v: &Value) -> Option<Hist> {
    let Value::Hist(buckets, sum, count) = v else {
        return None;
    };
    let mut bounds = Vec::with_capacity(buckets.len());
    let mut counts = Vec::with_capacity(buckets.len() + 1);
    let mut prev = 0u64;
    for (le, cum) in buckets {
        if le.is_finite() {
            bounds.push(*le);
        }
        counts.push(cum.saturating_sub(prev));
        prev = *cum;
    }
    // Families end with +Inf; if one ever does not, the rest of the count is the overflow.
    if buckets.last().is_none_or(|(le, _)| le.is_finite()) {
        counts.push(count.saturating_sub(prev));
    }
    Some(Hist {
        bounds,
        counts,
        sum: *sum,
        count: *count,
    })
}

impl Snapshot {
    /// Map `families` (from `collect()` at `at`) to OTLP, each through its catalogue entry.
    pub fn new(families: &[Family], at: SystemTime) -> Snapshot {
        let mut metrics: Vec<MetricSnap> = vec![];
        let mut index: HashMap<&'static str, usize> = HashMap::new();
        for f in families.iter().filter(|f| !f.samples.is_empty()) {
            let m = &f.metric.otlp;
            let i = *index.entry(m.name).or_insert_with(|| {
                metrics.push(MetricSnap {
                    name: m.name,
                    description: Cow::Borrowed(f.help),
                    unit: m.unit,
                    instrument: m.instrument,
                    points: vec![],
                });
                metrics.len() - 1
            });
            let out = &mut metrics[i];
            for s in &f.samples {
                let mut attrs = Vec::with_capacity(s.labels.len() + m.extra.len());
                let mut key = String::new();
                for (label, v) in s.labels.iter() {
                    let (name, t) = mapping::attribute(label);
                    attrs.push(KeyValue::new(Key::from_static_str(name), attr_value(t, v)));
                    key.push_str(name);
                    key.push('=');
                    key.push_str(v);
                    key.push('\u{1f}');
                }
                for (k, v) in m.extra {
                    attrs.push(KeyValue::new(Key::from_static_str(k), *v));
                    key.push_str(k);
                    key.push('=');
                    key.push_str(v);
                    key.push('\u{1f}');
                }
                let value = match m.instrument {
                    Instrument::Histogram => hist(&s.value).map(PointValue::Hist),
                    i => num(&s.value, i, m.scale).map(PointValue::Num),
                };
                if let Some(value) = value {
                    out.points.push(Point { attrs, key, value });
                }
            }
        }
        metrics.retain(|m| !m.points.is_empty());
        Snapshot { at, metrics }
    }

    /// The SDK form of this snapshot. Cumulative sums and histograms start at `start` (when the
    /// exporter started); with `delta`, counters and histograms carry the change since `base`
    /// (a series absent from `base`, or lower than in it, starts over from its full value).
    pub fn resource_metrics(
        &self,
        resource: &Resource,
        scope: &InstrumentationScope,
        start: SystemTime,
        delta: Option<&Baseline>,
    ) -> ResourceMetrics {
        let metrics = self
            .metrics
            .iter()
            .map(|m| Metric {
                name: Cow::Borrowed(m.name),
                description: m.description.clone(),
                unit: Cow::Borrowed(m.unit),
                data: self.data(m, start, delta),
            })
            .collect();
        ResourceMetrics {
            resource: resource.clone(),
            scope_metrics: vec![ScopeMetrics {
                scope: scope.clone(),
                metrics,
            }],
        }
    }

    fn data(
        &self,
        m: &MetricSnap,
        start: SystemTime,
        delta: Option<&Baseline>,
    ) -> Box<dyn Aggregation> {
        let delta = delta.filter(|_| has_temporality(m.instrument));
        let (temporality, start_time) = match delta {
            Some(b) => (SdkTemporality::Delta, b.at.unwrap_or(start)),
            None => (SdkTemporality::Cumulative, start),
        };
        let time = self.at;
        let value = |p: &Point| -> PointValue {
            match delta.and_then(|b| b.values.get(&(m.name, p.key.clone()))) {
                Some(prev) => minus(&p.value, prev),
                None => p.value.clone(),
            }
        };
        if m.instrument == Instrument::Histogram {
            let data_points = m
                .points
                .iter()
                .filter_map(|p| match value(p) {
                    PointValue::Hist(h) => Some(HistogramDataPoint {
                        attributes: p.attrs.clone(),
                        count: h.count,
                        bounds: h.bounds,
                        bucket_counts: h.counts,
                        min: None,
                        max: None,
                        sum: h.sum,
                        exemplars: vec![],
                    }),
                    PointValue::Num(_) => None,
                })
                .collect();
            return Box::new(Histogram::<f64> {
                data_points,
                start_time,
                time,
                temporality,
            });
        }
        let nums: Vec<(Vec<KeyValue>, Num)> = m
            .points
            .iter()
            .filter_map(|p| match value(p) {
                PointValue::Num(n) => Some((p.attrs.clone(), n)),
                PointValue::Hist(_) => None,
            })
            .collect();
        let float = nums.iter().any(|(_, n)| matches!(n, Num::F(_)));
        let monotonic = m.instrument == Instrument::Counter;
        macro_rules! build {
            ($t:ty, $conv:expr) => {{
                let conv = $conv;
                if m.instrument == Instrument::Gauge {
                    Box::new(Gauge::<$t> {
                        data_points: nums
                            .into_iter()
                            .map(|(attributes, n)| GaugeDataPoint {
                                attributes,
                                value: conv(n),
                                exemplars: vec![],
                            })
                            .collect(),
                        start_time: None,
                        time,
                    }) as Box<dyn Aggregation>
                } else {
                    Box::new(Sum::<$t> {
                        data_points: nums
                            .into_iter()
                            .map(|(attributes, n)| SumDataPoint {
                                attributes,
                                value: conv(n),
                                exemplars: vec![],
                            })
                            .collect(),
                        start_time,
                        time,
                        temporality,
                        is_monotonic: monotonic,
                    })
                }
            }};
        }
        if float {
            build!(f64, |n: Num| n.f())
        } else if monotonic {
            build!(u64, |n: Num| match n {
                Num::U(u) => u,
                Num::I(i) => i.max(0) as u64,
                Num::F(f) => f as u64,
            })
        } else {
            build!(i64, |n: Num| match n {
                Num::U(u) => i64::try_from(u).unwrap_or(i64::MAX),
                Num::I(i) => i,
                Num::F(f) => f as i64,
            })
        }
    }
}

/// `cur - prev` for a series, or `cur` when the series went down (a reset: it disappeared and
/// came back, or its source restarted).
fn minus(cur: &PointValue, prev: &PointValue) -> PointValue {
    match (cur, prev) {
        (PointValue::Num(Num::U(c)), PointValue::Num(Num::U(p))) if c >= p => {
            PointValue::Num(Num::U(c - p))
        }
        (PointValue::Num(Num::F(c)), PointValue::Num(Num::F(p))) if c >= p => {
            PointValue::Num(Num::F(c - p))
        }
        (PointValue::Hist(c), PointValue::Hist(p))
            if c.bounds == p.bounds
                && c.count >= p.count
                && c.sum >= p.sum
                && c.counts.iter().zip(&p.counts).all(|(a, b)| a >= b) =>
        {
            PointValue::Hist(Hist {
                bounds: c.bounds.clone(),
                counts: c.counts.iter().zip(&p.counts).map(|(a, b)| a - b).collect(),
                sum: c.sum - p.sum,
                count: c.count - p.count,
            })
        }
        _ => cur.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::families::{Kind, Sample};
    use std::time::Duration;

    fn fam(name: &'static str, kind: Kind, samples: Vec<Sample>) -> Family {
        Family {
            name,
            help: "help",
            kind,
            metric: crate::export::catalogue::lookup(name).expect("a catalogued family"),
            samples,
        }
    }

    fn sample(labels: &[(&'static str, &str)], value: Value) -> Sample {
        Sample {
            labels: labels.iter().map(|(k, v)| (*k, Arc::from(*v))).collect(),
            value,
        }
    }

    fn families(jobs: u64, gc_s: f64, hist_cum: [u64; 3]) -> Vec<Family> {
        vec![
            fam(
                "spark_jobs",
                Kind::Counter,
                vec![sample(
                    &[("app_id", "a1"), ("status", "succeeded")],
                    Value::Int(jobs),
                )],
            ),
            fam(
                "spark_executor_gc_time_seconds",
                Kind::Counter,
                vec![sample(
                    &[("app_id", "a1"), ("executor_id", "1")],
                    Value::Float(gc_s),
                )],
            ),
            fam(
                "spark_task_input_bytes",
                Kind::Counter,
                vec![sample(&[("app_id", "a1")], Value::Int(10))],
            ),
            fam(
                "spark_task_output_bytes",
                Kind::Counter,
                vec![sample(&[("app_id", "a1")], Value::Int(20))],
            ),
            fam(
                "spark_stage_tasks_active",
                Kind::Gauge,
                vec![sample(
                    &[("stage_id", "7"), ("stage_attempt", "x")],
                    Value::Int(3),
                )],
            ),
            fam(
                "spark_job_duration_seconds",
                Kind::Histogram,
                vec![sample(
                    &[("status", "succeeded")],
                    Value::Hist(
                        vec![
                            (1.0, hist_cum[0]),
                            (5.0, hist_cum[1]),
                            (f64::INFINITY, hist_cum[2]),
                        ],
                        2.5,
                        hist_cum[2],
                    ),
                )],
            ),
            fam("spark_sql_executions", Kind::Counter, vec![]),
        ]
    }

    fn get<'a, T: 'static>(rm: &'a ResourceMetrics, name: &str) -> &'a T {
        let m = rm.scope_metrics[0]
            .metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        m.data
            .as_any()
            .downcast_ref::<T>()
            .unwrap_or_else(|| panic!("{name} has another type"))
    }

    #[test]
    fn cumulative_values_names_and_attributes() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let snap = Snapshot::new(&families(4, 1.234, [1, 3, 4]), t0 + Duration::from_secs(5));
        let names: Vec<_> = snap.metrics.iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "spark.job.result",
                "spark.executor.gc_time",
                "spark.task.io.size",
                "spark.stage.task.active",
                "spark.job.duration"
            ],
            "families merge by name; empty ones are left out"
        );
        let rm = snap.resource_metrics(
            &Resource::builder_empty().build(),
            &InstrumentationScope::builder("t").build(),
            t0,
            None,
        );
        let jobs = get::<Sum<u64>>(&rm, "spark.job.result");
        assert!(jobs.is_monotonic);
        assert_eq!(jobs.start_time, t0);
        assert_eq!(jobs.data_points[0].value, 4);
        assert_eq!(
            jobs.data_points[0].attributes,
            vec![
                KeyValue::new("spark.application.id", "a1"),
                KeyValue::new("result", "succeeded")
            ]
        );
        assert_eq!(
            get::<Sum<u64>>(&rm, "spark.executor.gc_time").data_points[0].value,
            1234,
            "receiver's unit: whole milliseconds"
        );
        let io = get::<Sum<u64>>(&rm, "spark.task.io.size");
        assert_eq!(io.data_points.len(), 2);
        assert_eq!(
            io.data_points[1].attributes[1],
            KeyValue::new("direction", "out")
        );
        let active = get::<Sum<i64>>(&rm, "spark.stage.task.active");
        assert!(!active.is_monotonic);
        assert_eq!(
            active.data_points[0].attributes,
            vec![
                KeyValue::new("spark.stage.id", 7i64),
                KeyValue::new("spark.stage.attempt.id", "x")
            ],
            "int attributes where the receiver has ints; strings when not a number"
        );
        let h = &get::<Histogram<f64>>(&rm, "spark.job.duration").data_points[0];
        assert_eq!(h.bounds, vec![1.0, 5.0]);
        assert_eq!(h.bucket_counts, vec![1, 2, 1]);
        assert_eq!((h.count, h.sum), (4, 2.5));
    }

    #[test]
    fn deltas_against_the_baseline_with_resets() {
        let t0 = SystemTime::UNIX_EPOCH;
        let s1 = Snapshot::new(&families(4, 1.0, [1, 3, 4]), t0 + Duration::from_secs(10));
        let base = Baseline::of(&s1);
        let s2 = Snapshot::new(&families(6, 2.5, [2, 5, 7]), t0 + Duration::from_secs(20));
        let rm = s2.resource_metrics(
            &Resource::builder_empty().build(),
            &InstrumentationScope::builder("t").build(),
            t0,
            Some(&base),
        );
        let jobs = get::<Sum<u64>>(&rm, "spark.job.result");
        assert_eq!(jobs.temporality, SdkTemporality::Delta);
        assert_eq!(jobs.start_time, t0 + Duration::from_secs(10));
        assert_eq!(jobs.data_points[0].value, 2);
        assert_eq!(
            get::<Sum<u64>>(&rm, "spark.executor.gc_time").data_points[0].value,
            1500
        );
        let active = get::<Sum<i64>>(&rm, "spark.stage.task.active");
        assert_eq!(
            active.temporality,
            SdkTemporality::Cumulative,
            "up-down stays cumulative"
        );
        assert_eq!(active.data_points[0].value, 3);
        let h = &get::<Histogram<f64>>(&rm, "spark.job.duration").data_points[0];
        assert_eq!(h.bucket_counts, vec![1, 1, 1]);
        assert_eq!((h.count, h.sum), (3, 0.0));

        // A series that went down (reset) reports its full value.
        let s3 = Snapshot::new(&families(1, 2.5, [2, 5, 7]), t0 + Duration::from_secs(30));
        let rm = s3.resource_metrics(
            &Resource::builder_empty().build(),
            &InstrumentationScope::builder("t").build(),
            t0,
            Some(&Baseline::of(&s2)),
        );
        assert_eq!(
            get::<Sum<u64>>(&rm, "spark.job.result").data_points[0].value,
            1
        );
        assert_eq!(
            get::<Sum<u64>>(&rm, "spark.executor.gc_time").data_points[0].value,
            0
        );

        // First export with delta: no baseline time yet, so the exporter start.
        let rm = s3.resource_metrics(
            &Resource::builder_empty().build(),
            &InstrumentationScope::builder("t").build(),
            t0,
            Some(&Baseline::default()),
        );
        let jobs = get::<Sum<u64>>(&rm, "spark.job.result");
        assert_eq!((jobs.start_time, jobs.data_points[0].value), (t0, 1));
    }
}
