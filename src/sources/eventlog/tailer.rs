//! Following one file: raw offset, undecoded bytes, decoder state and the partial last line.
//!
//! A [`FileTailer`] keeps its file open while it follows it, so a rename (`.inprogress` to the
//! final name) or a deletion does not disturb the reading. Only whole lines leave it: the bytes
//! after the last newline wait in [`LineSplitter`], and bytes of a compressed block not yet
//! fully written wait in `pending` until the rest arrives. A file that shrinks below the offset
//! was truncated or rewritten: the tailer counts it and starts over from the beginning. Where the
//! decoder skips a damaged block, the partial line held back is dropped: the text after the gap
//! does not continue it.

use std::fmt::Display;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::codec::{Codec, CodecError, Decoder};
use super::fs::{FileId, Fs, OpenError, Reader};
use super::scratch::Scratch;

/// Raw bytes read per `read` call.
const READ_CHUNK: usize = 256 * 1024;
/// Decoded bytes produced per decoder call before they are split into lines.
const DECODE_CHUNK: usize = 256 * 1024;

/// Receives what a tailer reads.
pub trait LineSink {
    /// One complete line, without its newline.
    fn line(&mut self, line: &[u8]);
    /// A recoverable problem (`kind` is the error-counter label); reading goes on.
    fn error(&mut self, kind: &'static str, detail: &dyn Display);
}

/// Errors that stop reading a file.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The path now names another file than the one followed.
    #[error("{0}: replaced by another file")]
    Replaced(PathBuf),
    /// The compressed stream cannot be decoded further.
    #[error("{path}: {source}")]
    Codec {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: CodecError,
    },
}

impl TailError {
    /// The `kind` label of `spark_exporter_eventlog_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            TailError::Io { .. } | TailError::Replaced(_) => "io",
            TailError::Codec { .. } => "codec",
        }
    }
}

thread_local! {
    /// Each reader thread's read buffer, and its buffer of decoded bytes: made once per thread
    /// rather than once per poll or per file ([`Scratch`]).
    static READ_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    static DECODED_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Splits decoded bytes into lines, holding back the partial last one. Lines longer than the cap
/// are dropped (counted once each), so memory stays bounded by the cap.
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    max: usize,
    skipping: bool,
}

impl LineSplitter {
    /// A splitter that accepts lines of at most `max` bytes.
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter {
            buf: Vec::new(),
            max,
            skipping: false,
        }
    }

    /// Split `data`, handing each complete line to `sink`.
    pub fn feed(&mut self, mut data: &[u8], sink: &mut dyn LineSink) {
        while let Some(i) = memchr::memchr(b'\n', data) {
            let piece = &data[..i];
            data = &data[i + 1..];
            if self.skipping {
                self.skipping = false;
            } else if self.buf.len() + piece.len() > self.max {
                self.buf.clear();
                sink.error(
                    "line_too_long",
                    &format_args!("line over {} bytes skipped", self.max),
                );
            } else if self.buf.is_empty() {
                sink.line(piece);
            } else {
                self.buf.extend_from_slice(piece);
                sink.line(&self.buf);
                self.buf.clear();
            }
        }
        if self.skipping {
            return;
        }
        if self.buf.len() + data.len() > self.max {
            self.buf = Vec::new();
            self.skipping = true;
            sink.error(
                "line_too_long",
                &format_args!("line over {} bytes skipped", self.max),
            );
        } else {
            self.buf.extend_from_slice(data);
        }
    }

    /// Bytes of the partial last line held back.
    #[cfg(test)]
    pub fn partial_len(&self) -> usize {
        self.buf.len()
    }

    /// Whether it is in the middle of skipping a line too long.
    pub fn is_skipping(&self) -> bool {
        self.skipping
    }

    /// The partial last line held back.
    pub fn partial(&self) -> &[u8] {
        &self.buf
    }

    /// Hold `carry` back as the start of the next line (a restart's read position).
    pub fn preload(&mut self, carry: &[u8]) {
        self.buf.clear();
        self.buf.extend_from_slice(carry);
        self.skipping = false;
    }

    /// Deliver the partial last line as a line (a finished file that lacks a final newline).
    pub fn flush(&mut self, sink: &mut dyn LineSink) {
        if !self.buf.is_empty() && !self.skipping {
            sink.line(&self.buf);
        }
        self.reset();
    }

    /// Forget everything held back.
    pub fn reset(&mut self) {
        self.buf = Vec::new();
        self.skipping = false;
    }
}

