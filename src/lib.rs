//! spark-exporter: turns running Apache Spark applications into Prometheus and OTLP metrics.
//!
//! Layout (every arrow points from a file to what it may import; no file imports back):
//! - [`alloc`]: the allocator's tuning (freed decoder buffers go back to the system).
//! - [`cli`]: the commands and their arguments, plus the configuration keys' flags.
//! - [`config`]: layered configuration (defaults, file, env, flags): every key declared once
//!   (name, flag, doc, default, commands, parser), from which the reader, the flags,
//!   `check-config` and the configuration reference come; values parsed once into types.
//! - [`location`]: where event logs are (a path or an object-store URL), parsed once.
//! - [`clock`]: the wall clock (epoch ms), one definition, replaceable in tests.
//! - [`telemetry`]: the exporter's own metrics (counters, `spark_up`), handed to every task as a
//!   value; exported only.
//! - [`health`]: the sources' health (a REST target answered or not, the event-log folders
//!   listed), written by the collectors, read by readiness and the lifecycle.
//! - [`filter`]: which applications this exporter follows (shard, name filters,
//!   `model.max_app_age`), built once from the settings and asked by the collectors and the
//!   model alike.
//! - [`model`]: the in-memory state of applications, jobs, stages, tasks, executors, SQL and
//!   streaming queries. One way in: the [`model::Observer`] trait that both collectors report
//!   through (idempotent calls keyed by Spark's ids); one way out: the read-only
//!   [`model::view`] that exporters read. The state itself is private to the module.
//! - [`spark`]: the REST collector: API types, client, per-application incremental reads, the
//!   poll loop; reports to an [`model::Observer`].
//! - [`eventlog`]: the event-log collector: discovery, codecs, tailing, parsing, applying
//!   events; reports to an [`model::Observer`].
//! - [`collect`]: collectors as one concept: the [`collect::Collector`] trait (run until
//!   shutdown, or fill a model once) that the REST poller and the event-log reader implement,
//!   and the list the exporter runs.
//! - [`export`]: the metric catalogue (every family declared once: name, type, labels, help,
//!   OTLP form, stability, reader), the families read through the model's view, the Prometheus
//!   and OpenMetrics text written from them, the shared render, OTLP push, and the generated
//!   documentation tables.
//! - [`lifecycle`]: the exporter's end: the drain after SIGTERM (last reads, the final state
//!   served until scraped or exported, bounded by a grace period) and, in classic mode, the
//!   end of the followed application.
//! - [`diagnose`]: `spark-exporter diagnose`: the model filled once from event logs or REST,
//!   read through the view step by step (the Spark UI's top-down procedure), findings ranked by
//!   the time they explain, printed as text or versioned JSON.
//! - [`process`]: the exporter process's own resources (`process_*`), read from `/proc/self`.
//! - [`shard`]: which applications this exporter exports when several share one store.
//! - [`server`]: HTTP: `/metrics` (format and gzip negotiated per scrape), `/healthz`,
//!   `/readyz`, the landing page.
//! - [`webconfig`]: `--web.config.file` (TLS with certificate reload, mTLS, basic auth, headers,
//!   rate limit) in exporter-toolkit v0.17.1 format.

pub mod alloc;
pub mod cli;
pub mod clock;
pub mod collect;
pub mod config;
pub mod diagnose;
pub mod eventlog;
pub mod export;
pub mod filter;
pub mod health;
pub mod lifecycle;
pub mod location;
pub mod model;
pub mod process;
pub mod server;
pub mod shard;
pub mod spark;
pub mod telemetry;
pub mod webconfig;
