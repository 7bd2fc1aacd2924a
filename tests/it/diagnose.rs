//! `spark-exporter diagnose` on the diagnosis fixture (a real PySpark 4.1.1 run of
//! `scripts/diagnosis_workload.py`, see `tests/support/diagnosis.rs`), post-mortem from its event
//! logs and "live" from its drivers' recorded REST answers replayed by a fake driver:
//!
//! - each condition the workload provokes is found, with its job group and stage, and its
//!   healthy twin is not: the sort-merge join of a small table (not its broadcast twin), the
//!   spill, the skewed stage, the GC pressure, the idle cores;
//! - the numbers behind each are Spark's own, read here from the REST answers (`stages.json`,
//!   the recorded `taskSummary`);
//! - both sources give the same findings (the kinds REST can see: locality and scheduler delay
//!   come from event logs only);
//! - every report validates against the committed JSON Schema (Python's `jsonschema`, the
//!   reference implementation, from the test venv);
//! - an unknown application gets a clear message naming what is there, exit 1; bad flags exit 64;
//!   `--fail-on` exits 3; hostile inputs (damaged logs, HTML pages, garbage) never crash it.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use spark_exporter::config::Settings;
use spark_exporter::diagnose::report::{AppReport, Finding, Kind, Report};
use spark_exporter::diagnose::{diagnose, DiagnoseError, Request};
use support::command::exporter_command;
use support::diagnosis::{app_id, apps, assert_same_findings, event_log, fixture, replay, rest};
use support::rest::{FakeSpark, FaultKind};

fn settings() -> Settings {
    Settings::default()
}

async fn from_log(app: &str) -> AppReport {
    let req = Request {
        event_logs: vec![event_log(app).to_string_lossy().into_owned()],
        ..Request::default()
    };
    let mut r = diagnose(&settings(), &req).await.expect("diagnose the log");
    assert_eq!(r.applications.len(), 1);
    r.applications.pop().unwrap()
}

async fn from_rest(server: &FakeSpark, app: &str) -> AppReport {
    let req = Request {
        spark_url: Some(server.url.clone()),
        app_id: Some(app.to_string()),
        ..Request::default()
    };
    let mut r = diagnose(&settings(), &req)
        .await
        .expect("diagnose over REST");
    assert_eq!(r.applications.len(), 1);
    r.applications.pop().unwrap()
}

fn of<'a>(a: &'a AppReport, kind: Kind, group: &str) -> Vec<&'a Finding> {
    a.findings
        .iter()
        .filter(|f| f.kind == kind && f.at.job_group.as_deref() == Some(group))
        .collect()
}

/// `stages.json` of the main application, by stage id (attempt 0).
fn stages() -> BTreeMap<u64, Value> {
    let app = app_id("diagnosis");
    rest(&app, "stages.json")
        .as_array()
        .expect("stages")
        .iter()
        .filter(|s| s["attemptId"].as_u64() == Some(0))
        .map(|s| (s["stageId"].as_u64().expect("id"), s.clone()))
        .collect()
}

