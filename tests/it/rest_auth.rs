//! Spark UIs behind an auth filter or HTTPS: basic auth from a password file, bearer tokens,
//! extra headers and a custom CA, checked by a server that records what it was sent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::model::Model;
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::sources::rest::poll_once;
use spark_exporter::telemetry::Telemetry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves `[]` for `/api/v1/applications*` when `check` accepts the request head, else 401.
/// Records every request head.
async fn server<F>(
    check: F,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (String, Arc<Mutex<Vec<String>>>)
where
    F: Fn(&str) -> bool + Send + Sync + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = l.local_addr().expect("addr").port();
    let heads = Arc::new(Mutex::new(vec![]));
    let (h, check) = (heads.clone(), Arc::new(check));
    let scheme = if tls.is_some() { "https" } else { "http" };
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            let (h, check, tls) = (h.clone(), check.clone(), tls.clone());
            tokio::spawn(async move {
                let mut s: Box<dyn Io> = match tls {
                    Some(a) => match a.accept(s).await {
                        Ok(t) => Box::new(t),
                        Err(_) => return,
                    },
                    None => Box::new(s),
                };
                let mut buf = vec![0u8; 8192];
                let mut n = 0;
                while !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => n += k,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let ok = check(&head.to_ascii_lowercase());
                h.lock().expect("lock").push(head);
                let resp = if ok {
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: \
                        2\r\nconnection: close\r\n\r\n[]"
                } else {
                    "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                };
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    (format!("{scheme}://localhost:{port}"), heads)
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Io for T {}

fn settings(url: &str) -> Settings {
    let mut s = Settings::default();
    SparkConfig::of_mut(&mut s).urls = vec![url.to_string()];
    SparkConfig::of_mut(&mut s).timeout = Duration::from_secs(5);
    s
}

async fn poll(s: Settings) -> Result<(), String> {
    let t = Arc::new(Telemetry::default());
    let m = Model::new(&s, t.clone());
    let observer = Arc::new(m.observer(spark_exporter::sources::source("rest")));
    poll_once(Arc::new(s), observer, t)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn basic_auth_from_a_password_file_and_extra_headers_are_sent() {
    // "spark:s3cret" in base64.
    let (url, heads) = server(
        |h| h.contains("authorization: basic c3bhcms6cznjcmv0") && h.contains("x-tenant: blue"),
        None,
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "s3cret\n").expect("write");
    let mut s = settings(&url);
    SparkConfig::of_mut(&mut s).auth.username = Some("spark".into());
    SparkConfig::of_mut(&mut s).auth.password_file = Some(pw.clone());
    SparkConfig::of_mut(&mut s)
        .auth
        .headers
        .insert("X-Tenant".into(), "blue".into());
    poll(s.clone())
        .await
        .expect("accepted with the right password");
    assert!(!heads.lock().expect("lock").is_empty());

    std::fs::write(&pw, "wrong\n").expect("write");
    let err = poll(s).await.expect_err("wrong password");
    assert!(err.contains("401"), "{err}");
    assert!(
        !err.contains("wrong"),
        "the secret must not appear in errors: {err}"
    );
}

#[tokio::test]
async fn a_bearer_token_is_sent() {
    let (url, _) = server(|h| h.contains("authorization: bearer tok-123"), None).await;
    let mut s = settings(&url);
    SparkConfig::of_mut(&mut s).auth.bearer_token = Some("tok-123".into());
    poll(s).await.expect("accepted with the token");
    let (url, _) = server(|h| h.contains("authorization: bearer tok-123"), None).await;
    poll(settings(&url)).await.expect_err("rejected without it");
}

#[tokio::test]
async fn https_with_a_custom_ca_bundle() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    use tokio_rustls::rustls;
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(vec![]).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec!["localhost".into()])
        .expect("params")
        .signed_by(&key, &ca_cert, &ca_key)
        .expect("cert");
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key der"),
    )
    .expect("server config");
    let (url, heads) = server(
        |_| true,
        Some(tokio_rustls::TlsAcceptor::from(Arc::new(cfg))),
    )
    .await;

    let err = poll(settings(&url)).await.expect_err("untrusted CA");
    assert!(err.contains("connect"), "{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca_cert.pem()).expect("write");
    let mut s = settings(&url);
    SparkConfig::of_mut(&mut s).auth.ca_file = Some(ca_file);
    poll(s).await.expect("trusted with the CA bundle");
    assert!(!heads.lock().expect("lock").is_empty());
}
