//! spark-exporter's core: the model of Spark applications and the configuration, the layer the
//! collectors, the exposition, the server and `diagnose` (the `spark-exporter` crate) build on.
//! It has no I/O dependency (no tokio, reqwest, hyper or object_store), and it cannot import a
//! collector: the crate boundary holds the layering.
//!
//! Layout (every arrow points from a file to what it may import; no file imports back):
//! - [`config`]: layered configuration (defaults, file, env, flags): every key declared once
//!   (name, flag, doc, default, commands, parser), from which the reader, the flags,
//!   `check-config` and the configuration reference come; values parsed once into types.
//! - [`docgen`]: the generated sections of the docs (between markers), and the check that keeps
//!   them in step with their declarations (tests only).
//! - [`location`]: where event logs are (a path or an object-store URL), parsed once.
//! - [`clock`]: the wall clock (epoch ms), one definition, replaceable in tests.
//! - [`telemetry`]: the exporter's own metrics (counters, `spark_up`), handed to every task as a
//!   value; exported only.
//! - [`hash`]: the hash maps and sets of the hot paths (a fast hasher).
//! - [`health`]: the sources' health (a REST target answered or not, the event-log folders
//!   listed), written by the collectors, read by readiness and the lifecycle.
//! - [`filter`]: which applications this exporter follows (shard, name filters,
//!   `model.max_app_age`), built once from the settings and asked by the collectors and the
//!   model alike.
//! - [`model`]: the in-memory state of applications, jobs, stages, tasks, executors, SQL and
//!   streaming queries. One way in: the [`model::Observer`] trait that both collectors report
//!   through (idempotent calls keyed by Spark's ids); one way out: the read-only
//!   [`model::view`] that exporters read. The state itself is private to the module.
//! - [`shard`]: which applications this exporter exports when several share one store.

pub mod clock;
pub mod config;
pub mod docgen;
pub mod filter;
pub mod hash;
pub mod health;
pub mod location;
pub mod model;
pub mod shard;
pub mod telemetry;
