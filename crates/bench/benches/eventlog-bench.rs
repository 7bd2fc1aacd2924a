//! Event-log ingest bench: reads one log file to its end on one thread and reports throughput
//! (decoded MB/s, events/s) and the process's peak RSS.
//!
//! Modes:
//! - `parse`: tailer (read, decode, split lines) plus the parser, no model;
//! - `ingest`: [`spark_exporter::sources::eventlog::ingest_paths`] into a fresh model, as
//!   `dump --event-log` does.
//!
//! Data: `scripts/eventlog-bench-data.sh` builds a 1 GiB log and its zstd twin. Run one mode per
//! process so the peak RSS belongs to that mode:
//! `cargo bench -p spark-exporter-bench --bench eventlog-bench -- parse
//! target/eventlog-bench/local-bench`, or the
//! executable that `scripts/bench-bin.sh eventlog-bench` names (BENCHMARKS.md).
//!
//! A `harness = false` bench target, not part of the shipped crate.

mod common;

use std::fmt::Display;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use spark_exporter::config::Settings;
use spark_exporter::model::Model;
use spark_exporter::sources::eventlog::codec::Codec;
use spark_exporter::sources::eventlog::discovery::parse_single_name;
use spark_exporter::sources::eventlog::tailer::{FileTailer, LineSink};
use spark_exporter::sources::eventlog::{ingest_paths, parse_line};
use spark_exporter::telemetry::Telemetry;

#[derive(Default)]
struct Count {
    bytes: u64,
    lines: u64,
    used: u64,
    errors: u64,
}

impl LineSink for Count {
    fn line(&mut self, line: &[u8]) {
        self.bytes += line.len() as u64 + 1;
        self.lines += 1;
        match parse_line(line) {
            Ok(Some(_)) => self.used += 1,
            Ok(None) => {}
            Err(_) => self.errors += 1,
        }
    }
    fn error(&mut self, _kind: &'static str, _detail: &dyn Display) {
        self.errors += 1;
    }
}

/// Peak resident set size of this process, in MiB (`VmHWM`).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn parse_mode(path: PathBuf) -> Result<(u64, u64, u64), String> {
    let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let codec = parse_single_name(name).map_or(Codec::Plain, |n| n.codec);
    let mut t = FileTailer::local(path.clone(), (meta.dev(), meta.ino()), codec, 64 << 20);
    let mut c = Count::default();
    while !t.poll(64 << 20, &mut c).map_err(|e| e.to_string())?.eof {}
    t.finish(&mut c);
    if c.errors > 0 {
        return Err(format!("{} errors", c.errors));
    }
    Ok((c.bytes, c.lines, c.used))
}

fn ingest_mode(path: PathBuf) -> Result<(u64, u64, u64), String> {
    let settings = Settings::default();
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::new(&settings, telemetry.clone());
    ingest_paths(
        &[path],
        &settings,
        &model.observer(spark_exporter::sources::source("event_log")),
        model.telemetry(),
    )
    .map_err(|e| e.to_string())?;
    let s = telemetry.snapshot();
    if !s.eventlog_errors.is_empty() {
        return Err(format!("errors: {:?}", s.eventlog_errors));
    }
    Ok((s.eventlog_bytes, s.eventlog_events, 0))
}

const USAGE: &str = "usage: eventlog-bench parse|ingest FILE";

fn main() {
    let args: Vec<String> = common::args_or_usage(USAGE)
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (Some(mode), Some(path)) = (args.first(), args.get(1)) else {
        eprintln!("{USAGE}");
        std::process::exit(64);
    };
    let path = PathBuf::from(path);
    let raw = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let start = Instant::now();
    let result = match mode.as_str() {
        "parse" => parse_mode(path.clone()),
        "ingest" => ingest_mode(path.clone()),
        _ => Err(format!("unknown mode {mode}")),
    };
    let secs = start.elapsed().as_secs_f64();
    match result {
        Ok((bytes, events, _)) => {
            let mb = bytes as f64 / 1e6;
            println!(
                "mode={mode} file={} raw_mb={:.1} decoded_mb={mb:.1} events={events} secs={secs:.2} \
                 decoded_mb_per_s={:.0} events_per_s={:.0} peak_rss_mib={:.0}",
                path.display(),
                raw as f64 / 1e6,
                mb / secs,
                events as f64 / secs,
                peak_rss_mib()
            );
        }
        Err(e) => {
            eprintln!("eventlog-bench: {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}
