//! `tls_server_config` to a rustls (ring) server config. Every field of exporter-toolkit's is
//! either honoured or refused with a message naming it: TLS 1.0/1.1, `CurveP521`, cipher suites
//! rustls does not implement (CBC, RSA key exchange) and client-auth modes that accept a
//! certificate without verifying it are refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::ring::{cipher_suite as cs, kx_group};
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::server::danger::ClientCertVerifier;
use rustls::{SupportedCipherSuite, SupportedProtocolVersion};
use serde::Deserialize;
use tokio_rustls::rustls;

use super::reload::{CertReloader, Pem};
use super::sans::SanCheck;

/// `tls_server_config`, as exporter-toolkit v0.17.1 defines it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TlsFile {
    /// Inline PEM certificate chain (instead of `cert_file`).
    pub(super) cert: Option<String>,
    /// Inline PEM private key (instead of `key_file`).
    pub(super) key: Option<String>,
    /// Inline PEM CA for client certificates (instead of `client_ca_file`).
    pub(super) client_ca: Option<String>,
    /// Certificate chain file, re-read when it changes.
    pub(super) cert_file: Option<String>,
    /// Private key file, re-read when it changes.
    pub(super) key_file: Option<String>,
    /// Whether client certificates are asked for and verified.
    pub(super) client_auth_type: Option<String>,
    /// CA file that client certificates must chain to.
    pub(super) client_ca_file: Option<String>,
    /// A verified client certificate must carry one of these SANs.
    pub(super) client_allowed_sans: Option<Vec<String>>,
    /// Lowest TLS version (`TLS12`, `TLS13`).
    pub(super) min_version: Option<String>,
    /// Highest TLS version (`TLS12`, `TLS13`).
    pub(super) max_version: Option<String>,
    /// Cipher suites (Go names), in server order.
    pub(super) cipher_suites: Option<Vec<String>>,
    /// Server's suite order rather than the client's (default true).
    pub(super) prefer_server_cipher_suites: Option<bool>,
    /// Key-exchange groups (Go names), in order.
    pub(super) curve_preferences: Option<Vec<String>>,
}

/// Relative paths are relative to the web config's folder.
fn resolve(base: &Path, p: &str) -> PathBuf {
    let pb = PathBuf::from(p);
    if pb.is_absolute() {
        pb
    } else {
        base.join(pb)
    }
}

/// Go's names (`tls.CipherSuiteName`) of the suites rustls' ring provider implements.
fn suite(name: &str) -> Option<SupportedCipherSuite> {
    Some(match name {
        "TLS_AES_128_GCM_SHA256" => cs::TLS13_AES_128_GCM_SHA256,
        "TLS_AES_256_GCM_SHA384" => cs::TLS13_AES_256_GCM_SHA384,
        "TLS_CHACHA20_POLY1305_SHA256" => cs::TLS13_CHACHA20_POLY1305_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
        | "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" => {
            cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" | "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" => {
            cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
        _ => return None,
    })
}

/// Go's curve names to ring's key-exchange groups.
fn curve(name: &str) -> Result<&'static dyn SupportedKxGroup, String> {
    match name {
        "X25519" => Ok(kx_group::X25519),
        "CurveP256" => Ok(kx_group::SECP256R1),
        "CurveP384" => Ok(kx_group::SECP384R1),
        "CurveP521" => Err(format!(
            "{name} is not implemented by rustls (ring provider); \
            supported: X25519, CurveP256, CurveP384"
        )),
        _ => Err(format!(
            "unknown curve {name} (supported: X25519, CurveP256, CurveP384)"
        )),
    }
}

fn version(field: &str, v: Option<&str>, default: u8) -> Result<u8, String> {
    match v {
        None => Ok(default),
        Some("TLS12") => Ok(12),
        Some("TLS13") => Ok(13),
        Some(v @ ("TLS10" | "TLS11")) => Err(format!(
            "tls_server_config.{field}: {v} is not supported by rustls (supported: TLS12, TLS13)"
        )),
        Some(v) => Err(format!(
            "tls_server_config.{field}: unknown version {v} (supported: TLS12, TLS13)"
        )),
    }
}

