//! HTTP client for one REST target: per-request timeout, capped bodies, typed errors, and a count
//! of every byte read (the poller's load on the driver is a feature we measure, not guess).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::config::SparkAuthConfig;
use crate::telemetry::Telemetry;

/// The headers every request carries: `Authorization` (basic or bearer) and the configured
/// extras, all marked sensitive.
fn auth_headers(auth: &SparkAuthConfig) -> Result<reqwest::header::HeaderMap, ClientError> {
    use base64::{engine::general_purpose::STANDARD, Engine as _};
    use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
    let sensitive = |v: String, what: &str| {
        HeaderValue::from_str(&v)
            .map(|mut h| {
                h.set_sensitive(true);
                h
            })
            .map_err(|_| ClientError::Auth(format!("{what}: not a valid header value")))
    };
    let mut h = HeaderMap::new();
    let password = auth
        .password()
        .map_err(|e| ClientError::Auth(format!("password_file: {e}")))?;
    if let Some(user) = &auth.username {
        let raw = format!("{user}:{}", password.unwrap_or_default());
        h.insert(
            AUTHORIZATION,
            sensitive(format!("Basic {}", STANDARD.encode(raw)), "username")?,
        );
    }
    let token = auth
        .bearer_token()
        .map_err(|e| ClientError::Auth(format!("bearer_token_file: {e}")))?;
    if let Some(t) = token {
        h.insert(
            AUTHORIZATION,
            sensitive(format!("Bearer {t}"), "bearer_token")?,
        );
    }
    for (k, v) in &auth.headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ClientError::Auth(format!("headers.{k}: not a valid header name")))?;
        h.insert(name, sensitive(v.clone(), &format!("headers.{k}"))?);
    }
    Ok(h)
}

pub use super::config::DEFAULT_MAX_BODY_BYTES;

/// ` Not Found`: a status code's reason phrase, when it has one.
fn reason(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

/// Why a connection failed, in words: refused, DNS, TLS, reset, or the innermost error's
/// message (reqwest's own is "error sending request", which names no cause).
pub fn connect_cause(e: &reqwest::Error) -> String {
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = vec![];
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        chain.push(c);
        cur = c.source();
    }
    let host = e
        .url()
        .map(|u| {
            let port = u.port_or_known_default().map(|p| format!(":{p}"));
            format!(
                "{}{}",
                u.host_str().unwrap_or("?"),
                port.unwrap_or_default()
            )
        })
        .unwrap_or_default();
    for c in &chain {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!("connection refused: nothing listens on {host}")
                }
                std::io::ErrorKind::ConnectionReset => {
                    return "connection reset by the peer".into()
                }
                std::io::ErrorKind::TimedOut => return format!("connecting to {host} timed out"),
                _ => {}
            }
        }
    }
    let innermost = chain.last().map(|c| c.to_string()).unwrap_or_default();
    let all: String = chain
        .iter()
        .map(|c| c.to_string().to_lowercase())
        .collect::<Vec<_>>()
        .join(" / ");
    if all.contains("dns error") || all.contains("failed to lookup address") {
        format!(
            "DNS lookup of {} failed ({innermost})",
            host.split(':').next().unwrap_or("")
        )
    } else if all.contains("certificate")
        || all.contains("tls")
        || all.contains("handshake")
        || all.contains("invalidcontenttype")
        || all.contains("corrupt message")
    {
        format!("TLS handshake with {host} failed ({innermost})")
    } else {
        innermost
    }
}

