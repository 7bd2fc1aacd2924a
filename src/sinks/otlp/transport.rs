//! Sending one `ExportMetricsServiceRequest` (the official `opentelemetry-proto` type) to the
//! collector: OTLP/gRPC with tonic's `MetricsServiceClient`, or OTLP/HTTP as a protobuf `POST`
//! with the project's `reqwest` client. TLS is rustls (ring) with the Mozilla roots plus the
//! configured CA file; no OpenSSL.
//!
//! Every setting comes from [`Resolved`] only (endpoint, headers, timeout, CA), so nothing here
//! reads `OTEL_*` variables behind the config's back. Failures are classified as the OTLP spec
//! says: retryable (connection errors, timeouts, HTTP 429/502/503/504, the gRPC codes listed in
//! [`grpc_retryable`]) or permanent, with the server's throttling hint (HTTP `Retry-After`, gRPC
//! `RetryInfo`) when it gives one.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_client::MetricsServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use prost::Message;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::error::OtlpError;
use crate::config::otlp_env::Resolved;
use crate::config::OtlpProtocol;

/// `User-Agent` of both transports.
pub const USER_AGENT: &str = concat!("spark-exporter/", env!("CARGO_PKG_VERSION"));
/// Content type of OTLP/HTTP protobuf requests.
pub const PROTOBUF: &str = "application/x-protobuf";

/// A failed export: what happened, and whether the same data may be sent again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExportError {
    /// For the log (never header values).
    pub message: String,
    /// Transient (connection, timeout, overload): retry with backoff. Otherwise the collector
    /// refused this request for good and sending it again would fail the same way.
    pub retryable: bool,
    /// The collector's own "not before" (HTTP `Retry-After`, gRPC `RetryInfo`).
    pub retry_after: Option<Duration>,
}

impl ExportError {
    /// A transient failure with no hint from the server.
    pub fn transient(message: impl Into<String>) -> ExportError {
        ExportError {
            message: message.into(),
            retryable: true,
            retry_after: None,
        }
    }
}

/// Something that sends export requests: the real [`Transport`], or a test's fake.
pub trait Export: Send + Sync + 'static {
    /// Send one request; `Ok` once the collector accepted it (a partial success is logged, and
    /// is a success: the spec says not to retry it).
    fn export(
        &self,
        req: ExportMetricsServiceRequest,
    ) -> impl Future<Output = Result<(), ExportError>> + Send;
}

/// The transport for the configured protocol.
#[derive(Debug)]
pub enum Transport {
    /// OTLP/gRPC.
    Grpc(Grpc),
    /// OTLP/HTTP with protobuf bodies.
    Http(Http),
}

/// Build the transport. Needs a Tokio runtime (the gRPC channel connects lazily on it).
pub fn build(r: &Resolved) -> Result<Transport, OtlpError> {
    match r.protocol {
        OtlpProtocol::Grpc => Grpc::new(r).map(Transport::Grpc),
        OtlpProtocol::HttpProtobuf => Http::new(r).map(Transport::Http),
    }
}

impl Export for Transport {
    async fn export(&self, req: ExportMetricsServiceRequest) -> Result<(), ExportError> {
        match self {
            Transport::Grpc(g) => g.export(req).await,
            Transport::Http(h) => h.export(req).await,
        }
    }
}

/// Log a partial success (some points rejected): the spec says it must not be retried.
fn partial_success(p: Option<ExportMetricsPartialSuccess>) {
    if let Some(p) = p.filter(|p| p.rejected_data_points > 0 || !p.error_message.is_empty()) {
        tracing::warn!(
            rejected_data_points = p.rejected_data_points,
            error = %p.error_message,
            "The OTLP collector accepted the export only in part."
        );
    }
}

/// An error and its sources, one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

// ---------------------------------------------------------------------------------------------
// gRPC

/// OTLP/gRPC: `opentelemetry.proto.collector.metrics.v1.MetricsService/Export` over a lazily
/// connected tonic channel (it reconnects by itself after the collector comes back).
#[derive(Debug)]
pub struct Grpc {
    client: MetricsServiceClient<Channel>,
    metadata: MetadataMap,
    timeout: Duration,
}

