//! The `opentelemetry-otlp` exporter for the resolved settings: gRPC (tonic) or HTTP/protobuf
//! (through our rustls `reqwest` client, so a custom CA and non-2xx answers are handled here).
//!
//! Both are given every setting explicitly, so the crate's own reading of `OTEL_*` variables
//! cannot override our config; headers are (re)applied last for the same reason.

use std::collections::HashMap;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, Protocol, WithExportConfig, WithHttpConfig, WithTonicConfig,
};
use opentelemetry_sdk::metrics::Temporality as SdkTemporality;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Certificate, ClientTlsConfig};

use super::resolve::Resolved;
use super::OtlpError;
use crate::config::{OtlpProtocol, Temporality};

/// Build the exporter. Needs a Tokio runtime (the gRPC channel connects lazily on it).
pub fn build(r: &Resolved) -> Result<MetricExporter, OtlpError> {
    let temporality = match r.temporality {
        Temporality::Cumulative => SdkTemporality::Cumulative,
        Temporality::Delta => SdkTemporality::Delta,
    };
    let built = match r.protocol {
        OtlpProtocol::Grpc => {
            let mut md = MetadataMap::new();
            for (k, v) in &r.headers {
                let key = MetadataKey::from_bytes(k.as_bytes())
                    .map_err(|_| OtlpError::Build(format!("header name {k:?}")))?;
                let val = MetadataValue::try_from(v.as_str())
                    .map_err(|_| OtlpError::Build(format!("header {k:?} value")))?;
                md.insert(key, val);
            }
            let mut b = MetricExporter::builder()
                .with_tonic()
                .with_endpoint(r.endpoint.clone())
                .with_protocol(Protocol::Grpc)
                .with_timeout(r.timeout)
                .with_interceptor(Headers(md));
            if r.endpoint.starts_with("https://") {
                let mut tls = ClientTlsConfig::new().with_webpki_roots();
                if let Some((_, pem)) = &r.ca {
                    tls = tls.ca_certificate(Certificate::from_pem(pem));
                }
                b = b.with_tls_config(tls);
            }
            b.with_temporality(temporality).build()
        }
        OtlpProtocol::HttpProtobuf => {
            let mut cb = reqwest::Client::builder()
                .timeout(r.timeout)
                .use_rustls_tls();
            if let Some((path, pem)) = &r.ca {
                let certs = reqwest::Certificate::from_pem_bundle(pem)
                    .map_err(|e| OtlpError::Build(format!("CA file {}: {e}", path.display())))?;
                for c in certs {
                    cb = cb.add_root_certificate(c);
                }
            }
            let client = cb
                .build()
                .map_err(|e| OtlpError::Build(format!("HTTP client: {e}")))?;
            let mut headers = http::HeaderMap::new();
            for (k, v) in &r.headers {
                let name = http::HeaderName::from_bytes(k.as_bytes())
                    .map_err(|_| OtlpError::Build(format!("header name {k:?}")))?;
                let val = http::HeaderValue::from_str(v)
                    .map_err(|_| OtlpError::Build(format!("header {k:?} value")))?;
                headers.insert(name, val);
            }
            MetricExporter::builder()
                .with_http()
                .with_endpoint(r.endpoint.clone())
                .with_protocol(Protocol::HttpBinary)
                .with_timeout(r.timeout)
                .with_headers(HashMap::new())
                .with_http_client(Sender { client, headers })
                .with_temporality(temporality)
                .build()
        }
    };
    built.map_err(|e| OtlpError::Build(e.to_string()))
}

/// Sets our gRPC metadata on every request. Runs after the crate has added
/// `OTEL_EXPORTER_OTLP_HEADERS`, so ours win.
#[derive(Clone)]
struct Headers(MetadataMap);

impl tonic::service::Interceptor for Headers {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        for kv in self.0.iter() {
            if let tonic::metadata::KeyAndValueRef::Ascii(k, v) = kv {
                req.metadata_mut().insert(k.clone(), v.clone());
            }
        }
        Ok(req)
    }
}

/// OTLP/HTTP over the project's `reqwest` client. Unlike the crate's clients, a non-2xx answer
/// is an error (so it is retried and counted), and our headers are applied last.
#[derive(Debug)]
struct Sender {
    client: reqwest::Client,
    headers: http::HeaderMap,
}

#[async_trait::async_trait]
impl HttpClient for Sender {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (mut parts, body) = request.into_parts();
        for (k, v) in &self.headers {
            parts.headers.insert(k.clone(), v.clone());
        }
        let resp = self
            .client
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let status = resp.status();
        let body = resp.bytes().await?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Err(format!("HTTP status {status}: {text}").into());
        }
        Ok(Response::builder().status(status).body(body)?)
    }
}
