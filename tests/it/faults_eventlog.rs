//! Fault injection against the event-log tailer: the real `spark-exporter` binary follows a
//! temporary `--event-log.dir` (`--spark.url=`, `--event-log.poll-interval 200ms`) while the test
//! damages real Spark event logs from `tests/data/` under it:
//!
//! - (a) `append_*`: a log copied in chunks, a chunk ending in the middle of a line, and (zstd)
//!   in the middle of a compressed block and of a frame header;
//! - (b) `truncate_*`: a file cut shorter than what was read, then written back;
//! - (c) `rotate_*`: `.inprogress` renamed to the final name; a rolling log gaining its
//!   `events_2_` part and its `appstatus_` losing `.inprogress`;
//! - (d) `delete_*`: logs deleted after they were read;
//! - (e) `unreadable_*`: a folder, a rolling folder and a file the exporter may not read (the
//!   exporter runs as `nobody` through util-linux `setpriv --reuid=65534 --regid=65534
//!   --clear-groups`, because the tests run as root and root reads through any mode bits);
//! - (f) `corrupt_*`: garbage lines in a copy; a zstd block with a corrupt header in a copy.
//!
//! Each time: the exporter stays up; a watcher thread scrapes `/metrics` every 100 ms throughout
//! and every answer must be HTTP 200 within 1 s; `spark_exporter_eventlog_errors_total{kind}`
//! must say exactly what happened (and nothing when nothing was wrong); and at the end the
//! application's series (jobs, stages, tasks, durations, task metrics, executors, app info) must
//! equal those of `spark-exporter dump --event-log` on the intact log. For a deleted log the
//! series stay as they were; for damaged input everything not damaged is counted.
//!
//! Checkpoints: the tailer keeps none (`src/sources/eventlog/mod.rs`: every log is re-read from its
//! start
//! after a restart), so the usual "checkpoint location full or read-only" fault does not apply
//! here; the exporter as `nobody` writes nothing at all.
//!
//! Artefacts (exporter logs, scrapes, the damaged copies) stay in
//! `target/tmp/faults-<test>-<pid>/`.

#[path = "../faults/logs.rs"]
mod logs;
use crate::support;

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use logs::*;
use support::exposition::*;
use support::faults::*;
use support::files::{artefact_dir, tail_file};
use support::http::*;
use support::proc::*;
use support::EXPORTER;

/// The tailer's discovery and end-of-file back-off.
const POLL: &str = "200ms";
/// How long the exporter may take to reach an expected state (it needs a few polls; CI machines
/// are shared).
const CATCH_UP: Duration = Duration::from_secs(20);
/// How long a state must hold to count as settled (ten polls).
const SETTLE: Duration = Duration::from_secs(2);

/// One scenario: an event-log folder, an exporter following it, a `/metrics` watcher.
struct Tail {
    name: String,
    dir: PathBuf,
    logs: PathBuf,
    exp: Exporter,
    watch: Watcher,
    t0: Instant,
}

impl Tail {
    fn start(name: &str) -> Tail {
        Tail::start_with(name, &[], &[])
    }

    /// `envs` are exporter settings (`SPARK_EXPORTER_...`), `extra_dirs` more `--event-log.dir`s.
    fn start_with(name: &str, envs: &[(&str, &str)], extra_dirs: &[&Path]) -> Tail {
        let dir = artefact_dir(&format!("faults-{name}"));
        let logs = dir.join("logs");
        fs::create_dir_all(&logs).unwrap();
        let exp = start_exporter(&dir, &[], &logs, extra_dirs, envs);
        let watch = Watcher::start(&exp.addr);
        Tail {
            name: name.to_string(),
            dir,
            logs,
            exp,
            watch,
            t0: Instant::now(),
        }
    }

    fn say(&self, msg: &str) {
        say(self.t0, &self.name, msg);
    }

    /// Scrape; the exporter must be up and answer 200 within 1 s.
    fn scrape(&mut self) -> Vec<Sample> {
        self.exp.assert_alive();
        self.exp.scrape()
    }

    /// Wait until `cond` holds on a scrape, then check it still holds [`SETTLE`] later (the
    /// exporter settled there rather than passing through). Returns the last scrape.
    fn settle(&mut self, what: &str, cond: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
        let mut last = vec![];
        let ok = wait_for(CATCH_UP, Duration::from_millis(100), || {
            last = self.scrape();
            cond(&last).then_some(())
        });
        if ok.is_none() {
            self.fail(&format!("not reached within {CATCH_UP:?}: {what}"), &last);
        }
        std::thread::sleep(SETTLE);
        let again = self.scrape();
        if !cond(&again) {
            self.fail(&format!("reached, then left: {what}"), &again);
        }
        self.watch.assert_ok(what);
        self.say(&format!("settled: {what}"));
        again
    }

