//! Event logs written by real Spark (4.1.1 and 3.5.5; zstd, lz4, snappy, lzf, uncompressed;
//! single-file and rolling; see `scripts/eventlog-fixtures.sh`) decode and parse to exactly what
//! Spark's own reader (`EventLogFileReader.openEventLog`, recorded in each `counts.json`) and
//! the `zstd` tool see.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spark_exporter::config::Settings;
use spark_exporter::model::Model;
use spark_exporter::sources::eventlog::codec::{Codec, Decoder};
use spark_exporter::sources::eventlog::discovery::{parse_part_name, parse_single_name};
use spark_exporter::sources::eventlog::ingest_paths;
use spark_exporter::sources::eventlog::parser::{event_name, parse_line, Event};
use spark_exporter::sources::eventlog::tailer::{FileTailer, LineSink};
use spark_exporter::telemetry::Telemetry;

const FIXTURES: &str = "tests/data/eventlogs";
const BASIC: &str = "tests/data/spark-4.1.1-basic/eventlog/eventlog_v2_local-1795981136444";

#[derive(Default)]
struct Collect {
    lines: Vec<Vec<u8>>,
    errors: Vec<String>,
}

impl LineSink for Collect {
    fn line(&mut self, line: &[u8]) {
        self.lines.push(line.to_vec());
    }
    fn error(&mut self, kind: &'static str, detail: &dyn Display) {
        self.errors.push(format!("{kind}: {detail}"));
    }
}

fn codec_of(path: &Path) -> Codec {
    let name = path.file_name().unwrap().to_str().unwrap();
    parse_part_name(name)
        .map(|p| p.codec)
        .or_else(|| parse_single_name(name).map(|n| n.codec))
        .unwrap()
}

/// Read a whole file through the tailer, in small reads.
fn tail_file(path: &Path) -> Collect {
    let m = std::fs::metadata(path).unwrap();
    let mut t = FileTailer::local(
        path.to_path_buf(),
        (m.dev(), m.ino()),
        codec_of(path),
        64 << 20,
    );
    let mut c = Collect::default();
    while !t.poll(1 << 20, &mut c).unwrap().eof {}
    t.finish(&mut c);
    c
}

/// Every `counts.json` entry: (fixture folder, log file, expected counts).
fn fixture_files() -> Vec<(PathBuf, PathBuf, serde_json::Value)> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let counts: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("counts.json")).unwrap()).unwrap();
        for (rel, exp) in counts["files"].as_object().unwrap() {
            out.push((dir.clone(), dir.join(rel), exp.clone()));
        }
    }
    out
}

#[test]
fn every_codec_layout_and_version_is_covered() {
    let names: BTreeSet<String> = fixture_files()
        .iter()
        .map(|(d, _, _)| d.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    for codec in ["zstd", "lz4", "snappy", "lzf", "none"] {
        for layout in ["rolling", "single"] {
            assert!(
                names.contains(&format!("spark-4.1.1-{codec}-{layout}")),
                "{codec} {layout}"
            );
        }
        assert!(
            names.contains(&format!("spark-3.5.5-{codec}-single")),
            "3.5 {codec}"
        );
    }
    assert!(names.contains("spark-3.5.5-zstd-rolling"));
}

#[test]
fn decoded_text_matches_sparks_own_reader() {
    for (_, file, exp) in fixture_files() {
        let c = tail_file(&file);
        assert!(c.errors.is_empty(), "{}: {:?}", file.display(), c.errors);
        let bytes: usize = c.lines.iter().map(|l| l.len() + 1).sum();
        assert_eq!(
            bytes as u64,
            exp["bytes"].as_u64().unwrap(),
            "{}",
            file.display()
        );
        assert_eq!(
            c.lines.len() as u64,
            exp["lines"].as_u64().unwrap(),
            "{}",
            file.display()
        );
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for l in &c.lines {
            *counts
                .entry(event_name(l).unwrap().into_owned())
                .or_default() += 1;
            // Every line is a Spark event this parser either uses or knowingly skips.
            parse_line(l).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        }
        let want: BTreeMap<String, u64> = exp["events"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(counts, want, "{}", file.display());
    }
}

/// A tiny deterministic generator for piece sizes.
fn sizes(seed: u64, n: usize) -> Vec<usize> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1 + (x >> 33) as usize % 4099
        })
        .collect()
}

