//! The metric catalogue as users depend on it: stable families and labels never disappear
//! without a deprecation entry, a new metric needs nothing but its catalogue entry to appear
//! in every output, and a family whose series span applications (the plan fingerprint) has one
//! series per application name, as do the last run's gauges and the run-cost histogram.

use std::collections::BTreeSet;
use std::sync::Arc;

use spark_exporter::config::{AggregateBy, Settings};
use spark_exporter::export::catalogue::{
    Instrument, Metric, Scope, Stability, CATALOGUE, DEPRECATED,
};
use std::time::SystemTime;

use opentelemetry_proto::tonic::common::v1::any_value::Value as AttrValue;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumValue;
use spark_exporter::config::otlp_env::Resource;
use spark_exporter::export::families::{collect_from, Kind, Value};
use spark_exporter::export::read::per_app;
use spark_exporter::model::plan::PlanSummary;
use spark_exporter::model::{AppObs, ExecutorObs, Model, Observer, SqlObs, SqlPlanObs, SqlStatus};
use spark_exporter::sinks::otlp::convert::Snapshot;
use spark_exporter::sinks::prometheus::write_families;
use spark_exporter::telemetry::Telemetry;

const STABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stable-metrics.txt");

/// `tests/data/stable-metrics.txt`: one stable family a line, `name label,label,...`.
fn recorded() -> Vec<(String, BTreeSet<String>)> {
    std::fs::read_to_string(STABLE)
        .expect("tests/data/stable-metrics.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, labels) = l.split_once(' ').unwrap_or((l, ""));
            let labels = labels
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from);
            (name.to_string(), labels.collect())
        })
        .collect()
}

fn line(m: &Metric) -> String {
    format!(
        "{} {}",
        m.prometheus_name(),
        m.label_names().collect::<Vec<_>>().join(",")
    )
}