/// Spark's task summary of stage `id` (attempt 0): (longest, median) ms.
fn summary(id: u64) -> (f64, f64) {
    let app = app_id("diagnosis");
    let all = rest(&app, "raw.json");
    let m = all.as_object().expect("raw");
    let (_, v) = m
        .iter()
        .find(|(k, _)| k.starts_with(&format!("stages/{id}/0/taskSummary")))
        .unwrap_or_else(|| panic!("no taskSummary of stage {id}"));
    let d = &v["duration"];
    let q: Vec<f64> = v["quantiles"]
        .as_array()
        .expect("quantiles")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let at = |x: f64| d[q.iter().position(|y| (*y - x).abs() < 1e-9).expect("q")].as_f64();
    (at(1.0).expect("max"), at(0.5).expect("median"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-9)
}

#[tokio::test]
async fn each_condition_is_found_with_its_group_and_stage_and_its_twin_is_not() {
    let a = from_log(&app_id("diagnosis")).await;
    let st = stages();
    let group_of = |id: u64| -> String {
        // The job group of a stage, from Spark's own job list.
        let app = app_id("diagnosis");
        let jobs = rest(&app, "jobs.json");
        jobs.as_array()
            .unwrap()
            .iter()
            .find(|j| {
                j["stageIds"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|x| x.as_u64() == Some(id)))
            })
            .and_then(|j| j["jobGroup"].as_str())
            .unwrap_or("")
            .to_string()
    };

    // The sort-merge join of a small table; its broadcast twin has no join finding.
    let smj = of(&a, Kind::JoinStrategy, "join_smj");
    assert_eq!(smj.len(), 1, "{:#?}", a.findings);
    assert_eq!(smj[0].at.subject.as_deref(), Some("SortMergeJoin"));
    assert_eq!(smj[0].numbers["sort_merge_joins"], 1.0);
    assert!(smj[0].numbers["smallest_shuffle_write_bytes"] <= 10.0 * 1024.0 * 1024.0);
    assert!(of(&a, Kind::JoinStrategy, "join_broadcast").is_empty());
    assert!(of(&a, Kind::JoinStrategy, "plan_stable").is_empty());

    // Advice (issue 50): the sort-merge join ran under a session threshold of -1; the
    // suggestion names it, where it came from, and a threshold above the small side's bytes.
    let advice = &smj[0].suggestions;
    assert_eq!(advice.len(), 1, "{advice:#?}");
    assert_eq!(advice[0].key, "spark.sql.autoBroadcastJoinThreshold");
    assert_eq!(advice[0].ran_with.as_deref(), Some("-1"));
    assert_eq!(
        advice[0].origin,
        spark_exporter::diagnose::advice::Origin::SqlExecution
    );
    let to_try = spark_exporter::diagnose::advice::spark::bytes(&advice[0].to_try).unwrap();
    assert!(to_try as f64 > smj[0].numbers["smallest_shuffle_write_bytes"]);
    assert!(
        a.settings
            .iter()
            .all(|s| s.job_group.as_deref() != Some("join_broadcast")),
        "{:#?}",
        a.settings
    );

    // The one description run twice with two plans: one query, one plan change; its twin,
    // run twice with one plan, none.
    let change = of(&a, Kind::PlanChange, "plan_change");
    assert_eq!(change.len(), 1, "{:#?}", a.findings);
    assert_eq!(change[0].numbers["plan_shapes"], 2.0);
    assert!(of(&a, Kind::PlanChange, "plan_stable").is_empty());

    // The spill: the stage Spark says spilled to disk, with Spark's bytes; not its twin.
    let spill = of(&a, Kind::Spill, "spill");
    assert_eq!(spill.len(), 1, "{:#?}", a.findings);
    let id = spill[0].at.stage_id.expect("stage");
    assert_eq!(group_of(id), "spill");
    assert_eq!(
        spill[0].numbers["disk_spilled_bytes"],
        st[&id]["diskBytesSpilled"].as_f64().unwrap()
    );
    assert!(of(&a, Kind::Spill, "no_spill").is_empty());
    // Its window ran with its buffer's spill threshold lowered to 40000 rows: advice names it.
    let lowered: Vec<_> = spill
        .iter()
        .flat_map(|f| &f.suggestions)
        .filter(|s| s.key == "spark.sql.windowExec.buffer.spill.threshold")
        .collect();
    assert!(!lowered.is_empty(), "{spill:#?}");
    assert_eq!(lowered[0].ran_with.as_deref(), Some("40000"));

    // The skewed stage: Spark's task summary gives the same longest and median task.
    let skew = of(&a, Kind::Skew, "skewed");
    assert_eq!(skew.len(), 1, "{:#?}", a.findings);
    let id = skew[0].at.stage_id.expect("stage");
    assert_eq!(group_of(id), "skewed");
    let (longest, median) = summary(id);
    assert_eq!(skew[0].numbers["longest_task_seconds"], longest / 1000.0);
    assert_eq!(skew[0].numbers["median_task_seconds"], median / 1000.0);
    assert!(longest / median >= 5.0);
    assert!(of(&a, Kind::Skew, "balanced").is_empty());

    // GC pressure: the stages of gc_pressure, with Spark's GC time; none in gc_light.
    let gc = of(&a, Kind::GcPressure, "gc_pressure");
    assert!(!gc.is_empty(), "{:#?}", a.findings);
    for f in &gc {
        let id = f.at.stage_id.expect("stage");
        assert_eq!(group_of(id), "gc_pressure");
        let want = st[&id]["jvmGcTime"].as_f64().unwrap() / 1000.0;
        assert!(close(f.numbers["gc_seconds"], want, 1e-9), "stage {id}");
        assert_eq!(f.cost_seconds, f.numbers["gc_seconds"]);
    }
    assert!(of(&a, Kind::GcPressure, "gc_light").is_empty());

    // Most costly first.
    assert!(a
        .findings
        .windows(2)
        .all(|w| w[0].cost_seconds >= w[1].cost_seconds));

    // Idle cores: the application with an idle executor, not its busy twin.
    let idle = from_log(&app_id("diagnosis-idle")).await;
    let busy = from_log(&app_id("diagnosis-busy")).await;
    let f: Vec<_> = idle
        .findings
        .iter()
        .filter(|f| f.kind == Kind::IdleCores)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", idle.findings);
    let n = &f[0].numbers;
    assert!(n["core_utilization"] < 0.5);
    assert!(close(
        n["idle_core_seconds"],
        n["allocated_core_seconds"] - n["used_core_seconds"],
        1e-6
    ));
    assert!(busy.findings.iter().all(|f| f.kind != Kind::IdleCores));
}

