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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::codec::{Codec, CodecError, Decoder};
use super::fs::{FileId, Fs, OpenError, Reader};

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
    pub fn partial_len(&self) -> usize {
        self.buf.len()
    }

    /// Whether it is in the middle of skipping a line too long.
    pub fn is_skipping(&self) -> bool {
        self.skipping
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
    decoded: Vec<u8>,
    /// `None` once a zstd file is finished: its context and buffers (about 0.5 MiB resident)
    /// are given back, and a fresh decoder starts at the frame boundary where it ended if the
    /// file ever grows again.
    decoder: Option<Decoder>,
    lines: LineSplitter,
    /// Where this tailer is.
    pub state: TailState,
    /// The size the last listing gave, used once instead of asking (object stores).
    size_hint: Option<u64>,
}

impl FileTailer {
    /// A tailer for the local file `id`, now at `path`, not opened yet.
    pub fn local(
        path: PathBuf,
        id: FileId,
        codec: Codec,
        max_line: usize,
    ) -> Result<FileTailer, CodecError> {
        Self::new(Arc::new(super::fs::LocalFs), path, id, codec, max_line)
    }

    /// A tailer for the file `id`, now at `path` in `fs`, not opened yet.
    pub fn new(
        fs: Arc<dyn Fs>,
        path: PathBuf,
        id: FileId,
        codec: Codec,
        max_line: usize,
    ) -> Result<FileTailer, CodecError> {
        Ok(FileTailer {
            fs,
            path,
            id,
            codec,
            file: None,
            offset: 0,
            pending: Vec::new(),
            decoded: Vec::new(),
            decoder: Some(Decoder::new(codec)?),
            lines: LineSplitter::new(max_line),
            state: TailState::Active,
            size_hint: None,
        })
    }

    /// Raw bytes consumed from the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The path the file was last seen at.
    pub fn path(&self) -> &Path {
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
    }

    /// Where reading could start again, with fresh decoder state, and give the lines still to
    /// come: the end of the last complete line handed out. Known for an uncompressed file, and
    /// for any file read to its end; `None` in the middle of a compressed one (a decoder resumes
    /// only at a block or frame boundary, which is not tracked yet).
    pub fn resume_point(&self) -> Option<u64> {
        if self.lines.is_skipping() {
            return None;
        }
        match (self.codec, self.state) {
            (_, TailState::Done) if self.pending.is_empty() => Some(self.offset),
            (Codec::Plain, TailState::Active) => {
                Some(self.offset - self.lines.partial_len() as u64)
            }
            _ => None,
        }
    }

    /// Read on from `offset` (a [`Self::resume_point`] of a previous process), with fresh
    /// decoder state.
    pub fn resume_at(&mut self, offset: u64) {
        self.offset = offset;
        self.pending = Vec::new();
        self.decoder = None;
        self.lines.reset();
        self.state = TailState::Active;
        self.file = None;
    }

    /// Start again from byte 0 with fresh decoder state.
    pub fn restart(&mut self) -> Result<(), CodecError> {
        self.offset = 0;
        self.pending = Vec::new();
        self.decoder = Some(Decoder::new(self.codec)?);
        self.lines.reset();
        self.state = TailState::Active;
        if let Some(f) = &mut self.file {
            if f.seek(0).is_err() {
                self.file = None;
            }
        }
        Ok(())
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
            self.restart().map_err(|source| TailError::Codec {
                path: self.shown(),
                source,
            })?;
        }
        let mut polled = Polled::default();
        let mut buf = vec![0u8; READ_CHUNK];
        while polled.raw_bytes < budget {
            let n = {
                let f = self.open()?;
                f.read(&mut buf)
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
            self.pending.extend_from_slice(&buf[..n]);
            self.drain(sink)?;
        }
        Ok(polled)
    }

    /// Decode every complete block in `pending` and split the output into lines.
    fn drain(&mut self, sink: &mut dyn LineSink) -> Result<(), TailError> {
        if self.codec == Codec::Plain {
            self.lines.feed(&self.pending, sink);
            self.pending.clear();
            return Ok(());
        }
        if self.decoder.is_none() {
            self.decoder = Some(Decoder::new(self.codec).map_err(|source| TailError::Codec {
                path: self.shown(),
                source,
            })?);
        }
        loop {
            self.decoded.clear();
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(());
            };
            let r = decoder.decode(&self.pending, &mut self.decoded, DECODE_CHUNK);
            self.lines.feed(&self.decoded, sink);
            match r {
                Ok(0) if self.decoded.is_empty() => return Ok(()),
                Ok(n) => drop(self.pending.drain(..n)),
                Err(e @ CodecError::BadBlock { consumed, .. }) => {
                    self.pending.drain(..consumed.min(self.pending.len()));
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
        // A finished log holds no buffers: a fleet keeps thousands of them.
        self.decoded = Vec::new();
        if self.codec == Codec::Zstd {
            self.decoder = None;
        }
    }
}
