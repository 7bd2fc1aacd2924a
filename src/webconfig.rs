//! `--web.config.file`: TLS (optionally mutual) and basic auth for `/metrics`, in the format of
//! the Prometheus exporter-toolkit, so one file can serve every exporter in a fleet:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert   # optional: mTLS
//!   client_ca_file: ca.crt
//! basic_auth_users:
//!   prometheus: $2y$10$...   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//! ```

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use tokio_rustls::rustls;

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
    #[error("web.config.file {}:\n{}", .path.display(), .errors.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// File.
        path: PathBuf,
        /// Every problem.
        errors: Vec<String>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    tls_server_config: Option<TlsFile>,
    basic_auth_users: Option<BTreeMap<String, String>>,
    /// Accepted for compatibility; HTTP/2 and headers settings are not used.
    #[allow(dead_code)]
    http_server_config: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: Option<String>,
    key_file: Option<String>,
    client_auth_type: Option<String>,
    client_ca_file: Option<String>,
    min_version: Option<String>,
    #[allow(dead_code)]
    max_version: Option<String>,
    #[allow(dead_code)]
    cipher_suites: Option<Vec<String>>,
    #[allow(dead_code)]
    prefer_server_cipher_suites: Option<bool>,
    #[allow(dead_code)]
    curve_preferences: Option<Vec<String>>,
}

/// What the server enforces.
pub struct WebSecurity {
    /// TLS settings, when TLS is on.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    users: BTreeMap<String, String>,
    /// Hashes of credentials already verified: bcrypt is deliberately slow, and Prometheus
    /// sends the same credentials on every scrape.
    verified: Mutex<HashSet<u64>>,
    /// Hashes of credentials already refused, so a client repeating a wrong password costs no
    /// more bcrypt.
    refused: Mutex<HashSet<u64>>,
    /// One bcrypt at a time: a flood of wrong passwords gets at most one core, never the async
    /// workers that serve scrapes and probes.
    bcrypt: tokio::sync::Semaphore,
    hasher: RandomState,
}

impl std::fmt::Debug for WebSecurity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSecurity")
            .field("tls", &self.tls.is_some())
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

const VERIFIED_CACHE_MAX: usize = 64;
const REFUSED_CACHE_MAX: usize = 4096;
/// How long a request waits for its turn at bcrypt before it is refused.
const BCRYPT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl WebSecurity {
    /// No TLS, no auth.
    pub fn open() -> WebSecurity {
        WebSecurity {
            tls: None,
            users: BTreeMap::new(),
            verified: Mutex::new(HashSet::new()),
            refused: Mutex::new(HashSet::new()),
            bcrypt: tokio::sync::Semaphore::new(1),
            hasher: RandomState::new(),
        }
    }

    /// True when basic auth is required.
    pub fn auth_required(&self) -> bool {
        !self.users.is_empty()
    }

    /// Check an `Authorization` header against the bcrypt hashes. Credentials seen before are
    /// answered from memory; new ones wait (at most 2 s, else refused) for the one bcrypt slot,
    /// and are checked on the blocking pool.
    pub async fn authorized(&self, header: Option<&str>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some((user, pass)) = header.and_then(parse_basic) else {
            return false;
        };
        let Some(hash) = self.users.get(&user) else {
            return false;
        };
        let key = self.hasher.hash_one((&user, &pass, hash));
        let seen =
            |set: &Mutex<HashSet<u64>>| set.lock().map(|v| v.contains(&key)).unwrap_or(false);
        if seen(&self.verified) {
            return true;
        }
        if seen(&self.refused) {
            return false;
        }
        let Ok(Ok(_turn)) = tokio::time::timeout(BCRYPT_WAIT, self.bcrypt.acquire()).await else {
            return false;
        };
        let hash = hash.clone();
        let ok = tokio::task::spawn_blocking(move || bcrypt::verify(&pass, &hash).unwrap_or(false))
            .await
            .unwrap_or(false);
        let (set, max) = if ok {
            (&self.verified, VERIFIED_CACHE_MAX)
        } else {
            (&self.refused, REFUSED_CACHE_MAX)
        };
        if let Ok(mut v) = set.lock() {
            if v.len() >= max {
                v.clear();
            }
            v.insert(key);
        }
        ok
    }
}

fn parse_basic(h: &str) -> Option<(String, String)> {
    let b64 = h
        .strip_prefix("Basic ")
        .or_else(|| h.strip_prefix("basic "))?;
    let raw = base64_decode(b64.trim())?;
    let s = String::from_utf8(raw).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Standard base64; `None` on any invalid character or length. Padding is optional, and non-zero
/// trailing bits are accepted as Go's `base64.StdEncoding` (exporter-toolkit's) accepts them.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    LENIENT.decode(s).ok()
}

