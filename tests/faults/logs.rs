//! Real Spark event logs from `tests/data/` and what the fault tests need to know about their
//! bytes: where lines and zstd frames and blocks start and end, what a prefix decodes to.
//!
//! Spark's zstd event logs are a *sequence* of zstd frames, one per flush of the event-log
//! writer: `ZStdCompressionCodec.compressedContinuousOutputStream` sets zstd-jni's
//! `closeFrameOnFlush` (SPARK-29322, so that readers of an in-progress log never wait on an open
//! frame). `spark-4.1.1-zstd-single` has 79 frames of one block each, each ending at the end of a
//! line. The walker below lists frames and their blocks (RFC 8878 section 3.1).

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

/// `tests/data/...`.
pub fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The one log file of a single-file fixture folder `tests/data/eventlogs/<dir>` (the folder
/// also holds `counts.json`).
pub fn single_fixture(dir: &str) -> PathBuf {
    let d = data(&format!("eventlogs/{dir}"));
    let mut files: Vec<PathBuf> = fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "json"))
        .collect();
    assert_eq!(files.len(), 1, "{}: {files:?}", d.display());
    files.pop().unwrap()
}

/// The `eventlog_v2_*` folder of a rolling fixture folder.
pub fn rolling_fixture(rel: &str) -> PathBuf {
    let d = data(rel);
    fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("eventlog_v2_"))
        })
        .unwrap_or_else(|| panic!("no eventlog_v2_ folder in {}", d.display()))
}

pub fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Bytes of `text` that make up complete lines (up to and including the last newline).
pub fn complete_lines(text: &[u8]) -> usize {
    text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// A position near `frac` of `text` that is strictly inside a line (not just after a newline,
/// not on one).
pub fn mid_line(text: &[u8], frac: f64) -> usize {
    let mut p = ((text.len() as f64) * frac) as usize;
    while p < text.len() && (text[p] == b'\n' || text[p - 1] == b'\n' || text[p + 1] == b'\n') {
        p += 1;
    }
    assert!(p < text.len() && text[p - 1] != b'\n' && text[p] != b'\n');
    p
}

/// One zstd block: where its 3-byte header starts, its type (0 raw, 1 RLE, 2 compressed,
/// 3 reserved) and its payload size.
#[derive(Debug, Clone, Copy)]
pub struct Block {
    pub header: usize,
    pub kind: u8,
    pub size: usize,
}

impl Block {
    /// First byte after the block.
    pub fn end(&self) -> usize {
        self.header + 3 + if self.kind == 1 { 1 } else { self.size }
    }
}

/// One zstd frame: its byte range and its blocks.
#[derive(Debug, Clone)]
pub struct Frame {
    pub start: usize,
    pub end: usize,
    pub blocks: Vec<Block>,
}

/// The frames of a zstd stream (skippable frames are not expected in Spark's logs).
pub fn zstd_frames(b: &[u8]) -> Vec<Frame> {
    let mut pos = 0;
    let mut frames = vec![];
    while pos < b.len() {
        let start = pos;
        let magic = u32::from_le_bytes(b[pos..pos + 4].try_into().unwrap());
        assert_eq!(magic, 0xFD2F_B528, "zstd frame magic at {pos}");
        let fhd = b[pos + 4];
        pos += 5;
        let single_segment = (fhd >> 5) & 1 == 1;
        let checksum = (fhd >> 2) & 1 == 1;
        if !single_segment {
            pos += 1; // window descriptor
        }
        pos += [0, 1, 2, 4][(fhd & 3) as usize]; // dictionary id
        pos += match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let mut blocks = vec![];
        loop {
            let h = u32::from(b[pos]) | u32::from(b[pos + 1]) << 8 | u32::from(b[pos + 2]) << 16;
            let blk = Block {
                header: pos,
                kind: ((h >> 1) & 3) as u8,
                size: (h >> 3) as usize,
            };
            pos = blk.end();
            blocks.push(blk);
            if h & 1 == 1 {
                break;
            }
        }
        if checksum {
            pos += 4;
        }
        frames.push(Frame {
            start,
            end: pos,
            blocks,
        });
    }
    frames
}

/// What the complete frames of a zstd prefix decode to (a frame cut short decodes to nothing:
/// its single block is not complete).
pub fn zstd_decoded_prefix(b: &[u8], cut: usize) -> Vec<u8> {
    let mut out = vec![];
    for f in zstd_frames(b) {
        if f.end > cut {
            break;
        }
        out.extend(zstd::stream::decode_all(&b[f.start..f.end]).expect("decode a zstd frame"));
    }
    out
}

/// Decode a whole zstd stream.
pub fn zstd_decode(b: &[u8]) -> Vec<u8> {
    zstd::stream::decode_all(b).expect("decode zstd")
}
