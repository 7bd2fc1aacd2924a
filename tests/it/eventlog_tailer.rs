//! Property tests for the tailer: a file written in arbitrary pieces (partial lines, partial
//! compressed blocks), renamed and truncated under it, yields every complete line exactly once.

use std::fmt::Display;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use spark_exporter::sources::eventlog::block::xxh32;
use spark_exporter::sources::eventlog::codec::Codec;
use spark_exporter::sources::eventlog::tailer::{FileTailer, LineSink};

#[derive(Default)]
struct Collect {
    lines: Vec<String>,
    errors: Vec<&'static str>,
}

impl LineSink for Collect {
    fn line(&mut self, line: &[u8]) {
        self.lines.push(String::from_utf8(line.to_vec()).unwrap());
    }
    fn error(&mut self, kind: &'static str, _detail: &dyn Display) {
        self.errors.push(kind);
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Append this many lines, holding back the last `hold` bytes of what is to be written
    /// (cutting a line, or a compressed block, in two; the rest is written by the next append).
    Append { lines: usize, hold: usize },
    /// Read what is there.
    Poll,
    /// Rename the file (as Spark does with `.inprogress`).
    Rename,
    /// Rewrite the file from empty (truncation) and read.
    Truncate,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..20, 0usize..80).prop_map(|(lines, hold)| Op::Append { lines, hold }),
        4 => Just(Op::Poll),
        1 => Just(Op::Rename),
        1 => Just(Op::Truncate),
    ]
}

fn line(n: usize) -> String {
    format!(
        "{{\"Event\":\"SparkListenerTaskEnd\",\"Task ID\":{n},\"pad\":\"{}\"}}",
        "x".repeat(n % 37)
    )
}

/// The writer side: one stream of a codec, as Spark's output stream writes it.
enum Stream {
    Plain,
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
    Lz4,
}

impl Stream {
    fn new(codec: Codec) -> Stream {
        match codec {
            Codec::Zstd => Stream::Zstd(zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap()),
            Codec::Lz4 => Stream::Lz4,
            _ => Stream::Plain,
        }
    }

    /// Encode `text` and flush, returning the bytes the file grows by.
    fn encode(&mut self, text: &[u8]) -> Vec<u8> {
        match self {
            Stream::Plain => text.to_vec(),
            Stream::Zstd(e) => {
                e.write_all(text).unwrap();
                e.flush().unwrap();
                std::mem::take(e.get_mut())
            }
            Stream::Lz4 => {
                let mut out = Vec::new();
                for chunk in text.chunks(300) {
                    let c = lz4_flex::block::compress(chunk);
                    out.extend_from_slice(b"LZ4Block");
                    out.push(0x20);
                    out.extend_from_slice(&(c.len() as u32).to_le_bytes());
                    out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
                    out.extend_from_slice(&(xxh32(chunk, 0x9747_b28c) & 0x0fff_ffff).to_le_bytes());
                    out.extend_from_slice(&c);
                }
                out
            }
        }
    }
}

fn append(path: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

fn drain(t: &mut FileTailer, sink: &mut Collect) {
    while !t.poll(1 << 12, sink).unwrap().eof {}
}

/// Runs `ops`. For plain text the lines read after every poll are checked exactly (all complete
/// lines on disk, in order, each once); for compressed streams they must be a prefix of that,
/// since bytes of a block not fully on disk cannot be decoded yet. At the end everything is
/// written and must have been read exactly once.
fn run(codec: Codec, ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut path: PathBuf = dir.path().join("local-1.inprogress");
    File::create(&path).unwrap();
    let m = std::fs::metadata(&path).unwrap();
    let mut t = FileTailer::local(path.clone(), (m.dev(), m.ino()), codec, 1 << 20);
    let mut sink = Collect::default();
    let mut stream = Stream::new(codec);
    let mut next = 0;
    // Lines delivered before the last truncation, lines of this generation (all generated, and
    // how many are complete in the decoded text on disk), bytes not yet on disk.
    let mut before: Vec<String> = Vec::new();
    let mut generated: Vec<String> = Vec::new();
    let (mut text_on_disk, mut held) = (String::new(), Vec::<u8>::new());
    let mut plain_held = String::new();
    let mut renames = 0;
    for op in ops {
        match op {
            Op::Append { lines, hold } => {
                let mut text = String::new();
                for _ in 0..lines {
                    let l = line(next);
                    next += 1;
                    text.push_str(&l);
                    text.push('\n');
                    generated.push(l);
                }
                let mut bytes = std::mem::take(&mut held);
                bytes.extend(stream.encode(text.as_bytes()));
                let keep = bytes.len() - hold.min(bytes.len());
                held = bytes.split_off(keep);
                append(&path, &bytes);
                if codec == Codec::Plain {
                    plain_held.push_str(&text);
                    let on = plain_held.len() - held.len();
                    text_on_disk.push_str(&plain_held[..on]);
                    plain_held.drain(..on);
                }
            }
            Op::Poll => {
                drain(&mut t, &mut sink);
                let got = &sink.lines[before.len()..];
                assert!(sink.lines.starts_with(&before));
                if codec == Codec::Plain {
                    let complete = text_on_disk.matches('\n').count();
                    assert_eq!(got, &generated[..complete]);
                } else {
                    assert!(generated.starts_with(got), "{got:?} not a prefix");
                }
            }
            Op::Rename => {
                renames += 1;
                let to = dir.path().join(format!("local-1-{renames}"));
                std::fs::rename(&path, &to).unwrap();
                path = to;
                t.set_path(path.clone());
            }
            Op::Truncate => {
                let had_read = t.offset() > 0;
                File::create(&path).unwrap();
                let errors = sink.errors.len();
                drain(&mut t, &mut sink);
                assert_eq!(sink.errors.len() - errors, usize::from(had_read));
                assert!(generated.starts_with(&sink.lines[before.len()..]));
                before = sink.lines.clone();
                generated.clear();
                text_on_disk.clear();
                plain_held.clear();
                held.clear();
                stream = Stream::new(codec);
            }
        }
    }
    append(&path, &held);
    drain(&mut t, &mut sink);
    t.finish(&mut sink);
    assert_eq!(sink.lines[..before.len()], before[..]);
    assert_eq!(sink.lines[before.len()..], generated[..]);
    assert!(
        sink.errors.iter().all(|e| *e == "truncated"),
        "{:?}",
        sink.errors
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn plain_lines_arrive_exactly_once(ops in proptest::collection::vec(op(), 1..40)) {
        run(Codec::Plain, ops);
    }

    #[test]
    fn zstd_lines_arrive_exactly_once(ops in proptest::collection::vec(op(), 1..40)) {
        run(Codec::Zstd, ops);
    }

    #[test]
    fn lz4_lines_arrive_exactly_once(ops in proptest::collection::vec(op(), 1..40)) {
        run(Codec::Lz4, ops);
    }
}

#[test]
fn a_line_over_the_cap_is_skipped_and_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local-2");
    let long = "y".repeat(5000);
    std::fs::write(&path, format!("a\n{long}\nb\n")).unwrap();
    let m = std::fs::metadata(&path).unwrap();
    let mut t = FileTailer::local(path.clone(), (m.dev(), m.ino()), Codec::Plain, 1024);
    let mut sink = Collect::default();
    while !t.poll(100, &mut sink).unwrap().eof {}
    assert_eq!(sink.lines, vec!["a", "b"]);
    assert_eq!(sink.errors, vec!["line_too_long"]);
}
