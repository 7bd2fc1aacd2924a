//! Engine tests for failures that must be counted once: an unreadable file retried at every
//! listing, a damaged zstd frame in a log appended to in pieces, a stream that cannot be decoded.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::config::Settings;
use crate::model::Model;
use crate::sources::eventlog::discovery::{parse_single_name, Found};
use crate::sources::eventlog::positions::{DoneLog, LogPositions as Positions};
use crate::telemetry::Telemetry;

fn model() -> (Arc<Model>, Arc<Telemetry>) {
    let t = Arc::new(Telemetry::default());
    (Model::new(&Settings::default(), t.clone()), t)
}

fn errors(t: &Telemetry, kind: &str) -> u64 {
    t.snapshot().eventlog_errors.get(kind).copied().unwrap_or(0)
}

fn files(t: &Telemetry, state: &str) -> u64 {
    t.snapshot().eventlog_files.get(state).copied().unwrap_or(0)
}

fn append(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// Reading into `m` as `run` does: events to its event-log observer, problems to its telemetry.
fn with_out<R>(m: &Arc<Model>, f: impl FnOnce(Out<'_>) -> R) -> R {
    let observer = m.observer(crate::sources::source("event_log"));
    f(Out {
        observer: &observer,
        telemetry: m.telemetry(),
    })
}

/// One listing and reading everything there is, as a step of `run` does.
fn step(e: &mut Engine, dirs: &[PathBuf], m: &Arc<Model>) {
    let dirs: Vec<Root> = dirs.iter().map(Root::local).collect();
    with_out(m, |out| {
        e.scan(&dirs, out);
        while e.poll(out, None) > 0 {}
        e.report(out);
    })
}

fn line(i: u64) -> String {
    format!(
        "{{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Stage Attempt ID\":0,\"Task End \
            Reason\":{{\"Reason\":\"Success\"}},\"Task Info\":{{\"Task ID\":{i},\"Executor \
            ID\":\"1\",\"Launch Time\":1000,\"Finish \
            Time\":{},\"Failed\":false,\"Killed\":false}},\"Task Metrics\":{{\"Executor Run \
            Time\":5}}}}\n",
        1000 + i
    )
}

/// A path that opens but cannot be read (a folder given as a single-file log): every poll fails
/// with `io`. Tests run as root, which reads through any mode bits, so a mode cannot do this.
#[test]
fn unreadable_file_is_counted_once_while_it_keeps_failing() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("local-1");
    std::fs::create_dir(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    let found = Found::Single {
        path: path.clone(),
        id: (meta.dev(), meta.ino()),
        name: parse_single_name("local-1.inprogress").unwrap(),
        len: meta.len(),
        modified_ms: None,
    };
    let mut e = Engine::new(1 << 20);
    let local: Arc<dyn crate::sources::eventlog::fs::Fs> =
        Arc::new(crate::sources::eventlog::fs::LocalFs);
    for _ in 0..5 {
        // What a listing does: merge the entry (retrying the failed file), then read.
        with_out(&m, |out| {
            e.add(found.clone(), &local, None, out);
            while e.poll(out, None) > 0 {}
            e.report(out);
        });
        assert_eq!(errors(&t, "io"), 1);
        assert_eq!((files(&t, "error"), files(&t, "active")), (1, 0));
    }
}

/// Spark's zstd log (a frame per flush, here per line), one frame damaged, appended in pieces
/// that end before the damaged frame, inside it, and past it: the frame counts once as `codec`
/// and every other line is read.
#[test]
fn damaged_zstd_frame_in_a_growing_log_counts_once() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().to_path_buf()];
    let live = root.path().join("local-2.zstd.inprogress");
    let frames: Vec<Vec<u8>> = (0..30)
        .map(|i| zstd::encode_all(line(i).as_bytes(), 1).unwrap())
        .collect();
    let k = 15;
    let mut bad = frames[k].clone();
    // Block type 3 (reserved) in the block header after the 6-byte frame header (magic,
    // descriptor 0: no content size, checksum or dictionary; window descriptor), as Spark's.
    assert_eq!(bad[4], 0, "frame header descriptor");
    bad[6] |= 0b110;
    let data: Vec<u8> = frames
        .iter()
        .enumerate()
        .flat_map(|(i, f)| if i == k { bad.clone() } else { f.clone() })
        .collect();
    let start: usize = frames[..k].iter().map(Vec::len).sum();
    let cuts = [
        start,
        start + 12,
        start + bad.len() + frames[k + 1].len() / 2,
        data.len(),
    ];
    let mut e = Engine::new(1 << 20);
    let mut from = 0;
    for cut in cuts {
        append(&live, &data[from..cut]);
        from = cut;
        for _ in 0..3 {
            step(&mut e, &dirs, &m);
        }
        assert_eq!(errors(&t, "codec"), u64::from(cut > start), "cut {cut}");
    }
    std::fs::rename(&live, root.path().join("local-2.zstd")).unwrap();
    step(&mut e, &dirs, &m);
    let s = t.snapshot();
    assert_eq!(s.eventlog_errors.len(), 1, "{:?}", s.eventlog_errors);
    assert_eq!(s.eventlog_events, 29);
    let want: usize = (0..30)
        .filter(|&i| i != k as u64)
        .map(|i| line(i).len())
        .sum();
    assert_eq!(s.eventlog_bytes, want as u64);
    assert_eq!((files(&t, "finished"), files(&t, "active")), (1, 0));
}

