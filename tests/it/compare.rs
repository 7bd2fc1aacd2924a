//! `diagnose --compare` (issue 52) on real runs: the comparison fixture
//! (`tests/data/compare-4.1.1`, `scripts/compare-fixture.sh`), three runs of one application:
//! `base`, `aqe_off` (`spark.sql.adaptive.enabled=false` for the whole application) and
//! `one_exec` (one executor instead of two).
//!
//! - adaptive execution off: the setting first among the settings, the job groups whose task
//!   count grew and by how much, the plan changes;
//! - one executor: the executor count and the core-seconds held;
//! - a run against itself: no change;
//! - over the folder, `previous`: the median of the name's earlier runs, the closest named;
//! - runs of two applications are refused without `--force`; the JSON validates against the
//!   committed schema; the page has its chart.

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use support::command::exporter_command;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare-4.1.1")
}

fn log(run: &str) -> String {
    dir()
        .join("eventlog")
        .join(run)
        .to_string_lossy()
        .into_owned()
}

fn id(run: &str) -> String {
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("meta.json")).unwrap()).unwrap();
    meta["runs"][run].as_str().unwrap().to_string()
}

fn diagnose(args: &[&str]) -> support::command::Output {
    let mut a = vec!["diagnose"];
    a.extend_from_slice(args);
    exporter_command(&a, Duration::from_secs(120))
}

/// `run` against `baseline` as JSON (validated against the schema).
fn compare(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let out = diagnose(&a);
    assert!(out.status.success(), "{args:?}: {}", out.stderr);
    support::spark::assert_valid(
        "schemas/diagnose-compare.v1.schema.json",
        &out.stdout,
        "the comparison",
    );
    serde_json::from_str(&out.stdout).expect("json")
}

