//! Cardinality bomb: 100,000 distinct job descriptions (words without digits, so no rewrite rule
//! folds them) arrive through the event-log path into one application. The exported series must
//! stay bounded by `labels.max_values_per_label`, and
//! `spark_exporter_label_overflow_total{label="job_description"}` must say exactly how many jobs
//! were folded into `__other__`. (RSS before and after: `load-bench bomb`, see BENCHMARKS.md.)

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use spark_exporter::config::Settings;
use spark_exporter::export::families::{collect, SampleLabels, Value};
use spark_exporter::model::Model;
use spark_exporter::model::OTHER;
use spark_exporter::sinks::prometheus;
use spark_exporter::sources::eventlog::apply::LogApp;
use spark_exporter::sources::eventlog::parse_line;
use spark_exporter::telemetry::Telemetry;

const JOBS: u64 = 100_000;
const GROUPS: [&str; 3] = ["adhoc", "exploration", "notebooks"];

const WORDS: [&str; 32] = [
    "orders",
    "customers",
    "revenue",
    "refunds",
    "ledger",
    "invoices",
    "payments",
    "carts",
    "sessions",
    "clicks",
    "ratings",
    "reviews",
    "stock",
    "prices",
    "shipments",
    "returns",
    "vendors",
    "regions",
    "stores",
    "coupons",
    "loyalty",
    "churn",
    "fraud",
    "risk",
    "margin",
    "forecast",
    "budget",
    "payroll",
    "tickets",
    "alerts",
    "devices",
    "sensors",
];

/// A description made of words only, distinct for each `i` below 32^4.
fn description(mut i: u64) -> String {
    let mut w = vec!["Explore"];
    for _ in 0..4 {
        w.push(WORDS[(i % 32) as usize]);
        i /= 32;
    }
    w.join(" ")
}

fn label<'a>(labels: &'a SampleLabels, name: &str) -> &'a str {
    labels.get(name).unwrap_or("")
}

#[test]
fn a_hundred_thousand_descriptions_stay_within_the_cap() {
    let settings = Settings::default();
    let cap = settings.labels.max_values_per_label;
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::with_clock(&settings, telemetry.clone(), Arc::new(|| 1_800_000_000_000));
    let mut app = LogApp::new("local-1800000000000".into());
    let mut feed = |line: String| {
        let ev = parse_line(line.as_bytes())
            .expect("valid line")
            .expect("an event");
        app.apply(
            ev,
            &model.observer(spark_exporter::sources::source("event_log")),
        );
    };
    feed(r#"{"Event":"SparkListenerApplicationStart","App Name":"bomb","App ID":"local-1800000000000","Timestamp":1700000000000,"User":"spark"}"#.into());
    for id in 0..JOBS {
        let group = GROUPS[(id % GROUPS.len() as u64) as usize];
        let desc = description(id);
        assert!(!desc.bytes().any(|b| b.is_ascii_digit()));
        feed(format!(
            r#"{{"Event":"SparkListenerJobStart","Job ID":{id},"Submission Time":1700000000000,"Stage Infos":[],"Stage IDs":[],"Properties":{{"spark.jobGroup.id":"{group}","spark.job.description":"{desc}"}}}}"#
        ));
        feed(format!(
            r#"{{"Event":"SparkListenerJobEnd","Job ID":{id},"Completion Time":1700000001000,"Job Result":{{"Result":"JobSucceeded"}}}}"#
        ));
    }

    // Every description is distinct, so all but the first `cap` are folded.
    let folded = JOBS - cap as u64;
    let overflow = telemetry.snapshot().label_overflow;
    assert_eq!(
        overflow.get("job_description").copied(),
        Some(folded),
        "{overflow:?}"
    );

    let fams = collect(&model);
    let jobs = fams
        .iter()
        .find(|f| f.name == "spark_jobs")
        .expect("spark_jobs");
    // Series per (job_group, status): at most `cap` own descriptions plus `__other__`.
    let mut per_group: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let (mut total, mut in_other) = (0u64, 0u64);
    for s in &jobs.samples {
        let key = (
            label(&s.labels, "job_group").to_string(),
            label(&s.labels, "status").to_string(),
        );
        let desc = label(&s.labels, "job_description").to_string();
        let Value::Int(n) = s.value else {
            panic!("spark_jobs is an integer counter")
        };
        total += n;
        if desc == OTHER {
            in_other += n;
        }
        assert!(
            per_group.entry(key).or_default().insert(desc),
            "duplicate series"
        );
    }
    for (key, descs) in &per_group {
        assert!(descs.len() <= cap + 1, "{key:?} has {} series", descs.len());
    }
    assert!(jobs.samples.len() <= (cap + 1) * GROUPS.len() * 2);
    // Nothing lost: the folded jobs are counted under __other__, exactly as many as the overflow
    // counter says.
    assert_eq!(total, JOBS);
    assert_eq!(in_other, folded);

    // The state behind the series is bounded too: one aggregate per exported key, no job left
    // running.
    model.view(|v| {
        let a = v.apps().next().expect("one application");
        assert!(
            a.group_count() <= (cap + 1) * GROUPS.len(),
            "{}",
            a.group_count()
        );
        assert_eq!(a.running_job_count(), 0);
    });

    let text = prometheus::render(&prometheus::registry(model.clone()), false).expect("renders");
    let line = format!("spark_exporter_label_overflow_total{{label=\"job_description\"}} {folded}");
    assert!(text.lines().any(|l| l == line), "missing {line}");
}