/// A snappy-java log without its stream header cannot be decoded at all: it fails once, and
/// bytes appended later are not decoded (and counted) again.
#[test]
fn undecodable_stream_is_not_retried_when_it_grows() {
    let (m, t) = model();
    let root = tempfile::tempdir().unwrap();
    let dirs = vec![root.path().to_path_buf()];
    let live = root.path().join("local-3.snappy.inprogress");
    append(&live, line(1).as_bytes());
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    for i in 2..5 {
        append(&live, line(i).as_bytes());
        step(&mut e, &dirs, &m);
    }
    assert_eq!(errors(&t, "codec"), 1);
    assert_eq!(files(&t, "error"), 1);
}

fn decoded(t: &Telemetry) -> u64 {
    t.snapshot().eventlog_bytes
}

/// A checkpoint's positions: a finished log read to its end is not read again while unchanged;
/// a log still being written is; a resumed log that changes is read again from its start.
#[test]
fn done_logs_are_not_read_again_until_they_change() {
    let root = tempfile::tempdir().unwrap();
    let app = |id: &str| {
        format!(
            "{{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"a\",\"App \
                ID\":\"{id}\",\"Timestamp\":1000,\"User\":\"u\"}}\n"
        )
    };
    let end = "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":5000}\n";
    let done = root.path().join("local-1");
    let running = root.path().join("local-2.inprogress");
    append(
        &done,
        format!("{}{}{}{end}", app("local-1"), line(1), line(2)).as_bytes(),
    );
    append(
        &running,
        format!("{}{}", app("local-2"), line(1)).as_bytes(),
    );
    let dirs = [root.path().to_path_buf()];

    let (m, t) = model();
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    let mut p = Positions::new();
    e.done_logs(&mut p);
    let shown = done.display().to_string();
    // The running log has a position too (it is uncompressed): where it goes on.
    let running_shown = running.display().to_string().replace(".inprogress", "");
    assert!(p[&running_shown].open.is_some(), "{p:?}");
    p.remove(&running_shown);
    assert_eq!(p.keys().collect::<Vec<_>>(), vec![&shown], "{p:?}");
    let len = std::fs::metadata(&done).unwrap().len();
    assert_eq!(
        p[&shown],
        DoneLog {
            app_id: "local-1".into(),
            files: vec![(0, false, len)],
            open: None,
        }
    );
    let all = decoded(&t);

    // A restart without the running log's position: only the running log is read.
    let (m2, t2) = model();
    let mut e2 = Engine::new(1 << 20);
    e2.resume_from(Arc::new(p.clone()));
    step(&mut e2, &dirs, &m2);
    assert_eq!(decoded(&t2), all - len);
    let mut p2 = Positions::new();
    e2.done_logs(&mut p2);
    p2.remove(&running_shown);
    assert_eq!(p2, p, "a resumed log stays done");
    assert_eq!(files(&t2, "finished"), 1);

    // The done log changes: read again, whole.
    append(&done, line(3).as_bytes());
    step(&mut e2, &dirs, &m2);
    assert_eq!(decoded(&t2), all - len + len + line(3).len() as u64);
    let mut p3 = Positions::new();
    e2.done_logs(&mut p3);
    assert_eq!(
        p3[&shown].files,
        vec![(0, false, len + line(3).len() as u64)]
    );

    // Another size than the checkpoint's at start: read, not resumed.
    let (m4, t4) = model();
    let mut e4 = Engine::new(1 << 20);
    e4.resume_from(Arc::new(p));
    step(&mut e4, &dirs, &m4);
    assert_eq!(decoded(&t4), all + line(3).len() as u64);
}

