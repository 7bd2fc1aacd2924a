//! What each path answers: the exposition at `web.telemetry_path` (as [`Negotiated`] from the
//! request's headers), `/healthz`, `/readyz`, the status page at `/` with the documentation,
//! dashboards and rules it links to (`status`), and 404 elsewhere. Only
//! GET and HEAD are served (hyper sends a HEAD response without its body, with the headers and
//! Content-Length a GET gets); every path but the probes needs the web config's credentials. The
//! web config's `rate_limit` applies to every request (429 over it, as exporter-toolkit), and its
//! `http_server_config.headers` are added to every response.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, AUTHORIZATION, CONTENT_ENCODING, CONTENT_TYPE, VARY, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};

use super::body::{Body, PlainBody};
use super::negotiate::{self, Negotiated};
use crate::config::Settings;
use crate::health::Health;
use crate::lifecycle::{Lifecycle, Phase};
use crate::model::Model;
use crate::sinks::prometheus::cache::Exposition;
use crate::webconfig::WebSecurity;

/// What the handlers share.
pub struct Ctx {
    /// The shared, gzip-compressed exposition.
    pub exposition: Exposition,
    /// The model (for telemetry and the start-up read).
    pub model: Arc<Model>,
    /// The sources' health (readiness).
    pub health: Arc<Health>,
    /// The configuration (the telemetry path, the sources readiness waits for).
    pub settings: Arc<Settings>,
    /// TLS and basic-auth settings of `--web.config.file`.
    pub security: Arc<WebSecurity>,
    /// The exporter's phase: probes answer by it, scrapes of the final state are counted.
    pub lifecycle: Arc<Lifecycle>,
}

/// True once every configured source has finished its first round (each source says what
/// that is: every REST target polled, answered or not; the event-log folders listed).
pub fn ready(health: &Health, settings: &Settings) -> bool {
    crate::sources::ready(settings, health)
}

fn reply(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Either::Left(Full::new(body.into())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    r
}

/// Answer one request, with the web config's extra headers (`http_server_config.headers`).
pub async fn handle(ctx: &Ctx, req: &Request<Incoming>) -> Response<Body> {
    let mut r = if ctx.security.rate_allowed() {
        answer(ctx, req).await
    } else {
        ctx.model.telemetry().http_error("rate_limit");
        reply(
            StatusCode::TOO_MANY_REQUESTS,
            "text/plain",
            "too many requests\n",
        )
    };
    for (k, v) in &ctx.security.headers {
        r.headers_mut().insert(k.clone(), v.clone());
    }
    r
}

async fn answer(ctx: &Ctx, req: &Request<Incoming>) -> Response<Body> {
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
        return metrics(
            ctx,
            req.method() == Method::GET,
            Negotiated::from_headers(req.headers()),
        )
        .await;
    }
    let draining = ctx.lifecycle.draining();
    match path {
        // Alive while draining: a liveness probe must not cut the drain short.
        "/healthz" if draining => reply(StatusCode::OK, "text/plain", "draining\n"),
        "/healthz" => reply(StatusCode::OK, "text/plain", "ok\n"),
        // Not ready while draining: the exporter is on its way out.
        "/readyz" if draining => reply(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n"),
        // `/readyz?complete`: also the start-up read (`spark_exporter_startup_complete`).
        "/readyz"
            if req
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|p| p == "complete")) =>
        {
            if !ready(&ctx.health, &ctx.settings) {
                reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "text/plain",
                    "waiting for the first poll\n",
                )
            } else if ctx.model.view(|v| v.startup_complete()) {
                reply(
                    StatusCode::OK,
                    "text/plain",
                    "ready, start-up read complete\n",
                )
            } else {
                reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "text/plain",
                    "reading the start-up state\n",
                )
            }
        }
        "/readyz" => {
            if ready(&ctx.health, &ctx.settings) {
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
            super::status::page(&super::status::Ctx {
                settings: &ctx.settings,
                health: &ctx.health,
                model: &ctx.model,
                draining,
                ready: ready(&ctx.health, &ctx.settings),
            }),
        ),
        _ => match super::status::asset(path) {
            Some((_, ctype, body)) => reply(StatusCode::OK, ctype, *body),
            None => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
        },
    }
}

/// The exposition in the negotiated format: the gzip bytes as they are, or inflated as sent.
/// Once the drain has reached the final state, every scrape gets a body rendered from it, and
/// each GET answered so counts towards the drain's end.
async fn metrics(ctx: &Ctx, get: bool, n: Negotiated) -> Response<Body> {
    let finale = ctx.lifecycle.phase() == Phase::Final;
    let body = if finale {
        ctx.exposition
            .get_within(n.openmetrics, Duration::ZERO)
            .await
    } else {
        ctx.exposition.get(n.openmetrics).await
    };
    let Some(r) = body else {
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
    if finale && get {
        ctx.lifecycle.scrape_served(r.generation());
    }
    crate::sinks::prometheus::plugin::scraped(&ctx.health, &ctx.settings, ctx.model.now_ms());
    let ctype = n.content_type();
    let mut resp = if n.gzip {
        let mut resp = reply(StatusCode::OK, ctype, r.gzip.clone());
        resp.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        resp
    } else {
        let mut resp = Response::new(Either::Right(PlainBody::new(r.gzip.clone(), r.len)));
        resp.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
        resp
    };
    resp.headers_mut()
        .insert(VARY, HeaderValue::from_static(negotiate::VARY));
    resp
}
