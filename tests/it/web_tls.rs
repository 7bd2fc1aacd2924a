//! `--web.config.file` parity with exporter-toolkit v0.17.1, against the real binary and a real
//! rustls client: a certificate rotated on disk is presented at the next handshake with no failed
//! scrape; versions, cipher suites, curves, headers and `client_allowed_sans` shape the
//! handshake and the responses; unsupported values exit 64 naming them.

use crate::support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
use rustls::crypto::ring::{cipher_suite as cs, default_provider, kx_group};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use support::command::exporter_command;
use support::proc::start_with_web_config as start;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls;

struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn ca() -> Ca {
    let key = KeyPair::generate().expect("ca key");
    let mut p = CertificateParams::new(vec![]).expect("ca params");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, "test ca");
    Ca {
        cert: p.self_signed(&key).expect("ca cert"),
        key,
    }
}

/// A certificate signed by `ca` (PEM cert, PEM key, DER cert).
fn leaf(ca: &Ca, cn: &str, sans: Vec<SanType>) -> (String, String, Vec<u8>) {
    let key = KeyPair::generate().expect("key");
    let mut p = CertificateParams::new(vec![]).expect("params");
    p.subject_alt_names = sans;
    p.distinguished_name.push(DnType::CommonName, cn);
    let c = p.signed_by(&key, &ca.cert, &ca.key).expect("cert");
    (c.pem(), key.serialize_pem(), c.der().to_vec())
}

fn server_sans() -> Vec<SanType> {
    vec![SanType::DnsName("localhost".try_into().expect("dns"))]
}

/// A client trusting `ca`, with the given provider (suites, groups), versions and identity.
fn client(
    ca: &Ca,
    provider: CryptoProvider,
    versions: &[&'static rustls::SupportedProtocolVersion],
    identity: Option<(&str, &str)>,
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.cert.der().clone()).expect("root");
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(roots);
    let mut cfg = match identity {
        None => b.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = vec![CertificateDer::from_pem_slice(cert.as_bytes()).expect("cert")];
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("key");
            b.with_client_auth_cert(chain, key).expect("identity")
        }
    };
    // Like Prometheus (Go's client keeps no session cache): every connection is a full
    // handshake. A resumed session carries no certificate, so it would show the old one.
    cfg.resumption = rustls::client::Resumption::disabled();
    Arc::new(cfg)
}

/// What one scrape saw.
struct Seen {
    cert: Vec<u8>,
    version: rustls::ProtocolVersion,
    suite: rustls::CipherSuite,
    response: String,
}

/// One handshake and `GET /metrics`; `Err` when either fails or no response comes.
async fn scrape(port: u16, cfg: Arc<rustls::ClientConfig>) -> Result<Seen, String> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").expect("name");
    let mut tls = tokio_rustls::TlsConnector::from(cfg)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let (_, conn) = tls.get_ref();
    let cert = conn.peer_certificates().ok_or("no peer cert")?[0].to_vec();
    let version = conn.protocol_version().ok_or("no version")?;
    let suite = conn.negotiated_cipher_suite().ok_or("no suite")?.suite();
    tls.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut buf = vec![];
    let r = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut buf)).await;
    let response = String::from_utf8_lossy(&buf).into_owned();
    match r {
        Ok(Ok(_)) | Ok(Err(_)) if response.starts_with("HTTP/1.1 200") => Ok(Seen {
            cert,
            version,
            suite,
            response,
        }),
        _ => Err(format!("no 200 response: {r:?} {response:.80}")),
    }
}

