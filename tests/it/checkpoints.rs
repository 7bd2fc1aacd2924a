//! Checkpoints (issue 34): the model's state kept across restarts of the real binary.
//!
//! - After SIGTERM, or SIGKILL once a checkpoint was written, the restarted exporter serves
//!   every series of the application with the value and `_created` it had: no counter goes
//!   back, none counts twice (the model's calls are idempotent).
//! - An application the previous process had retired (`model.app_retention` after its end) is
//!   not served again for another retention period.
//! - The log is finished: a restart does not read it again (its read position is in the
//!   checkpoint).
//! - A checkpoint written under another configuration of the model is refused, said in the log
//!   and counted, and the exporter starts empty.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::files::free_port;
use support::http::http_get;
use support::proc::Guard;
use support::EXPORTER;

const APP: &str = "local-1795981136444";

/// A copy of the recorded Spark 4.1.1 run's event log in a new folder.
fn logs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/spark-4.1.1-basic/eventlog")
        .join(format!("eventlog_v2_{APP}"));
    let dst = dir.path().join(format!("eventlog_v2_{APP}"));
    std::fs::create_dir(&dst).expect("mkdir");
    for f in std::fs::read_dir(&src).expect("fixture") {
        let f = f.expect("entry");
        std::fs::copy(f.path(), dst.join(f.file_name())).expect("copy");
    }
    dir
}

fn get(port: u16, path: &str) -> Option<(u16, String)> {
    http_get(&format!("127.0.0.1:{port}"), path, Duration::from_secs(3))
        .ok()
        .map(|(c, b)| (c, String::from_utf8_lossy(&b).into_owned()))
}