    fn fail(&self, msg: &str, last: &[Sample]) -> ! {
        let summary: Vec<String> = last
            .iter()
            .filter(|s| s.name.starts_with("spark_exporter_eventlog"))
            .map(|s| format!("  {} {}", s.id(), s.value))
            .collect();
        panic!(
            "{}: {msg}\nlast scrape (event-log self-metrics):\n{}\nexporter log:\n{}",
            self.name,
            summary.join("\n"),
            tail_file(&self.exp.log, 30)
        );
    }

    /// End of a scenario: the exporter is up, every scrape was fine, and it stops cleanly.
    fn finish(mut self) {
        self.exp.assert_alive();
        let st = self.watch.stop();
        assert!(
            st.failures.is_empty(),
            "{}: /metrics failures: {:?}",
            self.name,
            st.failures
        );
        let exit = self.exp.terminate();
        assert!(
            exit.is_some_and(|s| s.success()),
            "{}: exporter after SIGTERM: {exit:?}",
            self.name
        );
        self.say(&format!(
            "done: {} scrapes, slowest {:?}",
            st.scrapes, st.slowest
        ));
    }
}

fn start_exporter(
    dir: &Path,
    prefix: &[&str],
    logs: &Path,
    extra_dirs: &[&Path],
    envs: &[(&str, &str)],
) -> Exporter {
    start_exporter_bin(dir, prefix, Path::new(EXPORTER), logs, extra_dirs, envs)
}