fn strs<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn adaptive_execution_off_is_named_with_the_tasks_it_added_and_the_plans() {
    let c = compare(&["--event-log", &log("aqe_off"), "--compare", &log("base")]);
    assert_eq!(c["unchanged"], false);
    assert_eq!(c["baseline"]["closest"], id("base").as_str());
    // The setting first among the settings, its default standing for the baseline's.
    let s = &c["settings"][0];
    assert_eq!(
        s["key"], "spark.sql.adaptive.enabled",
        "{:#}",
        c["settings"]
    );
    assert_eq!(
        (s["baseline"].clone(), s["run"].clone()),
        (Value::Null, "false".into())
    );
    assert_eq!(s["default"], "true");
    // Without adaptive execution's coalescing, the joins' groups run more tasks: by how many.
    let groups = c["groups"].as_array().unwrap();
    let grew: Vec<(&str, f64, f64)> = groups
        .iter()
        .filter(|g| g["tasks"]["change"].as_f64().unwrap() > 0.0)
        .map(|g| {
            let t = &g["tasks"];
            (
                g["job_group"].as_str().unwrap(),
                t["baseline"].as_f64().unwrap(),
                t["run"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(
        grew.iter().any(|(g, a, b)| *g == "join_smj" && b > a),
        "{grew:?}"
    );
    // tiny_partitions had adaptive execution off in both runs (its own session setting): the
    // same 816 tasks.
    assert!(groups.iter().all(|g| g["job_group"] != "tiny_partitions"));
    // The plan changes: every execution that ran adaptively in the baseline, and the skew
    // join's split gone.
    let plans = c["plans"].as_array().unwrap();
    let skew = plans
        .iter()
        .find(|p| p["job_group"] == "skew_join")
        .expect("the skew join's plan");
    let what: Vec<&str> = skew["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(what.contains(&"adaptive execution on -> off"), "{what:?}");
    assert!(what.contains(&"skew-split joins 1 -> 0"), "{what:?}");
    assert!(plans.iter().all(|p| p["job_group"] != "tiny_partitions"));
    // The text: the short ranked list first, the settings after it.
    let t = diagnose(&["--event-log", &log("aqe_off"), "--compare", &log("base")]).stdout;
    let ranked = t.find("Ranked by share").expect("the ranked list");
    let settings = t
        .find("spark.sql.adaptive.enabled (application): true (default) -> false")
        .expect("the setting");
    assert!(ranked < settings, "{t}");
}

#[test]
fn one_executor_instead_of_two_is_named_with_the_cores_held() {
    let c = compare(&["--event-log", &log("one_exec"), "--compare", &log("base")]);
    let cap = c["capacity"].as_array().unwrap();
    let by = |m: &str| cap.iter().find(|x| x["measure"] == m).cloned();
    let e = by("executors").expect("the executor count");
    assert_eq!(
        (e["baseline"].as_f64(), e["run"].as_f64()),
        (Some(2.0), Some(1.0))
    );
    let held = by("core_seconds").expect("the core-seconds held");
    assert!(held["run"].as_f64() < held["baseline"].as_f64(), "{held}");
    assert!(strs(&c["settings"], "key").contains(&"spark.master"));
}

#[test]
fn a_run_against_itself_has_no_change() {
    let c = compare(&["--event-log", &log("base"), "--compare", &log("base")]);
    assert_eq!(c["unchanged"], true, "{c:#}");
    for list in [
        "ranked", "settings", "plans", "groups", "added", "gone", "capacity",
    ] {
        assert_eq!(c[list].as_array().unwrap().len(), 0, "{list}");
    }
    let t = diagnose(&["--event-log", &log("base"), "--compare", &id("base")]).stdout;
    assert!(t.contains("No change"), "{t}");
}

#[test]
fn previous_is_the_median_of_the_earlier_runs_of_the_name() {
    let all = dir().join("eventlog").to_string_lossy().into_owned();
    let c = compare(&[
        "--event-log",
        &all,
        "--app-id",
        &id("one_exec"),
        "--compare",
        "previous",
    ]);
    let b = &c["baseline"];
    assert_eq!(b["kind"], "median");
    let runs: Vec<&str> = b["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(runs, [id("base"), id("aqe_off")]);
    assert!(runs.contains(&b["closest"].as_str().unwrap()));
    // At most one run: the latest, which is then the baseline itself.
    let one = compare(&[
        "--event-log",
        &all,
        "--app-id",
        &id("one_exec"),
        "--compare",
        "previous",
        "--baseline-runs",
        "1",
    ]);
    assert_eq!(one["baseline"]["kind"], "run");
    assert_eq!(one["baseline"]["closest"], id("aqe_off").as_str());
    // The first run has no earlier one.
    let out = diagnose(&[
        "--event-log",
        &all,
        "--app-id",
        &id("base"),
        "--compare",
        "previous",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("no previous run of \"diagnosis\""),
        "{}",
        out.stderr
    );
}

#[test]
fn two_applications_are_refused_unless_forced_and_bad_flags_are_named() {
    let other = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/whatif-4.1.1/eventlog")
        .to_string_lossy()
        .into_owned();
    let whatif = std::fs::read_dir(&other)
        .unwrap()
        .flatten()
        .map(|e| e.path().to_string_lossy().into_owned())
        .min()
        .unwrap();
    let out = diagnose(&["--event-log", &log("base"), "--compare", &whatif]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("different applications"),
        "{}",
        out.stderr
    );
    let c = compare(&["--event-log", &log("base"), "--compare", &whatif, "--force"]);
    assert!(c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("no job group and description")));
    let out = diagnose(&[
        "--event-log",
        &log("base"),
        "--compare",
        "previous",
        "--review",
    ]);
    assert_eq!(out.status.code(), Some(64));
    assert!(
        out.stderr.contains("--compare: not with --review"),
        "{}",
        out.stderr
    );
    let out = diagnose(&["--event-log", &log("base"), "--force"]);
    assert_eq!(out.status.code(), Some(64));
    assert!(out.stderr.contains("go with --compare"), "{}", out.stderr);
}

#[test]
fn the_page_draws_the_changed_groups_in_a_real_browser() {
    let out = diagnose(&[
        "--event-log",
        &log("aqe_off"),
        "--compare",
        &log("base"),
        "--format",
        "html",
    ]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("data-chart=\"compare-groups\""));
    let page = std::env::temp_dir().join(format!("compare-{}.html", std::process::id()));
    std::fs::write(&page, &out.stdout).unwrap();
    let (ok, so) = support::spark::check_page(&page, &["--compare"]);
    let _ = std::fs::remove_file(&page);
    assert!(ok, "{so}");
}

/// The rows compared are Spark's own: on the TPC-H fixture, each measure's total over the run
/// equals the sum of its REST stages' `inputRecords`, `outputRecords`, `shuffleReadRecords` and
/// `shuffleWriteRecords`, and its task count theirs.
#[tokio::test]
async fn the_rows_are_the_ones_spark_reports() {
    use spark_exporter::diagnose::compare::profile::{MEASURES, TASKS};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tpch-4.1.1");
    let req = spark_exporter::diagnose::Request {
        event_logs: vec![root.join("eventlog").to_string_lossy().into_owned()],
        ..Default::default()
    };
    let settings = spark_exporter::config::Settings::default();
    let (_, profiles) = spark_exporter::diagnose::profiled(&settings, &req, Default::default())
        .await
        .expect("the TPC-H log");
    let p = &profiles[0];
    let rest = root.join("rest").join(&p.app_id).join("stages.json");
    let stages: Value = serde_json::from_str(&std::fs::read_to_string(rest).unwrap()).unwrap();
    let sum = |k: &str| -> f64 {
        stages
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[k].as_f64().unwrap_or(0.0))
            .sum()
    };
    let at = |m: &str| MEASURES.iter().position(|(n, _, _)| *n == m).unwrap();
    for (ours, spark) in [
        ("input_rows", "inputRecords"),
        ("output_rows", "outputRecords"),
        ("shuffle_read_rows", "shuffleReadRecords"),
        ("shuffle_write_rows", "shuffleWriteRecords"),
    ] {
        assert_eq!(p.totals.0[at(ours)], sum(spark), "{ours}");
    }
    assert!(p.totals.0[at("input_rows")] > 1e6);
    let tasks = sum("numCompleteTasks") + sum("numFailedTasks") + sum("numKilledTasks");
    assert_eq!(p.totals.0[TASKS], tasks);
}
