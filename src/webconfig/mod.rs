//! `--web.config.file`: TLS (optionally mutual), basic auth, response headers and a rate limit,
//! in the format of the Prometheus exporter-toolkit **v0.17.1** (`docs/web-configuration.md`,
//! `web/tls_config.go` of that tag), so one file can serve every exporter in a fleet:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt          # re-read when it changes (see reload)
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # optional: mTLS
//!   client_ca_file: ca.crt
//! basic_auth_users:
//!   prometheus: $2y$10$...   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//! ```
//!
//! Every field of that version is honoured or refused at start-up (exit 64, every problem
//! listed, naming the field and value); unknown fields are refused. Parts:
//!
//! - `tls`: `tls_server_config` to a rustls (ring) config: versions, cipher suites, curves,
//!   client verification.
//! - `reload`: the server certificate, re-read when its files change.
//! - `sans`: checks `client_allowed_sans`.
//! - `auth`: `basic_auth_users` and `rate_limit`.
//!
//! `http_server_config.http2` is accepted but HTTP/2 is not served: TLS offers only
//! `http/1.1` by ALPN, which every scraper falls back to (the server logs it at start-up).

mod auth;
mod reload;
mod sans;
mod tls;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hyper::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use tokio_rustls::rustls;

use auth::{BasicAuth, RateLimit};
use reload::{CertReloader, ErrorHook};

/// Problems with the web configuration file; all of them are listed at once.
#[derive(Debug, thiserror::Error)]
pub enum WebConfigError {
    /// The file could not be read or parsed.
    #[error("web.config.file {path}: {msg}")]
    Load {
        /// File.
        path: PathBuf,
        /// Cause.
        msg: String,
    },
    /// Fields are invalid.
    #[error("web.config.file {}:\n{}", .path.display(), .errors.iter().map(|e| format!("  - \
        {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// File.
        path: PathBuf,
        /// Every problem.
        errors: Vec<String>,
    },
}

/// The web config file, as exporter-toolkit v0.17.1 defines it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    /// TLS, see [`tls::TlsFile`].
    tls_server_config: Option<tls::TlsFile>,
    /// HTTP/2 and response headers.
    http_server_config: Option<HttpFile>,
    /// User name to bcrypt hash.
    basic_auth_users: Option<BTreeMap<String, String>>,
    /// Token bucket over all requests.
    rate_limit: Option<RateLimitFile>,
}

/// `http_server_config`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    /// Asked for HTTP/2 (not served: HTTP/1.1 only).
    http2: Option<bool>,
    /// Headers added to every response.
    headers: Option<BTreeMap<String, String>>,
}

/// `rate_limit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateLimitFile {
    /// Time to earn one request (Go duration); `0` disables.
    interval: Option<String>,
    /// Requests allowed at once.
    burst: Option<u32>,
}

/// The headers exporter-toolkit lets a web config add, and the values it accepts (empty: any).
const EXTRA_HEADERS: &[(&str, &[&str])] = &[
    ("Strict-Transport-Security", &[]),
    ("X-Content-Type-Options", &["nosniff"]),
    ("X-Frame-Options", &["deny", "sameorigin"]),
    ("X-XSS-Protection", &[]),
    ("Content-Security-Policy", &[]),
];

/// What the server enforces.
pub struct WebSecurity {
    /// TLS settings, when TLS is on.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Headers added to every response (`http_server_config.headers`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// `http_server_config.http2` as written (HTTP/2 is not served either way).
    pub http2: Option<bool>,
    auth: BasicAuth,
    rate: Option<RateLimit>,
    reloader: Option<Arc<CertReloader>>,
}

impl std::fmt::Debug for WebSecurity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSecurity")
            .field("tls", &self.tls.is_some())
            .field("users", &self.auth.users.keys().collect::<Vec<_>>())
            .field("headers", &self.headers)
            .field("rate", &self.rate)
            .finish()
    }
}

impl WebSecurity {
    /// No TLS, no auth.
    pub fn open() -> WebSecurity {
        WebSecurity {
            tls: None,
            headers: vec![],
            http2: None,
            auth: BasicAuth::new(BTreeMap::new()),
            rate: None,
            reloader: None,
        }
    }

    /// True when basic auth is required.
    pub fn auth_required(&self) -> bool {
        !self.auth.users.is_empty()
    }

    /// Check an `Authorization` header (see `BasicAuth::authorized`).
    pub async fn authorized(&self, header: Option<&str>) -> bool {
        self.auth.authorized(header).await
    }

    /// False when `rate_limit` refuses this request.
    pub fn rate_allowed(&self) -> bool {
        self.rate.as_ref().is_none_or(RateLimit::allow)
    }

    /// Where failed certificate reloads are counted.
    pub fn on_tls_error(&self, hook: ErrorHook) {
        if let Some(r) = &self.reloader {
            r.on_error(hook);
        }
    }
}