fn start_exporter_bin(
    dir: &Path,
    prefix: &[&str],
    bin: &Path,
    logs: &Path,
    extra_dirs: &[&Path],
    envs: &[(&str, &str)],
) -> Exporter {
    let mut args: Vec<String> = vec![
        "--spark.url=".into(),
        "--event-log.poll-interval".into(),
        POLL.into(),
        "--event-log.dir".into(),
        logs.to_string_lossy().into_owned(),
    ];
    for d in extra_dirs {
        args.push("--event-log.dir".into());
        args.push(d.to_string_lossy().into_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Exporter::start_bin(dir, "exporter", prefix, bin, &args, envs)
}

// ---------------------------------------------------------------------------------------------
// What the exporter should show
// ---------------------------------------------------------------------------------------------

/// A clean read of an intact log: its application id, its series, the decoded bytes.
struct Clean {
    app_id: String,
    series: Series,
    bytes: f64,
    errors: BTreeMap<String, f64>,
}

/// Every series of the model for one application, except `spark_stage_stalled_seconds` (seconds
/// since now, for unfinished stages).
fn model_series(s: &Sample) -> bool {
    !s.name.starts_with("spark_stage_stalled_seconds")
}

fn clean(path: &Path) -> Clean {
    let samples = dump_event_log(path);
    let ids: Vec<&str> = samples
        .iter()
        .filter(|s| s.name == "spark_app_info")
        .map(|s| s.label("app_id"))
        .collect();
    assert_eq!(ids.len(), 1, "dump of {}: apps {ids:?}", path.display());
    let app_id = ids[0].to_string();
    let series = app_samples(&samples, &app_id, model_series);
    assert!(
        series.keys().any(|k| k.starts_with("spark_tasks_total")),
        "dump of {} has no tasks",
        path.display()
    );
    Clean {
        series,
        bytes: value(&samples, "spark_exporter_eventlog_bytes_total", &[]).unwrap_or(0.0),
        errors: eventlog_errors(&samples),
        app_id,
    }
}

fn bytes_read(s: &[Sample]) -> f64 {
    value(s, "spark_exporter_eventlog_bytes_total", &[]).unwrap_or(0.0)
}

fn files(s: &[Sample], state: &str) -> f64 {
    value(s, "spark_exporter_eventlog_files", &[("state", state)]).unwrap_or(0.0)
}

fn errors_are(want: &BTreeMap<String, f64>) -> impl Fn(&[Sample]) -> bool + '_ {
    move |s| eventlog_errors(s) == *want
}

fn errs(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The application's series on the exporter equal the clean read's.
fn assert_app_equals(what: &str, samples: &[Sample], want: &Clean) {
    assert_series(
        &format!("{what}: series of {} vs dump --event-log", want.app_id),
        &want.series,
        &app_samples(samples, &want.app_id, model_series),
    );
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.write_all(bytes).unwrap();
}

fn inprogress(name: &str) -> String {
    format!("{name}.inprogress")
}

// ---------------------------------------------------------------------------------------------
// (a) Appending in chunks
// ---------------------------------------------------------------------------------------------

/// An uncompressed log copied in three chunks, each of the first two ending in the middle of a
/// line: only complete lines are read (exactly the bytes up to the last newline), nothing is an
/// error, and the whole log equals a clean read.
#[test]
fn append_plain_chunks_ending_mid_line() {
    let src = single_fixture("spark-4.1.1-none-single");
    let want = clean(&src);
    let text = fs::read(&src).unwrap();
    let mut t = Tail::start("append-plain");
    let live = t.logs.join(inprogress(&file_name(&src)));
    let cuts = [mid_line(&text, 0.3), mid_line(&text, 0.7), text.len()];
    let mut from = 0;
    for cut in cuts {
        append(&live, &text[from..cut]);
        from = cut;
        let expect = complete_lines(&text[..cut]) as f64;
        t.say(&format!(
            "wrote {cut} of {} bytes; expecting {expect} read",
            text.len()
        ));
        t.settle(
            &format!("read exactly the complete lines of {cut} bytes"),
            |s| {
                bytes_read(s) == expect
                    && eventlog_errors(s).is_empty()
                    && files(s, "active") == 1.0
            },
        );
    }
    fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
    let s = t.settle("finished after the rename, no error", |s| {
        files(s, "finished") == 1.0 && files(s, "active") == 0.0 && eventlog_errors(s).is_empty()
    });
    assert_eq!(bytes_read(&s), want.bytes, "decoded bytes read once");
    assert_app_equals("plain log copied in chunks", &s, &want);
    t.finish();
}

/// A zstd log (Spark's default codec) copied in chunks ending in the middle of a compressed
/// block and in the middle of a frame header (so in the middle of the lines the cut frame
/// holds): the frames completed so far are read (their lines, exactly), the rest waits, nothing
/// is an error.
#[test]
fn append_zstd_chunks_ending_mid_block() {
    let src = single_fixture("spark-4.1.1-zstd-single");
    let want = clean(&src);
    let raw = fs::read(&src).unwrap();
    let frames = zstd_frames(&raw);
    assert!(
        frames.len() > 10 && frames.iter().all(|f| f.blocks.len() == 1),
        "Spark writes a frame per flush"
    );
    // Mid-block: halfway through the payload of a compressed block a third of the way in.
    let f1 = frames[frames.len() / 3..]
        .iter()
        .find(|f| f.blocks[0].kind == 2 && f.blocks[0].size > 64)
        .unwrap();
    let mid_block = f1.blocks[0].header + 3 + f1.blocks[0].size / 2;
    // Mid-header: two bytes into the magic number of a frame two thirds of the way in.
    let mid_header = frames[frames.len() * 2 / 3].start + 2;
    let decoded_all = zstd_decode(&raw);
    let mut t = Tail::start("append-zstd");
    let live = t.logs.join(inprogress(&file_name(&src)));
    let mut from = 0;
    for cut in [mid_block, mid_header, raw.len()] {
        append(&live, &raw[from..cut]);
        from = cut;
        let decoded = zstd_decoded_prefix(&raw, cut);
        assert!(decoded_all.starts_with(&decoded));
        let expect = complete_lines(&decoded) as f64;
        // Spark flushes (and so ends a frame) after each event, so complete frames end with a
        // newline and the lines of the cut frame are the partial ones.
        assert_eq!(decoded.len(), complete_lines(&decoded));
        if cut < raw.len() {
            assert!(
                frames.iter().any(|f| f.start < cut && cut < f.end),
                "the cut is inside a frame"
            );
        }
        t.say(&format!(
            "wrote {cut} of {} bytes; expecting {expect} decoded bytes read",
            raw.len()
        ));
        t.settle(
            &format!("read exactly the complete lines of the frames in {cut} bytes"),
            |s| {
                bytes_read(s) == expect
                    && eventlog_errors(s).is_empty()
                    && files(s, "active") == 1.0
            },
        );
    }
    fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
    let s = t.settle("finished after the rename, no error", |s| {
        files(s, "finished") == 1.0 && files(s, "active") == 0.0 && eventlog_errors(s).is_empty()
    });
    assert_eq!(bytes_read(&s), want.bytes, "decoded bytes read once");
    assert_app_equals("zstd log copied in chunks", &s, &want);
    t.finish();
}

// ---------------------------------------------------------------------------------------------
// (b) Truncation under the reader
// ---------------------------------------------------------------------------------------------

/// A log being followed is cut to 40 % (in the middle of a line, and for zstd in the middle of
/// a block), shorter than what was read: `truncated` is counted once and the prefix is read
/// again from the start; then the rest is written back and the log equals a clean read (the
/// re-read counts nothing twice).
#[test]
fn truncate_below_the_read_offset_then_rewrite() {
    for fixture in ["spark-4.1.1-zstd-single", "spark-4.1.1-none-single"] {
        let src = single_fixture(fixture);
        let zstd = src.extension().is_some_and(|e| e == "zstd");
        let want = clean(&src);
        let raw = fs::read(&src).unwrap();
        let mut t = Tail::start(&format!("truncate-{fixture}"));
        let live = t.logs.join(inprogress(&file_name(&src)));
        append(&live, &raw);
        t.settle("the whole log read", |s| {
            bytes_read(s) == want.bytes && eventlog_errors(s).is_empty()
        });

        let cut = if zstd {
            let frames = zstd_frames(&raw);
            let f = frames[frames.len() * 2 / 5..]
                .iter()
                .find(|f| f.blocks[0].kind == 2 && f.blocks[0].size > 64)
                .unwrap();
            f.blocks[0].header + 3 + f.blocks[0].size / 2
        } else {
            mid_line(&raw, 0.4)
        };
        let prefix = if zstd {
            zstd_decoded_prefix(&raw, cut)
        } else {
            raw[..cut].to_vec()
        };
        let reread = complete_lines(&prefix) as f64;
        OpenOptions::new()
            .write(true)
            .open(&live)
            .unwrap()
            .set_len(cut as u64)
            .unwrap();
        t.say(&format!(
            "cut to {cut} bytes; expecting truncated 1 and {reread} bytes read again"
        ));
        t.settle("truncation counted once, the prefix read again", |s| {
            errors_are(&errs(&[("truncated", 1.0)]))(s) && bytes_read(s) == want.bytes + reread
        });

        append(&live, &raw[cut..]);
        t.settle("the rest read after the rewrite", |s| {
            errors_are(&errs(&[("truncated", 1.0)]))(s) && bytes_read(s) == 2.0 * want.bytes
        });
        fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
        let s = t.settle("finished", |s| {
            files(s, "finished") == 1.0 && files(s, "active") == 0.0
        });
        assert_eq!(eventlog_errors(&s), errs(&[("truncated", 1.0)]));
        assert_app_equals(&format!("{fixture} truncated and rewritten"), &s, &want);
        t.finish();
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Rotation
// ---------------------------------------------------------------------------------------------

/// `.inprogress` renamed to the final name after the log was read: the file is followed by
/// identity, so nothing is read twice, nothing is an error, and the log ends as finished.
#[test]
fn rotate_single_file_inprogress_to_final() {
    let src = single_fixture("spark-4.1.1-snappy-single");
    let want = clean(&src);
    let mut t = Tail::start("rotate-single");
    let live = t.logs.join(inprogress(&file_name(&src)));
    fs::copy(&src, &live).unwrap();
    t.settle("read while in progress", |s| {
        bytes_read(s) == want.bytes && files(s, "active") == 1.0 && eventlog_errors(s).is_empty()
    });
    fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
    let s = t.settle("finished after the rename, not read again", |s| {
        bytes_read(s) == want.bytes
            && files(s, "finished") == 1.0
            && files(s, "active") == 0.0
            && eventlog_errors(s).is_empty()
    });
    assert_app_equals("single file renamed", &s, &want);
    t.finish();
}

/// A rolling log (Spark 4's default layout; the real zstd log of `spark-4.1.1-basic`) rolls:
/// its events are split at a line boundary into `events_1_` and `events_2_` (each its own zstd
/// stream, as Spark starts a new compressed stream per part). Part 1 and `appstatus_*.inprogress`
/// first; then part 2 appears; then `appstatus_` loses `.inprogress`. Each part is read once,
/// nothing is an error, both parts end finished, and the log equals a clean read of the original.
#[test]
fn rotate_rolling_log_new_part_and_appstatus() {
    let orig = rolling_fixture("spark-4.1.1-basic/eventlog");
    let want = clean(&orig);
    let folder = file_name(&orig);
    let app = folder.strip_prefix("eventlog_v2_").unwrap().to_string();
    let part1_src = orig.join(format!("events_1_{app}.zstd"));
    let text = zstd_decode(&fs::read(&part1_src).unwrap());
    let half = complete_lines(&text[..text.len() / 2]);
    let (p1, p2) = text.split_at(half);

    let mut t = Tail::start("rotate-rolling");
    let dir = t.logs.join(&folder);
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join(format!("events_1_{app}.zstd")),
        zstd::encode_all(p1, 3).unwrap(),
    )
    .unwrap();
    fs::write(dir.join(format!("appstatus_{app}.inprogress")), b"").unwrap();
    t.settle("part 1 read", |s| {
        bytes_read(s) == p1.len() as f64
            && files(s, "active") == 1.0
            && eventlog_errors(s).is_empty()
    });
    fs::write(
        dir.join(format!("events_2_{app}.zstd")),
        zstd::encode_all(p2, 3).unwrap(),
    )
    .unwrap();
    t.settle("part 2 read, part 1 finished", |s| {
        bytes_read(s) == text.len() as f64
            && files(s, "finished") == 1.0
            && files(s, "active") == 1.0
            && eventlog_errors(s).is_empty()
    });
    fs::rename(
        dir.join(format!("appstatus_{app}.inprogress")),
        dir.join(format!("appstatus_{app}")),
    )
    .unwrap();
    let s = t.settle(
        "both parts finished after appstatus_ lost .inprogress",
        |s| {
            bytes_read(s) == text.len() as f64
                && files(s, "finished") == 2.0
                && files(s, "active") == 0.0
                && eventlog_errors(s).is_empty()
        },
    );
    assert_eq!(
        bytes_read(&s),
        want.bytes,
        "the same events as the original"
    );
    assert_app_equals("rolling log rolled", &s, &want);
    t.finish();
}

// ---------------------------------------------------------------------------------------------
// (d) Deletion
// ---------------------------------------------------------------------------------------------

/// Three logs read: a finished lz4 file, a finished snappy file (Spark 3.5.5) and an unfinished
/// rolling lzf log. The lz4 file and the rolling folder are deleted: their applications' series
/// stay exactly as they were (until `model.app_retention`), the files are no longer followed, and
/// a deletion is not an error.
#[test]
fn delete_logs_after_reading() {
    let a_src = single_fixture("spark-4.1.1-lz4-single");
    let b_src = single_fixture("spark-3.5.5-snappy-single");
    let c_src = rolling_fixture("eventlogs/spark-4.1.1-lzf-rolling");
    let (a, b) = (clean(&a_src), clean(&b_src));
    let mut t = Tail::start("delete");
    let a_path = t.logs.join(file_name(&a_src));
    fs::copy(&a_src, &a_path).unwrap();
    fs::copy(&b_src, t.logs.join(file_name(&b_src))).unwrap();
    // The rolling log as while its application runs: appstatus_ still `.inprogress`.
    let c_dir = t.logs.join(file_name(&c_src));
    fs::create_dir(&c_dir).unwrap();
    for e in fs::read_dir(&c_src).unwrap().flatten() {
        let name = file_name(&e.path());
        let to = if name.starts_with("appstatus_") {
            inprogress(&name)
        } else {
            name
        };
        fs::copy(e.path(), c_dir.join(to)).unwrap();
    }
    let c = clean(&c_dir);
    let total = a.bytes + b.bytes + c.bytes;
    let before = t.settle("all three read", |s| {
        bytes_read(s) == total
            && files(s, "finished") == 2.0
            && files(s, "active") == 1.0
            && eventlog_errors(s).is_empty()
    });
    for want in [&a, &b, &c] {
        assert_app_equals("before deleting", &before, want);
    }

    fs::remove_file(&a_path).unwrap();
    fs::remove_dir_all(&c_dir).unwrap();
    t.say("deleted the lz4 file and the rolling folder");
    let after = t.settle("deleted logs no longer followed, no error", |s| {
        files(s, "finished") + files(s, "active") + files(s, "error") == 1.0
            && eventlog_errors(s).is_empty()
    });
    assert_eq!(bytes_read(&after), total, "nothing read again");
    for want in [&a, &b, &c] {
        assert_series(
            &format!("after deleting: series of {} as before", want.app_id),
            &app_samples(&before, &want.app_id, model_series),
            &app_samples(&after, &want.app_id, model_series),
        );
    }
    t.finish();
}

// ---------------------------------------------------------------------------------------------
// (e) Permissions
// ---------------------------------------------------------------------------------------------

const NOBODY: [&str; 4] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
];

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            fs::copy(&p, to.join(e.file_name())).unwrap();
            chmod(&to.join(e.file_name()), 0o644);
        }
    }
    chmod(to, 0o755);
}