/// Why a request failed. [`ClientError::kind`] is the `kind` label of
/// `spark_exporter_scrape_errors_total`.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The HTTP client could not be built (TLS backend).
    #[error("cannot build HTTP client: {0}")]
    Build(#[source] reqwest::Error),
    /// `spark.auth` could not be applied (unreadable secret or CA file, invalid header).
    /// The message never contains the secret itself.
    #[error("spark.auth: {0}")]
    Auth(String),
    /// Connection refused, DNS failure, TLS handshake, reset before a response.
    #[error("cannot connect to {url}: {}", connect_cause(.source))]
    Connect {
        /// Request URL.
        url: String,
        /// Underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// No complete response within the per-request timeout.
    #[error("{url} timed out after {timeout:?}")]
    Timeout {
        /// Request URL.
        url: String,
        /// The timeout that expired.
        timeout: Duration,
    },
    /// A status other than 2xx (404 only where it is not an expected "not yet").
    #[error("{url} answered HTTP {status}{}", reason(*.status))]
    HttpStatus {
        /// Request URL.
        url: String,
        /// Status code.
        status: u16,
    },
    /// The body is not the JSON we expect (an HTML login page, garbage, a wrong shape).
    #[error("{url} sent a body that is not the expected JSON ({content_type}): {reason}")]
    Decode {
        /// Request URL.
        url: String,
        /// `Content-Type` header, or `-`.
        content_type: String,
        /// Decoder message.
        reason: String,
    },
    /// The body broke off, or is larger than the cap.
    #[error("{url}: bad response body: {reason}")]
    Body {
        /// Request URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

impl ClientError {
    /// The error-counter `kind`: `connect`, `timeout`, `http_status`, `decode` or `body`.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Build(_) | ClientError::Auth(_) | ClientError::Connect { .. } => "connect",
            ClientError::Timeout { .. } => "timeout",
            ClientError::HttpStatus { .. } => "http_status",
            ClientError::Decode { .. } => "decode",
            ClientError::Body { .. } => "body",
        }
    }
}

/// A client bound to one target (a driver UI or History Server base URL).
#[derive(Debug)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    target: String,
    timeout: Duration,
    max_body: usize,
    telemetry: Arc<Telemetry>,
    bytes: AtomicU64,
    requests: AtomicU64,
}

impl Client {
    /// A client for `base` (e.g. `http://localhost:4040`), `timeout` per request, bodies capped
    /// at `max_body` bytes. `target` names it in telemetry and logs.
    pub fn new(
        base: &str,
        timeout: Duration,
        max_body: usize,
        telemetry: Arc<Telemetry>,
    ) -> Result<Client, ClientError> {
        Self::with_auth(
            base,
            timeout,
            max_body,
            telemetry,
            &SparkAuthConfig::default(),
        )
    }

    /// A client for `base` with the `spark` section's settings: its timeout, body cap,
    /// credentials and CA bundle. The exporter's poller, `diagnose` and `diagnose --review`
    /// all read through one of these, so a setting means the same in each.
    pub fn for_spark(
        base: &str,
        spark: &super::config::SparkConfig,
        telemetry: Arc<Telemetry>,
    ) -> Result<Client, ClientError> {
        Self::with_auth(
            base,
            spark.timeout,
            spark.max_body_bytes,
            telemetry,
            &spark.auth,
        )
    }

