//! Incremental decoders for the codecs Spark writes event logs with.
//!
//! Spark names the codec in the file extension (`.zstd`, `.lz4`, `.snappy`, `.lzf`, none) and
//! wraps the log in the codec's *stream* format, as `CompressionCodec.scala` creates it:
//! - `zstd`: zstd frames; since SPARK-29322 (Spark 3.0) the event log closes a frame at every
//!   flush (`setCloseFrameOnFlush(true)`), so a log is a sequence of small frames, one or a few
//!   events each (older logs and other writers: one long frame);
//! - `lz4`: lz4-java `LZ4BlockOutputStream` blocks (see [`super::block`]);
//! - `snappy`: snappy-java `SnappyOutputStream` chunks;
//! - `lzf`: ning compress-lzf `LZFOutputStream` chunks.
//!
//! A live log ends in the middle of a block, so every decoder here is incremental: it is given the
//! bytes read so far, decodes what it can and says how many it consumed; the caller keeps the
//! rest and offers them again with more bytes appended.
//!
//! **Damage.** A block that cannot be decoded is skipped and reported once as
//! [`CodecError::BadBlock`]; decoding resumes at the next block or frame the format lets us find
//! (lz4, lzf and zstd: their magic number). Errors that follow without any output in between are
//! the same damaged region and are not reported again, so a damaged region counts once however
//! the file was appended to.

use super::block;
pub use super::codec_error::CodecError;
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub use super::codec_error::MAX_BLOCK_BYTES;

/// Output produced per zstd call before returning to the caller (bounds memory per step).
const ZSTD_OUT_CHUNK: usize = 128 * 1024;

/// The magic number that starts every zstd frame (`0xFD2FB528`, little-endian).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A compression codec, as named by Spark's short names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// Uncompressed (`spark.eventLog.compress=false`).
    Plain,
    /// `zstd`.
    Zstd,
    /// `lz4` (lz4-java block stream).
    Lz4,
    /// `snappy` (snappy-java stream).
    Snappy,
    /// `lzf` (ning compress-lzf stream).
    Lzf,
}

impl Codec {
    /// The codec a file extension names (Spark's short codec names).
    pub fn from_extension(ext: &str) -> Option<Codec> {
        match ext {
            "zstd" => Some(Codec::Zstd),
            "lz4" => Some(Codec::Lz4),
            "snappy" => Some(Codec::Snappy),
            "lzf" => Some(Codec::Lzf),
            _ => None,
        }
    }

    /// Spark's short name (`none` for uncompressed).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Plain => "none",
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
            Codec::Snappy => "snappy",
            Codec::Lzf => "lzf",
        }
    }
}

/// An incremental decoder for one file.
pub struct Decoder {
    codec: Codec,
    inner: Inner,
    /// In a damaged region: a block was skipped and nothing has been decoded since.
    damaged: bool,
    /// The last boundary the last [`Decoder::decode`] call passed, as (input bytes consumed,
    /// output bytes appended) up to it: where a fresh decoder could start and produce the rest.
    boundary: Option<(usize, usize)>,
}

enum Inner {
    Plain,
    Zstd(Box<ZstdState>),
    Lz4,
    Snappy(block::SnappyState),
    Lzf,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("codec", &self.codec)
            .finish()
    }
}

impl Decoder {
    /// A decoder at the start of a stream.
    pub fn new(codec: Codec) -> Result<Decoder, CodecError> {
        let inner = match codec {
            Codec::Plain => Inner::Plain,
            Codec::Zstd => {
                let ctx = match SPARE_ZSTD.with_borrow_mut(Vec::pop) {
                    Some(ctx) => ctx,
                    None => zstd::stream::raw::Decoder::new().map_err(zstd_fatal)?,
                };
                Inner::Zstd(Box::new(ZstdState {
                    ctx: Some(ctx),
                    holds_output: false,
                    resyncing: false,
                    frame_end: None,
                }))
            }
            Codec::Lz4 => Inner::Lz4,
            Codec::Snappy => Inner::Snappy(block::SnappyState::default()),
            Codec::Lzf => Inner::Lzf,
        };
        Ok(Decoder {
            codec,
            inner,
            damaged: false,
            boundary: None,
        })
    }

    /// A decoder starting at a boundary in the middle of a stream (a restart's read position):
    /// a snappy-java stream's header is behind it.
    pub fn resumed(codec: Codec) -> Result<Decoder, CodecError> {
        let mut d = Decoder::new(codec)?;
        if let Inner::Snappy(state) = &mut d.inner {
            *state = block::SnappyState::after_header();
        }
        Ok(d)
    }

    /// The last boundary the last [`Decoder::decode`] call passed: (input bytes consumed, output
    /// bytes appended) up to it. Block codecs (lz4, snappy, lzf) consume whole blocks only, so
    /// the end of a call's consumed input is one; zstd passes one where a frame ends (Spark 3.0
    /// and later end a frame at every flush of an event log).
    pub fn last_boundary(&self) -> Option<(usize, usize)> {
        self.boundary
    }

