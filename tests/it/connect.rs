//! Spark Connect: a real Spark Connect 4.1.1 server's event log (tests/data/connect-4.1.1, made
//! by scripts/connect-fixture.sh with a real PySpark Connect client that tags its work with
//! `spark.addTag`). Its jobs have no job group and a protobuf plan dump as description; the
//! exporter groups them by the user's tags, exactly as Spark's own REST answers (taken from the
//! same server before it stopped) attribute them, from the event log and from those REST answers
//! replayed, and no label value holds a plan dump or one of Spark's internal tags.
//!
//! `SPARK_CONNECT_FIXTURE=DIR` runs the same checks on another run of the script:
//! scripts/e2e-connect.sh (in scripts/test.sh) makes one live, with a real server and client.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use support::command::exporter_command;
use support::exposition::{parse_exposition, Sample};
use support::rest::{AppData, FakeSpark};

fn fixture() -> PathBuf {
    match std::env::var_os("SPARK_CONNECT_FIXTURE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/connect-4.1.1"),
    }
}

fn rest(name: &str) -> serde_json::Value {
    let p = fixture().join("rest").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("rest snapshot")).expect("json")
}

fn dump() -> Vec<Sample> {
    dump_with(&[])
}

fn dump_with(extra: &[&str]) -> Vec<Sample> {
    let dir = fixture().join("eventlog");
    let mut args = vec!["--spark.url=", "--event-log", dir.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    run_dump(&args)
}

fn run_dump(source: &[&str]) -> Vec<Sample> {
    let mut args = vec!["dump", "--model.summary-level", "full"];
    args.extend_from_slice(source);
    let out = exporter_command(&args, Duration::from_secs(60));
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    parse_exposition(&out.stdout)
}

/// The user's tag of a REST job: the suffix of its `SparkConnect_…_Tag_<tag>` job tag.
fn user_tag(job: &serde_json::Value) -> String {
    job["jobTags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str())
        .filter(|t| t.starts_with("SparkConnect_SessionTag_"))
        .filter_map(|t| t.rsplit_once("_Tag_").map(|(_, u)| u.to_string()))
        .next()
        .unwrap_or_default()
}

#[test]
fn connect_jobs_are_grouped_by_the_users_tags_as_spark_reports_them() {
    check_grouped(&dump());
}

/// The same numbers over REST: the exporter polling Spark's REST answers, replayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_jobs_over_rest_are_grouped_by_the_users_tags() {
    let dir = fixture().join("rest");
    let server = FakeSpark::start(vec![AppData::from_dir(dir.to_str().expect("utf-8"))]).await;
    let url = server.url.clone();
    let got = tokio::task::spawn_blocking(move || run_dump(&["--spark.url", url.as_str()]))
        .await
        .expect("dump");
    check_grouped(&got);
    no_dump_or_internal_tag(&got);
}

/// No label value in `got` holds a Spark Connect plan dump or one of Spark's internal tags.
fn no_dump_or_internal_tag(got: &[Sample]) {
    for s in got {
        for (k, v) in &s.labels {
            for bad in [
                "Spark Connect - ",
                "plan {",
                "SparkConnect_",
                "spark-session-",
            ] {
                assert!(!v.contains(bad), "{}: {k}={v:?} holds {bad:?}", s.name);
            }
        }
    }
}

/// Jobs by user tag and status, tasks by user tag, and SQL executions by user tag and status in
/// `got` are Spark's REST numbers.
fn check_grouped(got: &[Sample]) {
    let jobs = rest("jobs.json");
    let stages = rest("stages.json");
    // Spark's numbers: jobs by (tag, status), tasks by tag (through each job's stages).
    let mut want_jobs: BTreeMap<(String, String), f64> = BTreeMap::new();
    let mut want_tasks: BTreeMap<String, f64> = BTreeMap::new();
    let mut stage_tag: BTreeMap<u64, String> = BTreeMap::new();
    for j in jobs.as_array().expect("jobs") {
        let tag = user_tag(j);
        assert!(!tag.is_empty(), "every job of the workload is tagged: {j}");
        assert!(
            j.get("jobGroup").is_none_or(|g| g.is_null()),
            "Connect jobs have no job group"
        );
        let status = j["status"].as_str().unwrap_or("").to_ascii_lowercase();
        *want_jobs.entry((tag.clone(), status)).or_default() += 1.0;
        for s in j["stageIds"].as_array().into_iter().flatten() {
            stage_tag.insert(s.as_u64().expect("stage id"), tag.clone());
        }
    }
    for s in stages.as_array().expect("stages") {
        if let Some(tag) = stage_tag.get(&s["stageId"].as_u64().expect("id")) {
            *want_tasks.entry(tag.clone()).or_default() +=
                s["numCompleteTasks"].as_f64().unwrap_or(0.0);
        }
    }
    assert_eq!(want_jobs.len(), 2, "{want_jobs:?}");

    let mut got_jobs: BTreeMap<(String, String), f64> = BTreeMap::new();
    let mut got_tasks: BTreeMap<String, f64> = BTreeMap::new();
    for s in got {
        match s.name.as_str() {
            "spark_jobs_total" if s.value > 0.0 => {
                *got_jobs
                    .entry((s.label("job_group").into(), s.label("status").into()))
                    .or_default() += s.value
            }
            "spark_tasks_total" if s.label("status") == "succeeded" && s.value > 0.0 => {
                *got_tasks.entry(s.label("job_group").into()).or_default() += s.value
            }
            _ => {}
        }
    }
    assert_eq!(got_jobs, want_jobs, "jobs by user tag and status");
    assert_eq!(got_tasks, want_tasks, "tasks by user tag");

    // SQL executions: REST `/sql` lists each execution's jobs; it counts under its first job's tag.
    let job_tag: BTreeMap<u64, String> = jobs
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| (j["jobId"].as_u64().expect("id"), user_tag(j)))
        .collect();
    let mut want_sql: BTreeMap<(String, String), f64> = BTreeMap::new();
    for e in rest("sql__details-false.json").as_array().expect("sql") {
        let first = ["runningJobIds", "successJobIds", "failedJobIds"]
            .iter()
            .flat_map(|k| e[*k].as_array().into_iter().flatten())
            .filter_map(|j| j.as_u64())
            .min();
        let tag = first
            .and_then(|j| job_tag.get(&j).cloned())
            .unwrap_or_default();
        let status = e["status"].as_str().unwrap_or("").to_ascii_lowercase();
        *want_sql.entry((tag, status)).or_default() += 1.0;
    }
    assert_eq!(want_sql.len(), 2, "both tags ran SQL: {want_sql:?}");
    let mut got_sql: BTreeMap<(String, String), f64> = BTreeMap::new();
    for s in got
        .iter()
        .filter(|s| s.name == "spark_sql_executions_total" && s.value > 0.0)
    {
        *got_sql
            .entry((s.label("job_group").into(), s.label("status").into()))
            .or_default() += s.value;
    }
    assert_eq!(got_sql, want_sql, "SQL executions by user tag and status");
}

