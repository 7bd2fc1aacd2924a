//! spark-exporter: turns running Apache Spark applications into Prometheus and OTLP metrics.
//!
//! Layout:
//! - [`cli`]: command-line flags and their mapping onto configuration keys.
//! - [`config`]: layered configuration (defaults, file, env, flags) and validation.
//! - [`telemetry`]: the exporter's own health counters.
//! - [`model`]: the in-memory state of applications, jobs, stages, tasks, executors, SQL and
//!   streaming queries, fed by idempotent calls keyed by Spark's ids.
//! - [`spark`]: the REST API client, its types and the poller.
//! - [`eventlog`]: event-log discovery, tailing, codecs and parsing.
//! - [`export`]: metric families built at export time, the Prometheus exposition (one shared,
//!   gzip-compressed render per format) and OTLP push.
//! - [`server`]: `/metrics` (format and gzip negotiated per scrape), `/healthz`, `/readyz` and
//!   the landing page.
//! - [`webconfig`]: `--web.config.file` (TLS, mTLS, basic auth) in exporter-toolkit format.

pub mod cli;
pub mod config;
pub mod eventlog;
pub mod export;
pub mod model;
pub mod server;
pub mod spark;
pub mod telemetry;
pub mod webconfig;