/// The exporter runs as `nobody` (setpriv) on two configured folders: `logs/` holds a readable
/// zstd log, a rolling folder with mode 0700 and a single file with mode 0600; `locked/` (0700)
/// holds a readable log. Each unreadable thing is counted once as `io` and stays counted once
/// while it fails (the exporter retries every poll); the readable log is read meanwhile; once the
/// modes are fixed everything is read, with no further error, and every application equals a
/// clean read.
#[test]
fn unreadable_folder_rolling_folder_and_file_as_nobody() {
    // Under the system temp folder: every parent must be searchable by nobody.
    let root = tempfile::Builder::new()
        .prefix("faults-perm-")
        .tempdir()
        .unwrap();
    chmod(root.path(), 0o755);
    let bin = exporter_for_nobody(root.path());
    let a_src = single_fixture("spark-4.1.1-zstd-single");
    let b_src = rolling_fixture("eventlogs/spark-4.1.1-snappy-rolling");
    let c_src = single_fixture("spark-3.5.5-lz4-single");
    let d_src = single_fixture("spark-3.5.5-zstd-single");
    let (a, b, c, d) = (clean(&a_src), clean(&b_src), clean(&c_src), clean(&d_src));
    let layout = Unreadable::lay_out(root.path(), [&a_src, &b_src, &c_src, &d_src]);

    let name = "unreadable";
    let dir = artefact_dir(&format!("faults-{name}"));
    let exp = start_exporter_bin(&dir, &NOBODY, &bin, &layout.logs, &[&layout.locked], &[]);
    let uid = fs::read_to_string(format!("/proc/{}/status", exp.guard.pid()))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string());
    assert_eq!(uid.as_deref(), Some("65534"), "the exporter runs as nobody");
    let watch = Watcher::start(&exp.addr);
    let mut t = Tail {
        name: name.into(),
        dir,
        logs: layout.logs.clone(),
        exp,
        watch,
        t0: Instant::now(),
    };
    t.say(&format!(
        "exporter pid {} as uid 65534 on {}",
        t.exp.guard.pid(),
        root.path().display()
    ));

    // Checked after recovery too, so one failure does not hide the other.
    let mut problems = vec![];
    check_while_unreadable(&mut t, &a, &mut problems);

    layout.fix();
    t.say("modes fixed");
    check_once_readable(&mut t, [&a, &b, &c, &d], &mut problems);
    assert!(
        problems.is_empty(),
        "{} (exporter log: {})",
        problems.join("\n"),
        t.exp.log.display()
    );
    t.finish();
}

