//! The three block-framed stream formats Spark uses, decoded incrementally:
//!
//! - lz4-java `LZ4BlockOutputStream`: blocks of `"LZ4Block"`, a token byte (method `0x10` raw or
//!   `0x20` lz4, low nibble = log2(block size) - 10), compressed length, decompressed length and
//!   an xxhash32 checksum (seed `0x9747b28c`, masked to 28 bits), all little-endian; a block with
//!   both lengths zero ends a stream, and another stream may follow.
//! - snappy-java `SnappyOutputStream`: a 16-byte header (`\x82SNAPPY\0`, version and compatible
//!   version as big-endian ints), then chunks of a big-endian length and a raw snappy block; a
//!   header may appear again where a chunk length is expected (concatenated streams).
//! - ning compress-lzf `LZFOutputStream`: chunks of `"ZV"`, type 0 (stored: 2-byte length) or
//!   type 1 (compressed: 2-byte compressed and 2-byte original length), big-endian.
//!
//! Each function decodes whole blocks from the front of `input` and returns how many bytes it
//! consumed; a partial block at the end stays for the next call. A damaged block whose extent is
//! known is skipped ([`CodecError::BadBlock`]); a lost frame boundary is searched for again
//! (lz4, lzf: by magic) or ends the stream (snappy has no per-chunk magic).
//!
//! The framings are ours: no crate reads them (`lz4_flex` and `snap` read the LZ4 and Snappy
//! frame formats, not the Java libraries' own). The blocks inside are decoded by `lz4_flex`,
//! `snap` and, for LZF, [`lzf_decompress`] (see there why it has no crate).

use super::codec_error::{CodecError, MAX_BLOCK_BYTES};

const LZ4_MAGIC: &[u8; 8] = b"LZ4Block";
const LZ4_HEADER: usize = 21;
const LZ4_SEED: u32 = 0x9747_b28c;
const SNAPPY_MAGIC: &[u8; 8] = b"\x82SNAPPY\0";
const SNAPPY_HEADER: usize = 16;
const LZF_MAGIC: &[u8; 2] = b"ZV";

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn bad(codec: &'static str, reason: impl Into<String>, consumed: usize) -> CodecError {
    CodecError::BadBlock {
        codec,
        reason: reason.into(),
        consumed,
    }
}

/// After a lost frame boundary at `pos`: skip to the next occurrence of `magic`, or to where a
/// magic could still begin at the end of the input.
fn resync(codec: &'static str, input: &[u8], pos: usize, magic: &[u8], why: &str) -> CodecError {
    let from = pos + 1;
    let consumed = match memchr::memmem::find(&input[from.min(input.len())..], magic) {
        Some(k) => from + k,
        None => input.len().saturating_sub(magic.len() - 1).max(from),
    };
    bad(
        codec,
        format!("{why}; resynchronised"),
        consumed.min(input.len()),
    )
}

/// Decode lz4-java block-stream blocks.
pub fn decode_lz4(input: &[u8], out: &mut Vec<u8>, out_limit: usize) -> Result<usize, CodecError> {
    let mut pos = 0;
    while out.len() < out_limit {
        let rest = &input[pos..];
        let head = &rest[..rest.len().min(LZ4_MAGIC.len())];
        if head != &LZ4_MAGIC[..head.len()] {
            return Err(resync("lz4", input, pos, LZ4_MAGIC, "bad block magic"));
        }
        if rest.len() < LZ4_HEADER {
            break;
        }
        let token = rest[8];
        let method = token & 0xf0;
        let max_len = 1usize << (10 + (token & 0x0f));
        let clen = le32(&rest[9..13]) as usize;
        let dlen = le32(&rest[13..17]) as usize;
        let check = le32(&rest[17..21]);
        let sane = (method == 0x10 || method == 0x20)
            && dlen <= max_len
            && dlen <= MAX_BLOCK_BYTES
            && clen <= MAX_BLOCK_BYTES
            && (dlen == 0) == (clen == 0)
            && (method != 0x10 || clen == dlen);
        if !sane {
            return Err(resync("lz4", input, pos, LZ4_MAGIC, "bad block header"));
        }
        if dlen == 0 {
            // End of one stream; a concatenated one may follow.
            pos += LZ4_HEADER;
            continue;
        }
        if rest.len() < LZ4_HEADER + clen {
            break;
        }
        let payload = &rest[LZ4_HEADER..LZ4_HEADER + clen];
        let end = pos + LZ4_HEADER + clen;
        let start = out.len();
        if method == 0x10 {
            out.extend_from_slice(payload);
        } else {
            out.resize(start + dlen, 0);
            match lz4_flex::block::decompress_into(payload, &mut out[start..]) {
                Ok(n) if n == dlen => {}
                Ok(n) => {
                    out.truncate(start);
                    return Err(bad(
                        "lz4",
                        format!("block decoded to {n} bytes, header says {dlen}"),
                        end,
                    ));
                }
                Err(e) => {
                    out.truncate(start);
                    return Err(bad("lz4", e.to_string(), end));
                }
            }
        }
        if xxh32(&out[start..], LZ4_SEED) & 0x0fff_ffff != check {
            out.truncate(start);
            return Err(bad("lz4", "checksum mismatch", end));
        }
        pos = end;
    }
    Ok(pos)
}

/// snappy-java stream state: whether the stream header has been read.
#[derive(Debug, Default)]
pub struct SnappyState {
    header_done: bool,
}

impl SnappyState {
    /// The state in the middle of a stream, past its header.
    pub fn after_header() -> SnappyState {
        SnappyState { header_done: true }
    }
}