#[test]
fn stable_metrics_and_labels_are_never_dropped_without_a_deprecation() {
    let mut errors = vec![];
    for (name, labels) in recorded() {
        let deprecated = |label: Option<&str>| {
            DEPRECATED
                .iter()
                .any(|d| d.name == name && (d.label.is_none() || d.label == label))
        };
        let Some(m) = CATALOGUE.iter().find(|m| m.prometheus_name() == name) else {
            if !deprecated(None) {
                errors.push(format!("stable {name} is gone with no entry in DEPRECATED"));
            }
            continue;
        };
        if m.stability != Stability::Stable && !deprecated(None) {
            errors.push(format!(
                "stable {name} became {:?} with no entry in DEPRECATED",
                m.stability
            ));
        }
        let now: BTreeSet<&str> = m.label_names().collect();
        for l in &labels {
            if !now.contains(l.as_str()) && !deprecated(Some(l)) {
                errors.push(format!(
                    "stable {name} lost its label {l} with no entry in DEPRECATED"
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn every_stable_metric_is_recorded_as_stable() {
    let recorded: BTreeSet<String> = recorded().into_iter().map(|(n, _)| n).collect();
    let missing: Vec<String> = CATALOGUE
        .iter()
        .filter(|m| m.stability == Stability::Stable && !recorded.contains(&m.prometheus_name()))
        .map(line)
        .collect();
    assert!(
        missing.is_empty(),
        "stable metrics missing from tests/data/stable-metrics.txt (append these lines; from then \
         on they may only change through catalogue::DEPRECATED):\n{}",
        missing.join("\n")
    );
}

/// A metric that exists only in this test: one entry, nothing else.
static EXAMPLE: Metric = Metric::new(
    "spark_example_widgets",
    Kind::Counter,
    Scope::App,
    "Widgets made by the application (a test-only example).",
    "spark.example.widgets",
    "{widget}",
    Instrument::Counter,
    |c, o| per_app(c, o, |a| Some((a.base.clone(), Value::Int(42)))),
)
.experimental("0.2.0");

fn model_with_one_app() -> Arc<Model> {
    let model = Model::new(&Settings::default(), Arc::new(Telemetry::default()));
    model
        .observer(spark_exporter::sources::source("rest"))
        .upsert_app(&AppObs {
            app_id: "app-1".into(),
            name: Some("example".into()),
            ..Default::default()
        });
    model
}

#[test]
fn a_metric_added_to_the_catalogue_alone_appears_in_prometheus_openmetrics_and_otlp() {
    let model = model_with_one_app();
    let families = collect_from(&model, CATALOGUE.iter().chain([&EXAMPLE]));
    let render = |om: bool| {
        let mut out = vec![];
        write_families(&families, om, &mut out).expect("renders");
        String::from_utf8(out).expect("UTF-8")
    };
    let sample = "spark_example_widgets_total{app_id=\"app-1\",app_name=\"example\"} 42\n";
    let om = render(true);
    assert!(
        om.contains(&format!(
            "# HELP spark_example_widgets Widgets made by the application (a test-only example).\n\
         # TYPE spark_example_widgets counter\n{sample}"
        )),
        "{om}"
    );
    let classic = render(false);
    assert!(classic.contains(&format!(
        "# HELP spark_example_widgets_total Widgets made by the application (a test-only example).\n\
         # TYPE spark_example_widgets_total counter\n{sample}"
    )), "{classic}");

    // OTLP: the same families, through the entry's OTLP name, unit and instrument.
    let snap = Snapshot::new(&families, SystemTime::now());
    let rm = snap.resource_metrics(
        &Resource::default(),
        &InstrumentationScope::default(),
        SystemTime::UNIX_EPOCH,
        None,
    );
    let metric = rm.scope_metrics[0]
        .metrics
        .iter()
        .find(|m| m.name == "spark.example.widgets")
        .expect("the example metric is exported over OTLP");
    assert_eq!(metric.unit, "{widget}");
    let Some(Data::Sum(sum)) = &metric.data else {
        panic!("a counter is an OTLP sum: {metric:?}")
    };
    assert!(sum.is_monotonic);
    let point = &sum.data_points[0];
    assert_eq!(point.value, Some(NumValue::AsInt(42)));
    let attrs: Vec<(String, String)> = point
        .attributes
        .iter()
        .map(|kv| {
            let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(AttrValue::StringValue(s)) => s.clone(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), v)
        })
        .collect();
    assert_eq!(
        attrs,
        [
            ("spark.application.id".to_string(), "app-1".to_string()),
            ("spark.application.name".to_string(), "example".to_string())
        ]
    );
}

/// The label names of one sample line of OpenMetrics text (`le` dropped).
fn sample_labels(line: &str) -> (String, Vec<String>) {
    let (name, rest) = line
        .split_once('{')
        .unwrap_or((line.split(' ').next().unwrap_or(""), ""));
    let mut labels = vec![];
    let mut rest = rest;
    // Label values are quoted and may hold escaped quotes, commas and braces.
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim_start_matches(',').to_string();
        let mut i = eq + 2;
        let b = rest.as_bytes();
        while i < b.len() && b[i] != b'"' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        rest = &rest[i + 1..];
        if key != "le" {
            labels.push(key);
        }
    }
    (name.to_string(), labels)
}

#[test]
fn declared_labels_are_the_labels_every_golden_sample_carries() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");
    let mut seen = BTreeSet::new();
    for sub in ["eventlog", "rest"] {
        for e in std::fs::read_dir(format!("{dir}/{sub}")).expect("golden files") {
            let path = e.expect("entry").path();
            if path.extension().and_then(|x| x.to_str()) != Some("om") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("golden file");
            for l in text.lines().filter(|l| !l.starts_with('#')) {
                let (sample, labels) = sample_labels(l);
                let m = CATALOGUE
                    .iter()
                    .find(|m| {
                        let base = m.prometheus_name();
                        [
                            base.clone(),
                            format!("{}_sum", m.name),
                            format!("{}_count", m.name),
                            format!("{}_bucket", m.name),
                        ]
                        .contains(&sample)
                            && (m.kind == Kind::Histogram) == (sample != base)
                    })
                    .unwrap_or_else(|| {
                        panic!("{}: no catalogue entry for {sample}", path.display())
                    });
                let want: Vec<&str> = m.label_names().collect();
                assert_eq!(labels, want, "{}: {l}", path.display());
                seen.insert(m.name);
            }
        }
    }
    assert!(seen.len() > 40, "only {} families seen", seen.len());
}

/// `spark_sql_plan_fingerprint` has no `app_id`: one series per application name, job group and
/// description, the latest run's (by end time), whether the model holds each run
/// (`model.aggregate_by: app_id`, the exposition picks the latest) or a state per name (the
/// model folds the runs; see `crates/core/src/model/plan_tests.rs`).
#[test]
fn the_plan_fingerprint_is_one_series_per_name_the_latest_runs() {
    for aggregate_by in [AggregateBy::AppId, AggregateBy::AppName] {
        let mut s = Settings::default();
        s.model.aggregate_by = aggregate_by;
        let model = Model::with_clock(&s, Arc::new(Telemetry::default()), Arc::new(|| 1_000_000));
        let rest = model.observer(spark_exporter::sources::source("rest"));
        let ended = |id: u64, end: i64| SqlObs {
            execution_id: id,
            description: Some("load".into()),
            status: SqlStatus::Completed,
            submission_ms: Some(end - 10),
            duration_ms: Some(10),
            job_ids: vec![],
        };
        // Three runs of "nightly" and one of "other", the same description in each.
        for (app, name, end, fp) in [
            ("run-1", "nightly", 100, 11),
            ("run-3", "nightly", 300, 33),
            ("run-2", "nightly", 200, 22),
            ("x-1", "other", 400, 44),
        ] {
            rest.upsert_app(&AppObs {
                app_id: app.into(),
                name: Some(name.into()),
                ..Default::default()
            });
            rest.upsert_sql(app, &ended(1, end));
            let plan = PlanSummary {
                joins: [0, 1, 0, 0, 0, 0],
                exchanges: [2, 0],
                fingerprint: fp,
                ..Default::default()
            };
            rest.sql_plan(
                app,
                &SqlPlanObs {
                    execution_id: 1,
                    plan,
                },
            );
        }
        // A later execution without a plan yet changes nothing.
        rest.upsert_sql("run-3", &ended(2, 500));
        let families = collect_from(&model, CATALOGUE.iter());
        let fam = families
            .iter()
            .find(|f| f.name == "spark_sql_plan_fingerprint")
            .expect("the family");
        let samples: Vec<(String, f64)> = fam
            .samples
            .iter()
            .map(|s| {
                let l: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (l.join(","), s.value.as_f64())
            })
            .collect();
        assert_eq!(
            samples,
            [
                (
                    "app_name=nightly,job_group=,description=load".to_string(),
                    33.0
                ),
                (
                    "app_name=other,job_group=,description=load".to_string(),
                    44.0
                ),
            ],
            "{aggregate_by:?}"
        );
    }
}

/// By name, the last run's gauges show the run that ended last, and the run-cost and
/// run-duration histograms have one observation per run, on bounds 2^(1/4) apart (as Prometheus
/// text, exactly).
#[test]
fn the_last_run_and_the_run_cost_histogram_are_one_series_per_name() {
    let mut s = Settings::default();
    s.model.aggregate_by = AggregateBy::AppName;
    let t0 = 1_700_000_000_000;
    let model = Model::with_clock(&s, Arc::new(Telemetry::default()), Arc::new(move || t0));
    let log = model.observer(spark_exporter::sources::source("event_log"));
    // Two runs of "nightly", after the exporter started: 60 s × 2 cores, then 90 s × 3 cores.
    for (id, start, secs, cores) in [("r1", 1_000, 60, 2), ("r2", 100_000, 90, 3)] {
        let start = t0 + start;
        let end = start + secs * 1000;
        log.upsert_app(&AppObs {
            app_id: id.into(),
            name: Some("nightly".into()),
            start_ms: Some(start),
            ..Default::default()
        });
        log.upsert_executor(
            id,
            &ExecutorObs {
                executor_id: "1".into(),
                active: Some(true),
                add_ms: Some(start),
                total_cores: Some(cores),
                ..Default::default()
            },
        );
        log.upsert_app(&AppObs {
            app_id: id.into(),
            end_ms: Some(end),
            exit_code: Some(0),
            ..Default::default()
        });
        log.app_delivered(id);
    }
    let families = collect_from(&model, CATALOGUE.iter());
    let mut out = vec![];
    write_families(&families, false, &mut out).expect("renders");
    let text = String::from_utf8(out).expect("UTF-8");
    for line in [
        "spark_app_last_run_duration_seconds{app_name=\"nightly\"} 90.0\n",
        "spark_app_last_run_core_seconds{app_name=\"nightly\"} 270.0\n",
        "spark_app_last_run_end_timestamp_seconds{app_name=\"nightly\"} 1700000190.0\n",
        // 120 core-seconds in (2^6.75, 2^7], 270 in (2^8, 2^8.25].
        "spark_app_run_core_seconds_bucket{le=\"107.63474115247546\",app_name=\"nightly\"} 0\n",
        "spark_app_run_core_seconds_bucket{le=\"128.0\",app_name=\"nightly\"} 1\n",
        "spark_app_run_core_seconds_bucket{le=\"256.0\",app_name=\"nightly\"} 1\n",
        "spark_app_run_core_seconds_bucket{le=\"304.4370214406966\",app_name=\"nightly\"} 2\n",
        "spark_app_run_core_seconds_bucket{le=\"+Inf\",app_name=\"nightly\"} 2\n",
        "spark_app_run_core_seconds_sum{app_name=\"nightly\"} 390.0\n",
        "spark_app_run_core_seconds_count{app_name=\"nightly\"} 2\n",
        // The run durations, 60 and 90 s, on the same bounds.
        "spark_app_run_duration_seconds_bucket{le=\"53.81737057623773\",app_name=\"nightly\"} 0\n",
        "spark_app_run_duration_seconds_bucket{le=\"64.0\",app_name=\"nightly\"} 1\n",
        "spark_app_run_duration_seconds_bucket{le=\"90.50966799187809\",app_name=\"nightly\"} 2\n",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    for h in [
        "spark_app_run_core_seconds",
        "spark_app_run_duration_seconds",
    ] {
        let buckets = text
            .lines()
            .filter(|l| l.starts_with(&format!("{h}_bucket{{")))
            .count();
        assert_eq!(buckets, 95, "{h}: 94 bounds and +Inf");
    }
}

/// The diagnosis families name no diagnose kind in their help or documentation: the kinds are
/// the `kind` label's values, which come from the rule registry (`FINDING_KINDS`,
/// `WINDOW_FINDING_KINDS`), so a new rule needs no edit here (issue 53).
#[test]
fn diagnosis_help_texts_list_no_kind_by_hand() {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect()
    };
    for m in CATALOGUE
        .iter()
        .filter(|m| m.name.starts_with("spark_diagnosis_"))
    {
        let text = words(&format!("{} {}", m.help, m.doc));
        for kind in spark_exporter::diagnose::rules::Kind::ALL {
            assert!(
                !text.iter().any(|w| w == kind.as_str()),
                "{} names the kind {} by hand",
                m.name,
                kind.as_str()
            );
        }
    }
}
