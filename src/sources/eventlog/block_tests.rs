//! Tests for the block formats, with small writers that follow the Java libraries' framing.

use super::*;
use crate::sources::eventlog::codec::{Codec, Decoder};

/// lz4-java framing of `data` in blocks of `block` bytes, then an end mark.
pub(crate) fn lz4_stream(data: &[u8], block: usize) -> Vec<u8> {
    let level = (block.next_power_of_two().trailing_zeros() as u8).saturating_sub(10);
    let mut out = Vec::new();
    for chunk in data.chunks(block) {
        let c = lz4_flex::block::compress(chunk);
        let (method, payload) = if c.len() >= chunk.len() {
            (0x10, chunk.to_vec())
        } else {
            (0x20, c)
        };
        out.extend_from_slice(LZ4_MAGIC);
        out.push(method | level);
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(&(xxh32(chunk, LZ4_SEED) & 0x0fff_ffff).to_le_bytes());
        out.extend_from_slice(&payload);
    }
    out.extend_from_slice(LZ4_MAGIC);
    out.push(0x10 | level);
    out.extend_from_slice(&[0; 12]);
    out
}

fn snappy_stream(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = SNAPPY_MAGIC.to_vec();
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for chunk in data.chunks(block) {
        let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
        out.extend_from_slice(&(c.len() as i32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out
}

/// Stored LZF chunks, plus one hand-compressed chunk: "abcabcabcabc" as literal "abc" and a
/// match of length 9 at distance 3.
fn lzf_stream(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(1000) {
        out.extend_from_slice(b"ZV\0");
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(b"ZV\x01\x00\x07\x00\x0c");
    out.extend_from_slice(&[2, b'a', b'b', b'c', (7 << 5), 0, 2]);
    out
}

fn text(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            format!("{{\"Event\":\"SparkListenerTaskEnd\",\"Task ID\":{i}}}\n").into_bytes()
        })
        .collect()
}

fn decode_all(codec: Codec, data: &[u8], piece: usize) -> (Vec<u8>, Vec<CodecError>) {
    let mut d = Decoder::new(codec).unwrap();
    let (mut pending, mut out, mut errs) = (Vec::new(), Vec::new(), Vec::new());
    for p in data.chunks(piece) {
        pending.extend_from_slice(p);
        loop {
            match d.decode(&pending, &mut out, usize::MAX) {
                Ok(0) => break,
                Ok(n) => drop(pending.drain(..n)),
                Err(CodecError::BadBlock {
                    consumed,
                    reason,
                    codec,
                }) => {
                    pending.drain(..consumed);
                    errs.push(CodecError::BadBlock {
                        codec,
                        reason,
                        consumed,
                    });
                }
                Err(e) => {
                    errs.push(e);
                    return (out, errs);
                }
            }
        }
    }
    (out, errs)
}

#[test]
fn xxh32_reference_values() {
    assert_eq!(xxh32(b"", 0), 0x02cc_5d05);
    assert_eq!(xxh32(b"abc", 0), 0x32d1_53ff);
    assert_eq!(
        xxh32(b"Nobody inspects the spammish repetition", 0),
        0xe229_3b2f
    );
}

#[test]
fn lz4_in_every_piece_size() {
    let t = text(3000);
    let s = lz4_stream(&t, 4096);
    for piece in [1, 5, 21, 4096, 1 << 20] {
        let (out, errs) = decode_all(Codec::Lz4, &s, piece);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(out, t, "piece {piece}");
    }
}

#[test]
fn lz4_concatenated_streams() {
    let (a, b) = (text(10), text(20));
    let mut s = lz4_stream(&a, 1024);
    s.extend(lz4_stream(&b, 1024));
    let (out, errs) = decode_all(Codec::Lz4, &s, 7);
    assert!(errs.is_empty());
    assert_eq!(out, [a, b].concat());
}

#[test]
fn lz4_corrupt_block_is_skipped_and_the_rest_kept() {
    let t = text(400);
    let mut s = lz4_stream(&t, 1024);
    // Damage the payload of the second block: its checksum fails, the others decode.
    let second = memchr::memmem::find_iter(&s, LZ4_MAGIC).nth(1).unwrap();
    s[second + LZ4_HEADER + 5] ^= 0x55;
    let (out, errs) = decode_all(Codec::Lz4, &s, 333);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(out.len(), t.len() - 1024);
    assert_eq!(&out[..1024], &t[..1024]);
    assert_eq!(&out[1024..], &t[2048..]);
}

#[test]
fn lz4_garbage_between_blocks_resyncs() {
    let t = text(100);
    let s = lz4_stream(&t, 512);
    let second = memchr::memmem::find_iter(&s, LZ4_MAGIC).nth(1).unwrap();
    let mut broken = s[..second].to_vec();
    broken.extend_from_slice(b"garbage!garbage!");
    broken.extend_from_slice(&s[second..]);
    let (out, errs) = decode_all(Codec::Lz4, &broken, 50);
    assert!(!errs.is_empty());
    assert_eq!(out, t);
}

#[test]
fn lz4_damage_spanning_calls_is_reported_once() {
    let t = text(300);
    let s = lz4_stream(&t, 1024);
    let second = memchr::memmem::find_iter(&s, LZ4_MAGIC).nth(1).unwrap();
    let mut broken = s[..second].to_vec();
    broken.extend_from_slice(&[b'#'; 500]);
    broken.extend_from_slice(&s[second..]);
    for piece in [1, 9, 50, 1 << 20] {
        let (out, errs) = decode_all(Codec::Lz4, &broken, piece);
        assert_eq!(errs.len(), 1, "piece {piece}: {errs:?}");
        assert_eq!(out, t, "piece {piece}");
    }
}

#[test]
fn snappy_in_every_piece_size_and_concatenated() {
    let t = text(2000);
    let mut s = snappy_stream(&t, 32 * 1024);
    s.extend(snappy_stream(b"tail\n", 8));
    for piece in [1, 3, 16, 17, 70_000] {
        let (out, errs) = decode_all(Codec::Snappy, &s, piece);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(out, [&t[..], b"tail\n"].concat());
    }
}

#[test]
fn snappy_without_header_is_fatal() {
    let (_, errs) = decode_all(Codec::Snappy, b"{\"Event\":1}\n", 100);
    assert!(matches!(errs[..], [CodecError::Fatal { .. }]), "{errs:?}");
}

#[test]
fn snappy_corrupt_chunk_is_skipped() {
    let t = text(50);
    let mut s = snappy_stream(&t, 256);
    // First chunk after the header: make its payload undecodable (length varint = huge).
    s[SNAPPY_HEADER + 4] = 0xff;
    s[SNAPPY_HEADER + 5] = 0xff;
    let (out, errs) = decode_all(Codec::Snappy, &s, 64);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(out, &t[256..]);
}

#[test]
fn lzf_stored_and_compressed_chunks() {
    let t = text(100);
    let s = lzf_stream(&t);
    for piece in [1, 2, 6, 1000, 1 << 20] {
        let (out, errs) = decode_all(Codec::Lzf, &s, piece);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(out, [&t[..], b"abcabcabcabc"].concat());
    }
}

#[test]
fn lzf_bad_back_reference_is_an_error() {
    let mut out = Vec::new();
    assert!(lzf_decompress(&[0x20, 5], &mut out, 3).is_err());
    assert!(lzf_decompress(&[1, b'a'], &mut out, 2).is_err());
    out.clear();
    assert!(lzf_decompress(&[0, b'a', 0x20, 0], &mut out, 4).is_ok());
    assert_eq!(out, b"aaaa");
}
