//! `client_allowed_sans`: after the client certificate is verified against the CA, its Subject
//! Alternative Names (DNS, IP, e-mail, URI, as exporter-toolkit collects them) must include one
//! of the allowed strings exactly, else the handshake fails. The SANs are read from the
//! certificate's DER with the few lines of parsing below (webpki exposes DNS and URI names only).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};
use tokio_rustls::rustls;

/// One DER element: its tag, its content and what follows it. `None` on malformed input.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The content of the first element with `tag` in a sequence's content.
fn find(mut content: &[u8], tag: u8) -> Option<&[u8]> {
    while !content.is_empty() {
        let (t, c, rest) = tlv(content)?;
        if t == tag {
            return Some(c);
        }
        content = rest;
    }
    None
}

/// `id-ce-subjectAltName` (2.5.29.17), DER-encoded.
const SAN_OID: &[u8] = &[0x55, 0x1d, 0x11];

/// The certificate's SANs as strings (IP addresses as Go prints them: IPv4-mapped IPv6 in
/// dotted form). Empty when there are none or the certificate cannot be read.
pub fn names(cert: &[u8]) -> Vec<String> {
    san_names(cert).unwrap_or_default()
}

fn san_names(cert: &[u8]) -> Option<Vec<String>> {
    let (_, cert, _) = tlv(cert)?;
    let (_, tbs, _) = tlv(cert)?;
    // Extensions are the explicit [3] field of TBSCertificate.
    let exts = find(tbs, 0xa3)?;
    let (_, mut exts, _) = tlv(exts)?;
    while !exts.is_empty() {
        let (_, ext, rest) = tlv(exts)?;
        exts = rest;
        if find(ext, 0x06) != Some(SAN_OID) {
            continue;
        }
        let (_, mut general, _) = tlv(find(ext, 0x04)?)?;
        let mut out = vec![];
        // GeneralNames: implicit tags [1] rfc822Name, [2] dNSName, [6] URI, [7] iPAddress.
        while !general.is_empty() {
            let (tag, v, rest) = tlv(general)?;
            general = rest;
            match tag {
                0x81 | 0x82 | 0x86 => out.push(String::from_utf8_lossy(v).into_owned()),
                0x87 => {
                    if let Ok(b) = <[u8; 4]>::try_from(v) {
                        out.push(Ipv4Addr::from(b).to_string());
                    } else if let Ok(b) = <[u8; 16]>::try_from(v) {
                        let ip = Ipv6Addr::from(b);
                        out.push(match ip.to_ipv4_mapped() {
                            Some(v4) => v4.to_string(),
                            None => ip.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        return Some(out);
    }
    None
}

/// A client-certificate verifier that also requires an allowed SAN.
#[derive(Debug)]
pub struct SanCheck {
    /// The CA verification that runs first.
    pub inner: Arc<dyn ClientCertVerifier>,
    /// `client_allowed_sans`.
    pub allowed: Vec<String>,
}

impl ClientCertVerifier for SanCheck {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let ok = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        let found = names(end_entity);
        if found.iter().any(|n| self.allowed.contains(n)) {
            Ok(ok)
        } else {
            tracing::debug!(sans = ?found, "Client certificate refused: no allowed SAN.");
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, KeyPair, SanType};

    #[test]
    fn every_kind_of_san_is_read() {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::new(vec!["scraper.example".into()]).expect("params");
        p.subject_alt_names.extend([
            SanType::IpAddress("10.1.2.3".parse().expect("ip")),
            SanType::IpAddress("fd00::1".parse().expect("ip")),
            SanType::Rfc822Name("ops@example.com".try_into().expect("email")),
            SanType::URI(
                "spiffe://cluster/ns/monitoring/sa/prometheus"
                    .try_into()
                    .expect("uri"),
            ),
        ]);
        let cert = p.self_signed(&key).expect("cert");
        assert_eq!(
            names(cert.der()),
            [
                "scraper.example",
                "10.1.2.3",
                "fd00::1",
                "ops@example.com",
                "spiffe://cluster/ns/monitoring/sa/prometheus"
            ]
        );
    }

    #[test]
    fn garbage_has_no_names() {
        assert!(names(&[]).is_empty());
        assert!(names(&[0x30, 0x82, 0xff]).is_empty());
        let key = KeyPair::generate().expect("key");
        let cert = CertificateParams::new(vec![])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        assert!(names(cert.der()).is_empty());
    }
}
