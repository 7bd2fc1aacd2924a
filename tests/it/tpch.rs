//! The 22 TPC-H queries of a real Spark 4.1.1 run (`tests/data/tpch-4.1.1`, written by
//! `scripts/tpch-fixture.sh`), each under its own job group, `q01` … `q22`, described `TPC-H
//! Q1` … `TPC-H Q22` (issue 49: the default rewrite rules folded them into one series,
//! `q{n}` / `TPC-H Q{n}`, and `diagnose` then saw 16 plan shapes of one query).
//!
//! At the default settings, from the event log and from the REST snapshot replayed, the
//! exporter's jobs, stage attempts and tasks per job group and status are Spark's own REST
//! numbers, 22 groups; and `diagnose` finds no plan change, at the default rules and under the
//! previous defaults that fold the 22 into one label (a query is its raw group and
//! description, not its label).

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use spark_exporter::config::Settings;
use spark_exporter::diagnose::report::Kind;
use spark_exporter::diagnose::{diagnose, Request};
use support::command::exporter_command;
use support::exposition::parse_exposition;
use support::rest::{AppData, FakeSpark};

/// `(job_group, status)` -> count.
type Series = BTreeMap<(String, String), f64>;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tpch-4.1.1")
}

fn meta() -> Value {
    let p = fixture().join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(&p).expect("meta.json")).expect("json")
}

fn rest_dir() -> PathBuf {
    let id = meta()["app_id"].as_str().expect("app_id").to_string();
    fixture().join("rest").join(id)
}

fn lower(v: &Value) -> String {
    v.as_str().unwrap_or("").to_ascii_lowercase()
}

/// Spark's numbers from its REST snapshot: jobs, stage attempts and tasks per job group (as
/// Spark gave it, unrewritten) and status; a stage belongs to the lowest job that lists it.
fn truth() -> (Series, Series, Series) {
    let d = AppData::from_dir(rest_dir().to_str().unwrap());
    let (mut jobs, mut stages, mut tasks) = (Series::new(), Series::new(), Series::new());
    let mut by_stage: BTreeMap<u64, String> = BTreeMap::new();
    let mut sorted: Vec<&Value> = d.jobs.iter().collect();
    sorted.sort_by_key(|j| j["jobId"].as_u64());
    for j in sorted {
        let g = j["jobGroup"]
            .as_str()
            .expect("every job has a group")
            .to_string();
        *jobs.entry((g.clone(), lower(&j["status"]))).or_default() += 1.0;
        for s in j["stageIds"].as_array().into_iter().flatten() {
            by_stage
                .entry(s.as_u64().unwrap())
                .or_insert_with(|| g.clone());
        }
    }
    for s in &d.stages {
        let g = by_stage[&s["stageId"].as_u64().unwrap()].clone();
        *stages.entry((g.clone(), lower(&s["status"]))).or_default() += 1.0;
        for (field, status) in [
            ("numCompleteTasks", "succeeded"),
            ("numFailedTasks", "failed"),
            ("numKilledTasks", "killed"),
        ] {
            let n = s[field].as_f64().unwrap_or(0.0);
            if n > 0.0 {
                *tasks.entry((g.clone(), status.into())).or_default() += n;
            }
        }
    }
    (jobs, stages, tasks)
}

/// The exporter's samples of `family`, per `job_group` and `status`, zeros left out.
fn got(text: &str, family: &str) -> Series {
    let mut out = Series::new();
    for s in parse_exposition(text)
        .into_iter()
        .filter(|s| s.name == family && s.value != 0.0)
    {
        *out.entry((
            s.label("job_group").to_string(),
            s.label("status").to_string(),
        ))
        .or_default() += s.value;
    }
    out
}

fn dump(args: &[&str]) -> String {
    let out = exporter_command(args, Duration::from_secs(120));
    assert!(out.status.success(), "dump {args:?}: {}", out.stderr);
    out.stdout
}

/// What `text` gets wrong against Spark's REST numbers and the workload's own groups.
fn check(what: &str, text: &str) {
    let (jobs, stages, tasks) = truth();
    let want_groups: BTreeSet<String> = (1..=22).map(|i| format!("q{i:02}")).collect();
    let groups: BTreeSet<String> = jobs.keys().map(|(g, _)| g.clone()).collect();
    assert_eq!(groups, want_groups, "the snapshot's groups");
    assert_eq!(got(text, "spark_jobs_total"), jobs, "{what}: jobs");
    assert_eq!(got(text, "spark_stages_total"), stages, "{what}: stages");
    assert_eq!(got(text, "spark_tasks_total"), tasks, "{what}: tasks");
    // Each group keeps its description, as Spark gave it.
    let described: BTreeSet<(String, String)> = parse_exposition(text)
        .into_iter()
        .filter(|s| s.name == "spark_jobs_total")
        .map(|s| {
            (
                s.label("job_group").to_string(),
                s.label("job_description").to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = (1..=22)
        .map(|i| (format!("q{i:02}"), format!("TPC-H Q{i}")))
        .collect();
    assert_eq!(described, want, "{what}: groups and descriptions");
}

#[test]
fn twenty_two_groups_from_the_event_log_each_equal_to_spark() {
    let log = fixture().join("eventlog");
    let text = dump(&["dump", "--spark.url=", "--event-log", log.to_str().unwrap()]);
    check("event log", &text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_two_groups_from_rest_each_equal_to_spark() {
    let server = FakeSpark::start(vec![AppData::from_dir(rest_dir().to_str().unwrap())]).await;
    let url = server.url.clone();
    let text = tokio::task::spawn_blocking(move || dump(&["dump", "--spark.url", url.as_str()]))
        .await
        .expect("dump");
    check("REST replay", &text);
}

/// No plan change across 22 different queries: at the default rules (22 labels), and under the
/// previous defaults, which fold them into one label (`q{n}` / `TPC-H Q{n}`), since a query is
/// its raw group and description.
#[tokio::test]
async fn different_queries_are_no_plan_change_even_under_one_label() {
    let req = Request {
        event_logs: vec![fixture().join("eventlog").to_string_lossy().into_owned()],
        ..Request::default()
    };
    let mut folded = Settings::default();
    folded.labels.rewrite_rules = spark_exporter::config::previous_default_rewrite_rules();
    for (what, settings) in [("default rules", Settings::default()), ("folded", folded)] {
        let r = diagnose(&settings, &req).await.expect("diagnose");
        let a = &r.applications[0];
        // The workload's last SQL execution, a `SET` command outside the 22 groups (its REST
        // sentinel), is left out: only the queries are compared here.
        let changes: Vec<_> = a
            .findings
            .iter()
            .filter(|f| f.kind == Kind::PlanChange)
            .filter(|f| {
                f.at.job_group
                    .as_deref()
                    .is_some_and(|g| g.starts_with('q'))
            })
            .collect();
        assert!(changes.is_empty(), "{what}: {changes:#?}");
        let groups: BTreeSet<&str> = a
            .bottlenecks
            .iter()
            .filter_map(|b| b.at.job_group.as_deref())
            .collect();
        if what == "folded" {
            assert!(groups.iter().all(|g| *g == "q{n}"), "{what}: {groups:?}");
        } else {
            assert!(
                groups.len() > 1 && groups.iter().all(|g| g.len() == 3 && g.starts_with('q')),
                "{what}: {groups:?}"
            );
        }
    }
}