/// The binary where nobody can run it: in place if its folders allow, else a copy in `root`.
fn exporter_for_nobody(root: &Path) -> PathBuf {
    let runs = |bin: &Path| {
        std::process::Command::new(NOBODY[0])
            .args(&NOBODY[1..])
            .arg(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut bin = PathBuf::from(EXPORTER);
    if !runs(&bin) {
        bin = root.join("spark-exporter");
        fs::copy(EXPORTER, &bin).unwrap();
        chmod(&bin, 0o755);
        assert!(
            runs(&bin),
            "cannot run the exporter as nobody with `{}` (util-linux)",
            NOBODY.join(" ")
        );
    }
    bin
}

/// The two configured folders of the permissions test and what in them nobody cannot read.
struct Unreadable {
    /// Readable, with a readable log, the 0700 rolling folder and the 0600 file.
    logs: PathBuf,
    /// Mode 0700, holding a readable log.
    locked: PathBuf,
    rolling: PathBuf,
    file: PathBuf,
}

impl Unreadable {
    /// `logs/` gets `a` (readable), `b` (a rolling folder, 0700) and `c` (0600); `locked/` gets
    /// `d`.
    fn lay_out(root: &Path, [a_src, b_src, c_src, d_src]: [&Path; 4]) -> Unreadable {
        let logs = root.join("logs");
        let locked = root.join("locked");
        fs::create_dir(&logs).unwrap();
        fs::create_dir(&locked).unwrap();
        chmod(&logs, 0o755);
        fs::copy(a_src, logs.join(file_name(a_src))).unwrap();
        chmod(&logs.join(file_name(a_src)), 0o644);
        let b_dir = logs.join(file_name(b_src));
        copy_tree(b_src, &b_dir);
        chmod(&b_dir, 0o700);
        let c_path = logs.join(file_name(c_src));
        fs::copy(c_src, &c_path).unwrap();
        chmod(&c_path, 0o600);
        fs::copy(d_src, locked.join(file_name(d_src))).unwrap();
        chmod(&locked.join(file_name(d_src)), 0o644);
        chmod(&locked, 0o700);
        Unreadable {
            logs,
            locked,
            rolling: b_dir,
            file: c_path,
        }
    }

    /// Make everything readable.
    fn fix(&self) {
        chmod(&self.locked, 0o755);
        chmod(&self.rolling, 0o755);
        chmod(&self.file, 0o644);
    }
}

/// The folder `locked/`, the rolling folder and the 0600 file: one `io` each, and no more while
/// they keep failing; the readable log `a` is read meanwhile.
fn check_while_unreadable(t: &mut Tail, a: &Clean, problems: &mut Vec<String>) {
    let s = t.settle("the readable log read, the rest failing", |s| {
        bytes_read(s) == a.bytes && eventlog_errors(s).contains_key("io")
    });
    assert_app_equals("readable log beside unreadable ones", &s, a);
    let io_then = eventlog_errors(&s).get("io").copied();
    std::thread::sleep(SETTLE);
    let io_now = eventlog_errors(&t.scrape()).get("io").copied();
    if (io_then, io_now) != (Some(3.0), Some(3.0)) {
        problems.push(format!(
            "io errors while `locked/`, the 0700 rolling folder and the 0600 file stay \
             unreadable: want 3 (one each, counted once until it recovers) and still 3 {SETTLE:?} \
             (10 polls) later; got {io_then:?}, then {io_now:?}"
        ));
    }
}

/// Once the modes are fixed everything is read, with no further error, and every application
/// equals a clean read.
fn check_once_readable(t: &mut Tail, all: [&Clean; 4], problems: &mut Vec<String>) {
    let [a, b, c, d] = all;
    let total = a.bytes + b.bytes + c.bytes + d.bytes;
    let s = t.settle("everything read once readable", |s| {
        bytes_read(s) == total && files(s, "active") == 0.0
    });
    for want in all {
        assert_app_equals("after the modes were fixed", &s, want);
    }
    let io_recovered = eventlog_errors(&s);
    std::thread::sleep(SETTLE);
    let io_later = eventlog_errors(&t.scrape());
    if io_later != io_recovered || io_later.keys().any(|k| k != "io") {
        problems.push(format!(
            "errors after recovery: {io_recovered:?}, {SETTLE:?} later {io_later:?} (want no new \
                error)"
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// (f) Corruption
// ---------------------------------------------------------------------------------------------

/// Garbage lines inserted into a copy of an uncompressed log while it is tailed: each is counted
/// by kind (`parse` for non-JSON, a half-written real event, wrong field types, binary noise, JSON
/// without `Event`; `unknown_event` for a foreign event name; `line_too_long` for a 2 MiB line
/// with `max_line_bytes` at 1 MiB) and everything else is counted as in a clean read.
#[test]
fn corrupt_lines_in_a_copy() {
    let src = single_fixture("spark-4.1.1-none-single");
    let want = clean(&src);
    assert!(want.errors.is_empty(), "the intact log reads without error");
    let text = fs::read(&src).unwrap();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let task_end = lines
        .iter()
        .find(|l| l.starts_with(br#"{"Event":"SparkListenerTaskEnd""#))
        .expect("a task end");
    let half_task_end = [&task_end[..task_end.len() / 2], b"\n"].concat();
    let long = [vec![b'x'; 2 * 1024 * 1024], b"\n".to_vec()].concat();
    let garbage: Vec<(Vec<u8>, &str)> = vec![
        (b"this is not json at all\n".to_vec(), "parse"),
        (half_task_end, "parse"),
        (br#"{"Event":"SparkListenerJobStart","Job ID":"seven","Submission Time":"noon"}"#.iter().chain(b"\n").copied().collect(), "parse"),
        (b"\x00\xff\xfe\x01binary\x7f noise\n".to_vec(), "parse"),
        (br#"{"no event field":true}"#.iter().chain(b"\n").copied().collect(), "parse"),
        (br#"{"Event":"com.example.NotASparkEvent","x":1}"#.iter().chain(b"\n").copied().collect(), "unknown_event"),
        (long, "line_too_long"),
    ];
    let mut want_errors = BTreeMap::new();
    for (_, kind) in &garbage {
        *want_errors.entry(kind.to_string()).or_insert(0.0) += 1.0;
    }
    // Garbage spread over the middle of the log, between real lines.
    let mut corrupt = Vec::new();
    let step = lines.len() / (garbage.len() + 2);
    let mut g = garbage.iter();
    for (i, l) in lines.iter().enumerate() {
        corrupt.extend_from_slice(l);
        if i > 0 && i % step == 0 {
            if let Some((bad, _)) = g.next() {
                corrupt.extend_from_slice(bad);
            }
        }
    }
    assert!(g.next().is_none());
    let mut t = Tail::start_with(
        "corrupt-lines",
        &[("SPARK_EXPORTER_EVENT_LOG__MAX_LINE_BYTES", "1048576")],
        &[],
    );
    fs::write(t.dir.join("corrupt-copy"), &corrupt).unwrap();
    let live = t.logs.join(inprogress(&file_name(&src)));
    // The copy in pieces of 100,000 bytes (they end anywhere, in garbage too). After each, the
    // exporter has read exactly the complete lines so far, except the over-long one, which it
    // drops unread (counted as soon as more than the cap of it arrived), and counted exactly the
    // garbage lines complete so far.
    let long_at = find(&corrupt, &garbage[6].0).unwrap();
    let long_len = garbage[6].0.len();
    let mut n = 0;
    for chunk in corrupt.chunks(100_000) {
        append(&live, chunk);
        n += chunk.len();
        let complete = complete_lines(&corrupt[..n]);
        let mut expect_bytes = complete as f64;
        if long_at + long_len <= complete {
            expect_bytes -= long_len as f64;
        }
        let mut expect_errors = BTreeMap::new();
        for (bad, kind) in &garbage {
            let at = find(&corrupt, bad).unwrap();
            let counted = if *kind == "line_too_long" {
                n.min(at + bad.len() - 1) - at.min(n) > 1024 * 1024
            } else {
                at + bad.len() <= complete
            };
            if counted {
                *expect_errors.entry(kind.to_string()).or_insert(0.0) += 1.0;
            }
        }
        let what = format!(
            "{n} of {} bytes copied: {expect_bytes} bytes read, errors {expect_errors:?}",
            corrupt.len()
        );
        t.say(&what);
        let mut last = vec![];
        let ok = wait_for(CATCH_UP, Duration::from_millis(50), || {
            last = t.scrape();
            (bytes_read(&last) == expect_bytes && eventlog_errors(&last) == expect_errors)
                .then_some(())
        });
        if ok.is_none() {
            t.fail(&what, &last);
        }
    }
    fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
    let s = t.settle("every garbage line counted by kind", |s| {
        eventlog_errors(s) == want_errors && files(s, "finished") == 1.0
    });
    assert_app_equals("log with garbage lines", &s, &want);
    t.finish();
}

/// A copy of a zstd log with the header of one block in the middle made invalid (block type 3,
/// reserved), copied in chunks while tailed. Spark closes a zstd frame at every flush
/// (`compressedContinuousOutputStream`, see `tests/faults/logs.rs`), one frame per event, so
/// the damage is confined to one frame and decoding can go on at the next frame, as the lz4,
/// snappy and lzf decoders go on at their next block. Expected: the bad block counted once as
/// `codec` (however the copy was chunked), the exporter up, and everything outside the damaged
/// frame counted: the series equal a clean read of the log with that frame's text left out.
#[test]
fn corrupt_zstd_block_in_a_copy() {
    let src = single_fixture("spark-4.1.1-zstd-single");
    let raw = fs::read(&src).unwrap();
    let frames = zstd_frames(&raw);
    assert!(
        frames.iter().all(|f| f.blocks.len() == 1),
        "Spark writes a frame per flush"
    );
    let k = frames.len() / 2;
    let bad = &frames[k];
    let mut corrupt = raw.clone();
    corrupt[bad.blocks[0].header] |= 0b110; // block type 3: reserved, invalid
                                            // What should still be read: the text of every other
                                            // frame.
    let mut rest = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        if i != k {
            rest.extend(zstd::stream::decode_all(&raw[f.start..f.end]).unwrap());
        }
    }
    let mut t = Tail::start("corrupt-zstd");
    let reference = t.dir.join("reference");
    fs::create_dir(&reference).unwrap();
    let ref_file = reference.join(file_name(&src).trim_end_matches(".zstd"));
    fs::write(&ref_file, &rest).unwrap();
    let want = clean(&ref_file);
    let mut want_errors = want.errors.clone();
    *want_errors.entry("codec".into()).or_insert(0.0) += 1.0;
    fs::write(t.dir.join("corrupt-copy.zstd"), &corrupt).unwrap();

    let live = t.logs.join(inprogress(&file_name(&src)));
    // Chunks: up to the frame before the bad one, into the bad block, past it, the rest.
    let cuts = [
        bad.start,
        bad.blocks[0].header + 3 + bad.blocks[0].size / 2,
        frames[k + 2].end,
        raw.len(),
    ];
    let mut from = 0;
    for cut in cuts {
        append(&live, &corrupt[from..cut]);
        from = cut;
        t.say(&format!("copied {cut} of {} bytes", raw.len()));
        std::thread::sleep(Duration::from_millis(600));
        t.scrape();
    }
    fs::rename(&live, t.logs.join(file_name(&src))).unwrap();
    let s = t.settle("the copy no longer followed as active", |s| {
        files(s, "active") == 0.0
    });
    // All three checked, so one failure does not hide the others.
    let mut problems = vec![];
    if eventlog_errors(&s) != want_errors {
        problems.push(format!(
            "errors: want {want_errors:?} (the bad block once as codec), got {:?}",
            eventlog_errors(&s)
        ));
    }
    if bytes_read(&s) != want.bytes {
        problems.push(format!(
            "decoded bytes read: want {} (every frame but the damaged one, of {} in the intact \
             log), got {}",
            want.bytes,
            clean(&src).bytes,
            bytes_read(&s)
        ));
    }
    let got = app_samples(&s, &want.app_id, model_series);
    let total = |m: &Series, name: &str| -> f64 {
        m.iter()
            .filter(|(k, _)| k.starts_with(&format!("{name}{{")))
            .map(|(_, v)| v)
            .sum()
    };
    let d = diff(&want.series, &got);
    if !d.is_empty() {
        problems.push(format!(
            "{} of {} series differ from a clean read of the rest; totals want/got: jobs {}/{}, \
             stages {}/{}, tasks {}/{}; end time {:?}/{:?}",
            d.len(),
            want.series.len(),
            total(&want.series, "spark_jobs_total"),
            total(&got, "spark_jobs_total"),
            total(&want.series, "spark_stages_total"),
            total(&got, "spark_stages_total"),
            total(&want.series, "spark_tasks_total"),
            total(&got, "spark_tasks_total"),
            want.series
                .iter()
                .find(|(k, _)| k.starts_with("spark_app_end_time_seconds"))
                .map(|x| x.1),
            got.iter()
                .find(|(k, _)| k.starts_with("spark_app_end_time_seconds"))
                .map(|x| x.1),
        ));
    }
    assert!(
        problems.is_empty(),
        "a bad zstd block in a copy:\n{}\n(exporter log: {})",
        problems.join("\n"),
        t.exp.log.display()
    );
    assert_app_equals("zstd log with a bad block", &s, &want);
    t.finish();
}
