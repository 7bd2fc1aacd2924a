//! Reading Spark's event logs in the tests, independently of the exporter: the parts of a
//! rolling `eventlog_v2_*` folder in order, and every event of plain or zstd files.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The `events_<n>_…` parts of a rolling event-log folder, in part order.
pub fn rolling_parts(dir: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let n = name
                .strip_prefix("events_")?
                .split('_')
                .next()?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    parts.sort();
    assert!(!parts.is_empty(), "no events_ parts in {}", dir.display());
    parts.into_iter().map(|(_, p)| p).collect()
}

/// Every event of `files`, in order: uncompressed (or `.inprogress`) or zstd; any other codec
/// is not read by the tests.
pub fn read_events(files: &[PathBuf]) -> Vec<Value> {
    let mut out = vec![];
    for f in files {
        let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let text = match f.extension().and_then(|e| e.to_str()) {
            Some("zstd") | Some("zst") => zstd::decode_all(&bytes[..]).expect("zstd"),
            None | Some("inprogress") => bytes,
            other => panic!("{}: codec {other:?} not read by the tests", f.display()),
        };
        for line in String::from_utf8(text).expect("utf-8").lines() {
            if !line.trim().is_empty() {
                out.push(serde_json::from_str(line).expect("event JSON"));
            }
        }
    }
    out
}

/// Every event of a rolling event-log folder, in order.
pub fn rolling_events(dir: &Path) -> Vec<Value> {
    read_events(&rolling_parts(dir))
}