/// Write `text` to `path` as a rotation does: a temporary file renamed over the old one.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_certificate_is_served_at_the_next_handshake_without_a_failed_scrape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = ca();
    let (c1, k1, der1) = leaf(&ca, "first", server_sans());
    std::fs::write(dir.path().join("s.crt"), &c1).expect("write");
    std::fs::write(dir.path().join("s.key"), &k1).expect("write");
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n",
    )
    .expect("write");
    let (_p, port) = start(&cfg);
    let cl = client(&ca, default_provider(), rustls::ALL_VERSIONS, None);
    assert_eq!(
        scrape(port, cl.clone()).await.expect("first scrape").cert,
        der1
    );

    // Scrape continuously while the pair is replaced, certificate first (so a handshake may
    // meet a certificate without its key on disk).
    let failures = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let seen_new = Arc::new(AtomicBool::new(false));
    let (c2, k2, der2) = leaf(&ca, "second", server_sans());
    let scraper = {
        let (failures, stop, seen_new, cl) =
            (failures.clone(), stop.clone(), seen_new.clone(), cl.clone());
        let der2 = der2.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match scrape(port, cl.clone()).await {
                    Ok(s) if s.cert == der2 => seen_new.store(true, Ordering::Relaxed),
                    Ok(_) => {}
                    Err(e) => {
                        eprintln!("scrape failed: {e}");
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    replace(&dir.path().join("s.crt"), &c2);
    // The certificate without its key is refused: the old pair stays, the error is counted.
    let reload_error = "spark_exporter_http_errors_total{kind=\"tls_reload\"} 1\n";
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = scrape(port, cl.clone()).await.expect("scrape mid-rotation");
        assert_eq!(s.cert, der1, "a mismatched pair must not be served");
        if s.response.contains(reload_error) {
            break;
        }
        assert!(Instant::now() < deadline, "tls_reload not counted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    replace(&dir.path().join("s.key"), &k2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen_new.load(Ordering::Relaxed) {
        assert!(Instant::now() < deadline, "new certificate never presented");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    scraper.await.expect("scraper");
    assert_eq!(failures.load(Ordering::Relaxed), 0, "a scrape failed");
    let s = scrape(port, cl).await.expect("after rotation");
    assert_eq!(
        s.cert, der2,
        "the next handshake presents the new certificate"
    );
    assert!(s.response.contains(reload_error), "one failed reload only");
}

#[tokio::test]
async fn versions_suites_curves_and_headers_are_honoured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = ca();
    let (c, k, _) = leaf(&ca, "server", server_sans());
    std::fs::write(dir.path().join("s.crt"), &c).expect("write");
    std::fs::write(dir.path().join("s.key"), &k).expect("write");
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n  max_version: TLS12\n  \
         cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n  \
         curve_preferences: [CurveP384]\nhttp_server_config:\n  http2: true\n  headers:\n    \
         X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n",
    )
    .expect("write");
    let (_p, port) = start(&cfg);
    let all = client(&ca, default_provider(), rustls::ALL_VERSIONS, None);
    let s = scrape(port, all).await.expect("scrape");
    assert_eq!(s.version, rustls::ProtocolVersion::TLSv1_2, "max_version");
    assert_eq!(
        s.suite,
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    );
    let head = s.response.to_ascii_lowercase();
    assert!(
        head.contains("\r\nx-frame-options: deny\r\n"),
        "{head:.400}"
    );
    assert!(head.contains("\r\nx-content-type-options: nosniff\r\n"));

    // A client offering only another suite, or only another curve, gets no connection.
    let mut other_suite = default_provider();
    other_suite.cipher_suites = vec![cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256];
    let c = client(&ca, other_suite, &[&rustls::version::TLS12], None);
    assert!(scrape(port, c).await.is_err(), "cipher_suites restricts");
    let mut other_curve = default_provider();
    other_curve.kx_groups = vec![kx_group::X25519];
    let c = client(&ca, other_curve, rustls::ALL_VERSIONS, None);
    assert!(
        scrape(port, c).await.is_err(),
        "curve_preferences restricts"
    );
    let tls13 = client(&ca, default_provider(), &[&rustls::version::TLS13], None);
    assert!(scrape(port, tls13).await.is_err(), "max_version TLS12");
}

#[tokio::test]
async fn client_allowed_sans_refuses_a_certificate_without_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = ca();
    let (c, k, _) = leaf(&ca, "server", server_sans());
    std::fs::write(dir.path().join("s.crt"), &c).expect("write");
    std::fs::write(dir.path().join("s.key"), &k).expect("write");
    std::fs::write(dir.path().join("ca.crt"), ca.cert.pem()).expect("write");
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n  \
         client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  \
         client_allowed_sans: ['spiffe://cluster/sa/prometheus', 'other.example']\n",
    )
    .expect("write");
    let (_p, port) = start(&cfg);
    let uri = SanType::URI("spiffe://cluster/sa/prometheus".try_into().expect("uri"));
    let (gc, gk, _) = leaf(&ca, "prometheus", vec![uri]);
    let dns = SanType::DnsName("intruder.example".try_into().expect("dns"));
    let (bc, bk, _) = leaf(&ca, "intruder", vec![dns]);
    let good = client(
        &ca,
        default_provider(),
        rustls::ALL_VERSIONS,
        Some((&gc, &gk)),
    );
    scrape(port, good).await.expect("allowed SAN");
    let bad = client(
        &ca,
        default_provider(),
        rustls::ALL_VERSIONS,
        Some((&bc, &bk)),
    );
    assert!(scrape(port, bad).await.is_err(), "SAN not allowed");
}

#[test]
fn unsupported_fields_and_values_exit_64_naming_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = ca();
    let (c, k, _) = leaf(&ca, "server", server_sans());
    std::fs::write(dir.path().join("s.crt"), &c).expect("write");
    std::fs::write(dir.path().join("s.key"), &k).expect("write");
    let base = "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n";
    for (extra, named) in [
        (
            "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA]\n",
            "cipher_suites: TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        ),
        (
            "  cipher_suites: [TLS_RSA_WITH_AES_128_GCM_SHA256]\n",
            "cipher_suites: TLS_RSA_WITH_AES_128_GCM_SHA256",
        ),
        (
            "  curve_preferences: [X25519, CurveP521]\n",
            "curve_preferences: CurveP521",
        ),
        ("  max_version: TLS11\n", "max_version: TLS11"),
        ("  session_tickets: true\n", "session_tickets"),
        (
            "http_server_config:\n  headers:\n    Server: x\n",
            "headers.Server",
        ),
    ] {
        let cfg = dir.path().join("web.yml");
        std::fs::write(&cfg, format!("{base}{extra}")).expect("write");
        let out = exporter_command(
            &[
                "check-config",
                "--web.config.file",
                cfg.to_str().expect("utf-8"),
            ],
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(64), "{extra}: {}", out.stderr);
        assert!(out.stderr.contains(named), "{named} not in {}", out.stderr);
    }
}