/// Where a tailer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailState {
    /// Following (or waiting to open) the file.
    Active,
    /// Read to the end of a file that will not grow any more.
    Done,
    /// Stopped by an error.
    Failed,
}

/// What one [`FileTailer::poll`] did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Polled {
    /// Raw (file) bytes read.
    pub raw_bytes: u64,
    /// The end of the file was reached.
    pub eof: bool,
}

/// Where a restart reads on in a file: a boundary of its stream (`raw`, where a fresh decoder
/// can start), the decoded bytes after it already handed out as lines (`skip`), and the start
/// of a line that began before it (`carry`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResumeAt {
    /// Raw offset of the boundary.
    pub raw: u64,
    /// Decoded bytes after the boundary already read as lines.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skip: u64,
    /// The start of the line in progress at the boundary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carry: Vec<u8>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Follows one file.
#[derive(Debug)]
pub struct FileTailer {
    fs: Arc<dyn Fs>,
    path: PathBuf,
    id: FileId,
    codec: Codec,
    file: Option<Box<dyn Reader>>,
    offset: u64,
    pending: Vec<u8>,
    /// `None` until the first compressed bytes are read, and again once a zstd file is finished:
    /// its context and buffers (about 0.5 MiB resident) are given back, and a fresh decoder
    /// starts at the frame boundary where it ended if the file ever grows again.
    decoder: Option<Decoder>,
    lines: LineSplitter,
    /// Where this tailer is.
    pub state: TailState,
    /// The size the last listing gave, used once instead of asking (object stores).
    size_hint: Option<u64>,
    /// Decoded bytes produced since the last (re)start (a resumed file: counted from its
    /// boundary, less its carry).
    decoded_total: u64,
    /// The last stream boundary passed: (raw offset, `decoded_total` there).
    boundary: Option<(u64, u64)>,
    /// Decoded bytes still to drop after a resume (they were read before the restart).
    skip: u64,
}

impl FileTailer {
    /// A tailer for the local file `id`, now at `path`, not opened yet.
    #[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
    pub fn local(path: PathBuf, id: FileId, codec: Codec, max_line: usize) -> FileTailer {
        Self::new(Arc::new(super::fs::LocalFs), path, id, codec, max_line)
    }

    /// A tailer for the file `id`, now at `path` in `fs`, not opened yet. Its decoder is made
    /// at the first read, where a failure to make one (zstd cannot allocate a context) fails the
    /// file like any codec error.
    pub fn new(
        fs: Arc<dyn Fs>,
        path: PathBuf,
        id: FileId,
        codec: Codec,
        max_line: usize,
    ) -> FileTailer {
        FileTailer {
            fs,
            path,
            id,
            codec,
            file: None,
            offset: 0,
            pending: Vec::new(),
            // Made at the first read (`drain`), not here: a fleet adds all its logs before it
            // reads them, and a zstd context made per log then missed the thread's spares.
            decoder: None,
            lines: LineSplitter::new(max_line),
            state: TailState::Active,
            size_hint: None,
            decoded_total: 0,
            boundary: Some((0, 0)),
            skip: 0,
        }
    }

    /// Raw bytes consumed from the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The path the file was last seen at.
    #[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// A listing gave the file's size: on a store where that is as current as asking, the next
    /// poll reads up to it without asking (one request less per poll of an idle log).
    pub fn hint_size(&mut self, size: u64) {
        if self.fs.listed_size_is_current() {
            self.size_hint = Some(size);
        }
    }

    /// The path as logs show it (a local path, or the object's URL).
    pub fn display(&self) -> String {
        self.fs.display(&self.path)
    }

    /// The file was renamed.
    pub fn set_path(&mut self, path: PathBuf) {
        self.path = path;
    }

    /// Whether the file handle is open.
    pub fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// Release the file handle; a later poll reopens it at the same offset.
    pub fn close(&mut self) {
        self.file = None;
    }

