//! Response bodies. The exposition is kept only as gzip; a scraper that takes gzip gets those
//! bytes as they are, any other gets the text inflated as it is sent ([`PlainBody`]), 64 KiB at
//! a time, so the whole text never exists in memory.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http_body::{Frame, SizeHint};
use http_body_util::{Either, Full};

/// A response body: fixed bytes, or exposition text decompressed as it is sent.
pub type Body = Either<Full<Bytes>, PlainBody>;

/// Text inflated per frame.
const FRAME: u64 = 64 * 1024;

/// A response body that decompresses gzip bytes as it is sent, 64 KiB at a time.
pub struct PlainBody {
    decoder: flate2::bufread::GzDecoder<bytes::buf::Reader<Bytes>>,
    remaining: u64,
}

impl PlainBody {
    /// The text `gzip` holds, which is `len` bytes long (announced as the Content-Length).
    pub fn new(gzip: Bytes, len: u64) -> PlainBody {
        PlainBody {
            decoder: flate2::bufread::GzDecoder::new(gzip.reader()),
            remaining: len,
        }
    }
}

impl http_body::Body for PlainBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        use std::io::Read;
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        let n = self.remaining.min(FRAME) as usize;
        let mut buf = BytesMut::zeroed(n);
        let mut filled = 0;
        while filled < n {
            match self.decoder.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(k) => filled += k,
                Err(e) => return Poll::Ready(Some(Err(e))),
            }
        }
        if filled == 0 {
            // Shorter than announced: cannot happen with our own bytes; end with an error so
            // the client sees a truncated body rather than a hang.
            self.remaining = 0;
            return Poll::Ready(Some(Err(std::io::ErrorKind::UnexpectedEof.into())));
        }
        buf.truncate(filled);
        self.remaining -= filled as u64;
        Poll::Ready(Some(Ok(Frame::data(buf.freeze()))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use http_body::Body as _;
    use http_body_util::BodyExt;

    use super::*;

    fn gzip(text: &[u8]) -> Bytes {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        gz.write_all(text).expect("compresses");
        Bytes::from(gz.finish().expect("compresses"))
    }

    #[tokio::test]
    async fn plain_body_inflates_in_frames_of_the_announced_length() {
        let text: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut body = PlainBody::new(gzip(&text), text.len() as u64);
        assert_eq!(body.size_hint().exact(), Some(text.len() as u64));
        let mut got = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.expect("inflates").into_data().expect("data");
            assert!(data.len() as u64 <= FRAME);
            got.extend_from_slice(&data);
        }
        assert!(body.is_end_stream());
        assert_eq!(got, text);
    }

    #[tokio::test]
    async fn a_body_shorter_than_announced_ends_with_an_error() {
        let body = PlainBody::new(gzip(b"short"), 10);
        assert!(body.collect().await.is_err());
    }
}
