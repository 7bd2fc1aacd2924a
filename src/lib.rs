//! spark-exporter: turns running Apache Spark applications into Prometheus and OTLP metrics.
//!
//! A workspace whose crates are the layers: `spark-exporter-core` (`crates/core`: the model
//! and the configuration, no I/O) and this crate (the collectors, the exposition, the server,
//! the lifecycle and `diagnose`; `src/main.rs` wires them).
//!
//! Layout (every arrow points from a file to what it may import; no file imports back):
//! - [`alloc`]: the allocator's tuning (freed decoder buffers go back to the system).
//! - [`cli`]: the commands and their arguments, plus the configuration keys' flags.
//! - The core (`crates/core`, re-exported here under the same paths): [`config`],
//!   [`location`], [`clock`], [`telemetry`], [`health`], [`filter`], [`model`] and [`shard`];
//!   its map is the `//!` of `crates/core/src/lib.rs`. It cannot import anything below. The
//!   sources' configuration sections live in their folders and are declared to it at start-up
//!   ([`sources::declare_config`]).
//! - [`sources`]: what reads Spark, one folder a source (a [`sources::Plugin`]) and one line
//!   in [`sources::REGISTRY`]: [`sources::rest`] (the REST poller) and [`sources::eventlog`]
//!   (the event-log reader), both reporting to a [`model::Observer`]; the framework gives each
//!   the same health, self-metrics and checkpoint part.
//! - [`objstore`]: object-store access (S3, GCS, Azure: built from a URL, requests counted),
//!   below both the event-log reader and the checkpoint store.
//! - [`checkpoint`]: the model's state and the sources' parts kept across restarts.
//! - [`export`]: the metric catalogue (every family declared once: name, type, labels, help,
//!   OTLP form, stability, reader), the families read through the model's view, the Prometheus
//!   and OpenMetrics text written from them, the shared render, OTLP push, and the generated
//!   documentation tables.
//! - [`lifecycle`]: the exporter's end: the drain after SIGTERM (last reads, the final state
//!   served until scraped or exported, bounded by a grace period) and, in classic mode, the
//!   end of the followed application.
//! - [`diagnose`]: `spark-exporter diagnose`: the model filled once from event logs or REST,
//!   then read by the crate `spark-exporter-diagnose` (re-exported here) through the view step
//!   by step (the Spark UI's top-down procedure), findings ranked by the time they explain,
//!   printed as text or versioned JSON.
//! - `process`: the exporter process's own resources (`process_*`), read from `/proc/self`.
//! - [`server`]: HTTP: `/metrics` (format and gzip negotiated per scrape), `/healthz`,
//!   `/readyz`, the landing page.
//! - [`webconfig`]: `--web.config.file` (TLS with certificate reload, mTLS, basic auth, headers,
//!   rate limit) in exporter-toolkit v0.17.1 format.

pub mod alloc;
pub mod checkpoint;
pub mod cli;
pub mod diagnose;
pub mod export;
pub mod lifecycle;
pub mod objstore;
pub(crate) mod process;
pub mod server;
pub mod sinks;
pub mod sources;
pub mod webconfig;

pub use spark_exporter_core::{clock, config, filter, health, location, model, shard, telemetry};