    /// Take the file as read to its end at `offset` (a checkpoint's position of a finished log):
    /// done, nothing opened. If it grows, a fresh decoder starts there.
    pub fn resume_done(&mut self, offset: u64) {
        self.offset = offset;
        self.pending = Vec::new();
        self.decoder = None;
        self.lines.reset();
        self.state = TailState::Done;
        self.file = None;
        self.decoded_total = 0;
        self.boundary = Some((offset, 0));
        self.skip = 0;
    }

    /// Where a restart can read on and give the lines still to come: the last stream boundary
    /// passed, with the decoded bytes after it already handed out and the start of a line begun
    /// before it. `None` in the middle of skipping a line too long, or when no boundary is known
    /// (a zstd stream written as one frame, before Spark 3.0).
    pub fn resume_point(&self) -> Option<ResumeAt> {
        if self.lines.is_skipping() {
            return None;
        }
        if self.state == TailState::Done && self.pending.is_empty() {
            return Some(ResumeAt {
                raw: self.offset,
                skip: 0,
                carry: vec![],
            });
        }
        if self.state != TailState::Active {
            return None;
        }
        let partial = self.lines.partial();
        if self.codec == Codec::Plain {
            return Some(ResumeAt {
                raw: self.offset - partial.len() as u64,
                skip: 0,
                carry: vec![],
            });
        }
        let (raw, at) = self.boundary?;
        // Decoded bytes up to the end of the last complete line.
        let lines_end = (self.decoded_total + self.skip).checked_sub(partial.len() as u64)?;
        if lines_end >= at {
            Some(ResumeAt {
                raw,
                skip: lines_end - at,
                carry: vec![],
            })
        } else {
            let carry = partial.get(..usize::try_from(at - lines_end).ok()?)?;
            Some(ResumeAt {
                raw,
                skip: 0,
                carry: carry.to_vec(),
            })
        }
    }

    /// Read on from `at` (a [`Self::resume_point`] of a previous process), with fresh decoder
    /// state.
    pub fn resume_at(&mut self, at: &ResumeAt) -> Result<(), CodecError> {
        self.decoder = Some(Decoder::resumed(self.codec)?);
        self.offset = at.raw;
        self.pending = Vec::new();
        self.lines.reset();
        self.lines.preload(&at.carry);
        self.decoded_total = at.carry.len() as u64;
        self.boundary = Some((at.raw, self.decoded_total));
        self.skip = at.skip;
        self.state = TailState::Active;
        self.file = None;
        Ok(())
    }

    /// Start again from byte 0 with fresh decoder state (made at the next read).
    pub fn restart(&mut self) {
        self.offset = 0;
        self.decoded_total = 0;
        self.boundary = Some((0, 0));
        self.skip = 0;
        self.pending = Vec::new();
        self.decoder = None;
        self.lines.reset();
        self.state = TailState::Active;
        if let Some(f) = &mut self.file {
            if f.seek(0).is_err() {
                self.file = None;
            }
        }
    }

    fn shown(&self) -> PathBuf {
        PathBuf::from(self.display())
    }

    fn io(&self, source: io::Error) -> TailError {
        TailError::Io {
            path: self.shown(),
            source,
        }
    }

    fn open(&mut self) -> Result<&mut Box<dyn Reader>, TailError> {
        if self.file.is_none() {
            let f = match self.fs.open(&self.path, self.id, self.offset) {
                Ok(f) => f,
                Err(OpenError::NotFound) => {
                    return Err(self.io(io::Error::from(io::ErrorKind::NotFound)))
                }
                Err(OpenError::Replaced) => return Err(TailError::Replaced(self.shown())),
                Err(OpenError::Io(e)) => return Err(self.io(e)),
            };
            self.file = Some(f);
        }
        let shown = self.shown();
        self.file.as_mut().ok_or(TailError::Replaced(shown))
    }

