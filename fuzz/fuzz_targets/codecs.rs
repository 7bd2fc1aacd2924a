//! Any bytes as a zstd, lz4-java, snappy-java, LZF or plain event-log stream, offered to
//! `codec::Decoder` the way the tailer does: in pieces of varying sizes, with a varying output
//! budget, keeping the unconsumed rest, and going on after a skipped block.
//!
//! Input layout: byte 0 picks the codec, byte 1 seeds the piece sizes and output budgets, the
//! rest is the stream. Checks: no panic; `decode` never claims more bytes than it was offered;
//! the output grows by at most one block past its budget; and when neither run saw an error,
//! decoding in pieces gives exactly what decoding the whole stream at once gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spark_exporter::sources::eventlog::codec::{Codec, CodecError, Decoder, MAX_BLOCK_BYTES};

const CODECS: [Codec; 5] = [
    Codec::Plain,
    Codec::Zstd,
    Codec::Lz4,
    Codec::Snappy,
    Codec::Lzf,
];

/// Decode `data` offered in pieces; returns the output and whether any error was seen.
fn run(codec: Codec, data: &[u8], mut seed: u32, whole: bool) -> (Vec<u8>, bool) {
    let mut next = move || {
        // xorshift: cheap, deterministic piece sizes.
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut d = Decoder::new(codec).expect("decoder");
    let (mut pending, mut out, mut pos, mut errors) = (Vec::new(), Vec::new(), 0, false);
    let mut delivered = 0usize;
    loop {
        if pos < data.len() {
            let n = if whole {
                data.len()
            } else {
                1 + (next() as usize % 64).pow(2) % 4096
            };
            let n = n.min(data.len() - pos);
            pending.extend_from_slice(&data[pos..pos + n]);
            pos += n;
        }
        // Decode until no progress, as the tailer does after each read.
        let mut fatal = false;
        loop {
            let budget = if whole {
                usize::MAX
            } else {
                1 + next() as usize % 70_000
            };
            let limit = out.len().saturating_add(budget);
            let before = out.len();
            let used = match d.decode(&pending, &mut out, limit) {
                Ok(n) => n,
                Err(CodecError::BadBlock { consumed, .. }) => {
                    errors = true;
                    assert!(consumed > 0, "a skipped block consumes input");
                    consumed
                }
                Err(CodecError::Fatal { .. }) => {
                    errors = true;
                    fatal = true;
                    0
                }
            };
            assert!(
                used <= pending.len(),
                "consumed {used} of {}",
                pending.len()
            );
            assert!(
                out.len() - before <= budget.saturating_add(MAX_BLOCK_BYTES + 128 * 1024),
                "output overshot its budget"
            );
            pending.drain(..used);
            delivered += out.len() - before;
            if fatal || (used == 0 && out.len() == before) {
                break;
            }
        }
        if fatal || pos >= data.len() {
            break;
        }
    }
    assert_eq!(delivered, out.len());
    (out, errors)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let codec = CODECS[data[0] as usize % CODECS.len()];
    let seed = u32::from(data[1]).wrapping_mul(2_654_435_761) | 1;
    let stream = &data[2..];
    let (whole, whole_err) = run(codec, stream, seed, true);
    let (pieces, pieces_err) = run(codec, stream, seed, false);
    if !whole_err && !pieces_err {
        assert!(whole == pieces, "{codec:?}: pieces decode differently");
    }
    if !whole_err {
        assert!(
            !pieces_err,
            "{codec:?}: an error only when decoding in pieces"
        );
    }
});
