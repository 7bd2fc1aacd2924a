//! Content negotiation for `/metrics`: which text format a scraper asked for (`Accept`) and
//! whether it takes gzip (`Accept-Encoding`). Both shape the response, so it says
//! `Vary: Accept, Accept-Encoding` ([`VARY`]).

use hyper::header::{HeaderMap, HeaderValue, ACCEPT, ACCEPT_ENCODING};

use crate::sinks::prometheus::{CLASSIC, OPENMETRICS};

/// The `Vary` header of an exposition response: the headers [`Negotiated`] is read from.
pub const VARY: &str = "Accept, Accept-Encoding";

/// What a scrape gets, as its headers ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// OpenMetrics text rather than the classic text format.
    pub openmetrics: bool,
    /// The gzip bytes as they are, rather than the text.
    pub gzip: bool,
}

impl Negotiated {
    /// Read the request's `Accept` and `Accept-Encoding` (the first of each; one that is not
    /// visible ASCII counts as absent).
    pub fn from_headers(headers: &HeaderMap) -> Negotiated {
        let header = |h| headers.get(h).and_then(|v: &HeaderValue| v.to_str().ok());
        Negotiated {
            openmetrics: wants_openmetrics(header(ACCEPT)),
            gzip: accepts_gzip(header(ACCEPT_ENCODING)),
        }
    }

    /// The `Content-Type` of the chosen format.
    pub fn content_type(self) -> &'static str {
        if self.openmetrics {
            OPENMETRICS
        } else {
            CLASSIC
        }
    }
}

/// Which format a scraper asked for, from its `Accept` header.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

/// Does an `Accept-Encoding` header take gzip?
pub fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(h) = accept_encoding else {
        return false;
    };
    h.split(',').any(|item| {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_negotiation() {
        assert!(accepts_gzip(Some("gzip")));
        assert!(accepts_gzip(Some("deflate, GZIP;q=0.5")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(None));
    }

    #[test]
    fn format_negotiation_reads_the_first_of_each_header() {
        let mut h = HeaderMap::new();
        assert_eq!(
            Negotiated::from_headers(&h),
            Negotiated {
                openmetrics: false,
                gzip: false
            }
        );
        h.append(
            ACCEPT,
            HeaderValue::from_static(
                "application/openmetrics-text; version=1.0.0,text/plain;q=0.5",
            ),
        );
        h.append(ACCEPT, HeaderValue::from_static("text/plain"));
        h.append(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        h.append(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let n = Negotiated::from_headers(&h);
        assert_eq!((n.openmetrics, n.gzip), (true, false));
        assert_eq!(n.content_type(), OPENMETRICS);
        assert!(!wants_openmetrics(Some("text/plain; version=0.0.4")));
    }
}
