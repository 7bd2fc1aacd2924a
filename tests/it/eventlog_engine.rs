//! The engine over real folders: rolling parts that appear, renames, deletions, unreadable
//! folders, damaged input, and the async `run` loop. Checked through the self-metrics.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::model::Model;
use spark_exporter::sources::eventlog::config::EventLogConfig;
use spark_exporter::sources::eventlog::{ingest_paths, run, Engine, Out};
use spark_exporter::telemetry::{Telemetry, TelemetrySnapshot};

fn model() -> (Arc<Model>, Arc<Telemetry>) {
    let t = Arc::new(Telemetry::default());
    (Model::new(&Settings::default(), t.clone()), t)
}

fn app_start(id: &str) -> String {
    format!(
        "{{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"t\",\"App \
            ID\":\"{id}\",\"Timestamp\":1000,\"User\":\"u\"}}\n"
    )
}

fn task_end(n: u64) -> String {
    format!(
        "{{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task End \
            Reason\":{{\"Reason\":\"Success\"}},\"Task Info\":{{\"Task ID\":{n},\"Executor \
            ID\":\"1\",\"Launch Time\":1000,\"Finish \
            Time\":{},\"Failed\":false,\"Killed\":false}},\"Task Metrics\":{{\"Executor Run \
            Time\":5}}}}\n",
        1000 + n
    )
}

fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn files(t: &TelemetrySnapshot, state: &str) -> u64 {
    t.eventlog_files.get(state).copied().unwrap_or(0)
}

/// One listing and reading everything there is, as a step of `run` does, into `m`.
fn step(e: &mut Engine, dirs: &[PathBuf], m: &Arc<Model>) {
    let observer = m.observer(spark_exporter::sources::source("event_log"));
    let out = Out {
        observer: &observer,
        telemetry: m.telemetry(),
    };
    let dirs: Vec<spark_exporter::sources::eventlog::fs::Root> = dirs
        .iter()
        .map(spark_exporter::sources::eventlog::fs::Root::local)
        .collect();
    e.scan(&dirs, out);
    while e.poll(out, None) > 0 {}
    e.report(out);
}

#[test]
fn rolling_parts_status_and_deletion() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().to_path_buf()];
    let app = root.path().join("eventlog_v2_local-9");
    std::fs::create_dir(&app).unwrap();
    append(&app.join("appstatus_local-9.inprogress"), "");
    append(
        &app.join("events_1_local-9"),
        &(app_start("local-9") + &task_end(1)),
    );
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    assert_eq!(t.snapshot().eventlog_events, 2);
    assert_eq!(files(&t.snapshot(), "active"), 1);

    // A partial line waits; a new part makes the first one complete.
    append(&app.join("events_1_local-9"), &task_end(2)[..30]);
    step(&mut e, &dirs, &m);
    assert_eq!(t.snapshot().eventlog_events, 2);
    append(&app.join("events_1_local-9"), &task_end(2)[30..]);
    append(&app.join("events_2_local-9"), &task_end(3));
    step(&mut e, &dirs, &m);
    let s = t.snapshot();
    assert_eq!(s.eventlog_events, 4);
    assert_eq!((files(&s, "finished"), files(&s, "active")), (1, 1));

    // The application ends: appstatus loses `.inprogress`.
    std::fs::rename(
        app.join("appstatus_local-9.inprogress"),
        app.join("appstatus_local-9"),
    )
    .unwrap();
    step(&mut e, &dirs, &m);
    assert_eq!(files(&t.snapshot(), "finished"), 2);
    assert_eq!(e.len(), 1);

    // The History Server's cleaner deletes it.
    std::fs::remove_dir_all(&app).unwrap();
    step(&mut e, &dirs, &m);
    assert_eq!(e.len(), 0);
    assert!(
        t.snapshot().eventlog_errors.is_empty(),
        "{:?}",
        t.snapshot().eventlog_errors
    );
}

#[test]
fn inprogress_rename_is_followed_not_reread() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().to_path_buf()];
    let live = root.path().join("app-1_1.inprogress");
    append(&live, &(app_start("app-1") + &task_end(1)));
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    append(&live, &task_end(2));
    std::fs::rename(&live, root.path().join("app-1_1")).unwrap();
    step(&mut e, &dirs, &m);
    let s = t.snapshot();
    assert_eq!(s.eventlog_events, 3);
    assert_eq!((files(&s, "finished"), files(&s, "active")), (1, 0));
    // Nothing more to read, nothing read twice.
    step(&mut e, &dirs, &m);
    assert_eq!(t.snapshot().eventlog_events, 3);
    assert!(s.eventlog_errors.is_empty());
}

#[test]
fn truncation_is_counted_and_the_file_read_again() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().to_path_buf()];
    let f = root.path().join("local-5.inprogress");
    append(&f, &(app_start("local-5") + &task_end(1) + &task_end(2)));
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    std::fs::write(&f, task_end(3)).unwrap();
    step(&mut e, &dirs, &m);
    let s = t.snapshot();
    assert_eq!(s.eventlog_errors.get("truncated"), Some(&1));
    assert_eq!(s.eventlog_events, 4);
}

