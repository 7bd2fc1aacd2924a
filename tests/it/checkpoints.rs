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
use std::time::{Duration, Instant};

use support::files::free_port;
use support::http::http_get;
use support::proc::Guard;

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
    let (logs, ckpt) = (logs.to_str().unwrap(), ckpt.to_str().unwrap());
    let mut args = vec![
        "--spark.url=",
        "--event-log.dir",
        logs,
        "--checkpoint.path",
        ckpt,
    ];
    args.extend([
        "--checkpoint.interval",
        "500ms",
        "--lifecycle.drain-scrapes",
        "0",
    ]);
    args.extend_from_slice(extra);
    support::proc::start_ready(port, &args)
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

/// A checkpoint written by release 0.2.0 (`tests/data/checkpoints/0.2.0.ckpt`: this run's log
/// read to its end, then SIGTERM; the sources' deliveries were two fixed slots then) still loads:
/// the restarted exporter serves what a fresh one serves and does not read the log again. The
/// checkpoint's clock is the day it was written: a retention of years keeps its application
/// (retention is not part of the checkpoint's fingerprint).
#[test]
fn a_checkpoint_of_the_previous_release_still_loads() {
    let logs = logs();
    let fresh = free_port();
    let keep = ["--model.app-retention", "87600h"];
    let mut p = start(fresh, logs.path(), &logs.path().join("none.ckpt"), &keep);
    let want = series(fresh);
    p.terminate(Duration::from_secs(20));

    // The checkpoint names the folder it read; point it at this copy.
    let old = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/checkpoints/0.2.0.ckpt"),
    )
    .expect("fixture");
    assert!(old.starts_with(r#"{"format":"spark-exporter-checkpoint","version":2,"#));
    let state = tempfile::tempdir().unwrap();
    let ckpt = state.path().join("exporter.ckpt");
    let here = logs.path().to_str().unwrap();
    std::fs::write(&ckpt, old.replace("/tmp/ck/logs", here)).unwrap();
    let port = free_port();
    let mut p = start(port, logs.path(), &ckpt, &keep);
    assert_eq!(p.count_lines("Checkpoint loaded."), 1);
    same("from the 0.2.0 checkpoint", &want, &series(port));
    assert_eq!(bytes_read(port), 0.0, "the log was read again");
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

/// Every finished log of the repository's real Spark runs with distinct application ids and
/// several names, in one new folder.
fn many_logs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut sources: Vec<std::path::PathBuf> = vec![];
    for d in std::fs::read_dir(data.join("eventlogs")).expect("fixtures") {
        sources.extend(
            std::fs::read_dir(d.expect("entry").path())
                .expect("fixture")
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n != "counts.json")),
        );
    }
    for d in ["diagnosis-4.1.1", "spark-4.1.1-basic", "streaming-4.1.1"] {
        sources.extend(
            std::fs::read_dir(data.join(d).join("eventlog"))
                .expect("fixture")
                .flatten()
                .map(|e| e.path()),
        );
    }
    for src in sources {
        let dst = dir.path().join(src.file_name().unwrap());
        if src.is_dir() {
            std::fs::create_dir(&dst).expect("mkdir");
            for f in std::fs::read_dir(&src).expect("rolling folder").flatten() {
                std::fs::copy(f.path(), dst.join(f.file_name())).expect("copy");
            }
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
    dir
}

/// `count` shards over `logs`, their checkpoints beside `ckpt`; each ready.
fn shards(count: usize, logs: &Path, ckpt: &Path, extra: &[&str]) -> Vec<(u16, Guard)> {
    (0..count)
        .map(|i| {
            let port = free_port();
            let mut flags = vec![
                "--shard.count".to_string(),
                count.to_string(),
                "--shard.index".to_string(),
                i.to_string(),
            ];
            flags.extend(extra.iter().map(|s| s.to_string()));
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            (port, start(port, logs, ckpt, &flags))
        })
        .collect()
}

/// The sum over the shards of every Spark series (the exporter's own left out), and the union
/// of their `_created` lines: what `sum without (instance)` shows.
fn fleet_view(shards: &[(u16, Guard)]) -> (Vec<String>, Vec<String>) {
    let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
    let mut created: Vec<String> = vec![];
    for (port, _) in shards {
        for l in series(*port) {
            let (k, v) = l.rsplit_once(' ').expect("name value");
            *sums.entry(k.to_string()).or_default() += v.parse::<f64>().unwrap_or(f64::NAN);
        }
        created.extend(created_lines(*port));
    }
    created.sort();
    (
        sums.into_iter().map(|(k, v)| format!("{k} {v}")).collect(),
        created,
    )
}

fn created_lines(port: u16) -> Vec<String> {
    created(port)
}

fn stop_all(shards: Vec<(u16, Guard)>) {
    for (_, mut g) in shards {
        assert!(g
            .terminate(Duration::from_secs(20))
            .is_some_and(|s| s.success()));
    }
}

/// A reshard from 3 shards to 2 and back, per run and by name: each new shard loads its part
/// of every old shard's checkpoint (they share a folder), reads no finished log again, and the
/// sum over the shards of every series, with every `_created`, is what it was.
#[test]
fn a_reshard_hands_every_series_over() {
    let logs = many_logs();
    for extra in [
        &["--web.openmetrics-created"][..],
        &[
            "--web.openmetrics-created",
            "--model.aggregate-by",
            "app_name",
        ][..],
    ] {
        let state = tempfile::tempdir().unwrap();
        let ckpt = state.path().join("fleet.ckpt");
        let three = shards(3, logs.path(), &ckpt, extra);
        let before = fleet_view(&three);
        assert!(
            before
                .0
                .iter()
                .filter(|l| l.starts_with("spark_jobs_total{"))
                .count()
                > 10,
            "{extra:?}: {:?}",
            before.0
        );
        stop_all(three);
        for (i, n) in [(0, 3), (1, 3), (2, 3)] {
            assert!(state.path().join(format!("fleet.ckpt.{i}-of-{n}")).exists());
        }
        for count in [2, 3] {
            let now = shards(count, logs.path(), &ckpt, extra);
            for (port, g) in &now {
                assert_eq!(
                    g.count_lines("this shard's part of the previous shards' checkpoints"),
                    1,
                    "{extra:?}: {count} shards"
                );
                assert_eq!(
                    bytes_read(*port),
                    0.0,
                    "{extra:?}: {count} shards read logs again"
                );
            }
            let after = fleet_view(&now);
            same(&format!("{extra:?}: {count} shards"), &before.0, &after.0);
            same(
                &format!("{extra:?}: _created, {count} shards"),
                &before.1,
                &after.1,
            );
            stop_all(now);
        }
    }
}