/// The ring provider restricted to the listed cipher suites and curves, in their order.
fn provider(t: &TlsFile, errors: &mut Vec<String>) -> CryptoProvider {
    let mut p = rustls::crypto::ring::default_provider();
    if let Some(names) = t.cipher_suites.as_ref().filter(|n| !n.is_empty()) {
        let mut listed = vec![];
        for n in names {
            match suite(n) {
                Some(s) => listed.push(s),
                None => errors.push(format!(
                    "tls_server_config.cipher_suites: {n} is not implemented by rustls (ring \
                     provider: ECDHE with AES-GCM or ChaCha20-Poly1305 only; no CBC, no RSA key \
                     exchange)"
                )),
            }
        }
        // Go applies the list to TLS 1.2 only; TLS 1.3 suites stay all on unless listed.
        let any13 = listed.iter().any(|s| s.tls13().is_some());
        let keep13: Vec<_> = p
            .cipher_suites
            .iter()
            .filter(|s| s.tls13().is_some() && !any13)
            .copied()
            .collect();
        p.cipher_suites = listed.into_iter().chain(keep13).collect();
    }
    if let Some(names) = t.curve_preferences.as_ref().filter(|n| !n.is_empty()) {
        let mut groups = vec![];
        for n in names {
            match curve(n) {
                Ok(g) => groups.push(g),
                Err(e) => errors.push(format!("tls_server_config.curve_preferences: {e}")),
            }
        }
        p.kx_groups = groups;
    }
    p
}

fn pem(
    field: &str,
    file: Option<&String>,
    inline: Option<&String>,
    base: &Path,
) -> Result<Option<Pem>, String> {
    match (file, inline) {
        (Some(_), Some(_)) => Err(format!(
            "tls_server_config.{field}_file and tls_server_config.{field}: set only one"
        )),
        (Some(f), None) => Ok(Some(Pem::File(resolve(base, f)))),
        (None, Some(s)) => Ok(Some(Pem::Inline(s.clone()))),
        (None, None) => Ok(None),
    }
}

/// The server config and its certificate resolver, or every problem found.
pub(super) fn build(
    t: &TlsFile,
    base: &Path,
) -> Result<(rustls::ServerConfig, Arc<CertReloader>), Vec<String>> {
    let mut errors = vec![];
    let min = version("min_version", t.min_version.as_deref(), 12).unwrap_or_else(|e| {
        errors.push(e);
        12
    });
    let max = version("max_version", t.max_version.as_deref(), 13).unwrap_or_else(|e| {
        errors.push(e);
        13
    });
    if min > max {
        errors.push(format!(
            "tls_server_config.min_version TLS{min} is above max_version TLS{max}"
        ));
    }
    let versions: Vec<&'static SupportedProtocolVersion> =
        [(12, &rustls::version::TLS12), (13, &rustls::version::TLS13)]
            .into_iter()
            .filter(|(v, _)| (min..=max).contains(v))
            .map(|(_, p)| p)
            .collect();
    let provider = Arc::new(provider(t, &mut errors));
    let mut pair = |f, file, inline| {
        pem(f, file, inline, base).unwrap_or_else(|e| {
            errors.push(e);
            None
        })
    };
    let cert = pair("cert", t.cert_file.as_ref(), t.cert.as_ref());
    let key = pair("key", t.key_file.as_ref(), t.key.as_ref());
    let mut readable = true;
    for (name, p) in [("cert_file (or cert)", &cert), ("key_file (or key)", &key)] {
        let problem = match p.as_ref().map(Pem::bytes) {
            None => Some("missing".to_string()),
            Some(Err(e)) => Some(e),
            Some(Ok(_)) => None,
        };
        if let Some(e) = problem {
            errors.push(format!("tls_server_config.{name}: {e}"));
            readable = false;
        }
    }
    let resolver = match (cert, key) {
        (Some(c), Some(k)) if readable => CertReloader::new(c, k, provider.clone())
            .map_err(|e| errors.push(format!("tls_server_config (cert, key): {e}")))
            .ok(),
        _ => None,
    };
    let verifier = client_verifier(t, base, provider.clone(), &mut errors);
    let (Some(resolver), true) = (resolver, errors.is_empty()) else {
        return Err(errors);
    };
    // Only after the fields are valid: rustls' own complaints (no suite left for a version,
    // ...) then say something the messages above have not.
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| {
            vec![format!(
                "tls_server_config (versions, cipher_suites, curve_preferences): {e}"
            )]
        })?;
    let resolver = Arc::new(resolver);
    let b = match verifier {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut cfg = b.with_cert_resolver(resolver.clone());
    // Go's default (and exporter-toolkit's) is the server's order.
    cfg.ignore_client_order = t.prefer_server_cipher_suites.unwrap_or(true);
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((cfg, resolver))
}

