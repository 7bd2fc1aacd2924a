//! The `otlp` section: pushing the model to an OpenTelemetry collector. Unset keys fall back to
//! the standard `OTEL_EXPORTER_OTLP_*` variables (`otlp_env.rs`, resolved when the
//! configuration is loaded); the reference of these keys is in `docs/otlp.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::parse::redact_values;

/// OTLP wire protocol.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// OTLP over gRPC (default port 4317).
    #[serde(rename = "grpc")]
    Grpc,
    /// OTLP over HTTP with protobuf bodies (default port 4318).
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// Aggregation temporality of exported sums and histograms.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Temporality {
    /// Totals since the start (what Prometheus users expect).
    Cumulative,
    /// Changes since the previous export.
    Delta,
}

/// OTLP push. Unset fields fall back to the standard `OTEL_EXPORTER_OTLP_*` variables.
#[derive(Debug, Clone, Serialize)]
pub struct OtlpConfig {
    /// Collector endpoint, e.g. `http://otel-collector:4317`. Unset (and no
    /// `OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT`) disables OTLP.
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf`.
    pub protocol: Option<OtlpProtocol>,
    /// Extra request headers (auth tokens), `{name: value}`. Values are never printed.
    #[serde(serialize_with = "redact_values")]
    pub headers: BTreeMap<String, String>,
    /// Per-export timeout.
    #[serde(with = "humantime_serde::option")]
    pub timeout: Option<Duration>,
    /// Time between exports.
    #[serde(with = "humantime_serde::option")]
    pub interval: Option<Duration>,
    /// `cumulative` (default) or `delta`.
    pub temporality: Temporality,
    /// PEM bundle of CAs to trust for the collector's TLS certificate.
    pub ca_file: Option<PathBuf>,
}

impl Default for OtlpConfig {
    fn default() -> Self {
        OtlpConfig {
            endpoint: None,
            protocol: None,
            headers: BTreeMap::new(),
            timeout: None,
            interval: None,
            temporality: Temporality::Cumulative,
            ca_file: None,
        }
    }
}