#[tokio::test]
async fn live_and_post_mortem_give_the_same_findings() {
    let server = replay().await;
    for app in apps() {
        let log = from_log(&app).await;
        let live = from_rest(&server, &app).await;
        // The same numbers, within what the sources round (REST's task summary is in ms as
        // doubles; executors' lifetimes end at the REST answers' last update).
        assert_same_findings(&live, &log, 0.02, &app);
        // A live read links to the driver's pages.
        assert!(live
            .findings
            .iter()
            .filter(|f| f.at.stage_id.is_some())
            .all(|f| f
                .url
                .as_deref()
                .is_some_and(|u| u.contains("/stages/stage/?id="))));
    }
}

fn run(args: &[&str]) -> support::command::Output {
    let mut a = vec!["diagnose"];
    a.extend_from_slice(args);
    exporter_command(&a, Duration::from_secs(120))
}

/// Every committed event log (`tests/support/committed_logs.rs`).
fn committed_event_logs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let copies = root
        .join("target/tmp")
        .join(format!("diagnose-logs-{}", std::process::id()));
    support::committed_logs::committed_event_logs(&root, &copies)
}

#[test]
fn every_committed_fixture_gives_a_report_valid_against_the_schema() {
    let logs = committed_event_logs();
    assert!(logs.len() >= 30, "{logs:?}");
    for p in logs {
        let out = run(&["--format", "json", "--event-log", p.to_str().unwrap()]);
        assert!(out.status.success(), "{}: {}", p.display(), out.stderr);
        let r: Report = serde_json::from_str(&out.stdout).expect("a report");
        assert_eq!(r.applications.len(), 1, "{}", p.display());
        assert_eq!(r.source.read_errors, 0, "{}", p.display());
        support::spark::assert_valid(
            "schemas/diagnose-report.v1.schema.json",
            &out.stdout,
            &p.display().to_string(),
        );
        // The text form renders the same application.
        let text = run(&["--event-log", p.to_str().unwrap()]);
        assert!(text.status.success());
        assert!(text.stdout.contains(&r.applications[0].app_id));
    }
}