/// The client-certificate verifier `client_auth_type` asks for (`None`: no client certificates).
fn client_verifier(
    t: &TlsFile,
    base: &Path,
    provider: Arc<CryptoProvider>,
    errors: &mut Vec<String>,
) -> Option<Arc<dyn ClientCertVerifier>> {
    let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let ca = pem(
        "client_ca",
        t.client_ca_file.as_ref(),
        t.client_ca.as_ref(),
        base,
    )
    .unwrap_or_else(|e| {
        errors.push(e);
        None
    });
    let sans = t.client_allowed_sans.as_ref();
    match auth {
        "" | "NoClientCert" => {
            if ca.is_some() {
                errors.push(
                    "tls_server_config.client_ca_file (or client_ca): set without a \
                    client_auth_type that verifies"
                        .into(),
                );
            }
            if sans.is_some() {
                errors.push(
                    "tls_server_config.client_allowed_sans: set without a client_auth_type \
                    that verifies"
                        .into(),
                );
            }
            None
        }
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let mut roots = rustls::RootCertStore::empty();
            match ca.as_ref().map(|p| p.bytes()) {
                None => errors.push(format!(
                    "tls_server_config.client_ca_file (or client_ca): required with \
                        client_auth_type {auth}"
                )),
                Some(Err(e)) => errors.push(format!("tls_server_config.client_ca_file: {e}")),
                Some(Ok(pem)) => {
                    for c in CertificateDer::pem_slice_iter(&pem) {
                        if let Err(e) = c
                            .map_err(|e| e.to_string())
                            .and_then(|c| roots.add(c).map_err(|e| e.to_string()))
                        {
                            errors.push(format!("tls_server_config.client_ca_file: {e}"));
                        }
                    }
                }
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
            let v = b
                .build()
                .map_err(|e| errors.push(format!("tls_server_config.client_ca_file: {e}")))
                .ok()?;
            match sans {
                None => Some(v),
                Some(s) if s.is_empty() => {
                    errors.push(
                        "tls_server_config.client_allowed_sans: empty (every client \
                        certificate would be refused)"
                            .into(),
                    );
                    None
                }
                Some(s) => Some(Arc::new(SanCheck {
                    inner: v,
                    allowed: s.clone(),
                })),
            }
        }
        other @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert") => {
            errors.push(format!(
                "tls_server_config.client_auth_type: {other} is not supported: it accepts client \
                 certificates without verifying them (use RequireAndVerifyClientCert)"
            ));
            None
        }
        other => {
            errors.push(format!(
                "tls_server_config.client_auth_type: unknown {other} (supported: NoClientCert, \
                 VerifyClientCertIfGiven, RequireAndVerifyClientCert)"
            ));
            None
        }
    }
}
