//! After a `kill -9` and a restart in the middle of a log, every series equals what a run without
//! the restart gives.
//!
//! The log is the real 51 MB Spark 4.1.1 event log `tests/data/bench/eventlog-10k-tasks.json.zst`
//! (10 jobs, 10,005 task ends), written into a temporary event-log folder as a *growing* log, in
//! chunks that cut lines (and zstd blocks) anywhere, as a live driver would:
//!
//! - `single_plain`: one uncompressed `local-<id>.inprogress` file, renamed to `local-<id>` at the
//!   end (Spark's single-file layout);
//! - `rolling_zstd`: a rolling `eventlog_v2_local-<id>/` folder of three zstd parts (one frame
//!   each, as Spark's zstd stream writes them) appended one after the other, with
//!   `appstatus_local-<id>.inprogress` renamed to `appstatus_local-<id>` at the end.
//!
//! Two exporters tail the folder (`--spark.url=`, event log only): **U** runs uninterrupted;
//! **R** is killed with SIGKILL once it has read 40% of the log (while the writer is still
//! appending), then restarted on the same port while the rest is written. When both have
//! read the complete log (and, within a minute, made their passes after the application's end:
//! its last window evaluation, its summary), every series of both (counters, gauges, histograms;
//! everything but the
//! exporter's own `spark_exporter_*` series and the clock-dependent
//! `spark_stage_stalled_seconds`) must equal a clean `spark-exporter dump --event-log` of the
//! complete log, value for value. The exporter keeps no checkpoint (`src/sources/eventlog/mod.rs`):
//! the
//! restarted process reads the log again from the start, and Spark-id keyed updates make the
//! re-read exact.
//!
//! Artefacts (exporter logs, scrapes, the dump) stay in `target/tmp/eventlog-restart-*-<pid>/`.

use crate::support;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::command::exporter_command;
use support::exposition::{diff, eventlog_errors, parse_exposition, value, Sample, Series};
use support::files::{artefact_dir, free_port};
use support::http::get_ok;
use support::live::{start_exporter, Failures};
use support::proc::Guard;

const LOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bench/eventlog-10k-tasks.json.zst"
);
/// The application id inside the log.
const APP: &str = "local-1795981295516";
/// Task ends in the log.
const TASKS: f64 = 10_005.0;
/// Pause between two appended chunks (the tailer polls every 200 ms).
const CHUNK_PAUSE: Duration = Duration::from_millis(15);
/// An exporter reading the whole log (debug build, two shared cores).
const CATCH_UP: Duration = Duration::from_secs(60);

/// The log's decoded bytes.
fn base_log() -> Vec<u8> {
    zstd::decode_all(fs::File::open(LOG).expect("open the bench log")).expect("decode it")
}

/// What to append where: (file, bytes), in order.
struct Plan {
    segments: Vec<(PathBuf, Vec<u8>)>,
    chunk: usize,
    /// Renames that end the log, in order.
    finish: Vec<(PathBuf, PathBuf)>,
    /// The path to `dump` at the end.
    complete: PathBuf,
    /// Files the exporter follows.
    files: f64,
}

fn single_plain(events: &Path, base: &[u8]) -> Plan {
    let live = events.join(format!("{APP}.inprogress"));
    let done = events.join(APP);
    Plan {
        segments: vec![(live.clone(), base.to_vec())],
        // Odd sizes: lines are cut anywhere.
        chunk: 1_000_003,
        finish: vec![(live, done.clone())],
        complete: done,
        files: 1.0,
    }
}

fn rolling_zstd(events: &Path, base: &[u8]) -> Plan {
    let folder = events.join(format!("eventlog_v2_{APP}"));
    fs::create_dir_all(&folder).unwrap();
    let status = folder.join(format!("appstatus_{APP}.inprogress"));
    fs::write(&status, b"").unwrap();
    // Three parts cut at line ends near each third, one zstd frame each (level 1, Spark's
    // default `spark.io.compression.zstd.level`).
    let mut segments = vec![];
    let mut start = 0;
    for (i, third) in [1, 2, 3].into_iter().enumerate() {
        let end = if third == 3 {
            base.len()
        } else {
            let at = base.len() * third / 3;
            at + base[at..].iter().position(|b| *b == b'\n').unwrap() + 1
        };
        let part = folder.join(format!("events_{}_{APP}.zstd", i + 1));
        segments.push((part, zstd::encode_all(&base[start..end], 1).unwrap()));
        start = end;
    }
    Plan {
        segments,
        chunk: 65_537,
        finish: vec![(status, folder.join(format!("appstatus_{APP}")))],
        complete: folder,
        files: 3.0,
    }
}