#[tokio::test]
async fn an_unknown_application_is_named_with_what_is_there() {
    let log = fixture().join("eventlog");
    let req = Request {
        event_logs: vec![log.to_string_lossy().into_owned()],
        app_id: Some("app-nope".into()),
        ..Request::default()
    };
    match diagnose(&settings(), &req).await {
        Err(DiagnoseError::NotFound { id, known, .. }) => {
            assert_eq!(id, "app-nope");
            assert_eq!(known.len(), 3);
        }
        other => panic!("{other:?}"),
    }
    // A known one, in a folder of three: only its log is read.
    let req = Request {
        event_logs: vec![log.to_string_lossy().into_owned()],
        app_id: Some(app_id("diagnosis-idle")),
        ..Request::default()
    };
    let r = diagnose(&settings(), &req).await.expect("diagnose");
    assert_eq!(r.applications.len(), 1);
    assert_eq!(r.applications[0].app_id, app_id("diagnosis-idle"));
    let server = replay().await;
    let req = Request {
        spark_url: Some(server.url.clone()),
        app_id: Some("app-nope".into()),
        ..Request::default()
    };
    match diagnose(&settings(), &req).await {
        Err(DiagnoseError::NotFound { known, .. }) => assert_eq!(known.len(), 3),
        other => panic!("{other:?}"),
    }
    // Without --app-id, a target with three applications asks for one.
    let req = Request {
        spark_url: Some(server.url.clone()),
        ..Request::default()
    };
    assert!(matches!(
        diagnose(&settings(), &req).await,
        Err(DiagnoseError::Ambiguous { n: 3, .. })
    ));

    // The binary: one line naming the id and what is there, exit 1.
    let url = server.url.clone();
    let log_s = log.to_string_lossy().into_owned();
    let (a, b) = tokio::task::spawn_blocking(move || {
        (
            run(&["--event-log", &log_s, "--app-id", "app-nope"]),
            run(&["--spark.url", &url, "--app-id", "app-nope"]),
        )
    })
    .await
    .unwrap();
    for o in [a, b] {
        assert_eq!(o.status.code(), Some(1), "{}", o.stderr);
        assert!(
            o.stderr.contains("no application \"app-nope\""),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains(&app_id("diagnosis")), "{}", o.stderr);
        assert!(!o.stderr.contains("panicked"));
    }
}

#[test]
fn bad_flags_exit_64_naming_each_and_fail_on_gates() {
    let log = event_log(&app_id("diagnosis"));
    let l = log.to_str().unwrap();
    let o = run(&[
        "--event-log",
        l,
        "--format",
        "yaml",
        "--fail-on",
        "nonsense",
    ]);
    assert_eq!(o.status.code(), Some(64));
    assert!(o.stderr.contains("--format"), "{}", o.stderr);
    assert!(o.stderr.contains("--fail-on: \"nonsense\""), "{}", o.stderr);
    // A wrong threshold in the configuration: exit 64 naming the field.
    let o = exporter_command(&["diagnose", "--event-log", l], Duration::from_secs(60));
    assert!(o.status.success());
    let o = std::process::Command::new(support::EXPORTER)
        .args(["diagnose", "--event-log", l])
        .env("SPARK_EXPORTER_DIAGNOSE__GC_RATIO", "2")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&o.stderr).contains("diagnose.gc_ratio"));
    // A CI gate: the join finding fails the run; a kind not found does not.
    assert_eq!(
        run(&["--event-log", l, "--fail-on", "join_strategy"])
            .status
            .code(),
        Some(3)
    );
    assert_eq!(
        run(&["--event-log", l, "--fail-on", "streaming_trigger"])
            .status
            .code(),
        Some(0)
    );
    // Per-group thresholds: a higher skew ratio for the skewed group silences it there only.
    let cfg = std::env::temp_dir().join(format!("diagnose-cfg-{}.yaml", std::process::id()));
    std::fs::write(
        &cfg,
        "diagnose:\n  groups:\n    skewed:\n      skew_ratio: 50\n",
    )
    .unwrap();
    let o = run(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--event-log",
        l,
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", o.stderr);
    let r: Report = serde_json::from_str(&o.stdout).unwrap();
    let a = &r.applications[0];
    assert!(of(a, Kind::Skew, "skewed").is_empty());
    assert!(!of(a, Kind::Skew, "warmup").is_empty());
}

