//! Incremental decoders for the codecs Spark writes event logs with.
//!
//! Spark names the codec in the file extension (`.zstd`, `.lz4`, `.snappy`, `.lzf`, none) and
//! wraps the log in the codec's *stream* format, as `CompressionCodec.scala` creates it:
//! - `zstd`: one long zstd frame (`ZstdOutputStreamNoFinalizer`), flushed in blocks;
//! - `lz4`: lz4-java `LZ4BlockOutputStream` blocks (see [`super::block`]);
//! - `snappy`: snappy-java `SnappyOutputStream` chunks;
//! - `lzf`: ning compress-lzf `LZFOutputStream` chunks.
//!
//! A live log ends in the middle of a block, so every decoder here is incremental: it is given the
//! bytes read so far, decodes what it can and says how many it consumed; the caller keeps the
//! rest and offers them again with more bytes appended.

use super::block;

/// Largest decoded block accepted from a block format; larger claims are treated as corruption
/// so a damaged header cannot make the tailer buffer without bound.
pub const MAX_BLOCK_BYTES: usize = 64 * 1024 * 1024;

/// Output produced per zstd call before returning to the caller (bounds memory per step).
const ZSTD_OUT_CHUNK: usize = 128 * 1024;

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

/// Decoding failures.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecError {
    /// A block or chunk was damaged and skipped; decoding goes on after it. `consumed` input
    /// bytes (including the bad block) are used up.
    #[error("{codec}: skipped a corrupt block: {reason}")]
    BadBlock {
        /// Codec name.
        codec: &'static str,
        /// What was wrong.
        reason: String,
        /// Input bytes consumed, the bad block included.
        consumed: usize,
    },
    /// The stream cannot be decoded any further.
    #[error("{codec}: undecodable stream: {reason}")]
    Fatal {
        /// Codec name.
        codec: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// An incremental decoder for one file.
pub struct Decoder {
    codec: Codec,
    inner: Inner,
}

enum Inner {
    Plain,
    Zstd {
        ctx: Box<zstd::stream::raw::Decoder<'static>>,
        scratch: Vec<u8>,
    },
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
                let ctx = zstd::stream::raw::Decoder::new().map_err(|e| CodecError::Fatal {
                    codec: "zstd",
                    reason: e.to_string(),
                })?;
                Inner::Zstd {
                    ctx: Box::new(ctx),
                    scratch: vec![0; ZSTD_OUT_CHUNK],
                }
            }
            Codec::Lz4 => Inner::Lz4,
            Codec::Snappy => Inner::Snappy(block::SnappyState::default()),
            Codec::Lzf => Inner::Lzf,
        };
        Ok(Decoder { codec, inner })
    }

    /// The codec this decoder reads.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// Decode from `input`, appending decoded bytes to `out` until about `out_limit` bytes are in
    /// `out` or the input holds no further complete block. Returns the input bytes consumed; the
    /// caller must offer the unconsumed rest again, with more bytes appended, on the next call.
    ///
    /// On [`CodecError::BadBlock`] the output of the blocks before the bad one is in `out` and the
    /// caller continues after `consumed` bytes.
    pub fn decode(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
    ) -> Result<usize, CodecError> {
        match &mut self.inner {
            Inner::Plain => {
                let n = input.len().min(out_limit.saturating_sub(out.len()).max(1));
                out.extend_from_slice(&input[..n]);
                Ok(n)
            }
            Inner::Zstd { ctx, scratch } => decode_zstd(ctx, scratch, input, out, out_limit),
            Inner::Lz4 => block::decode_lz4(input, out, out_limit),
            Inner::Snappy(state) => block::decode_snappy(state, input, out, out_limit),
            Inner::Lzf => block::decode_lzf(input, out, out_limit),
        }
    }
}

/// Streams through a zstd frame. The context keeps partial blocks internally, so every input
/// byte offered is consumed once the output has room.
fn decode_zstd(
    ctx: &mut zstd::stream::raw::Decoder<'static>,
    scratch: &mut [u8],
    input: &[u8],
    out: &mut Vec<u8>,
    out_limit: usize,
) -> Result<usize, CodecError> {
    use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
    let mut inb = InBuffer::around(input);
    loop {
        let before = inb.pos;
        let mut outb = OutBuffer::around(&mut scratch[..]);
        ctx.run(&mut inb, &mut outb)
            .map_err(|e| CodecError::Fatal {
                codec: "zstd",
                reason: e.to_string(),
            })?;
        let produced = outb.pos();
        out.extend_from_slice(&scratch[..produced]);
        // The context may hold more output than fitted; go on while it filled the scratch
        // buffer, or while input is left and the caller still wants output.
        let full = produced == scratch.len();
        let input_left = inb.pos < input.len();
        if out.len() >= out_limit || (!full && !input_left) {
            return Ok(inb.pos);
        }
        if produced == 0 && inb.pos == before {
            // No progress at all: cannot happen with a sane context, but never spin.
            return Ok(inb.pos);
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

    #[test]
    fn zstd_garbage_is_fatal() {
        let mut d = Decoder::new(Codec::Zstd).unwrap();
        let r = d.decode(b"this is not zstd at all", &mut Vec::new(), usize::MAX);
        assert!(matches!(r, Err(CodecError::Fatal { .. })), "{r:?}");
    }

    #[test]
    fn extensions() {
        assert_eq!(Codec::from_extension("lz4"), Some(Codec::Lz4));
        assert_eq!(Codec::from_extension("gz"), None);
        assert_eq!(Codec::Plain.name(), "none");
    }
}
