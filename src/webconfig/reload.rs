//! The server certificate, re-read when `cert_file` or `key_file` changes (a cert-manager
//! rotation, a Kubernetes secret's symlink swap): at a TLS handshake, at most once a second, the
//! files' identity (modification time, size, inode) is compared with the last one seen; when it
//! differs the pair is loaded again and the next handshakes present it. A new pair that cannot be
//! used (unreadable, unparsable, key not matching the certificate) leaves the old one in service,
//! is logged and counted (`spark_exporter_http_errors_total{kind="tls_reload"}`). Inline `cert`
//! and `key` never change.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::rustls;

/// How often, at most, the files are looked at.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Where a PEM comes from.
#[derive(Debug, Clone)]
pub enum Pem {
    /// A file, watched for changes.
    File(PathBuf),
    /// Inline text from the web config.
    Inline(String),
}

impl Pem {
    /// The PEM text.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Pem::File(p) => std::fs::read(p).map_err(|e| format!("{}: {e}", p.display())),
            Pem::Inline(s) => Ok(s.clone().into_bytes()),
        }
    }

    /// What identifies this version of the file; `None` for inline text or a missing file.
    fn stamp(&self) -> Option<(SystemTime, u64, u64)> {
        let Pem::File(p) = self else { return None };
        let m = std::fs::metadata(p).ok()?;
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let ino = 0;
        Some((m.modified().ok()?, m.len(), ino))
    }
}

type Stamp = (
    Option<(SystemTime, u64, u64)>,
    Option<(SystemTime, u64, u64)>,
);

/// Called with the error kind when a reload fails.
pub type ErrorHook = Box<dyn Fn(&str) + Send + Sync>;

struct State {
    current: Arc<CertifiedKey>,
    stamp: Stamp,
    checked: Instant,
}

/// The certificate resolver of the TLS server config.
pub struct CertReloader {
    cert: Pem,
    key: Pem,
    provider: Arc<CryptoProvider>,
    state: Mutex<State>,
    on_error: OnceLock<ErrorHook>,
}

impl std::fmt::Debug for CertReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertReloader")
            .field("cert", &self.cert)
            .finish_non_exhaustive()
    }
}

/// Read a certificate chain and its key; the message says what is wrong.
pub fn load_pair(cert: &Pem, key: &Pem, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let chain = CertificateDer::pem_slice_iter(&cert.bytes()?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("certificate: {e}"))?;
    if chain.is_empty() {
        return Err("certificate: no PEM certificate found".into());
    }
    let key = PrivateKeyDer::from_pem_slice(&key.bytes()?).map_err(|e| format!("key: {e}"))?;
    CertifiedKey::from_der(chain, key, provider)
        .map_err(|e| format!("certificate and key do not match: {e}"))
}

impl CertReloader {
    /// Load the pair now (errors refuse the config at start-up).
    pub fn new(cert: Pem, key: Pem, provider: Arc<CryptoProvider>) -> Result<CertReloader, String> {
        let stamp = (cert.stamp(), key.stamp());
        let current = Arc::new(load_pair(&cert, &key, &provider)?);
        Ok(CertReloader {
            cert,
            key,
            provider,
            state: Mutex::new(State {
                current,
                stamp,
                checked: Instant::now(),
            }),
            on_error: OnceLock::new(),
        })
    }

    /// Where failed reloads are counted (set once, when the server starts).
    pub fn on_error(&self, hook: ErrorHook) {
        let _ = self.on_error.set(hook);
    }

    /// The pair to present, reloaded first if the files changed.
    pub fn current(&self) -> Option<Arc<CertifiedKey>> {
        let mut st = self.state.lock().ok()?;
        if st.checked.elapsed() < CHECK_EVERY {
            return Some(st.current.clone());
        }
        st.checked = Instant::now();
        let stamp = (self.cert.stamp(), self.key.stamp());
        if stamp == st.stamp {
            return Some(st.current.clone());
        }
        // Remember the new identity either way: a broken pair is reported once, and retried
        // when the files change again (a half-written rotation completes).
        st.stamp = stamp;
        match load_pair(&self.cert, &self.key, &self.provider) {
            Ok(k) => {
                tracing::info!(cert = ?self.cert, "TLS certificate reloaded.");
                st.current = Arc::new(k);
            }
            Err(e) => {
                tracing::warn!(cert = ?self.cert, error = %e, "TLS certificate not reloaded; still \
                    serving the previous one.");
                if let Some(hook) = self.on_error.get() {
                    hook("tls_reload");
                }
            }
        }
        Some(st.current.clone())
    }
}

impl ResolvesServerCert for CertReloader {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn pair(cn: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut p = rcgen::CertificateParams::new(vec!["localhost".into()]).expect("params");
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        (
            p.self_signed(&key).expect("cert").pem(),
            key.serialize_pem(),
        )
    }

    #[test]
    fn a_new_pair_is_picked_up_and_a_bad_one_keeps_the_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (c, k) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
        let (c1, k1) = pair("one");
        std::fs::write(&c, &c1).expect("write");
        std::fs::write(&k, &k1).expect("write");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let r =
            CertReloader::new(Pem::File(c.clone()), Pem::File(k.clone()), provider).expect("load");
        let errors = Arc::new(AtomicUsize::new(0));
        let e2 = errors.clone();
        r.on_error(Box::new(move |_| {
            e2.fetch_add(1, Ordering::Relaxed);
        }));
        let first = r.current().expect("pair").cert[0].clone();
        let force = || r.state.lock().expect("lock").checked -= CHECK_EVERY;

        // A certificate whose key is not there yet: the old pair stays.
        let (c2, k2) = pair("two");
        std::fs::write(&c, &c2).expect("write");
        force();
        assert_eq!(r.current().expect("pair").cert[0], first);
        assert_eq!(errors.load(Ordering::Relaxed), 1);

        std::fs::write(&k, &k2).expect("write");
        force();
        let second = r.current().expect("pair").cert[0].clone();
        assert_ne!(second, first);
        assert_eq!(errors.load(Ordering::Relaxed), 1);
    }
}