/// A copy of `src` with `f` applied to its bytes.
fn damaged(dir: &Path, name: &str, src: &[u8], f: impl Fn(&mut Vec<u8>)) -> PathBuf {
    let mut b = src.to_vec();
    f(&mut b);
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

#[tokio::test]
async fn hostile_inputs_never_crash_it() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp")
        .join(format!("diagnose-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/eventlogs/spark-4.1.1-none-single")
            .read_dir()
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_none_or(|x| x != "json"))
            .unwrap(),
    )
    .unwrap();
    let zstd_log = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/eventlogs/spark-4.1.1-zstd-single")
            .read_dir()
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "zstd"))
            .unwrap(),
    )
    .unwrap();
    let mut inputs = vec![
        damaged(&dir, "garbage-lines", &plain, |b| {
            let mid = b.len() / 2;
            let at = mid + b[mid..].iter().position(|c| *c == b'\n').unwrap() + 1;
            b.splice(
                at..at,
                b"{\"Event\": \"SparkListenerTaskEnd\", [[[\n\x00\xff\xfe\n"
                    .iter()
                    .copied(),
            );
        }),
        damaged(&dir, "cut-mid-line", &plain, |b| b.truncate(b.len() / 3)),
        damaged(&dir, "corrupt-block.zstd", &zstd_log, |b| {
            let mid = b.len() / 2;
            for x in &mut b[mid..mid + 64] {
                *x ^= 0x5a;
            }
        }),
        damaged(&dir, "cut.zstd", &zstd_log, |b| b.truncate(b.len() / 2)),
        damaged(&dir, "empty", b"", |_| {}),
        damaged(
            &dir,
            "html",
            b"<html><body>502 Bad Gateway</body></html>",
            |_| {},
        ),
        damaged(&dir, "binary", &[0xffu8; 4096], |_| {}),
        damaged(&dir, "huge-line", b"{\"Event\":\"x\",\"y\":\"", |b| {
            b.extend(std::iter::repeat_n(b'a', 3 << 20))
        }),
    ];
    inputs.push(dir.join("does-not-exist"));
    for p in &inputs {
        let ps = p.to_str().unwrap().to_string();
        let o = tokio::task::spawn_blocking(move || run(&["--format", "json", "--event-log", &ps]))
            .await
            .unwrap();
        let code = o.status.code();
        assert!(
            matches!(code, Some(0) | Some(1)),
            "{}: {code:?}\n{}",
            p.display(),
            o.stderr
        );
        assert!(
            !o.stderr.contains("panicked"),
            "{}: {}",
            p.display(),
            o.stderr
        );
        if code == Some(0) {
            support::spark::assert_valid(
                "schemas/diagnose-report.v1.schema.json",
                &o.stdout,
                &p.display().to_string(),
            );
            let r: Report = serde_json::from_str(&o.stdout).unwrap();
            let damaged = ["garbage-lines", "corrupt-block.zstd", "html", "binary"];
            if damaged.iter().chain(&["huge-line"]).any(|d| p.ends_with(d)) {
                assert!(r.source.read_errors > 0, "{}: nothing counted", p.display());
            }
        } else {
            assert!(
                o.stderr
                    .lines()
                    .any(|l| l.starts_with("spark-exporter diagnose: ")),
                "{}",
                o.stderr
            );
        }
    }
}

#[tokio::test]
async fn a_faulty_driver_gets_a_clear_error_not_a_crash() {
    // A driver that answers with faults: a clear error, exit 1.
    let server = replay().await;
    for fault in [
        FaultKind::Html,
        FaultKind::Status500,
        FaultKind::Garbage,
        FaultKind::CloseMidBody,
        FaultKind::Huge,
    ] {
        server.set_fault(fault, "applications");
        let url = server.url.clone();
        let app = app_id("diagnosis");
        let o = tokio::task::spawn_blocking(move || {
            run(&[
                "--spark.url",
                &url,
                "--app-id",
                &app,
                "--spark.timeout",
                "2s",
            ])
        })
        .await
        .unwrap();
        assert_eq!(o.status.code(), Some(1), "{fault:?}: {}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{fault:?}: {}", o.stderr);
        server.clear_fault();
    }
    // Nothing listening.
    let o = tokio::task::spawn_blocking(|| {
        run(&["--spark.url", "http://127.0.0.1:9", "--app-id", "x"])
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stderr.contains("cannot connect"), "{}", o.stderr);
}

#[tokio::test]
async fn a_live_driver_needs_no_app_id() {
    // A live driver serves its one application: no --app-id needed.
    let app = app_id("diagnosis-idle");
    let dir = fixture().join("rest").join(&app);
    let server = FakeSpark::start(vec![support::rest::AppData::from_dir(
        dir.to_str().unwrap(),
    )])
    .await;
    let req = Request {
        spark_url: Some(server.url.clone()),
        ..Request::default()
    };
    let r = diagnose(&settings(), &req).await.expect("diagnose");
    assert_eq!(r.source.kind, "rest");
    assert_eq!(r.applications.len(), 1);
    let a = &r.applications[0];
    assert_eq!(a.app_id, app);
    // Still running as far as this driver says: links go to the driver's own pages.
    assert!(
        a.findings.iter().any(|f| f.url.is_some()),
        "{:#?}",
        a.findings
    );
    assert!(a
        .findings
        .iter()
        .filter_map(|f| f.url.as_deref())
        .all(|u| u.starts_with(&server.url) && !u.contains("/history/")));
}

/// Batch durations (ms) per query name, in order, from the streaming fixture's event log
/// (`QueryProgressEvent`'s `durationMs.triggerExecution`, the batch duration the exporter's
/// `spark_streaming_batch_duration_seconds` counts), read here independently of the exporter.
fn streaming_batches(dir: &Path) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for v in support::eventlog::rolling_events(dir) {
        let pr = &v["progress"];
        let d = pr["durationMs"]["triggerExecution"].as_f64();
        if let (Some(name), Some(d)) = (pr["name"].as_str(), d) {
            out.entry(name.to_string()).or_default().push(d);
        }
    }
    out
}