#[test]
fn compressed_fixtures_decode_the_same_in_any_piece_size() {
    for (_, file, _) in fixture_files() {
        let codec = codec_of(&file);
        if codec == Codec::Plain {
            continue;
        }
        let data = std::fs::read(&file).unwrap();
        let whole = {
            let mut d = Decoder::new(codec).unwrap();
            let mut out = Vec::new();
            let mut pos = 0;
            loop {
                let n = d.decode(&data[pos..], &mut out, usize::MAX).unwrap();
                if n == 0 {
                    break;
                }
                pos += n;
            }
            assert_eq!(pos, data.len(), "{}", file.display());
            out
        };
        let mut d = Decoder::new(codec).unwrap();
        let (mut pending, mut out, mut pos) = (Vec::new(), Vec::new(), 0);
        for n in sizes(data.len() as u64, 100_000) {
            if pos >= data.len() {
                break;
            }
            let n = n.min(data.len() - pos);
            pending.extend_from_slice(&data[pos..pos + n]);
            pos += n;
            loop {
                let before = out.len();
                let used = d.decode(&pending, &mut out, before + 1000).unwrap();
                pending.drain(..used);
                if used == 0 && out.len() == before {
                    break;
                }
            }
        }
        assert!(pending.is_empty(), "{}", file.display());
        assert!(
            out == whole,
            "{} differs when read in pieces",
            file.display()
        );
    }
}

/// Semantics of the fixture workload, seen through the parser's observations.
#[test]
fn observations_show_the_workload() {
    for (dir, file, _) in fixture_files() {
        let c = tail_file(&file);
        let events: Vec<Event> = c
            .lines
            .iter()
            .filter_map(|l| parse_line(l).unwrap())
            .collect();
        let what = file.display();
        let mut groups = BTreeSet::new();
        let mut job_stages = BTreeSet::new();
        let mut submitted = BTreeSet::new();
        let (mut failed_jobs, mut failed_sql, mut batches, mut failed_tasks, mut app_ids) =
            (0, 0, 0, 0, vec![]);
        for e in &events {
            match e {
                Event::AppStart { app, .. } => app_ids.push(app.app_id.clone()),
                Event::JobStart { job, .. } => {
                    groups.extend(job.job_group.clone());
                    job_stages.extend(job.stage_ids.iter().copied());
                }
                Event::JobEnd {
                    succeeded: false, ..
                } => failed_jobs += 1,
                Event::StageSubmitted(s, _) => drop(submitted.insert(s.stage_id)),
                Event::SqlEnd { error: Some(_), .. } => failed_sql += 1,
                Event::StreamingProgress(p) => {
                    assert_eq!(p.name.as_deref(), Some("rate_fixture"), "{what}");
                    batches += 1;
                }
                Event::TaskEnd(t) if t.outcome == spark_exporter::model::TaskOutcome::Failed => {
                    failed_tasks += 1
                }
                _ => {}
            }
        }
        for g in ["etl_load", "shuffle_agg", "sql_report", "failing_job"] {
            assert!(
                groups.contains(g),
                "{what}: group {g} missing from {groups:?}"
            );
        }
        assert_eq!(failed_jobs, 2, "{what}");
        assert_eq!(failed_sql, 1, "{what}");
        assert_eq!(failed_tasks, 4, "{what}: 2 failing tasks x 2 attempts");
        assert!(batches >= 3, "{what}");
        assert!(
            job_stages.difference(&submitted).count() >= 1,
            "{what}: the re-collect skips a stage"
        );
        let dir_name = dir.to_str().unwrap();
        assert_eq!(app_ids.len(), 1, "{what}");
        assert!(
            file.to_str().unwrap().contains(&app_ids[0]),
            "{dir_name}: {app_ids:?}"
        );
    }
}

fn grep_count(text: &[u8], event: &str) -> usize {
    memchr::memmem::find_iter(text, format!("{{\"Event\":\"{event}\"").as_bytes()).count()
}

#[test]
fn basic_spark_411_log_counts_match_zstd_cli() {
    let file = Path::new(BASIC).join("events_1_local-1795981136444.zstd");
    // Independent decode: the zstd command line tool when present, else the zstd crate's
    // one-shot decoder (not the streaming path the tailer uses).
    let text = match std::process::Command::new("zstd")
        .arg("-dc")
        .arg(&file)
        .output()
    {
        Ok(o) if o.status.success() => o.stdout,
        _ => zstd::decode_all(&std::fs::read(&file).unwrap()[..]).unwrap(),
    };
    let c = tail_file(&file);
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let events: Vec<Event> = c
        .lines
        .iter()
        .filter_map(|l| parse_line(l).unwrap())
        .collect();
    let count = |f: fn(&Event) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(
        count(|e| matches!(e, Event::TaskEnd(_))),
        grep_count(&text, "SparkListenerTaskEnd")
    );
    assert_eq!(
        count(|e| matches!(e, Event::JobEnd { .. })),
        grep_count(&text, "SparkListenerJobEnd")
    );
    assert_eq!(
        count(|e| matches!(e, Event::JobStart { .. })),
        grep_count(&text, "SparkListenerJobStart")
    );
    assert_eq!(
        count(|e| matches!(e, Event::StageCompleted(..))),
        grep_count(&text, "SparkListenerStageCompleted")
    );
    assert_eq!(count(|e| matches!(e, Event::TaskEnd(_))), 34);
    // The job groups the workload set (ground_truth.txt).
    let groups: BTreeSet<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::JobStart { job, .. } => job.job_group.clone(),
            _ => None,
        })
        .collect();
    let want: BTreeSet<String> = [
        "ingest_orders",
        "daily_report",
        "skewed_join",
        "failing_job",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(groups, want);
}

