//! HTTP server: `/metrics`, `/healthz`, `/readyz`, `/`.