/// Decode snappy-java stream chunks.
pub fn decode_snappy(
    state: &mut SnappyState,
    input: &[u8],
    out: &mut Vec<u8>,
    out_limit: usize,
) -> Result<usize, CodecError> {
    let fatal = |reason: &str| CodecError::Fatal {
        codec: "snappy",
        reason: reason.into(),
    };
    let mut pos = 0;
    while out.len() < out_limit {
        let rest = &input[pos..];
        let at_header = !state.header_done || (rest.len() >= 4 && rest[..4] == SNAPPY_MAGIC[..4]);
        if at_header {
            let head = &rest[..rest.len().min(SNAPPY_MAGIC.len())];
            if head != &SNAPPY_MAGIC[..head.len()] {
                return Err(fatal("missing snappy-java stream header"));
            }
            if rest.len() < SNAPPY_HEADER {
                break;
            }
            state.header_done = true;
            pos += SNAPPY_HEADER;
            continue;
        }
        if rest.len() < 4 {
            break;
        }
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        if len < 0 || len as usize > MAX_BLOCK_BYTES {
            return Err(fatal(&format!("impossible chunk length {len}")));
        }
        let len = len as usize;
        if rest.len() < 4 + len {
            break;
        }
        let chunk = &rest[4..4 + len];
        let end = pos + 4 + len;
        let dlen = match snap::raw::decompress_len(chunk) {
            Ok(n) if n <= MAX_BLOCK_BYTES => n,
            Ok(n) => return Err(bad("snappy", format!("chunk claims {n} bytes"), end)),
            Err(e) => return Err(bad("snappy", e.to_string(), end)),
        };
        let start = out.len();
        out.resize(start + dlen, 0);
        if let Err(e) = snap::raw::Decoder::new().decompress(chunk, &mut out[start..]) {
            out.truncate(start);
            return Err(bad("snappy", e.to_string(), end));
        }
        pos = end;
    }
    Ok(pos)
}

/// Decode ning LZF stream chunks.
pub fn decode_lzf(input: &[u8], out: &mut Vec<u8>, out_limit: usize) -> Result<usize, CodecError> {
    let mut pos = 0;
    while out.len() < out_limit {
        let rest = &input[pos..];
        let head = &rest[..rest.len().min(2)];
        if head != &LZF_MAGIC[..head.len()] {
            return Err(resync("lzf", input, pos, LZF_MAGIC, "bad chunk magic"));
        }
        if rest.len() < 5 {
            break;
        }
        let be16 = |i: usize| u16::from_be_bytes([rest[i], rest[i + 1]]) as usize;
        match rest[2] {
            0 => {
                let len = be16(3);
                if rest.len() < 5 + len {
                    break;
                }
                out.extend_from_slice(&rest[5..5 + len]);
                pos += 5 + len;
            }
            1 => {
                if rest.len() < 7 {
                    break;
                }
                let (clen, ulen) = (be16(3), be16(5));
                if rest.len() < 7 + clen {
                    break;
                }
                let end = pos + 7 + clen;
                let start = out.len();
                if let Err(why) = lzf_decompress(&rest[7..7 + clen], out, ulen) {
                    out.truncate(start);
                    return Err(bad("lzf", why, end));
                }
                pos = end;
            }
            t => {
                return Err(resync(
                    "lzf",
                    input,
                    pos,
                    LZF_MAGIC,
                    &format!("chunk type {t}"),
                ))
            }
        }
    }
    Ok(pos)
}

/// liblzf decompression: control byte `< 32` starts a literal run of `ctrl + 1` bytes; otherwise
/// the top 3 bits are a length (7 = extended by the next byte) and the low 5 bits plus the next
/// byte a back-reference distance; a match copies `len + 2` bytes.
///
/// Ours rather than a crate's: of the pure-Rust LZF decoders on crates.io, `lzf` is deprecated by
/// its author (last release 2022, after an unsoundness fix, RUSTSEC-2022-0067) and `lzf-rust` is
/// a single 0.1 release of a one-commit repository, with no maintenance record yet; `lzf-sys`
/// binds the C liblzf. liblzf's token format is frozen, and this decoder is 40 lines that return
/// an error, never panic, on damaged input (every index is checked; the `codecs` fuzz target and
/// block_tests.rs feed it corrupt chunks), appending straight to the stream's output buffer.
pub fn lzf_decompress(input: &[u8], out: &mut Vec<u8>, expected: usize) -> Result<(), String> {
    let start = out.len();
    let limit = start + expected;
    out.reserve(expected);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            if ip + run > input.len() || out.len() + run > limit {
                return Err("literal run past the end".into());
            }
            out.extend_from_slice(&input[ip..ip + run]);
            ip += run;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += *input.get(ip).ok_or("truncated match length")? as usize;
            ip += 1;
        }
        let low = *input.get(ip).ok_or("truncated match offset")? as usize;
        ip += 1;
        let dist = ((ctrl & 0x1f) << 8) + low + 1;
        let len = len + 2;
        if dist > out.len() - start || out.len() + len > limit {
            return Err("back reference out of range".into());
        }
        // Matches may overlap their own output (run-length style), so copy byte by byte.
        let from = out.len() - dist;
        for k in 0..len {
            let b = out[from + k];
            out.push(b);
        }
    }
    if out.len() != limit {
        return Err(format!(
            "chunk decoded to {} bytes, header says {expected}",
            out.len() - start
        ));
    }
    Ok(())
}

/// xxHash32, as lz4-java's `StreamingXXHash32` computes it (the block checksum, before the
/// 28-bit mask). Kept public for the tests that write lz4-java streams.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    twox_hash::XxHash32::oneshot(seed, data)
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
