//! OTLP push: the same families as `/metrics`, sent to an OpenTelemetry collector over gRPC or
//! HTTP/protobuf.
//!
//! The export request is built directly from the official protobuf types (`opentelemetry-proto`)
//! and sent by our own clients, not by the OpenTelemetry SDK: the SDK's metric data cannot be
//! built outside the SDK since 0.30, and exporting the model's values and histograms exactly
//! needs that.
//!
//! - `resolve`: our `otlp` config over the standard `OTEL_*` variables; the resource.
//! - `mapping`: the table of OTLP names, units, instruments and attribute renames.
//! - [`convert`]: families to protobuf `ResourceMetrics`, exact values, cumulative or delta.
//! - `transport`: the gRPC (tonic) and HTTP (reqwest) clients: TLS with a custom CA, headers,
//!   timeouts, retryable and permanent failures as the OTLP spec defines them.
//! - `push`: the interval loop, retries with backoff, bounded memory, the final export.
//! - [`OtlpError`]: invalid settings, or an exporter that cannot be built.
//! - [`plugin`]: the sink's registry entry.

#[cfg(feature = "internals")]
pub mod convert;
#[cfg(not(feature = "internals"))]
pub(crate) mod convert;
mod error;
mod mapping;
pub mod plugin;
mod push;
mod transport;

use std::sync::Arc;
use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::export::families::collect;
use crate::model::Model;

pub use crate::config::otlp_env::Resolved;
pub use error::OtlpError;

/// Push the model to the configured collector every interval until `shutdown`, then once more
/// (within 5 s); true if that final export was sent. Returns false at once when OTLP is off;
/// logs and returns false on invalid settings. Never panics on collector failures: they are
/// retried, logged and counted.
pub async fn run(
    settings: Arc<Settings>,
    model: Arc<Model>,
    handle: crate::sinks::SinkHandle,
    shutdown: CancellationToken,
) -> bool {
    let telemetry = model.telemetry().clone();
    // Resolved with the configuration, environment included (`config::otlp_env`).
    let Some(r) = settings.otlp_push.clone() else {
        tracing::debug!("No OTLP endpoint configured; OTLP push is off.");
        return false;
    };
    let exporter = match transport::build(&r) {
        Ok(x) => x,
        Err(e) => {
            tracing::error!(error = %e, "OTLP push is off.");
            return false;
        }
    };
    tracing::info!(
        endpoint = %r.endpoint,
        protocol = ?r.protocol,
        interval = %humantime::format_duration(r.interval),
        temporality = ?r.temporality,
        "Pushing metrics over OTLP."
    );
    let opts = push::PushOptions {
        interval: r.interval,
        timeout: r.timeout,
        temporality: r.temporality,
        resource: r.resource.clone(),
        endpoint: r.endpoint.clone(),
        telemetry,
        handle,
    };
    let snapshot = move || convert::Snapshot::new(&collect(&model), SystemTime::now());
    push::run_with(exporter, opts, snapshot, shutdown).await
}
