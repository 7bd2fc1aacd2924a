//! Listening: bind the address, accept connections (at most [`MAX_CONNECTIONS`], TLS when the
//! web config has it, slow clients timed out), serve each with [`routes::handle`], and on
//! shutdown let in-flight requests finish within a grace period.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::routes::{self, Ctx};
use crate::config::Settings;
use crate::health::Health;
use crate::lifecycle::Lifecycle;
use crate::model::Model;
use crate::sinks::prometheus::cache::Exposition;
use crate::webconfig::WebSecurity;

/// Server errors.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Address.
        addr: std::net::SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
}

/// How long a client may take to finish the TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's headers (slow-loris). hyper also applies it to
/// an idle keep-alive connection, which is then closed (scrapers reconnect; not an error).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head (request line and headers) a client may send; the ~400 KB hyper allows
/// by default, times [`MAX_CONNECTIONS`], would let a client flood push the sidecar past its
/// memory limit. Scrapers send a few hundred bytes.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// Open connections at most; more are closed at once and counted (a sidecar is scraped by a
/// few Prometheus servers; each connection costs a few KiB, so this bounds memory).
pub const MAX_CONNECTIONS: usize = 256;

/// Bind the listen address (separate from [`serve`] so a bad address fails at start-up).
pub async fn bind(settings: &Settings) -> Result<TcpListener, ServerError> {
    let addr = settings.web.listen_address;
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })
}

/// The shared handles the server answers from (it renders the exposition itself).
pub struct Handles {
    /// The configuration.
    pub settings: Arc<Settings>,
    /// The model the exposition is rendered from.
    pub model: Arc<Model>,
    /// The sources' health, for readiness.
    pub health: Arc<Health>,
    /// TLS and basic-auth settings of `--web.config.file`.
    pub security: Arc<WebSecurity>,
    /// The exporter's phase.
    pub lifecycle: Arc<Lifecycle>,
}

/// What the handlers share: `handles` and the exposition, rendered until `shutdown`.
fn context(handles: Handles, shutdown: &CancellationToken) -> Ctx {
    let h = handles;
    Ctx {
        exposition: Exposition::start(
            h.model.clone(),
            h.settings.web.max_staleness,
            h.settings.web.openmetrics_created,
            shutdown.clone(),
        ),
        model: h.model,
        health: h.health,
        settings: h.settings,
        security: h.security,
        lifecycle: h.lifecycle,
    }
}

/// Serve until `shutdown`, then let in-flight requests finish for up to `grace`.
pub async fn serve(
    listener: TcpListener,
    handles: Handles,
    shutdown: CancellationToken,
    grace: Duration,
) {
    let ctx = Arc::new(context(handles, &shutdown));
    let tls = ctx
        .security
        .tls
        .clone()
        .map(tokio_rustls::TlsAcceptor::from);
    if tls.is_some() {
        let m = ctx.model.clone();
        ctx.security
            .on_tls_error(Box::new(move |kind| m.telemetry().http_error(kind)));
        // exporter-toolkit's default is `http2: true`; HTTP/2 is not served here, and ALPN
        // offers only http/1.1, which scrapers fall back to. Say so rather than ignore it.
        if ctx.security.http2 != Some(false) {
            tracing::info!(http2 = false, requested = ?ctx.security.http2, "TLS is enabled; HTTP/2 \
                is not served (ALPN offers http/1.1 only).");
        }
    }
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let telemetry = ctx.model.telemetry().clone();
    let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            conn = listener.accept() => {
                let (stream, _) = match conn {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(error = %e, "Accept failed.");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    telemetry.http_error("connection_limit");
                    tracing::debug!(limit = MAX_CONNECTIONS, "Connection refused: too many open.");
                    continue;
                };
                // Responses are written whole; do not hold their last segment back.
                let _ = stream.set_nodelay(true);
                let ctx = ctx.clone();
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let ctx = ctx.clone();
                    async move { Ok::<_, Infallible>(routes::handle(&ctx, &req).await) }
                });
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
                    .max_buf_size(MAX_REQUEST_HEAD);
                let telemetry = telemetry.clone();
                match &tls {
                    None => {
                        let served = builder.serve_connection(TokioIo::new(stream), svc);
                        let conn = graceful.watch(served);
                        tokio::spawn(async move {
                            if let Err(e) = conn.await {
                                // Resets, clients leaving, slow or idle clients timed out.
                                tracing::debug!(error = %e, "Connection ended with an error.");
                            }
                            drop(permit);
                        });
                    }
                    Some(acceptor) => {
                        let acceptor = acceptor.clone();
                        let watcher = graceful.watcher();
                        tokio::spawn(async move {
                            let handshake = acceptor.accept(stream);
                            let limit = TLS_HANDSHAKE_TIMEOUT;
                            let stream = match tokio::time::timeout(limit, handshake).await {
                                Ok(Ok(s)) => s,
                                Ok(Err(e)) => {
                                    telemetry.http_error("tls_handshake");
                                    tracing::debug!(error = %e, "TLS handshake failed.");
                                    return;
                                }
                                Err(_) => {
                                    telemetry.http_error("tls_handshake");
                                    tracing::debug!("TLS handshake timed out.");
                                    return;
                                }
                            };
                            let served = builder.serve_connection(TokioIo::new(stream), svc);
                            let conn = watcher.watch(served);
                            if let Err(e) = conn.await {
                                // Resets, clients leaving, slow or idle clients timed out.
                                tracing::debug!(error = %e, "Connection ended with an error.");
                            }
                            drop(permit);
                        });
                    }
                }
            }
        }
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {},
        _ = tokio::time::sleep(grace) => tracing::warn!("In-flight requests did not finish within \
            the grace period."),
    }
}
