//! Inputs found by fuzzing (`fuzz/`, `scripts/fuzz-run.sh`) or built from what fuzzing pointed
//! at, replayed through the same path as the target that found them. Tests and debug builds
//! check arithmetic overflow, so each of these must render without a panic.
//!
//! Hostile or damaged event logs may carry any `long` as a time: Spark's JSON writer never
//! produces `Long.MIN_VALUE`, but nothing stops a truncated or hand-edited log from holding one.

use std::io::Write as _;
use std::sync::Arc;

use spark_exporter::config::Settings;
use spark_exporter::model::Model;
use spark_exporter::sinks::prometheus;
use spark_exporter::sources::eventlog::apply::LogApp;
use spark_exporter::sources::eventlog::codec::{Codec, CodecError, Decoder};
use spark_exporter::sources::eventlog::{ingest_paths, parse_line};
use spark_exporter::telemetry::Telemetry;

const NOW: i64 = 1_800_000_000_000;

/// Lines through `parse_line` + `LogApp::apply`, then a render (the `eventlog_model` target).
fn replay(lines: &[&str]) -> String {
    let model = Model::with_clock(
        &Settings::default(),
        Arc::new(Telemetry::default()),
        Arc::new(|| NOW),
    );
    let mut app = LogApp::new("local-1".into());
    for l in lines {
        if let Ok(Some(ev)) = parse_line(l.as_bytes()) {
            app.apply(
                ev,
                &model.observer(spark_exporter::sources::source("event_log")),
            );
        }
    }
    app.settle(&model.observer(spark_exporter::sources::source("event_log")));
    model.expire(NOW);
    prometheus::render(&prometheus::registry(model), false).expect("renders")
}

const APP: &str = r#"{"Event":"SparkListenerApplicationStart","App Name":"a","App ID":"local-1","Timestamp":1700000000000,"User":"u"}"#;

const JOB: &str = r#"{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1700000000000,"Stage IDs":[0],"Properties":{"spark.jobGroup.id":"g"}}"#;

#[test]
fn task_end_with_extreme_launch_and_finish_times() {
    let text = replay(&[
        APP,
        JOB,
        r#"{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":1,"Submission Time":1700000000000}}"#,
        r#"{"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":0,"Executor ID":"1","Launch Time":-9223372036854775808,"Finish Time":9223372036854775807,"Failed":false,"Killed":false}}"#,
    ]);
    assert!(text.contains("spark_task_duration_seconds_count"));
}

#[test]
fn stage_submitted_at_the_smallest_long() {
    let text = replay(&[
        APP,
        JOB,
        r#"{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"s","Number of Tasks":1,"Submission Time":-9223372036854775808}}"#,
    ]);
    assert!(text.contains("spark_stage_stalled_seconds{"));
}

#[test]
fn only_event_time_is_the_smallest_long() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("local-1");
    let mut f = std::fs::File::create(&path).expect("create");
    writeln!(
        f,
        r#"{{"Event":"SparkListenerApplicationEnd","Timestamp":-9223372036854775808}}"#
    )
    .expect("write");
    drop(f);
    let settings = Settings::default();
    let model = Model::with_clock(&settings, Arc::new(Telemetry::default()), Arc::new(|| NOW));
    ingest_paths(
        &[path],
        &settings,
        &model.observer(spark_exporter::sources::source("event_log")),
        model.telemetry(),
    )
    .expect("ingest");
    let text = prometheus::render(&prometheus::registry(model), false).expect("renders");
    assert!(text.contains("spark_exporter_eventlog_lag_seconds"));
}

/// The `codecs` target's driver: `data` offered in xorshift-sized pieces (from `seed`) with
/// xorshift-sized output budgets, or all at once with no budget (`whole`), as the tailer does:
/// keep what was not consumed, skip bad blocks, stop at a fatal error. Returns the output and
/// whether an error was seen.
fn decode_like_the_tailer(
    codec: Codec,
    data: &[u8],
    mut seed: u32,
    whole: bool,
) -> (Vec<u8>, bool) {
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut d = Decoder::new(codec).expect("decoder");
    let (mut pending, mut out, mut pos, mut errors) = (Vec::new(), Vec::new(), 0, false);
    loop {
        if pos < data.len() {
            let n = if whole {
                data.len()
            } else {
                1 + (next() as usize % 64).pow(2) % 4096
            };
            let n = n.min(data.len() - pos);
            pending.extend_from_slice(&data[pos..pos + n]);
            pos += n;
        }
        loop {
            let budget = if whole {
                usize::MAX
            } else {
                1 + next() as usize % 70_000
            };
            let before = out.len();
            let used = match d.decode(&pending, &mut out, before.saturating_add(budget)) {
                Ok(n) => n,
                Err(CodecError::BadBlock { consumed, .. }) => {
                    errors = true;
                    consumed
                }
                Err(CodecError::Fatal { .. }) => return (out, true),
            };
            pending.drain(..used);
            if used == 0 && out.len() == before {
                break;
            }
        }
        if pos >= data.len() {
            return (out, errors);
        }
    }
}

/// Found by the `codecs` target: a zstd *legacy* (v0.4, magic `24 b5 2f fd`) frame holding one
/// line, then the start of a current frame. Offered at once the decoder waits for more input;
/// offered in small pieces it fails. Spark (zstd-jni) never writes legacy frames; the fix
/// proposed is to build zstd without its `legacy` feature, so both ways reject the frame.
#[test]
fn zstd_legacy_frame_decodes_the_same_in_pieces() {
    let data: &[u8] = &[
        0x24, 0xb5, 0x2f, 0xfd, 0x00, 0x48, 0xd1, 0x01, 0x00, 0xb6, 0x7b, 0x22, 0x45, 0x76, 0x65,
        0x6e, 0x74, 0x22, 0x3a, 0x22, 0x53, 0x70, 0x61, 0x72, 0x31, 0x22, 0x7d, 0x0a, 0x28, 0xb5,
        0x2f, 0xfd, 0x00, 0x48,
    ];
    // The target's seed for input byte 0x7f.
    let seed = 0x7fu32.wrapping_mul(2_654_435_761) | 1;
    // With zstd's `legacy` feature this decoded to nothing at once and failed in pieces. Spark
    // never writes legacy (pre-1.0) frames; without `legacy`, both
    // reject the frame alike.
    let whole = decode_like_the_tailer(Codec::Zstd, data, seed, true);
    assert_eq!(
        decode_like_the_tailer(Codec::Zstd, data, seed, false),
        whole
    );
}
