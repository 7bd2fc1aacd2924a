//! Metric families to OTLP data: a [`Snapshot`] is `collect()` at one instant in OTLP names and
//! attributes; [`Snapshot::resource_metrics`] turns it into the protobuf `ResourceMetrics` of an
//! export request (the official `opentelemetry-proto` types), with deltas against a
//! [`Baseline`] (the last snapshot the collector accepted) when asked.
//!
//! Values are carried over exactly: integer counts stay integers, histogram buckets are the
//! model's buckets (cumulative `le` counts turned into per-bucket counts), seconds become
//! milliseconds only where the receiver's metric is in `ms`, and the model holds milliseconds.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::common::v1::any_value::Value as AttrValue;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumValue;
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint,
    ResourceMetrics, ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource as ProtoResource;

use super::mapping::{self, AttrType, Instrument, Scale};
use crate::config::otlp_env::Resource;
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

/// An attribute: an int where the receiver has ints and the value is a number, else a string.
fn attr(key: &str, t: AttrType, v: &str) -> KeyValue {
    let value = match (t, v.parse::<i64>()) {
        (AttrType::Int, Ok(i)) => AttrValue::IntValue(i),
        _ => AttrValue::StringValue(v.to_string()),
    };
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

/// Unix nanoseconds (0 before the epoch), as OTLP timestamps are.
fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
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
            let (name, unit, instrument, scale, extra, renames) =
                (m.name, m.unit, m.instrument, m.scale, m.extra, m.renames);
            let i = *index.entry(name).or_insert_with(|| {
                metrics.push(MetricSnap {
                    name,
                    description: Cow::Borrowed(f.help),
                    unit,
                    instrument,
                    points: vec![],
                });
                metrics.len() - 1
            });
            let out = &mut metrics[i];
            for s in &f.samples {
                let mut attrs = Vec::with_capacity(s.labels.len() + extra.len());
                let mut key = String::new();
                for (label, v) in s.labels.iter() {
                    let (name, t) = match renames.iter().find(|(l, _)| *l == label) {
                        Some((_, n)) => (*n, AttrType::Str),
                        None => mapping::attribute(label),
                    };
                    attrs.push(attr(name, t, v));
                    key.push_str(name);
                    key.push('=');
                    key.push_str(v);
                    key.push('\u{1f}');
                }
                for (k, v) in extra {
                    attrs.push(attr(k, AttrType::Str, v));
                    key.push_str(k);
                    key.push('=');
                    key.push_str(v);
                    key.push('\u{1f}');
                }
                let value = match instrument {
                    Instrument::Histogram => hist(&s.value).map(PointValue::Hist),
                    i => num(&s.value, i, scale).map(PointValue::Num),
                };
                if let Some(value) = value {
                    out.points.push(Point { attrs, key, value });
                }
            }
        }
        metrics.retain(|m| !m.points.is_empty());
        Snapshot { at, metrics }
    }

    /// The protobuf form of this snapshot: one `ResourceMetrics` with one scope. Cumulative sums
    /// and histograms start at `start` (when the exporter started); with `delta`, counters and
    /// histograms carry the change since `base` (a series absent from `base`, or lower than in
    /// it, starts over from its full value).
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
                name: m.name.to_string(),
                description: m.description.to_string(),
                unit: m.unit.to_string(),
                data: Some(self.data(m, start, delta)),
                ..Default::default()
            })
            .collect();
        ResourceMetrics {
            resource: Some(ProtoResource {
                attributes: resource
                    .iter()
                    .map(|(k, v)| attr(k, AttrType::Str, v))
                    .collect(),
                ..Default::default()
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(scope.clone()),
                metrics,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn data(&self, m: &MetricSnap, start: SystemTime, delta: Option<&Baseline>) -> Data {
        let delta = delta.filter(|_| has_temporality(m.instrument));
        let (temporality, start_time) = match delta {
            Some(b) => (AggregationTemporality::Delta, b.at.unwrap_or(start)),
            None => (AggregationTemporality::Cumulative, start),
        };
        let (start_time, time) = (nanos(start_time), nanos(self.at));
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
                        start_time_unix_nano: start_time,
                        time_unix_nano: time,
                        count: h.count,
                        sum: Some(h.sum),
                        bucket_counts: h.counts,
                        explicit_bounds: h.bounds,
                        ..Default::default()
                    }),
                    PointValue::Num(_) => None,
                })
                .collect();
            return Data::Histogram(Histogram {
                data_points,
                aggregation_temporality: temporality as i32,
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
        // One value type per metric: doubles if any point is a float, else ints (counters
        // clamped at 0 and at i64::MAX, the largest OTLP int).
        let float = nums.iter().any(|(_, n)| matches!(n, Num::F(_)));
        let monotonic = m.instrument == Instrument::Counter;
        let conv = |n: Num| -> NumValue {
            if float {
                return NumValue::AsDouble(n.f());
            }
            NumValue::AsInt(match (n, monotonic) {
                (Num::U(u), _) => i64::try_from(u).unwrap_or(i64::MAX),
                (Num::I(i), true) => i.max(0),
                (Num::I(i), false) => i,
                (Num::F(f), true) => (f as u64).min(i64::MAX as u64) as i64,
                (Num::F(f), false) => f as i64,
            })
        };
        let gauge = m.instrument == Instrument::Gauge;
        let data_points = nums
            .into_iter()
            .map(|(attributes, n)| NumberDataPoint {
                attributes,
                // Gauges have no start time.
                start_time_unix_nano: if gauge { 0 } else { start_time },
                time_unix_nano: time,
                value: Some(conv(n)),
                ..Default::default()
            })
            .collect();
        if gauge {
            Data::Gauge(Gauge { data_points })
        } else {
            Data::Sum(Sum {
                data_points,
                aggregation_temporality: temporality as i32,
                is_monotonic: monotonic,
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
    use std::sync::Arc;
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
            created_ms: 0,
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

    fn data<'a>(rm: &'a ResourceMetrics, name: &str) -> &'a Data {
        let m = rm.scope_metrics[0]
            .metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        m.data
            .as_ref()
            .unwrap_or_else(|| panic!("{name} has no data"))
    }

    /// The sum `name`, whose points must all be ints.
    fn int_sum<'a>(rm: &'a ResourceMetrics, name: &str) -> &'a Sum {
        let Data::Sum(s) = data(rm, name) else {
            panic!("{name} has another type")
        };
        assert!(
            s.data_points
                .iter()
                .all(|p| matches!(p.value, Some(NumValue::AsInt(_)))),
            "{name} has another type"
        );
        s
    }

    fn int(p: &NumberDataPoint) -> i64 {
        match p.value {
            Some(NumValue::AsInt(i)) => i,
            other => panic!("not an int: {other:?}"),
        }
    }

    fn histogram<'a>(rm: &'a ResourceMetrics, name: &str) -> &'a Histogram {
        let Data::Histogram(h) = data(rm, name) else {
            panic!("{name} has another type")
        };
        h
    }

    fn kv(key: &str, v: &str) -> KeyValue {
        attr(key, AttrType::Str, v)
    }

    fn kv_int(key: &str, v: i64) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue {
                value: Some(AttrValue::IntValue(v)),
            }),
            ..Default::default()
        }
    }

    fn scope() -> InstrumentationScope {
        InstrumentationScope {
            name: "t".into(),
            ..Default::default()
        }
    }

    const DELTA: i32 = AggregationTemporality::Delta as i32;
    const CUMULATIVE: i32 = AggregationTemporality::Cumulative as i32;

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
        let rm = snap.resource_metrics(&Resource::default(), &scope(), t0, None);
        let jobs = int_sum(&rm, "spark.job.result");
        assert!(jobs.is_monotonic);
        assert_eq!(jobs.data_points[0].start_time_unix_nano, nanos(t0));
        assert_eq!(int(&jobs.data_points[0]), 4);
        assert_eq!(
            jobs.data_points[0].attributes,
            vec![kv("spark.application.id", "a1"), kv("result", "succeeded")]
        );
        assert_eq!(
            int(&int_sum(&rm, "spark.executor.gc_time").data_points[0]),
            1234,
            "receiver's unit: whole milliseconds"
        );
        let io = int_sum(&rm, "spark.task.io.size");
        assert_eq!(io.data_points.len(), 2);
        assert_eq!(io.data_points[1].attributes[1], kv("direction", "out"));
        let active = int_sum(&rm, "spark.stage.task.active");
        assert!(!active.is_monotonic);
        assert_eq!(
            active.data_points[0].attributes,
            vec![
                kv_int("spark.stage.id", 7),
                kv("spark.stage.attempt.id", "x")
            ],
            "int attributes where the receiver has ints; strings when not a number"
        );
        let h = &histogram(&rm, "spark.job.duration").data_points[0];
        assert_eq!(h.explicit_bounds, vec![1.0, 5.0]);
        assert_eq!(h.bucket_counts, vec![1, 2, 1]);
        assert_eq!((h.count, h.sum), (4, Some(2.5)));
    }

    /// A family names a label otherwise where its meaning differs: a finding's `kind` is not
    /// an error's `error.type`, which an error counter's `kind` stays.
    #[test]
    fn a_family_renames_a_label_of_its_own() {
        let fams = vec![
            fam(
                "spark_diagnosis_findings",
                Kind::Counter,
                vec![sample(&[("app_id", "a1"), ("kind", "skew")], Value::Int(2))],
            ),
            fam(
                "spark_exporter_eventlog_errors",
                Kind::Counter,
                vec![sample(&[("kind", "parse")], Value::Int(1))],
            ),
        ];
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let snap = Snapshot::new(&fams, t0);
        let rm = snap.resource_metrics(&Resource::default(), &scope(), t0, None);
        assert_eq!(
            int_sum(&rm, "spark.diagnosis.findings").data_points[0].attributes,
            vec![
                kv("spark.application.id", "a1"),
                kv("spark.diagnosis.kind", "skew")
            ]
        );
        let errors = snap
            .metrics
            .iter()
            .find(|m| m.name != "spark.diagnosis.findings")
            .unwrap()
            .name;
        assert_eq!(
            int_sum(&rm, errors).data_points[0].attributes,
            vec![kv("error.type", "parse")]
        );
    }

    #[test]
    fn deltas_against_the_baseline_with_resets() {
        let t0 = SystemTime::UNIX_EPOCH;
        let s1 = Snapshot::new(&families(4, 1.0, [1, 3, 4]), t0 + Duration::from_secs(10));
        let base = Baseline::of(&s1);
        let s2 = Snapshot::new(&families(6, 2.5, [2, 5, 7]), t0 + Duration::from_secs(20));
        let rm = s2.resource_metrics(&Resource::default(), &scope(), t0, Some(&base));
        let jobs = int_sum(&rm, "spark.job.result");
        assert_eq!(jobs.aggregation_temporality, DELTA);
        assert_eq!(
            jobs.data_points[0].start_time_unix_nano,
            nanos(t0 + Duration::from_secs(10))
        );
        assert_eq!(int(&jobs.data_points[0]), 2);
        assert_eq!(
            int(&int_sum(&rm, "spark.executor.gc_time").data_points[0]),
            1500
        );
        let active = int_sum(&rm, "spark.stage.task.active");
        assert_eq!(
            active.aggregation_temporality, CUMULATIVE,
            "up-down stays cumulative"
        );
        assert_eq!(int(&active.data_points[0]), 3);
        let h = &histogram(&rm, "spark.job.duration").data_points[0];
        assert_eq!(h.bucket_counts, vec![1, 1, 1]);
        assert_eq!((h.count, h.sum), (3, Some(0.0)));

        // A series that went down (reset) reports its full value.
        let s3 = Snapshot::new(&families(1, 2.5, [2, 5, 7]), t0 + Duration::from_secs(30));
        let rm = s3.resource_metrics(&Resource::default(), &scope(), t0, Some(&Baseline::of(&s2)));
        assert_eq!(int(&int_sum(&rm, "spark.job.result").data_points[0]), 1);
        assert_eq!(
            int(&int_sum(&rm, "spark.executor.gc_time").data_points[0]),
            0
        );

        // First export with delta: no baseline time yet, so the exporter start.
        let rm = s3.resource_metrics(
            &Resource::default(),
            &scope(),
            t0,
            Some(&Baseline::default()),
        );
        let jobs = int_sum(&rm, "spark.job.result");
        assert_eq!(
            (
                jobs.data_points[0].start_time_unix_nano,
                int(&jobs.data_points[0])
            ),
            (nanos(t0), 1)
        );
    }
}
