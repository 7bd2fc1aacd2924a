//! HTTP server: `/metrics` (or the configured path), `/healthz`, `/readyz` and a status page.
//! The exposition comes from `crate::sinks::prometheus::cache::Exposition` (one shared,
//! gzip-compressed
//! render per format, at most a second old); nothing here blocks on Spark.
//!
//! - `listen`: binding, the accept loop, TLS, connection limits and the graceful drain.
//! - `routes`: what each path answers, and who may ask.
//! - `negotiate`: format (OpenMetrics or classic text) and compression from the request's
//!   `Accept` and `Accept-Encoding`.
//! - `body`: the response body, and the exposition inflated as it is sent to a scraper that
//!   does not take gzip.

mod body;
mod listen;
mod negotiate;
mod routes;
mod status;

pub use listen::{bind, serve, Handles, ServerError, MAX_CONNECTIONS};
pub use routes::ready;