/// A log being written (uncompressed) is resumed where it was, with its parsing state: a job
/// started before the restart and ended after it is counted in its job group, and only the
/// bytes written since are read.
#[test]
fn a_log_being_written_resumes_mid_log() {
    let root = tempfile::tempdir().unwrap();
    let running = root.path().join("local-7.inprogress");
    let start = "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"a\",\"App \
        ID\":\"local-7\",\"Timestamp\":1000,\"User\":\"u\"}\n";
    let job_start = "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission \
        Time\":1000,\"Stage Infos\":[],\"Stage \
        IDs\":[],\"Properties\":{\"spark.jobGroup.id\":\"nightly\",\"spark.job.description\":\"load\"}}\n";
    let job_end = "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Completion Time\":2000,\"Job \
        Result\":{\"Result\":\"JobSucceeded\"}}\n";
    // A partial line at the end: not applied, not part of the position.
    let partial = "{\"Event\":\"SparkListenerJobEnd\",";
    append(
        &running,
        format!("{start}{job_start}{}{partial}", line(1)).as_bytes(),
    );
    let dirs = [root.path().to_path_buf()];
    let (m, _) = model();
    let mut e = Engine::new(1 << 20);
    step(&mut e, &dirs, &m);
    let mut p = Positions::new();
    e.done_logs(&mut p);
    let shown = running.display().to_string().replace(".inprogress", "");
    let whole = std::fs::metadata(&running).unwrap().len();
    assert_eq!(
        p[&shown].files,
        vec![(0, false, whole - partial.len() as u64)]
    );
    assert!(p[&shown].open.is_some());
    // Through JSON, as a checkpoint keeps it.
    let p: Positions = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();

    // The rest of the partial line and the job's end arrive; a restart with the position.
    let rest =
        "\"Job ID\":9,\"Completion Time\":1500,\"Job Result\":{\"Result\":\"JobSucceeded\"}}\n";
    append(&running, format!("{rest}{job_end}").as_bytes());
    let (m2, t2) = model();
    let mut e2 = Engine::new(1 << 20);
    e2.resume_from(Arc::new(p));
    step(&mut e2, &dirs, &m2);
    let new_bytes = (partial.len() + rest.len() + job_end.len()) as u64;
    assert_eq!(
        decoded(&t2),
        new_bytes,
        "only what follows the position is read"
    );
    let jobs: Vec<(String, String, u64)> = m2.view(|v| {
        v.apps()
            .flat_map(|a| {
                a.groups()
                    .into_iter()
                    .map(|g| (g.key.0.to_string(), g.key.1.to_string(), g.jobs[0].1))
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    assert!(
        jobs.contains(&("nightly".to_string(), "load".to_string(), 1)),
        "the job started before the restart ends in its group: {jobs:?}"
    );

    // Once more, with the application ending while the exporter is down: Spark renames the
    // log; the position is still found.
    let mut p = Positions::new();
    e2.done_logs(&mut p);
    let end = "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":5000}\n";
    append(&running, end.as_bytes());
    let finished = root.path().join("local-7");
    std::fs::rename(&running, &finished).unwrap();
    let (m3, t3) = model();
    let mut e3 = Engine::new(1 << 20);
    e3.resume_from(Arc::new(p));
    step(&mut e3, &dirs, &m3);
    assert_eq!(
        decoded(&t3),
        end.len() as u64,
        "only the end is read after the rename"
    );
    let ended = m3.view(|v| v.apps().any(|a| a.end_ms().is_some()));
    assert!(ended, "the application's end is applied");
}