/// Appends a plan's bytes chunk by chunk.
struct Writer {
    plan: Plan,
    seg: usize,
    off: usize,
    written: usize,
    total: usize,
}

impl Writer {
    fn new(plan: Plan) -> Writer {
        let total = plan.segments.iter().map(|(_, b)| b.len()).sum();
        Writer {
            plan,
            seg: 0,
            off: 0,
            written: 0,
            total,
        }
    }

    /// Append (pausing between chunks) until `fraction` of all bytes is written.
    fn write_to(&mut self, fraction: f64) {
        let goal = (self.total as f64 * fraction) as usize;
        while self.written < goal && self.seg < self.plan.segments.len() {
            let (path, bytes) = &self.plan.segments[self.seg];
            let n = self.plan.chunk.min(bytes.len() - self.off);
            let mut f = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            f.write_all(&bytes[self.off..self.off + n]).unwrap();
            self.off += n;
            self.written += n;
            if self.off == bytes.len() {
                self.seg += 1;
                self.off = 0;
            }
            std::thread::sleep(CHUNK_PAUSE);
        }
    }

    /// Write the rest and end the log.
    fn finish(&mut self) {
        self.write_to(1.0);
        for (from, to) in &self.plan.finish {
            fs::rename(from, to).unwrap();
        }
    }
}

fn scrape(port: u16) -> Vec<Sample> {
    get_ok(&format!("http://127.0.0.1:{port}/metrics"))
        .map(|t| parse_exposition(&t))
        .unwrap_or_default()
}

/// Every series but the exporter's own and the clock-dependent stall gauge.
fn comparable(samples: &[Sample]) -> Series {
    samples
        .iter()
        .filter(|s| {
            !s.name.starts_with("spark_exporter_")
                && !s.name.starts_with("process_")
                && s.name != "spark_stage_stalled_seconds"
        })
        .map(|s| (s.id(), s.value))
        .collect()
}

/// Whether an exporter has read the complete, ended log.
fn caught_up(s: &[Sample], decoded: f64, files: f64) -> bool {
    value(s, "spark_exporter_eventlog_bytes_total", &[]) == Some(decoded)
        && value(s, "spark_exporter_eventlog_files", &[("state", "finished")]) == Some(files)
        && value(s, "spark_exporter_eventlog_files", &[("state", "active")]) == Some(0.0)
        && value(s, "spark_app_end_time_seconds", &[("app_id", APP)]).is_some()
}

fn run(case: &str, layout: fn(&Path, &[u8]) -> Plan) {
    let t0 = Instant::now();
    let dir = artefact_dir(&format!("eventlog-restart-{case}"));
    let events = dir.join("events");
    fs::create_dir_all(&events).unwrap();
    let base = base_log();
    let decoded = base.len() as f64;
    let plan = layout(&events, &base);
    let files = plan.files;
    let complete = plan.complete.clone();
    let mut writer = Writer::new(plan);
    let mut f = Failures::default();

    let args = [
        "--spark.url=",
        "--event-log.dir",
        events.to_str().unwrap(),
        "--event-log.poll-interval",
        "200ms",
    ];
    let (port_u, port_r) = (free_port(), free_port());
    let limit = Duration::from_secs(30);
    let u = start_exporter("exporter-u", port_u, &args, &dir, limit);
    let mut r = start_exporter("exporter-r", port_r, &args, &dir, limit);

    // Keep writing (up to 60%); kill R with SIGKILL as soon as it has read 40% (inside the
    // second part of the rolling log, while the writer is still appending).
    kill_mid_log(&mut f, case, &dir, &mut writer, &mut r, port_r, decoded);

    // More is written while R is down; then R comes back on the same port, and the rest follows.
    writer.write_to(0.8);
    let r2 = start_exporter("exporter-r-restarted", port_r, &args, &dir, limit);
    writer.finish();

    // The reference: a clean post-mortem read of the complete log.
    let reference = reference(&mut f, &dir, &complete);
    let got: Vec<(&str, Vec<Sample>)> = [("U", port_u), ("R", port_r)]
        .into_iter()
        .map(|(name, port)| {
            let s = read_complete(&mut f, &dir, name, port, decoded, files, &reference);
            (name, s)
        })
        .collect();
    for (name, s) in &got {
        check_against_reference(&mut f, name, s, &reference);
    }
    eprintln!(
        "[{case}] {} series compared, {:?} in all",
        reference.len(),
        t0.elapsed()
    );
    drop((u, r, r2));
    f.finish(&dir);
}