#[test]
fn ingest_paths_reads_every_fixture_without_errors() {
    let settings = Settings::default();
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    let mut paths: Vec<PathBuf> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.push(PathBuf::from(BASIC));
    ingest_paths(
        &paths,
        &settings,
        &model.observer(spark_exporter::sources::source("event_log")),
        model.telemetry(),
    )
    .unwrap();
    let t = telemetry.snapshot();
    assert!(t.eventlog_errors.is_empty(), "{:?}", t.eventlog_errors);
    let files = fixture_files();
    let lines: u64 = files
        .iter()
        .map(|(_, _, e)| e["lines"].as_u64().unwrap())
        .sum();
    let bytes: u64 = files
        .iter()
        .map(|(_, _, e)| e["bytes"].as_u64().unwrap())
        .sum();
    let basic = tail_file(&Path::new(BASIC).join("events_1_local-1795981136444.zstd"));
    assert_eq!(t.eventlog_events, lines + basic.lines.len() as u64);
    assert_eq!(
        t.eventlog_bytes,
        bytes + basic.lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>()
    );
    assert_eq!(
        t.eventlog_files.get("finished"),
        Some(&(files.len() as u64 + 1))
    );
    assert_eq!(t.eventlog_files.get("error"), Some(&0));
    assert!(t.eventlog_newest_event_ms.is_some());
}

/// The task-end scanner's sums equal a generic JSON parse of the same lines (serde_json::Value),
/// on the real 10k-task log and on every fixture.
#[test]
fn task_end_scanner_agrees_with_a_generic_json_parse() {
    let mut files: Vec<PathBuf> = fixture_files().into_iter().map(|(_, f, _)| f).collect();
    files.push(Path::new(BASIC).join("events_1_local-1795981136444.zstd"));
    let bench = zstd::decode_all(
        &std::fs::read("tests/data/bench/eventlog-10k-tasks.json.zst").unwrap()[..],
    )
    .unwrap();
    let mut lines: Vec<Vec<u8>> = bench.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    for f in files {
        lines.extend(tail_file(&f).lines);
    }
    let (mut ours, mut theirs) = ([0u64; 12], [0u64; 12]);
    for l in lines
        .iter()
        .filter(|l| l.starts_with(b"{\"Event\":\"SparkListenerTaskEnd\""))
    {
        let Some(Event::TaskEnd(t)) = parse_line(l).unwrap() else {
            panic!()
        };
        let m = t.metrics;
        let o = [
            t.task_id,
            t.stage_id,
            (t.finish_ms - t.launch_ms) as u64,
            m.run_time_ms,
            m.cpu_time_ns,
            m.gc_time_ms,
            m.input_bytes,
            m.output_bytes,
            m.shuffle_read_bytes,
            m.shuffle_write_bytes,
            m.memory_spilled_bytes,
            m.disk_spilled_bytes,
        ];
        let v: serde_json::Value = serde_json::from_slice(l).unwrap();
        let n = |p: &str| v.pointer(p).and_then(|x| x.as_i64()).unwrap_or(0).max(0) as u64;
        let tm = "/Task Metrics";
        let t = [
            n("/Task Info/Task ID"),
            n("/Stage ID"),
            n("/Task Info/Finish Time").saturating_sub(n("/Task Info/Launch Time")),
            n(&format!("{tm}/Executor Run Time")),
            n(&format!("{tm}/Executor CPU Time")),
            n(&format!("{tm}/JVM GC Time")),
            n(&format!("{tm}/Input Metrics/Bytes Read")),
            n(&format!("{tm}/Output Metrics/Bytes Written")),
            n(&format!("{tm}/Shuffle Read Metrics/Remote Bytes Read"))
                + n(&format!("{tm}/Shuffle Read Metrics/Local Bytes Read")),
            n(&format!("{tm}/Shuffle Write Metrics/Shuffle Bytes Written")),
            n(&format!("{tm}/Memory Bytes Spilled")),
            n(&format!("{tm}/Disk Bytes Spilled")),
        ];
        for i in 0..12 {
            ours[i] += o[i];
            theirs[i] += t[i];
        }
    }
    assert_eq!(ours, theirs);
    assert!(
        ours[3] > 0 && ours[8] > 0,
        "run time and shuffle read are exercised: {ours:?}"
    );
}