impl Grpc {
    fn new(r: &Resolved) -> Result<Grpc, OtlpError> {
        let mut metadata = MetadataMap::new();
        for (k, v) in &r.headers {
            let key = MetadataKey::from_bytes(k.as_bytes())
                .map_err(|_| OtlpError::Build(format!("header name {k:?}")))?;
            let val = MetadataValue::try_from(v.as_str())
                .map_err(|_| OtlpError::Build(format!("header {k:?} value")))?;
            metadata.insert(key, val);
        }
        let build = |e: tonic::transport::Error| OtlpError::Build(chain(&e));
        let mut endpoint = Endpoint::from_shared(r.endpoint.clone())
            .map_err(build)?
            .user_agent(USER_AGENT)
            .map_err(build)?
            .timeout(r.timeout)
            .connect_timeout(r.timeout);
        if r.endpoint.starts_with("https://") {
            let mut tls = ClientTlsConfig::new().with_webpki_roots();
            if let Some((_, pem)) = &r.ca {
                tls = tls.ca_certificate(Certificate::from_pem(pem));
            }
            endpoint = endpoint.tls_config(tls).map_err(build)?;
        }
        Ok(Grpc {
            client: MetricsServiceClient::new(endpoint.connect_lazy()),
            metadata,
            timeout: r.timeout,
        })
    }

    async fn export(&self, req: ExportMetricsServiceRequest) -> Result<(), ExportError> {
        let mut request = tonic::Request::new(req);
        *request.metadata_mut() = self.metadata.clone();
        // `grpc-timeout`, so the collector knows the deadline too.
        request.set_timeout(self.timeout);
        match self.client.clone().export(request).await {
            Ok(resp) => {
                partial_success(resp.into_inner().partial_success);
                Ok(())
            }
            Err(status) => Err(grpc_error(&status)),
        }
    }
}

/// Whether a gRPC status may be retried (OTLP spec, "OTLP/gRPC Response"): `RESOURCE_EXHAUSTED`
/// only when the server says when (`RetryInfo`); `UNKNOWN` when it is a client-side failure
/// tonic could not classify (it then has a source error; a server's `UNKNOWN` has none).
pub fn grpc_retryable(status: &tonic::Status, retry_info: bool) -> bool {
    use tonic::Code;
    match status.code() {
        Code::Cancelled
        | Code::DeadlineExceeded
        | Code::Aborted
        | Code::OutOfRange
        | Code::Unavailable
        | Code::DataLoss => true,
        Code::ResourceExhausted => retry_info,
        Code::Unknown => std::error::Error::source(status).is_some(),
        _ => false,
    }
}

fn grpc_error(status: &tonic::Status) -> ExportError {
    let retry_after = retry_delay(status.details());
    let mut message = format!("gRPC status {:?}: {}", status.code(), status.message());
    if let Some(src) = std::error::Error::source(status) {
        message.push_str(": ");
        message.push_str(&chain(src));
    }
    ExportError {
        message,
        retryable: grpc_retryable(status, retry_after.is_some()),
        retry_after,
    }
}

/// `google.rpc.Status`, as carried in `grpc-status-details-bin` (only what is read here).
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(message, repeated, tag = "3")]
    details: Vec<ProtoAny>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoAny {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

/// `google.rpc.RetryInfo`.
#[derive(Clone, PartialEq, prost::Message)]
struct RetryInfo {
    #[prost(message, optional, tag = "1")]
    retry_delay: Option<ProtoDuration>,
}

/// `google.protobuf.Duration`.
#[derive(Clone, PartialEq, prost::Message)]
struct ProtoDuration {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

/// The `RetryInfo.retry_delay` in a status's details, if any.
fn retry_delay(details: &[u8]) -> Option<Duration> {
    let status = RpcStatus::decode(details).ok()?;
    let any = status
        .details
        .iter()
        .find(|a| a.type_url.ends_with("/google.rpc.RetryInfo"))?;
    let d = RetryInfo::decode(any.value.as_slice()).ok()?.retry_delay?;
    Some(Duration::new(
        u64::try_from(d.seconds).ok()?,
        u32::try_from(d.nanos).ok()?,
    ))
}

// ---------------------------------------------------------------------------------------------
// HTTP

/// OTLP/HTTP: `POST <endpoint>` (which ends in `/v1/metrics`, see `resolve`) with the
/// protobuf-encoded request.
#[derive(Debug)]
pub struct Http {
    client: reqwest::Client,
    url: String,
    headers: http::HeaderMap,
}

impl Http {
    fn new(r: &Resolved) -> Result<Http, OtlpError> {
        let mut cb = reqwest::Client::builder()
            .timeout(r.timeout)
            .connect_timeout(r.timeout)
            .user_agent(USER_AGENT)
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
            .map_err(|e| OtlpError::Build(format!("HTTP client: {}", chain(&e))))?;
        let mut headers = http::HeaderMap::new();
        for (k, v) in &r.headers {
            let name = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| OtlpError::Build(format!("header name {k:?}")))?;
            let val = http::HeaderValue::from_str(v)
                .map_err(|_| OtlpError::Build(format!("header {k:?} value")))?;
            headers.insert(name, val);
        }
        // The protocol's content type wins over a configured one.
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(PROTOBUF),
        );
        Ok(Http {
            client,
            url: r.endpoint.clone(),
            headers,
        })
    }

    async fn export(&self, req: ExportMetricsServiceRequest) -> Result<(), ExportError> {
        let resp = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .body(req.encode_to_vec())
            .send()
            .await
            .map_err(|e| ExportError::transient(format!("HTTP request: {}", chain(&e))))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = resp
            .bytes()
            .await
            .map_err(|e| ExportError::transient(format!("HTTP response body: {}", chain(&e))))?;
        http_outcome(status, retry_after, &body)
    }
}