    /// Whether the decoder is in a damaged region: it skipped a bad block and has decoded
    /// nothing since, so undecoded input left over at the end of a file belongs to the damage
    /// already reported rather than to a block cut short.
    pub fn is_damaged(&self) -> bool {
        self.damaged
    }

    /// Decode from `input`, appending decoded bytes to `out` until about `out_limit` bytes are in
    /// `out` or the input holds no further complete block. Returns the input bytes consumed; the
    /// caller must offer the unconsumed rest again, with more bytes appended, on the next call.
    ///
    /// On [`CodecError::BadBlock`] the output of the blocks before the bad one is in `out` and the
    /// caller continues after `consumed` bytes. A bad block is reported once per damaged region:
    /// further bad input before anything decodes again (the rest of the damage, offered in later
    /// calls as the file grows, or a false magic number inside it) is skipped as `Ok(consumed)`.
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
    ) -> Result<usize, CodecError> {
        let start = out.len();
        self.boundary = None;
        let r = match &mut self.inner {
            Inner::Plain => {
                let n = input.len().min(out_limit.saturating_sub(out.len()).max(1));
                out.extend_from_slice(&input[..n]);
                Ok(n)
            }
            Inner::Zstd(z) => {
                z.frame_end = None;
                let r = z.decode(input, out, out_limit);
                self.boundary = z.frame_end.map(|(i, o)| (i, o - start));
                r
            }
            Inner::Lz4 => block::decode_lz4(input, out, out_limit),
            Inner::Snappy(state) => block::decode_snappy(state, input, out, out_limit),
            Inner::Lzf => block::decode_lzf(input, out, out_limit),
        };
        let decoded = out.len() > start;
        match r {
            Err(CodecError::BadBlock { consumed, .. }) if self.damaged && !decoded => Ok(consumed),
            Err(e @ CodecError::BadBlock { .. }) => {
                self.damaged = true;
                Err(e)
            }
            Ok(n) => {
                if decoded {
                    self.damaged = false;
                }
                if !matches!(self.inner, Inner::Zstd(_)) {
                    self.boundary = Some((n, out.len() - start));
                }
                Ok(n)
            }
            Err(e) => Err(e),
        }
    }
}

fn zstd_fatal(e: std::io::Error) -> CodecError {
    CodecError::Fatal {
        codec: "zstd",
        reason: e.to_string(),
    }
}