    /// Like [`Client::new`], sending `auth`'s credentials and headers with every request and
    /// trusting its CA bundle. Header values are marked sensitive so they never show in logs.
    pub fn with_auth(
        base: &str,
        timeout: Duration,
        max_body: usize,
        telemetry: Arc<Telemetry>,
        auth: &SparkAuthConfig,
    ) -> Result<Client, ClientError> {
        let mut b = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .pool_max_idle_per_host(2)
            .user_agent(concat!("spark-exporter/", env!("CARGO_PKG_VERSION")))
            .default_headers(auth_headers(auth)?);
        if let Some(ca) = &auth.ca_file {
            let pem = std::fs::read(ca)
                .map_err(|e| ClientError::Auth(format!("ca_file {}: {e}", ca.display())))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| ClientError::Auth(format!("ca_file {}: {e}", ca.display())))?;
            for c in certs {
                b = b.add_root_certificate(c);
            }
        }
        let http = b.build().map_err(ClientError::Build)?;
        Ok(Client {
            http,
            base: base.trim_end_matches('/').to_string(),
            target: base.to_string(),
            timeout,
            max_body,
            telemetry,
            bytes: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        })
    }

    /// The target name used in telemetry (the configured base URL).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Count a failed request that does not fail the poll (one SQL plan Spark could not give,
    /// an optional endpoint): `spark_exporter_scrape_errors_total{kind}`.
    pub fn count_error(&self, kind: &'static str) {
        self.telemetry.scrape_error(&self.target, kind);
    }

    /// Body bytes and responses read since this client was made.
    pub fn counters(&self) -> (u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.requests.load(Ordering::Relaxed),
        )
    }

    /// GET `path` (relative to the base, e.g. `/api/v1/applications`) and decode it.
    /// Every non-2xx status, 404 included, is an error.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        match self.get_opt(path).await? {
            Some(v) => Ok(v),
            None => Err(ClientError::HttpStatus {
                url: self.url(path),
                status: 404,
            }),
        }
    }

    /// Like [`Client::get`], but 404 gives `Ok(None)`: "this id does not exist (yet)".
    pub async fn get_opt<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, ClientError> {
        let (url, status, content_type, body) = self.fetch(path, "application/json").await?;
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(ClientError::HttpStatus {
                url,
                status: status.as_u16(),
            });
        }
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| ClientError::Decode {
                url,
                content_type,
                reason: e.to_string(),
            })
    }

    /// GET `path` as bytes (a History Server's `/logs` zip), within `spark.max_body_bytes`.
    /// Every non-2xx status is an error.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, ClientError> {
        let (url, status, _, body) = self.fetch(path, "application/octet-stream").await?;
        if !status.is_success() {
            return Err(ClientError::HttpStatus {
                url,
                status: status.as_u16(),
            });
        }
        Ok(body)
    }

    /// GET `path` accepting `accept`: its URL, status, content type and body (counted).
    async fn fetch(
        &self,
        path: &str,
        accept: &str,
    ) -> Result<(String, reqwest::StatusCode, String, Vec<u8>), ClientError> {
        let url = self.url(path);
        let resp = self
            .http
            .get(&url)
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .map_err(|e| self.transport_error(&url, e))?;
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_string();
        let body = self.read_body(&url, resp).await;
        // Count what was read even when the body then turns out to be useless.
        let len = match &body {
            Ok(b) => b.len() as u64,
            Err((_, n)) => *n,
        };
        self.bytes.fetch_add(len, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.telemetry.rest_response(&self.target, len);
        let body = body.map_err(|(e, _)| e)?;
        Ok((url, status, content_type, body))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Reads the body up to the cap; on error also returns how many bytes arrived.
    async fn read_body(
        &self,
        url: &str,
        mut resp: reqwest::Response,
    ) -> Result<Vec<u8>, (ClientError, u64)> {
        let too_large = |n: u64| ClientError::Body {
            url: url.to_string(),
            reason: format!(
                "larger than the {} byte cap of spark.max_body_bytes ({n} bytes)",
                self.max_body
            ),
        };
        if let Some(n) = resp.content_length() {
            if n > self.max_body as u64 {
                return Err((too_large(n), 0));
            }
        }
        let mut buf = Vec::with_capacity(resp.content_length().unwrap_or(0) as usize);
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if buf.len() + chunk.len() > self.max_body {
                        let n = (buf.len() + chunk.len()) as u64;
                        return Err((too_large(n), n));
                    }
                    buf.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok(buf),
                Err(e) => {
                    let err = if e.is_timeout() {
                        self.timeout_error(url)
                    } else {
                        ClientError::Body {
                            url: url.to_string(),
                            reason: error_chain(&e),
                        }
                    };
                    return Err((err, buf.len() as u64));
                }
            }
        }
    }

    fn timeout_error(&self, url: &str) -> ClientError {
        ClientError::Timeout {
            url: url.to_string(),
            timeout: self.timeout,
        }
    }

    fn transport_error(&self, url: &str, e: reqwest::Error) -> ClientError {
        if e.is_timeout() {
            self.timeout_error(url)
        } else {
            ClientError::Connect {
                url: url.to_string(),
                source: e,
            }
        }
    }
}

/// `reqwest` errors say little at the top level; the cause chain says what happened.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_documented_set() {
        let url = || "http://x/api/v1".to_string();
        let errs = [
            ClientError::Timeout {
                url: url(),
                timeout: Duration::from_secs(1),
            },
            ClientError::HttpStatus {
                url: url(),
                status: 500,
            },
            ClientError::Decode {
                url: url(),
                content_type: "text/html".into(),
                reason: "expected value".into(),
            },
            ClientError::Body {
                url: url(),
                reason: "closed".into(),
            },
        ];
        let kinds: Vec<_> = errs.iter().map(ClientError::kind).collect();
        assert_eq!(kinds, ["timeout", "http_status", "decode", "body"]);
        assert!(errs[2].to_string().contains("text/html"));
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error() {
        // Bind then drop a listener so the port is (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let t = Arc::new(Telemetry::default());
        let c = Client::new(
            &format!("http://127.0.0.1:{port}"),
            Duration::from_secs(2),
            DEFAULT_MAX_BODY_BYTES,
            t.clone(),
        )
        .unwrap();
        let e = c
            .get::<serde_json::Value>("/api/v1/applications")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "connect", "{e}");
        assert_eq!(c.counters(), (0, 0), "no response, nothing counted");
    }
}
