//! `--web.config.file`: a real TLS client (reqwest + rustls) against the real binary, with right
//! and wrong credentials, and mutual TLS.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use support::command::exporter_command;
use support::proc::start_with_web_config as start;

struct Pki {
    ca_pem: String,
    client_cert: String,
    client_key: String,
}

/// A CA, a server certificate for 127.0.0.1/localhost and a client certificate, written to `dir`.
fn make_pki(dir: &Path) -> Pki {
    let ca_key = KeyPair::generate().expect("ca key");
    let mut ca = CertificateParams::new(vec![]).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "test ca");
    let ca_cert = ca.self_signed(&ca_key).expect("ca cert");

    let srv_key = KeyPair::generate().expect("server key");
    let srv = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).expect("params");
    let srv_cert = srv
        .signed_by(&srv_key, &ca_cert, &ca_key)
        .expect("server cert");

    let cl_key = KeyPair::generate().expect("client key");
    let mut cl = CertificateParams::new(vec![]).expect("params");
    cl.distinguished_name.push(DnType::CommonName, "prometheus");
    let cl_cert = cl
        .signed_by(&cl_key, &ca_cert, &ca_key)
        .expect("client cert");

    std::fs::write(dir.join("ca.crt"), ca_cert.pem()).expect("write");
    std::fs::write(dir.join("server.crt"), srv_cert.pem()).expect("write");
    std::fs::write(dir.join("server.key"), srv_key.serialize_pem()).expect("write");
    Pki {
        ca_pem: ca_cert.pem(),
        client_cert: cl_cert.pem(),
        client_key: cl_key.serialize_pem(),
    }
}

fn client(pki: &Pki, with_cert: bool) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).expect("ca"))
        .timeout(Duration::from_secs(10));
    if with_cert {
        let pem = format!("{}{}", pki.client_cert, pki.client_key);
        b = b.identity(reqwest::Identity::from_pem(pem.as_bytes()).expect("identity"));
    }
    b.build().expect("client")
}

#[tokio::test]
async fn tls_and_basic_auth_reject_wrong_credentials_and_accept_right_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = make_pki(dir.path());
    let hash = bcrypt::hash("s3cret", 6).expect("bcrypt");
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: \
                server.key\nbasic_auth_users:\n  prometheus: '{hash}'\n"
        ),
    )
    .expect("write");
    let (_p, port) = start(&cfg);
    let url = format!("https://localhost:{port}/metrics");
    let c = client(&pki, false);

    let r = c.get(&url).send().await.expect("request");
    assert_eq!(r.status(), 401, "no credentials");
    assert!(r.headers().contains_key("www-authenticate"));
    let r = c
        .get(&url)
        .basic_auth("prometheus", Some("wrong"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401, "wrong password");
    let r = c
        .get(&url)
        .basic_auth("nobody", Some("s3cret"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401, "unknown user");
    let r = c
        .get(&url)
        .basic_auth("prometheus", Some("s3cret"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200, "right credentials");
    assert!(r
        .text()
        .await
        .expect("body")
        .contains("spark_exporter_build_info"));
    // Probes stay open for the kubelet.
    let r = c
        .get(format!("https://localhost:{port}/healthz"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    // Plain HTTP to the TLS port gets no metrics.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .basic_auth("prometheus", Some("s3cret"))
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    assert!(
        plain.map(|r| r.status() != 200).unwrap_or(true),
        "plain HTTP must not work"
    );
}

#[tokio::test]
async fn mutual_tls_requires_a_client_certificate_from_the_ca() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = make_pki(dir.path());
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: \
            RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n",
    )
    .expect("write");
    let (_p, port) = start(&cfg);
    let url = format!("https://localhost:{port}/metrics");
    assert!(
        client(&pki, false).get(&url).send().await.is_err(),
        "no client certificate"
    );
    let r = client(&pki, true)
        .get(&url)
        .send()
        .await
        .expect("with client certificate");
    assert_eq!(r.status(), 200);
}

#[test]
fn an_invalid_web_config_exits_64_naming_each_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("web.yml");
    std::fs::write(
        &cfg,
        "tls_server_config:\n  cert_file: missing.crt\nbasic_auth_users:\n  bob: plain\n",
    )
    .expect("write");
    let out = exporter_command(
        &[
            "check-config",
            "--web.config.file",
            cfg.to_str().expect("utf-8"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(64));
    for k in ["cert_file", "key_file", "bob"] {
        assert!(out.stderr.contains(k), "{k} not in {}", out.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_wrong_passwords_stalls_neither_scrapes_nor_probes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Cost 10, as `htpasswd -B` makes: tens to hundreds of milliseconds per check.
    let hash = bcrypt::hash("s3cret", 10).expect("bcrypt");
    let cfg = dir.path().join("web.yml");
    std::fs::write(&cfg, format!("basic_auth_users:\n  prometheus: '{hash}'\n")).expect("write");
    let (_p, port) = start(&cfg);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    // Prometheus, already verified once.
    let r = c
        .get(&url)
        .basic_auth("prometheus", Some("s3cret"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);

    // 16 attackers, each trying new passwords as fast as they are answered, for 5 s.
    let stop = Instant::now() + Duration::from_secs(5);
    let mut attackers = tokio::task::JoinSet::new();
    for a in 0..16 {
        let (c, url) = (c.clone(), url.clone());
        attackers.spawn(async move {
            let mut n = 0u32;
            while Instant::now() < stop {
                let r = c
                    .get(&url)
                    .basic_auth("prometheus", Some(format!("guess-{a}-{n}")))
                    .send()
                    .await;
                assert!(r.map(|r| r.status() == 401).unwrap_or(true));
                n += 1;
            }
            n
        });
    }
    // Meanwhile the kubelet and Prometheus are answered at once.
    let mut slowest = Duration::ZERO;
    while Instant::now() < stop {
        for (path, auth) in [("/healthz", false), ("/metrics", true)] {
            let t = Instant::now();
            let mut req = c.get(format!("http://127.0.0.1:{port}{path}"));
            if auth {
                req = req.basic_auth("prometheus", Some("s3cret"));
            }
            let r = req.send().await.expect("request");
            assert_eq!(r.status(), 200, "{path} during the flood");
            let _ = r.bytes().await;
            slowest = slowest.max(t.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let guesses: u32 = attackers.join_all().await.into_iter().sum();
    assert!(
        slowest < Duration::from_millis(500),
        "a probe or scrape took {slowest:?} during {guesses} wrong guesses"
    );
    // Bodies may be up to web.max_staleness (1 s) old.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let text = c
        .get(&url)
        .basic_auth("prometheus", Some("s3cret"))
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("body");
    let refused: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("spark_exporter_http_errors_total{kind=\"unauthorized\"} "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert_eq!(refused, f64::from(guesses), "every refused guess counted");
}