#[tokio::test]
async fn streaming_batches_near_their_trigger_are_found_and_the_twin_is_not() {
    // tests/data/streaming-4.1.1: slow_sink sleeps past its 1 s trigger, healthy_sink is its
    // twin. A query always behind has no inferred interval, so the intervals are configured,
    // as a user does (streaming.trigger_intervals).
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/streaming-4.1.1/eventlog");
    let log = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("eventlog_v2_")
        })
        .unwrap();
    let mut s = settings();
    for q in ["slow_sink", "healthy_sink", "windowed_counts"] {
        s.streaming
            .trigger_intervals
            .insert(q.into(), Duration::from_secs(1));
    }
    let req = Request {
        event_logs: vec![log.to_string_lossy().into_owned()],
        ..Request::default()
    };
    let r = diagnose(&s, &req).await.expect("diagnose");
    let a = &r.applications[0];
    let found: BTreeMap<&str, &Finding> = a
        .findings
        .iter()
        .filter(|f| f.kind == Kind::StreamingTrigger)
        .map(|f| (f.at.query.as_deref().unwrap(), f))
        .collect();
    assert!(found.contains_key("slow_sink"), "{:#?}", a.findings);
    assert!(!found.contains_key("healthy_sink"), "{:#?}", a.findings);
    // Spark's own batch durations: the last 32, those over 80% of the 1 s trigger, and the
    // time past 80% they add up to.
    let batches = streaming_batches(&log);
    for (q, f) in &found {
        let all = &batches[*q];
        let recent = &all[all.len().saturating_sub(32)..];
        let near: Vec<f64> = recent.iter().copied().filter(|d| *d > 800.0).collect();
        assert_eq!(f.numbers["recent_batches"], recent.len() as f64, "{q}");
        assert_eq!(f.numbers["batches_near_trigger"], near.len() as f64, "{q}");
        assert_eq!(f.numbers["batches"], all.len() as f64, "{q}");
        let cost: f64 = near.iter().map(|d| (d - 800.0) / 1000.0).sum();
        assert!(
            close(f.cost_seconds, cost, 1e-9),
            "{q}: {} vs {cost}",
            f.cost_seconds
        );
    }
    let healthy = &batches["healthy_sink"];
    let recent = &healthy[healthy.len().saturating_sub(32)..];
    let near = recent.iter().filter(|d| **d > 800.0).count() as f64;
    assert!(
        near / (recent.len() as f64) < 0.25,
        "healthy_sink is near its trigger"
    );
    // Micro-batches plan differently at first: no plan change is reported for a query.
    assert!(
        a.findings.iter().all(|f| f.kind != Kind::PlanChange),
        "{:#?}",
        a.findings
    );
}