fn resolve(base: &Path, p: &str) -> PathBuf {
    let pb = PathBuf::from(p);
    if pb.is_absolute() {
        pb
    } else {
        base.join(pb)
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
        sec.users = users;
    }
    if let Some(tls) = parsed.tls_server_config {
        match build_tls(&tls, base) {
            Ok(cfg) => sec.tls = Some(Arc::new(cfg)),
            Err(mut e) => errors.append(&mut e),
        }
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

fn build_tls(t: &TlsFile, base: &Path) -> Result<rustls::ServerConfig, Vec<String>> {
    let mut errors = vec![];
    let certs: Vec<CertificateDer<'static>> = match &t.cert_file {
        None => {
            errors.push("tls_server_config.cert_file: missing".into());
            vec![]
        }
        Some(f) => match CertificateDer::pem_file_iter(resolve(base, f))
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        {
            Ok(c) if !c.is_empty() => c,
            Ok(_) => {
                errors.push(format!(
                    "tls_server_config.cert_file: no certificate in {f}"
                ));
                vec![]
            }
            Err(e) => {
                errors.push(format!("tls_server_config.cert_file: {f}: {e}"));
                vec![]
            }
        },
    };
    let key: Option<PrivateKeyDer<'static>> = match &t.key_file {
        None => {
            errors.push("tls_server_config.key_file: missing".into());
            None
        }
        Some(f) => match PrivateKeyDer::from_pem_file(resolve(base, f)) {
            Ok(k) => Some(k),
            Err(e) => {
                errors.push(format!("tls_server_config.key_file: {f}: {e}"));
                None
            }
        },
    };
    let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let versions: &[&rustls::SupportedProtocolVersion] = match t.min_version.as_deref() {
        None | Some("TLS12") => &[&rustls::version::TLS12, &rustls::version::TLS13],
        Some("TLS13") => &[&rustls::version::TLS13],
        Some(v) => {
            errors.push(format!(
                "tls_server_config.min_version: {v} (supported: TLS12, TLS13)"
            ));
            &[&rustls::version::TLS13]
        }
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = match rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
    {
        Ok(b) => b,
        Err(e) => return Err(vec![format!("tls_server_config: {e}")]),
    };
    let verifier = client_verifier(t, base, auth, provider, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let Some(key) = key else {
        return Err(vec!["tls_server_config.key_file: missing".into()]);
    };
    let b = match verifier {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut cfg = b.with_single_cert(certs, key).map_err(|e| {
        vec![format!(
            "tls_server_config: certificate and key do not match: {e}"
        )]
    })?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

/// The client-certificate verifier `client_auth_type` asks for (`None`: no client certificates).
fn client_verifier(
    t: &TlsFile,
    base: &Path,
    auth: &str,
    provider: Arc<rustls::crypto::CryptoProvider>,
    errors: &mut Vec<String>,
) -> Option<Arc<dyn rustls::server::danger::ClientCertVerifier>> {
    match auth {
        "NoClientCert" => None,
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let mut roots = rustls::RootCertStore::empty();
            match &t.client_ca_file {
                None => errors.push(format!(
                    "tls_server_config.client_ca_file: required with client_auth_type {auth}"
                )),
                Some(f) => match CertificateDer::pem_file_iter(resolve(base, f))
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                {
                    Ok(cas) => {
                        for c in cas {
                            if let Err(e) = roots.add(c) {
                                errors.push(format!("tls_server_config.client_ca_file: {f}: {e}"));
                            }
                        }
                    }
                    Err(e) => errors.push(format!("tls_server_config.client_ca_file: {f}: {e}")),
                },
            }
            let b = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            );
            let b = if auth == "VerifyClientCertIfGiven" {
                b.allow_unauthenticated()
            } else {
                b
            };
            match b.build() {
                Ok(v) => Some(v),
                Err(e) => {
                    errors.push(format!("tls_server_config.client_ca_file: {e}"));
                    None
                }
            }
        }
        other => {
            errors.push(format!(
                "tls_server_config.client_auth_type: {other} (supported: NoClientCert, \
                 VerifyClientCertIfGiven, RequireAndVerifyClientCert)"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_header_decodes() {
        // "prometheus:secret"
        assert_eq!(
            parse_basic("Basic cHJvbWV0aGV1czpzZWNyZXQ="),
            Some(("prometheus".into(), "secret".into()))
        );
        assert_eq!(parse_basic("Bearer x"), None);
        assert_eq!(parse_basic("Basic !!!"), None);
    }

    #[test]
    fn base64_padding_optional_trailing_bits_accepted() {
        assert_eq!(base64_decode("YTpi").as_deref(), Some(&b"a:b"[..]));
        assert_eq!(base64_decode("YTo=").as_deref(), Some(&b"a:"[..]));
        assert_eq!(base64_decode("YTo").as_deref(), Some(&b"a:"[..]));
        // "YTp" has non-zero bits past the last byte; Go's StdEncoding accepts it too.
        assert_eq!(base64_decode("YTp=").as_deref(), Some(&b"a:"[..]));
        assert_eq!(base64_decode("YTpi-_"), None);
        assert_eq!(base64_decode("Y"), None);
    }

    #[tokio::test]
    async fn bcrypt_users_are_checked_and_cached() {
        let mut s = WebSecurity::open();
        s.users
            .insert("u".into(), bcrypt::hash("pw", 4).expect("hash"));
        let good = "Basic dTpwdw=="; // u:pw
        let bad = "Basic dTpweA=="; // u:px
        assert!(s.authorized(Some(good)).await);
        assert!(s.authorized(Some(good)).await);
        assert!(!s.authorized(Some(bad)).await);
        assert!(!s.authorized(Some(bad)).await);
        assert!(!s.authorized(None).await);
        assert_eq!(s.verified.lock().map(|v| v.len()).unwrap_or(0), 1);
        assert_eq!(s.refused.lock().map(|v| v.len()).unwrap_or(0), 1);
    }

    #[test]
    fn every_problem_is_listed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("web.yml");
        std::fs::write(
            &p,
            "tls_server_config:\n  cert_file: nope.crt\n  client_auth_type: Sometimes\nbasic_auth_users:\n  bob: plaintext\n",
        )
        .expect("write");
        let Err(WebConfigError::Invalid { errors, .. }) = load(&p) else {
            panic!("expected errors")
        };
        let all = errors.join("\n");
        for k in [
            "cert_file",
            "key_file: missing",
            "client_auth_type",
            "bob: not a bcrypt",
        ] {
            assert!(all.contains(k), "{k} missing in {all}");
        }
    }
}