    /// Read up to about `budget` raw bytes, handing complete lines to `sink`.
    pub fn poll(&mut self, budget: u64, sink: &mut dyn LineSink) -> Result<Polled, TailError> {
        let offset = self.offset;
        let hint = self.size_hint.take();
        let len = match self.open() {
            Ok(f) => match hint {
                Some(size) => {
                    f.known_size(size);
                    Ok(size)
                }
                None => f.size(),
            },
            // Renamed or deleted between listing and opening: the next listing says which.
            Err(TailError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(Polled::default());
            }
            Err(e) => return Err(e),
        };
        let len = match len {
            Ok(l) => l,
            // An object (opened without a request) that is gone: as above.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.file = None;
                return Ok(Polled::default());
            }
            Err(e) => return Err(self.io(e)),
        };
        if len < offset {
            sink.error(
                "truncated",
                &format_args!(
                    "{} shrank to {len} bytes below offset {offset}; reading it again",
                    self.display()
                ),
            );
            self.restart();
        }
        let mut polled = Polled::default();
        let mut buf = Scratch::take(&READ_BUF, usize::MAX);
        if buf.len() < READ_CHUNK {
            buf.resize(READ_CHUNK, 0);
        }
        while polled.raw_bytes < budget {
            let n = {
                let f = self.open()?;
                f.read(&mut buf[..])
            };
            let n = match n {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(e)),
            };
            if n == 0 {
                polled.eof = true;
                break;
            }
            self.offset += n as u64;
            polled.raw_bytes += n as u64;
            if self.codec == Codec::Plain {
                // Plain text needs no decoding: split it where it was read.
                self.feed(&buf[..n], sink);
                self.boundary = Some((self.offset, self.decoded_total));
            } else if self.pending.is_empty() {
                // Nothing held back: decode straight from the read buffer, and keep only what
                // it leaves (a block cut short by the read), not a copy of every byte read.
                let used = self.decode(&buf[..n], sink)?;
                self.pending.extend_from_slice(&buf[used..n]);
            } else {
                self.pending.extend_from_slice(&buf[..n]);
                let pending = std::mem::take(&mut self.pending);
                let used = self.decode(&pending, sink)?;
                // `decode` left `pending` empty; what it did not use is held back again.
                self.pending = pending;
                self.pending.drain(..used);
            }
        }
        Ok(polled)
    }

    /// Decode every complete block of `input` (the compressed bytes that end at the file offset
    /// read so far) and split the output into lines; returns how many bytes of `input` it used,
    /// the rest being a block not yet complete (compressed files: plain text is split as it is
    /// read, in [`FileTailer::poll`]). A fatal codec error fails the tailer.
    fn decode(&mut self, input: &[u8], sink: &mut dyn LineSink) -> Result<usize, TailError> {
        if self.decoder.is_none() {
            self.decoder = Some(Decoder::new(self.codec).map_err(|source| TailError::Codec {
                path: self.shown(),
                source,
            })?);
        }
        let mut decoded = Scratch::take(&DECODED_BUF, usize::MAX);
        let mut used = 0;
        loop {
            decoded.clear();
            let Some(decoder) = self.decoder.as_mut() else {
                break;
            };
            let rest = &input[used..];
            let r = decoder.decode(rest, &mut decoded, DECODE_CHUNK);
            if let Some((i, o)) = decoder.last_boundary() {
                let rest_at = self.offset - rest.len() as u64;
                self.boundary = Some((rest_at + i as u64, self.decoded_total + o as u64));
            }
            let left = rest.len();
            self.feed(&decoded, sink);
            match r {
                Ok(0) if decoded.is_empty() => break,
                Ok(n) => used += n.min(left),
                Err(e @ CodecError::BadBlock { consumed, .. }) => {
                    used += consumed.min(left);
                    // The text after the skipped block does not continue the partial line held
                    // back: drop it rather than glue the two into one line.
                    self.lines.reset();
                    sink.error("codec", &format_args!("{}: {e}", self.display()));
                }
                Err(source) => {
                    self.pending = Vec::new();
                    self.state = TailState::Failed;
                    return Err(TailError::Codec {
                        path: self.shown(),
                        source,
                    });
                }
            }
        }
        Ok(used)
    }

    /// Hand decoded bytes to the line splitter, first dropping what a resume says was read.
    fn feed(&mut self, data: &[u8], sink: &mut dyn LineSink) {
        let drop = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(data.len());
        self.skip -= drop as u64;
        self.decoded_total += data.len() as u64;
        self.lines.feed(&data[drop..], sink);
    }

    /// The file is complete and read to its end: report leftovers (unless they are the rest of
    /// a damaged region already counted), deliver a last line that lacks its newline, and
    /// release the handle.
    pub fn finish(&mut self, sink: &mut dyn LineSink) {
        let damaged = self.decoder.as_ref().is_some_and(Decoder::is_damaged);
        if !self.pending.is_empty() && !damaged {
            sink.error(
                "truncated",
                &format_args!(
                    "{}: {} bytes of an incomplete block at the end",
                    self.display(),
                    self.pending.len()
                ),
            );
        }
        self.pending = Vec::new();
        self.lines.flush(sink);
        self.state = TailState::Done;
        self.close();
        // A finished log holds no buffers: a fleet keeps thousands of them (its zstd context
        // goes back to the thread's spares).
        if self.codec == Codec::Zstd {
            self.decoder = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn id(path: &Path) -> FileId {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).unwrap();
        (m.dev(), m.ino())
    }

    #[derive(Default)]
    struct Lines(Vec<Vec<u8>>);

    impl LineSink for Lines {
        fn line(&mut self, line: &[u8]) {
            self.0.push(line.to_vec());
        }
        fn error(&mut self, kind: &'static str, detail: &dyn Display) {
            panic!("{kind}: {detail}");
        }
    }

    /// Every line of `path` read to its end by a fresh tailer.
    fn all_lines(path: &Path, codec: Codec) -> Vec<Vec<u8>> {
        let mut t = FileTailer::local(path.into(), id(path), codec, 1 << 26);
        let mut out = Lines::default();
        while t.poll(1 << 20, &mut out).unwrap().raw_bytes > 0 {}
        t.finish(&mut out);
        out.0
    }

    /// A restart's read position, for every codec Spark writes: the file is cut at many points
    /// (as a log being written is); a tailer reads the cut copy, its resume point is taken
    /// through JSON, and a new tailer on the whole file resumes there. The lines of the first
    /// and then the second are the file's lines, each once.
    #[test]
    fn a_resumed_tailer_gives_every_line_once_for_every_codec() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eventlogs");
        let logs = [
            ("spark-4.1.1-none-single", Codec::Plain),
            ("spark-4.1.1-zstd-single", Codec::Zstd),
            ("spark-3.5.5-zstd-single", Codec::Zstd),
            ("spark-4.1.1-lz4-single", Codec::Lz4),
            ("spark-4.1.1-snappy-single", Codec::Snappy),
            ("spark-4.1.1-lzf-single", Codec::Lzf),
        ];
        let tmp = tempfile::tempdir().unwrap();
        for (dir, codec) in logs {
            let file = std::fs::read_dir(data.join(dir))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.file_name().is_some_and(|n| n != "counts.json"))
                .unwrap();
            let bytes = std::fs::read(&file).unwrap();
            let want = all_lines(&file, codec);
            assert!(want.len() > 50, "{dir}");
            let mut mid_stream = 0;
            for k in 1..=12u64 {
                let cut = (bytes.len() as u64 * k / 13) as usize;
                let part = tmp.path().join(format!("part-{k}"));
                std::fs::write(&part, &bytes[..cut]).unwrap();
                let mut first = FileTailer::local(part.clone(), id(&part), codec, 1 << 26);
                let mut a = Lines::default();
                while first.poll(1 << 20, &mut a).unwrap().raw_bytes > 0 {}
                let at = first.resume_point().expect("a resume point");
                if at.raw > 0 {
                    mid_stream += 1;
                }
                let at: ResumeAt =
                    serde_json::from_str(&serde_json::to_string(&at).unwrap()).unwrap();
                let mut second = FileTailer::local(file.clone(), id(&file), codec, 1 << 26);
                second.resume_at(&at).unwrap();
                let mut b = a;
                while second.poll(1 << 20, &mut b).unwrap().raw_bytes > 0 {}
                second.finish(&mut b);
                assert!(
                    b.0 == want,
                    "{dir}, cut at {cut} of {}, resumed at {at:?}: {} lines, want {}",
                    bytes.len(),
                    b.0.len(),
                    want.len()
                );
            }
            // A boundary inside the stream was found (not only its start), every codec.
            assert!(
                mid_stream >= 6,
                "{dir}: {mid_stream} of 12 cuts resumed mid-stream"
            );
        }
    }
}