/// The text report of the diagnosis fixture (issue 33): findings grouped by kind, each kind's
/// remedy printed once; every number a finding carries has a label and a unit; counts agree
/// with their nouns; no `name=value` dump.
#[tokio::test]
async fn the_text_report_groups_findings_and_gives_every_number_its_unit() {
    use spark_exporter::diagnose::text;
    let req = Request {
        event_logs: vec![fixture().join("eventlog").to_string_lossy().into_owned()],
        ..Request::default()
    };
    let r = diagnose(&settings(), &req)
        .await
        .expect("diagnose the fixture");
    let mut names = std::collections::BTreeSet::new();
    for a in &r.applications {
        for f in &a.findings {
            names.extend(f.numbers.keys().cloned());
        }
    }
    assert!(
        names.len() > 20,
        "the fixture's findings carry numbers: {names:?}"
    );
    for n in &names {
        assert!(
            text::label(n).is_some(),
            "the number {n:?} has no label and unit in diagnose's text table"
        );
    }
    let out = text::render(&r);
    // One section per kind per application; each kind's remedies once.
    let sections = |app: &str| -> Vec<String> {
        let mut out: Vec<String> = vec![];
        let mut open = false;
        for l in app.lines() {
            let head = l
                .strip_prefix("  ")
                .and_then(|r| r.split_once(". ["))
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if head {
                out.push(String::new());
                open = true;
            } else if !l.starts_with("   ") {
                open = false;
            }
            if open {
                let last = out.last_mut().unwrap();
                last.push_str(l);
                last.push('\n');
            }
        }
        out
    };
    let mut gc = None;
    for app in out.split("\n== ") {
        let mut kinds = std::collections::BTreeSet::new();
        for section in sections(app) {
            let kind = section
                .split(']')
                .next()
                .unwrap()
                .split('[')
                .nth(1)
                .unwrap()
                .to_string();
            assert!(
                kinds.insert(kind.clone()),
                "kind {kind} printed twice:\n{app}"
            );
            let remedies: Vec<&str> = section
                .lines()
                .filter(|l| l.trim_start().starts_with("remedy:"))
                .collect();
            assert!(!remedies.is_empty(), "a remedy for {kind}:\n{section}");
            let unique: std::collections::BTreeSet<&&str> = remedies.iter().collect();
            assert_eq!(
                unique.len(),
                remedies.len(),
                "a remedy repeated in {section}"
            );
            if kind == "gc_pressure" {
                gc = Some(section.clone());
            }
        }
        assert!(!kinds.is_empty() || app.contains("No findings."), "{app}");
    }
    // The GC findings of the gc_pressure group: several, one remedy.
    let gc = gc.expect("a gc_pressure section");
    assert!(gc.matches("\n       - Stage").count() >= 2, "{gc}");
    assert_eq!(gc.matches("remedy:").count(), 1, "{gc}");
    for bad in ["1 jobs", "1 stage attempts", "1 tasks", "1 findings", "="] {
        assert!(
            !out.lines()
                .filter(|l| !l.contains("remedy:") && !l.contains("ui:"))
                .any(|l| l.contains(&format!(" {bad}"))
                    || (bad == "=" && l.contains("numbers:") && l.contains('='))),
            "{bad:?} in the text:\n{out}"
        );
    }
    // Costs say their unit; times read as durations.
    assert!(out.contains("task-seconds"), "{out}");
    assert!(out.contains("core-seconds"), "{out}");
    assert!(out.contains("Where the time went, by job group"), "{out}");
}

/// A streaming query whose trigger interval is neither configured nor inferable (slow_sink of
/// the streaming fixture, always behind) gets a note naming the key; with the key set, the
/// note goes.
#[tokio::test]
async fn a_streaming_query_without_a_trigger_interval_gets_a_note() {
    use spark_exporter::diagnose::text;
    let log = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/streaming-4.1.1/eventlog");
    let req = Request {
        event_logs: vec![log.to_string_lossy().into_owned()],
        ..Request::default()
    };
    let r = diagnose(&settings(), &req).await.expect("diagnose");
    let out = text::render(&r);
    let note = out
        .lines()
        .find(|l| l.starts_with("note: streaming query \"slow_sink\""))
        .unwrap_or_else(|| panic!("a note for slow_sink:\n{out}"));
    assert!(note.contains("trigger_intervals"), "{note}");
    let mut s = settings();
    s.streaming
        .trigger_intervals
        .insert("slow_sink".into(), Duration::from_secs(10));
    let out = text::render(&diagnose(&s, &req).await.expect("diagnose"));
    assert!(!out.contains("note: streaming query"), "{out}");
}