fn headers(
    h: &BTreeMap<String, String>,
    errors: &mut Vec<String>,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut out = vec![];
    for (k, v) in h {
        let Some((name, allowed)) = EXTRA_HEADERS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
        else {
            errors.push(format!(
                "http_server_config.headers.{k}: this header can not be configured (allowed: {})",
                EXTRA_HEADERS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        };
        if v.is_empty() {
            continue;
        }
        if !allowed.is_empty() && !allowed.contains(&v.as_str()) {
            errors.push(format!(
                "http_server_config.headers.{name}: {v} (expected one of: {})",
                allowed.join(", ")
            ));
            continue;
        }
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            (Ok(hn), Ok(hv)) => out.push((hn, hv)),
            _ => errors.push(format!(
                "http_server_config.headers.{name}: not a valid header value"
            )),
        }
    }
    out
}

fn rate_limit(r: &RateLimitFile, errors: &mut Vec<String>) -> Option<RateLimit> {
    let interval = match r.interval.as_deref().map(str::trim) {
        None | Some("0" | "0s") => return None,
        Some(s) => match humantime::parse_duration(s) {
            Ok(d) if d.is_zero() => return None,
            Ok(d) => d,
            Err(e) => {
                errors.push(format!("rate_limit.interval: {s}: {e}"));
                return None;
            }
        },
    };
    match r.burst {
        Some(b) if b > 0 => Some(RateLimit::new(interval, b)),
        b => {
            errors.push(format!(
                "rate_limit.burst: {} (must be at least 1 when interval is set, \
                else every request is refused)",
                b.unwrap_or(0)
            ));
            None
        }
    }
}

/// Read and validate the file. Relative paths are relative to the file's folder.
pub fn load(path: &Path) -> Result<WebSecurity, WebConfigError> {
    let load_err = |msg: String| WebConfigError::Load {
        path: path.to_path_buf(),
        msg,
    };
    let text = std::fs::read_to_string(path).map_err(|e| load_err(e.to_string()))?;
    let parsed: FileFormat = config::Config::builder()
        .add_source(config::File::from_str(&text, config::FileFormat::Yaml))
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|e| load_err(e.to_string()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut errors = vec![];
    let mut sec = WebSecurity::open();
    if let Some(users) = parsed.basic_auth_users {
        for (u, h) in &users {
            if !(h.starts_with("$2a$") || h.starts_with("$2b$") || h.starts_with("$2y$")) {
                errors.push(format!("basic_auth_users.{u}: not a bcrypt hash"));
            }
        }
        sec.auth = BasicAuth::new(users);
    }
    if let Some(tls) = parsed.tls_server_config {
        match tls::build(&tls, base) {
            Ok((cfg, reloader)) => {
                sec.tls = Some(Arc::new(cfg));
                sec.reloader = Some(reloader);
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    if let Some(http) = parsed.http_server_config {
        sec.http2 = http.http2;
        if let Some(h) = &http.headers {
            sec.headers = headers(h, &mut errors);
        }
    }
    if let Some(r) = &parsed.rate_limit {
        sec.rate = rate_limit(r, &mut errors);
    }
    if errors.is_empty() {
        Ok(sec)
    } else {
        Err(WebConfigError::Invalid {
            path: path.to_path_buf(),
            errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_is_listed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("web.yml");
        std::fs::write(
            &p,
            "tls_server_config:\n  cert_file: nope.crt\n  client_auth_type: \
                Sometimes\nbasic_auth_users:\n  bob: plaintext\n",
        )
        .expect("write");
        let Err(WebConfigError::Invalid { errors, .. }) = load(&p) else {
            panic!("expected errors")
        };
        let all = errors.join("\n");
        for k in [
            "cert_file",
            "key_file (or key): missing",
            "client_auth_type",
            "bob: not a bcrypt",
        ] {
            assert!(all.contains(k), "{k} missing in {all}");
        }
    }

    fn write_pair(dir: &Path) {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        std::fs::write(dir.join("s.crt"), cert.pem()).expect("write");
        std::fs::write(dir.join("s.key"), key.serialize_pem()).expect("write");
    }

    #[test]
    fn every_supported_field_is_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_pair(dir.path());
        let p = dir.path().join("web.yml");
        std::fs::write(
            &p,
            "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n  min_version: TLS12\n  \
             max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n  \
             prefer_server_cipher_suites: false\n  curve_preferences: [CurveP384, X25519]\n\
             http_server_config:\n  http2: true\n  headers:\n    X-Frame-Options: deny\n    \
             Strict-Transport-Security: max-age=31536000\n    Content-Security-Policy: ''\n\
             rate_limit:\n  interval: 1s\n  burst: 10\n",
        )
        .expect("write");
        let s = load(&p).expect("valid");
        let tls = s.tls.as_ref().expect("tls");
        assert!(!tls.ignore_client_order);
        assert_eq!(s.http2, Some(true));
        let h: Vec<_> = s
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v:?}"))
            .collect();
        assert_eq!(
            h,
            [
                "strict-transport-security: \"max-age=31536000\"",
                "x-frame-options: \"deny\""
            ]
        );
        assert!(s.rate.is_some());
    }

    #[test]
    fn unsupported_values_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_pair(dir.path());
        let p = dir.path().join("web.yml");
        std::fs::write(
            &p,
            "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n  min_version: TLS10\n  \
             cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, TLS_AES_128_GCM_SHA256]\n  \
             curve_preferences: [CurveP521]\n  client_auth_type: RequireAnyClientCert\n\
             http_server_config:\n  headers:\n    Server: x\n    X-Frame-Options: allow\n\
             rate_limit:\n  interval: 1s\n",
        )
        .expect("write");
        let Err(WebConfigError::Invalid { errors, .. }) = load(&p) else {
            panic!("expected errors")
        };
        let all = errors.join("\n");
        for k in [
            "min_version: TLS10",
            "cipher_suites: TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
            "curve_preferences: CurveP521",
            "client_auth_type: RequireAnyClientCert",
            "headers.Server",
            "X-Frame-Options: allow",
            "rate_limit.burst",
        ] {
            assert!(all.contains(k), "{k} missing in {all}");
        }
        assert_eq!(errors.len(), 7, "{all}");
    }
}
