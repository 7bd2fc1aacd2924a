//! What the event-log decoders report, and the block size they accept: shared by [`super::codec`]
//! (zstd, and the decoder that picks a format) and [`super::block`] (lz4-java, snappy-java, LZF),
//! so neither has to import the other's. `codec` re-exports both as its own.

/// Largest decoded block accepted from a block format; larger claims are treated as corruption
/// so a damaged header cannot make the tailer buffer without bound.
pub const MAX_BLOCK_BYTES: usize = 64 * 1024 * 1024;

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