thread_local! {
    /// zstd contexts of finished files, reset, for the next file this thread reads: a context
    /// and its window (hundreds of KiB, mapped on their own: `crate::alloc`) are made once per
    /// reader thread rather than once per file (BENCHMARKS.md, *Cold start at the reader's
    /// speed*).
    static SPARE_ZSTD: std::cell::RefCell<Vec<zstd::stream::raw::Decoder<'static>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Contexts a thread keeps for its next files.
const SPARE_ZSTD_MAX: usize = 2;

/// zstd stream state: a streaming context that decodes one frame after another.
struct ZstdState {
    /// `None` only while it is given back ([`Drop`]).
    ctx: Option<zstd::stream::raw::Decoder<'static>>,
    /// The last call filled `scratch`: the context may hold more output without more input.
    holds_output: bool,
    /// After a frame failed to decode: skipping input up to the next frame magic.
    resyncing: bool,
    /// The last frame end of the current call: (input consumed, `out`'s length) there.
    frame_end: Option<(usize, usize)>,
}

impl Drop for ZstdState {
    /// Give the context back, reset, for the thread's next file.
    fn drop(&mut self) {
        use zstd::stream::raw::Operation;
        if let Some(mut ctx) = self.ctx.take() {
            if ctx.reinit().is_ok() {
                SPARE_ZSTD.with_borrow_mut(|v| {
                    if v.len() < SPARE_ZSTD_MAX {
                        v.push(ctx);
                    }
                });
            }
        }
    }
}

impl ZstdState {
    /// Streams through the frames in `input`. The context keeps a partial block internally, so
    /// every input byte offered is consumed once the output has room; a frame still being written
    /// simply waits for its next bytes. Only input that cannot be valid given the bytes so far
    /// (a bad frame header, a reserved block type, a block that fails to decompress, a checksum
    /// mismatch) is an error: the context is reset and decoding resumes at the next frame magic.
    fn decode(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
    ) -> Result<usize, CodecError> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let Some(ctx) = self.ctx.as_mut() else {
            return Ok(0);
        };
        let mut inb = InBuffer::around(input);
        loop {
            if self.resyncing {
                match memchr::memmem::find(&input[inb.pos..], &ZSTD_MAGIC) {
                    Some(k) => {
                        inb.pos += k;
                        self.resyncing = false;
                    }
                    // Keep what could be the start of a magic number for the next call.
                    None => {
                        let keep = input.len().saturating_sub(ZSTD_MAGIC.len() - 1);
                        return Ok(keep.max(inb.pos));
                    }
                }
            }
            if inb.pos == input.len() && !self.holds_output {
                // Nothing to do; calling the context anyway would count as no progress, which
                // it turns into an error after a few calls.
                return Ok(inb.pos);
            }
            let before = inb.pos;
            // Straight into `out`'s free room (no copy through a buffer of its own).
            let start = out.len();
            out.reserve(ZSTD_OUT_CHUNK);
            let room = out.capacity() - start;
            let mut outb = OutBuffer::around_pos(out, start);
            let run = ctx.run(&mut inb, &mut outb);
            let produced = outb.pos() - start;
            if let Err(e) = run {
                // The context reports neither what it consumed nor what it produced in a failing
                // call. One call never reads past the end of the frame it is in, so the frame
                // after the damaged one starts after `before`: look for its magic from there.
                // What the failing call wrote is not output.
                out.truncate(start);
                ctx.reinit().map_err(zstd_fatal)?;
                self.holds_output = false;
                self.resyncing = true;
                return Err(CodecError::BadBlock {
                    codec: "zstd",
                    reason: format!("{e}; skipping to the next frame"),
                    consumed: (before + 1).min(input.len()),
                });
            }
            // 0: a frame is fully decoded and flushed, and the context stands at its end.
            if matches!(run, Ok(0)) && (inb.pos > before || produced > 0) {
                self.frame_end = Some((inb.pos, out.len()));
            }
            // The context may hold more output than fitted; go on while it filled the scratch
            // buffer, or while input is left and the caller still wants output.
            self.holds_output = produced == room;
            let input_left = inb.pos < input.len();
            if out.len() >= out_limit || (!self.holds_output && !input_left) {
                return Ok(inb.pos);
            }
            if produced == 0 && inb.pos == before {
                // No progress at all: cannot happen with a sane context, but never spin.
                return Ok(inb.pos);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `data` in pieces of the given sizes (cycled) and return the decoded bytes.
    pub(crate) fn decode_in_pieces(codec: Codec, data: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut d = Decoder::new(codec).unwrap();
        let mut pending = Vec::new();
        let mut out = Vec::new();
        let mut pos = 0;
        let mut i = 0;
        while pos < data.len() {
            let n = sizes[i % sizes.len()].max(1).min(data.len() - pos);
            i += 1;
            pending.extend_from_slice(&data[pos..pos + n]);
            pos += n;
            loop {
                let used = d.decode(&pending, &mut out, usize::MAX).unwrap();
                pending.drain(..used);
                if used == 0 {
                    break;
                }
            }
        }
        assert!(pending.is_empty(), "{} bytes left undecoded", pending.len());
        out
    }

    #[test]
    fn zstd_streams_in_any_piece_size() {
        let text: Vec<u8> = (0..5000)
            .flat_map(|i| format!("{{\"Event\":\"X\",\"n\":{i}}}\n").into_bytes())
            .collect();
        let z = zstd::encode_all(&text[..], 3).unwrap();
        for sizes in [&[1usize][..], &[7, 300], &[100_000]] {
            assert_eq!(decode_in_pieces(Codec::Zstd, &z, sizes), text);
        }
    }

    /// Feed `data` in pieces as the tailer does, skipping bad blocks; returns the output and the
    /// number of bad blocks reported.
    fn decode_counting(codec: Codec, data: &[u8], piece: usize) -> (Vec<u8>, usize) {
        let mut d = Decoder::new(codec).unwrap();
        let (mut pending, mut out, mut errors) = (Vec::new(), Vec::new(), 0);
        for p in data.chunks(piece) {
            pending.extend_from_slice(p);
            loop {
                let before = out.len();
                let used = match d.decode(&pending, &mut out, usize::MAX) {
                    Ok(n) => n,
                    Err(CodecError::BadBlock { consumed, .. }) => {
                        errors += 1;
                        assert!(consumed > 0);
                        consumed
                    }
                    Err(e) => panic!("{e}"),
                };
                pending.drain(..used);
                if used == 0 && out.len() == before {
                    break;
                }
            }
        }
        (out, errors)
    }

    /// Lines `from..to`, one zstd frame each, as Spark writes a log (a frame per flush).
    fn frames(from: usize, to: usize) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        (from..to)
            .map(|i| {
                let text = format!(
                    "{{\"Event\":\"X\",\"n\":{i},\"pad\":\"{}\"}}\n",
                    "ab".repeat(i)
                );
                let z = zstd::encode_all(text.as_bytes(), 3).unwrap();
                (text.into_bytes(), z)
            })
            .unzip()
    }

    #[test]
    fn zstd_frame_per_flush_with_a_damaged_frame_resyncs_once() {
        let (texts, zs) = frames(0, 40);
        let k = 20;
        // Damage the block header of frame k (block type 3, reserved): the header is after the
        // 4-byte magic, the descriptor and its optional fields.
        let mut bad = zs[k].clone();
        let fhd = bad[4];
        let single_segment = (fhd >> 5) & 1 == 1;
        let mut at = 5 + usize::from(!single_segment) + [0, 1, 2, 4][(fhd & 3) as usize];
        at += match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        bad[at] |= 0b110;
        let mut data = Vec::new();
        let mut want = Vec::new();
        for (i, (t, z)) in texts.iter().zip(&zs).enumerate() {
            data.extend_from_slice(if i == k { &bad } else { z });
            if i != k {
                want.extend_from_slice(t);
            }
        }
        for piece in [1, 3, 4, 5, 17, 100, 1 << 20] {
            let (out, errors) = decode_counting(Codec::Zstd, &data, piece);
            assert_eq!(errors, 1, "piece {piece}");
            assert!(out == want, "piece {piece}: every other frame decoded");
        }
    }

    #[test]
    fn zstd_checksum_mismatch_and_garbage_between_frames_resync() {
        let (texts, zs) = frames(0, 12);
        // Frame 3 with a content checksum, the checksum damaged: it decodes, then fails at its
        // end (what it decoded so far may have been handed out already).
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_checksum(true).unwrap();
        std::io::Write::write_all(&mut enc, &texts[3]).unwrap();
        let mut bad = enc.finish().unwrap();
        *bad.last_mut().unwrap() ^= 0x5a;
        assert_eq!(zstd::decode_all(&zs[3][..]).unwrap(), texts[3]);
        let mut data = Vec::new();
        for (i, z) in zs.iter().enumerate() {
            match i {
                3 => data.extend_from_slice(&bad),
                // Garbage where the header of frame 7 should be, then frame 7 itself.
                7 => {
                    data.extend_from_slice(b"not a frame at all\n");
                    data.extend_from_slice(z);
                }
                _ => data.extend_from_slice(z),
            }
        }
        let before = texts[..3].concat();
        let after = texts[4..].concat();
        for piece in [1, 2, 7, 64, 1 << 20] {
            let (out, errors) = decode_counting(Codec::Zstd, &data, piece);
            assert_eq!(errors, 2, "piece {piece}");
            assert!(
                out.starts_with(&before) && out.ends_with(&after),
                "piece {piece}: every other frame whole"
            );
            assert!(out.len() <= before.len() + texts[3].len() + after.len());
        }
    }

    #[test]
    fn zstd_garbage_is_one_bad_block_then_waits_for_a_frame() {
        let mut d = Decoder::new(Codec::Zstd).unwrap();
        let mut out = Vec::new();
        let garbage = b"this is not zstd at all";
        let r = d.decode(garbage, &mut out, usize::MAX);
        let Err(CodecError::BadBlock { consumed, .. }) = r else {
            panic!("{r:?}");
        };
        assert!(d.is_damaged());
        // The rest is skipped silently up to what could start a magic number.
        let rest = &garbage[consumed..];
        assert_eq!(d.decode(rest, &mut out, usize::MAX), Ok(rest.len() - 3));
        let (texts, zs) = frames(5, 6);
        let mut more = rest[rest.len() - 3..].to_vec();
        more.extend_from_slice(&zs[0]);
        assert_eq!(d.decode(&more, &mut out, usize::MAX), Ok(more.len()));
        assert_eq!(out, texts[0]);
        assert!(!d.is_damaged());
    }

    #[test]
    fn zstd_partial_last_frame_is_not_an_error() {
        let (texts, zs) = frames(0, 3);
        let data = zs.concat();
        let cut = zs[0].len() + zs[1].len() + zs[2].len() / 2;
        let mut d = Decoder::new(Codec::Zstd).unwrap();
        let mut out = Vec::new();
        // Every byte is taken (the context keeps the partial block); what is decoded so far of
        // the cut frame may already be out.
        assert_eq!(d.decode(&data[..cut], &mut out, usize::MAX), Ok(cut));
        assert!(out.starts_with(&texts[..2].concat()));
        assert!(texts.concat().starts_with(&out));
        assert!(!d.is_damaged());
        assert_eq!(
            d.decode(&data[cut..], &mut out, usize::MAX),
            Ok(data.len() - cut)
        );
        assert_eq!(out, texts.concat());
        assert!(!d.is_damaged());
    }

    #[test]
    fn extensions() {
        assert_eq!(Codec::from_extension("lz4"), Some(Codec::Lz4));
        assert_eq!(Codec::from_extension("gz"), None);
        assert_eq!(Codec::Plain.name(), "none");
    }
}