#[test]
fn unreadable_folder_is_counted_once_and_others_still_read() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let not_a_dir = root.path().join("file");
    append(&not_a_dir, "x");
    let good = root.path().join("good");
    std::fs::create_dir(&good).unwrap();
    append(&good.join("local-7"), &app_start("local-7"));
    let dirs = vec![not_a_dir, root.path().join("missing"), good];
    let mut e = Engine::new(1 << 20);
    for _ in 0..3 {
        step(&mut e, &dirs, &m);
    }
    let s = t.snapshot();
    assert_eq!(s.eventlog_errors.get("io"), Some(&2));
    assert_eq!(s.eventlog_events, 1);
}

#[test]
fn damaged_lines_are_skipped_and_counted_by_kind() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("local-8");
    let mut text = app_start("local-8").into_bytes();
    text.extend_from_slice(b"{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task In\n");
    text.extend_from_slice(
        b"{\"Event\":\"SparkListenerExecutorRemoved\",\"Executor ID\":\"\xff\"}\n",
    );
    text.extend_from_slice(b"{\"Event\":\"com.example.Custom\"}\n");
    text.extend_from_slice(format!("{}\n", "z".repeat(3000)).as_bytes());
    text.extend_from_slice(task_end(1).as_bytes());
    text.extend_from_slice(b"garbage without newline at the end");
    std::fs::write(&f, text).unwrap();
    let mut settings = Settings::default();
    EventLogConfig::of_mut(&mut settings).max_line_bytes = 2048;
    ingest_paths(
        &[f],
        &settings,
        &m.observer(spark_exporter::sources::source("event_log")),
        m.telemetry(),
    )
    .unwrap();
    let s = t.snapshot();
    assert_eq!(
        s.eventlog_errors.get("parse"),
        Some(&3),
        "{:?}",
        s.eventlog_errors
    );
    assert_eq!(s.eventlog_errors.get("unknown_event"), Some(&1));
    assert_eq!(s.eventlog_errors.get("line_too_long"), Some(&1));
    assert_eq!(
        s.eventlog_events, 3,
        "start, task end, and the unknown event"
    );
}

#[test]
fn rolling_zstd_parts_split_from_a_real_log() {
    // Spark rolls to a new part at 10 MiB at least; split a real 4.1.1 log into three parts
    // instead, each its own zstd stream, as the rolling writer starts one per part.
    let src = "tests/data/eventlogs/spark-4.1.1-none-rolling";
    let dir = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let part = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("events_")
        });
    let text = std::fs::read_to_string(part.unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let root = tempfile::tempdir().unwrap();
    let app = root.path().join("eventlog_v2_local-42");
    std::fs::create_dir(&app).unwrap();
    for (i, chunk) in lines.chunks(lines.len() / 3 + 1).enumerate() {
        let body = chunk.iter().map(|l| format!("{l}\n")).collect::<String>();
        let z = zstd::encode_all(body.as_bytes(), 1).unwrap();
        std::fs::write(app.join(format!("events_{}_local-42.zstd", i + 1)), z).unwrap();
    }
    append(&app.join("appstatus_local-42"), "");
    let (m, t) = model();
    ingest_paths(
        &[root.path().to_path_buf()],
        &Settings::default(),
        &m.observer(spark_exporter::sources::source("event_log")),
        m.telemetry(),
    )
    .unwrap();
    let s = t.snapshot();
    assert_eq!(s.eventlog_events, lines.len() as u64);
    assert_eq!(files(&s, "finished"), 3);
    assert!(s.eventlog_errors.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_follows_a_folder_until_shutdown() {
    let root = tempfile::tempdir().unwrap();
    let mut settings = Settings::default();
    EventLogConfig::of_mut(&mut settings).dirs = vec![spark_exporter::location::Location::local(
        root.path().to_path_buf(),
    )];
    EventLogConfig::of_mut(&mut settings).poll_interval = Duration::from_millis(20);
    let (m, t) = model();
    let stop = tokio_util::sync::CancellationToken::new();
    let observer = Arc::new(m.observer(spark_exporter::sources::source("event_log")));
    let filter = spark_exporter::filter::AppFilter::new(&settings);
    let task = tokio::spawn(run(
        EventLogConfig::of(&settings).into_owned(),
        filter,
        spark_exporter::sources::counting("event_log", m.telemetry().clone()),
        observer,
        stop.clone(),
    ));
    let f = root.path().join("local-3.lz4.inprogress");
    // An lz4-java stream whose only block is not written yet: nothing to read.
    std::fs::write(&f, b"").unwrap();
    let live = root.path().join("local-4.inprogress");
    append(&live, &app_start("local-4"));
    append(&live, &task_end(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while t.snapshot().eventlog_events < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(t.snapshot().eventlog_events, 2);
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
}