/// The exporter over `logs` with the checkpoint `ckpt` and `extra` flags; waits for the
/// start-up read.
fn start(port: u16, logs: &Path, ckpt: &Path, extra: &[&str]) -> Guard {
    let mut cmd = Command::new(EXPORTER);
    cmd.args(["--web.listen-address", &format!("127.0.0.1:{port}")])
        .args(["--spark.url=", "--event-log.dir", logs.to_str().unwrap()])
        .args(["--checkpoint.path", ckpt.to_str().unwrap()])
        .args([
            "--checkpoint.interval",
            "500ms",
            "--lifecycle.drain-scrapes",
            "0",
        ])
        .args(extra);
    let g = Guard::capture("exporter", cmd, None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while get(port, "/readyz?complete").map(|r| r.0) != Some(200) {
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    g
}

/// `want` and `got` are equal, or a panic naming the first lines that differ.
fn same(what: &str, want: &[String], got: &[String]) {
    let only_want: Vec<&String> = want.iter().filter(|l| !got.contains(l)).take(3).collect();
    let only_got: Vec<&String> = got.iter().filter(|l| !want.contains(l)).take(3).collect();
    assert!(
        only_want.is_empty() && only_got.is_empty(),
        "{what}: {} vs {} lines; before only: {only_want:?}; after only: {only_got:?}",
        want.len(),
        got.len()
    );
}

/// The application's series (not the exporter's own), as `name{labels} value` lines, sorted.
fn series(port: u16) -> Vec<String> {
    let (code, text) = get(port, "/metrics").expect("scrape");
    assert_eq!(code, 200);
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("spark_") && !l.starts_with("spark_exporter_"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn created(port: u16) -> Vec<String> {
    let (_, text) = http_get_om(port);
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| {
            l.starts_with("spark_") && !l.starts_with("spark_exporter_") && l.contains("_created{")
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// `/metrics` in OpenMetrics (with `_created`).
fn http_get_om(port: u16) -> (u16, String) {
    let (code, _, body) = support::http::http_get_accepting(
        &format!("127.0.0.1:{port}"),
        "/metrics",
        "application/openmetrics-text; version=1.0.0",
        Duration::from_secs(5),
    )
    .expect("scrape");
    (code, String::from_utf8_lossy(&body).into_owned())
}

/// Decoded event-log bytes this process read (`spark_exporter_eventlog_bytes_total`).
fn bytes_read(port: u16) -> f64 {
    let (_, text) = get(port, "/metrics").expect("scrape");
    text.lines()
        .find_map(|l| l.strip_prefix("spark_exporter_eventlog_bytes_total "))
        .map(|v| v.trim().parse().expect("a number"))
        .unwrap_or(0.0)
}

fn wait_file(p: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !p.exists() {
        assert!(
            Instant::now() < deadline,
            "no checkpoint at {}",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_restart_from_a_checkpoint_serves_every_series_as_it_was() {
    let logs = logs();
    let state = tempfile::tempdir().unwrap();
    let ckpt = state.path().join("exporter.ckpt");
    let extra = ["--web.openmetrics-created"];
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &extra);
    let before = series(port);
    assert!(bytes_read(port) > 0.0);
    let before_created = created(port);
    assert!(
        before.iter().any(|l| l.starts_with("spark_jobs_total{")),
        "{before:?}"
    );
    assert!(!before_created.is_empty());
    assert!(p
        .terminate(Duration::from_secs(20))
        .is_some_and(|s| s.success()));
    wait_file(&ckpt);

    // After SIGTERM.
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &extra);
    assert_eq!(p.count_lines("Checkpoint loaded."), 1);
    same("after SIGTERM", &before, &series(port));
    same("_created after SIGTERM", &before_created, &created(port));
    // The log is finished and was read to its end: not read again.
    assert_eq!(bytes_read(port), 0.0);

    // After SIGKILL, once a periodic checkpoint was written by this process.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(support::proc::signal(p.pid(), "KILL"));
    p.wait_exit(Duration::from_secs(10));
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &extra);
    assert_eq!(p.count_lines("Checkpoint loaded."), 1);
    same("after SIGKILL", &before, &series(port));
    same("_created after SIGKILL", &before_created, &created(port));
    assert_eq!(bytes_read(port), 0.0);
    // A periodic write (every 500 ms here) is counted.
    std::thread::sleep(Duration::from_millis(1500));
    let (_, text) = get(port, "/metrics").unwrap();
    assert!(
        text.contains("spark_exporter_checkpoint_loads_total{result=\"loaded\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("spark_exporter_checkpoint_writes_total{result=\"ok\"}"),
        "{text}"
    );
    p.terminate(Duration::from_secs(20));

    // Another summary level shapes the model otherwise: refused, and the exporter starts empty
    // (then reads the log, so it serves the application again, as without a checkpoint).
    let port = free_port();
    let extra = ["--web.openmetrics-created", "--model.summary-level", "full"];
    let mut p = start(port, logs.path(), &ckpt, &extra);
    assert_eq!(p.count_lines("Checkpoint refused; starting empty."), 1);
    let (_, text) = get(port, "/metrics").unwrap();
    assert!(
        text.contains("spark_exporter_checkpoint_loads_total{result=\"refused\"} 1"),
        "{text}"
    );
    p.terminate(Duration::from_secs(20));
}

#[test]
fn an_application_retired_before_a_restart_is_not_served_again() {
    let logs = logs();
    let state = tempfile::tempdir().unwrap();
    let ckpt = state.path().join("exporter.ckpt");
    let extra = ["--model.app-retention", "1s"];
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &extra);
    // Served, then retired one retention after the exporter saw its end.
    let deadline = Instant::now() + Duration::from_secs(20);
    while series(port).iter().any(|l| l.contains(APP)) {
        assert!(Instant::now() < deadline, "never retired");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(p
        .terminate(Duration::from_secs(20))
        .is_some_and(|s| s.success()));
    // Without the checkpoint it would be served again for a retention; with it, never.
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &extra);
    assert_eq!(p.count_lines("Checkpoint loaded."), 1);
    for _ in 0..5 {
        let s = series(port);
        assert!(!s.iter().any(|l| l.contains(APP)), "served again: {s:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    p.terminate(Duration::from_secs(20));
}