/// The outcome of an OTLP/HTTP answer (OTLP spec, "OTLP/HTTP Response"): 2xx is a success;
/// 429, 502, 503 and 504 may be retried (after `Retry-After` seconds when given); any other
/// status is permanent.
pub fn http_outcome(
    status: http::StatusCode,
    retry_after: Option<Duration>,
    body: &Bytes,
) -> Result<(), ExportError> {
    if status.is_success() {
        if let Ok(r) = ExportMetricsServiceResponse::decode(body.as_ref()) {
            partial_success(r.partial_success);
        }
        return Ok(());
    }
    let retryable = matches!(status.as_u16(), 429 | 502 | 503 | 504);
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
    Err(ExportError {
        message: format!("HTTP status {status}: {text}"),
        retryable,
        retry_after: retry_after.filter(|_| retryable),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_are_classified_as_the_spec_says() {
        let body = Bytes::from_static(b"nope");
        for (code, retry) in [
            (429, true),
            (502, true),
            (503, true),
            (504, true),
            (400, false),
            (401, false),
            (404, false),
            (413, false),
            (500, false),
        ] {
            let status = http::StatusCode::from_u16(code).unwrap();
            let e = http_outcome(status, Some(Duration::from_secs(3)), &body).unwrap_err();
            assert_eq!(e.retryable, retry, "{code}");
            assert_eq!(e.retry_after.is_some(), retry, "{code}");
            assert!(e.message.contains(&code.to_string()) && e.message.contains("nope"));
        }
        assert!(http_outcome(http::StatusCode::OK, None, &Bytes::new()).is_ok());
        let partial = ExportMetricsServiceResponse {
            partial_success: Some(ExportMetricsPartialSuccess {
                rejected_data_points: 2,
                error_message: "bad points".into(),
            }),
        };
        assert!(
            http_outcome(http::StatusCode::OK, None, &partial.encode_to_vec().into()).is_ok(),
            "a partial success is not retried"
        );
    }

    #[test]
    fn grpc_codes_and_retry_info() {
        use tonic::{Code, Status};
        for (code, retry) in [
            (Code::Unavailable, true),
            (Code::Cancelled, true),
            (Code::DeadlineExceeded, true),
            (Code::Aborted, true),
            (Code::OutOfRange, true),
            (Code::DataLoss, true),
            (Code::ResourceExhausted, false),
            (Code::InvalidArgument, false),
            (Code::Unauthenticated, false),
            (Code::PermissionDenied, false),
            (Code::Unimplemented, false),
            (Code::Unknown, false),
        ] {
            let e = grpc_error(&Status::new(code, "m"));
            assert_eq!(e.retryable, retry, "{code:?}");
            assert_eq!(e.retry_after, None);
        }
        let info = RetryInfo {
            retry_delay: Some(ProtoDuration {
                seconds: 2,
                nanos: 500_000_000,
            }),
        };
        let details = RpcStatus {
            details: vec![ProtoAny {
                type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
                value: info.encode_to_vec(),
            }],
        };
        let s = Status::with_details(
            Code::ResourceExhausted,
            "slow down",
            details.encode_to_vec().into(),
        );
        let e = grpc_error(&s);
        assert!(e.retryable, "RESOURCE_EXHAUSTED with RetryInfo");
        assert_eq!(e.retry_after, Some(Duration::from_millis(2500)));
        let client_side = Status::from_error(Box::new(std::io::Error::other("broken pipe")));
        assert_eq!(client_side.code(), Code::Unknown);
        assert!(grpc_error(&client_side).retryable, "client-side UNKNOWN");
    }
}
