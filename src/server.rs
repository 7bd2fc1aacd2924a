//! HTTP server: `/metrics` (or the configured path), `/healthz`, `/readyz` and a landing page.
//! The exposition comes from [`Exposition`] (one shared, gzip-compressed render per format, at
//! most a second old); nothing here blocks on Spark.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_ENCODING, CONTENT_TYPE, VARY,
    WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::export::cache::{accepts_gzip, Exposition, PlainBody};
use crate::export::prometheus::{self, CLASSIC, OPENMETRICS};
use crate::model::Model;
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

/// What the handlers share.
struct Ctx {
    exposition: Exposition,
    model: Arc<Model>,
    settings: Arc<Settings>,
    security: Arc<WebSecurity>,
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

/// True once every configured source has finished its first round.
pub fn ready(model: &Model, settings: &Settings) -> bool {
    let t = model.telemetry().snapshot();
    let rest = settings.spark.urls.iter().all(|u| t.up.contains_key(u));
    let logs = settings.event_log.dirs.is_empty() || t.eventlog_scanned;
    rest && logs
}

/// A response body: fixed bytes, or exposition text decompressed as it is sent.
type Body = Either<Full<Bytes>, PlainBody>;

fn reply(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Either::Left(Full::new(body.into())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    r
}

async fn handle(ctx: &Ctx, req: &Request<Incoming>) -> Response<Body> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n",
        );
    }
    let path = req.uri().path();
    // Probes stay open (they reveal nothing); everything else needs the credentials.
    let open = matches!(path, "/healthz" | "/readyz");
    if !open
        && !ctx
            .security
            .authorized(
                req.headers()
                    .get(AUTHORIZATION)
                    .and_then(|v| v.to_str().ok()),
            )
            .await
    {
        ctx.model.telemetry().http_error("unauthorized");
        let mut r = reply(StatusCode::UNAUTHORIZED, "text/plain", "unauthorized\n");
        r.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"spark-exporter\""),
        );
        return r;
    }
    if path == ctx.settings.web.telemetry_path {
        let header = |h| {
            req.headers()
                .get(h)
                .and_then(|v: &HeaderValue| v.to_str().ok())
        };
        let om = prometheus::wants_openmetrics(header(ACCEPT));
        let gzip = accepts_gzip(header(ACCEPT_ENCODING));
        return metrics(&ctx.exposition, om, gzip).await;
    }
    match path {
        "/healthz" => reply(StatusCode::OK, "text/plain", "ok\n"),
        "/readyz" => {
            if ready(&ctx.model, &ctx.settings) {
                reply(StatusCode::OK, "text/plain", "ready\n")
            } else {
                reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "text/plain",
                    "waiting for the first poll\n",
                )
            }
        }
        "/" => reply(
            StatusCode::OK,
            "text/html; charset=utf-8",
            format!(
                "<html><head><title>spark-exporter</title></head><body><h1>spark-exporter {}</h1>\
                 <p><a href=\"{p}\">{p}</a> &middot; <a href=\"/healthz\">/healthz</a> &middot; \
                 <a href=\"/readyz\">/readyz</a></p></body></html>\n",
                env!("CARGO_PKG_VERSION"),
                p = ctx.settings.web.telemetry_path
            ),
        ),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

async fn metrics(exposition: &Exposition, om: bool, gzip: bool) -> Response<Body> {
    let Some(r) = exposition.get(om).await else {
        return reply(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "shutting down\n",
        );
    };
    if !r.ok {
        return reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "encoding failed\n",
        );
    }
    let ctype = if om { OPENMETRICS } else { CLASSIC };
    let mut resp = if gzip {
        let mut resp = reply(StatusCode::OK, ctype, r.gzip.clone());
        resp.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        resp
    } else {
        let mut resp = Response::new(Either::Right(PlainBody::new(&r)));
        resp.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
        resp
    };
    resp.headers_mut()
        .insert(VARY, HeaderValue::from_static("Accept, Accept-Encoding"));
    resp
}

/// Bind the listen address (separate from [`serve`] so a bad address fails at start-up).
pub async fn bind(settings: &Settings) -> Result<TcpListener, ServerError> {
    let addr = settings.web.listen_address;
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })
}

/// Serve until `shutdown`, then let in-flight requests finish for up to `grace`.
pub async fn serve(
    listener: TcpListener,
    settings: Arc<Settings>,
    model: Arc<Model>,
    security: Arc<WebSecurity>,
    shutdown: CancellationToken,
    grace: Duration,
) {
    let tls = security.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let ctx = Arc::new(Ctx {
        exposition: Exposition::start(model.clone(), settings.web.max_staleness, shutdown.clone()),
        model,
        settings,
        security,
    });
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
                    async move { Ok::<_, Infallible>(handle(&ctx, &req).await) }
                });
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
                    .max_buf_size(MAX_REQUEST_HEAD);
                let telemetry = telemetry.clone();
                match &tls {
                    None => {
                        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), svc));
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
                            let stream = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
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
                            let conn = watcher.watch(builder.serve_connection(TokioIo::new(stream), svc));
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
        _ = tokio::time::sleep(grace) => tracing::warn!("In-flight requests did not finish within the grace period."),
    }
}