/// Write until R has read 40% of the log (up to 60% written), then SIGKILL it; check it died
/// mid-log.
fn kill_mid_log(
    f: &mut Failures,
    case: &str,
    dir: &Path,
    writer: &mut Writer,
    r: &mut Guard,
    port_r: u16,
    decoded: f64,
) {
    writer.write_to(0.2);
    let mut before_kill = vec![];
    let deadline = Instant::now() + CATCH_UP;
    loop {
        let s = scrape(port_r);
        let read = value(&s, "spark_exporter_eventlog_bytes_total", &[]).unwrap_or(0.0);
        if read >= decoded * 0.4 {
            before_kill = s;
            r.kill9();
            break;
        }
        assert!(Instant::now() < deadline, "R never read 40% of the log");
        writer.write_to((writer.written as f64 / writer.total as f64 + 0.02).min(0.6));
        std::thread::sleep(Duration::from_millis(20));
    }
    let read_at_kill = value(&before_kill, "spark_exporter_eventlog_bytes_total", &[]).unwrap();
    let tasks_at_kill: f64 = before_kill
        .iter()
        .filter(|s| s.name == "spark_tasks_total")
        .map(|s| s.value)
        .sum();
    eprintln!(
        "[{case}] R killed after reading {read_at_kill} of {decoded} bytes ({tasks_at_kill} tasks); \
         {} of {} bytes written",
        writer.written, writer.total
    );
    f.check(
        "R was killed in the middle of the log",
        read_at_kill < decoded && tasks_at_kill > 0.0 && tasks_at_kill < TASKS,
        || format!("read {read_at_kill} bytes, {tasks_at_kill} tasks"),
    );
    fs::write(dir.join("scrape-r-before-kill.txt"), render(&before_kill)).ok();
}

/// Scrape exporter `name` until it has read the complete, ended log; check that it did.
fn read_complete(
    f: &mut Failures,
    dir: &Path,
    name: &str,
    port: u16,
    decoded: f64,
    files: f64,
    reference: &Series,
) -> Vec<Sample> {
    let deadline = Instant::now() + CATCH_UP;
    // Read to the end, then until its series equal the reference: the application's last window
    // evaluation and its summary come with the model's passes after the end is read.
    let s = loop {
        let s = scrape(port);
        let done = caught_up(&s, decoded, files) && diff(reference, &comparable(&s)).is_empty();
        if done || Instant::now() > deadline {
            break s;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    f.check(
        &format!("exporter {name} read the complete log"),
        caught_up(&s, decoded, files),
        || {
            format!(
                "bytes {:?} of {decoded}, files {:?}",
                value(&s, "spark_exporter_eventlog_bytes_total", &[]),
                s.iter()
                    .filter(|x| x.name == "spark_exporter_eventlog_files")
                    .map(|x| (x.label("state").to_string(), x.value))
                    .collect::<Vec<_>>()
            )
        },
    );
    fs::write(dir.join(format!("scrape-{name}.txt")), render(&s)).ok();
    s
}

/// `dump --event-log` of the complete log: the comparable series; it must have every task.
fn reference(f: &mut Failures, dir: &Path, complete: &Path) -> Series {
    let out = exporter_command(
        &["dump", "--event-log", &complete.to_string_lossy()],
        Duration::from_secs(300),
    );
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    fs::write(dir.join("dump.txt"), &out.stdout).ok();
    let reference = comparable(&parse_exposition(&out.stdout));
    f.check(
        "the dump has the log's 10,005 tasks",
        reference
            .iter()
            .filter(|(k, _)| k.starts_with("spark_tasks_total{"))
            .map(|(_, v)| v)
            .sum::<f64>()
            == TASKS,
        || "task total differs".into(),
    );
    reference
}

/// Exporter `name`'s scrape `s`: every series equal to the reference, no event-log errors.
fn check_against_reference(f: &mut Failures, name: &str, s: &[Sample], reference: &Series) {
    let what = match name {
        "U" => "exporter U (uninterrupted tail) vs dump of the complete log: every series",
        _ => {
            "exporter R (killed -9 and restarted mid-log) vs dump of the complete log: every series"
        }
    };
    f.compare(what, reference, &comparable(s));
    let errors = eventlog_errors(s);
    let all_errors: f64 = s
        .iter()
        .filter(|x| x.name == "spark_exporter_eventlog_errors_total")
        .map(|x| x.value)
        .sum();
    f.check(
        &format!("exporter {name}: no event-log errors"),
        all_errors == 0.0,
        || format!("{errors:?} ({all_errors} in all)"),
    );
}

fn render(samples: &[Sample]) -> String {
    samples
        .iter()
        .map(|s| format!("{} {}\n", s.id(), s.value))
        .collect()
}

#[test]
fn single_plain_log_restart_mid_way_equals_clean_read() {
    run("single_plain", single_plain);
}

#[test]
fn rolling_zstd_log_restart_mid_way_equals_clean_read() {
    run("rolling_zstd", rolling_zstd);
}