/// The client's application name (`appName` of the Connect session, which Spark records as the
/// jobs' `spark.app.name`) counts the jobs; the Connect user (the client's `user_id`) is a
/// label only on request, with the same totals as REST.
#[test]
fn connect_jobs_count_under_the_client_application_and_user() {
    let jobs = rest("jobs.json");
    let mut want: BTreeMap<String, f64> = BTreeMap::new();
    for j in jobs.as_array().expect("jobs") {
        let status = j["status"].as_str().unwrap_or("").to_ascii_lowercase();
        *want.entry(status).or_default() += 1.0;
    }
    let server = rest("applications.json")[0]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    for (extra, user) in [(&[][..], ""), (&["--labels.connect-user"][..], "etl_bot")] {
        let got = dump_with(extra);
        let mut by: BTreeMap<(String, String), BTreeMap<String, f64>> = BTreeMap::new();
        for s in got
            .iter()
            .filter(|s| s.name == "spark_connect_jobs_total" && s.value > 0.0)
        {
            *by.entry((s.label("client_app").into(), s.label("user").into()))
                .or_default()
                .entry(s.label("status").into())
                .or_default() += s.value;
            assert_eq!(s.label("app_name"), server, "the application is the server");
        }
        let key = ("client-app".to_string(), user.to_string());
        assert_eq!(by.keys().collect::<Vec<_>>(), vec![&key], "{extra:?}");
        assert_eq!(
            by[&key], want,
            "{extra:?}: jobs by status, as REST counts them"
        );
    }
}

#[test]
fn no_label_holds_a_plan_dump_or_an_internal_tag() {
    let got = dump();
    no_dump_or_internal_tag(&got);
    // What a person recognises instead: the SQL text of `spark.sql(...)` (from the operation's
    // statement in the event log), or the plan's first relation.
    let descs: std::collections::BTreeSet<&str> = got
        .iter()
        .filter(|s| s.name == "spark_jobs_total")
        .map(|s| s.label("job_description"))
        .collect();
    for want in ["SELECT count(*) FROM range({n})", "aggregate", "limit"] {
        assert!(descs.contains(want), "{want:?} not among {descs:?}");
    }
    let sql: std::collections::BTreeSet<&str> = got
        .iter()
        .filter(|s| s.name == "spark_sql_executions_total")
        .map(|s| s.label("description"))
        .collect();
    assert!(
        sql.contains("SELECT count(*) FROM range({n})"),
        "SQL descriptions: {sql:?}"
    );
}
