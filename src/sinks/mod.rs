//! The sinks: where the model's families go, one folder each, one line in [`REGISTRY`].
//!
//! A sink is a [`Sink`]: it says where it delivers (or that the settings turn it off), reads
//! the catalogue's families from the model's view when it chooses, reports each delivery to its
//! [`SinkHandle`] (the status page's outputs) and, once the drain has reached the final state,
//! delivers it; the drain ends when the first sink has ([`Running`]).
//!
//! - `framework`: the [`Sink`] trait, [`SinkEnv`], [`Running`], [`SinkHandle`].
//! - `registry`: [`REGISTRY`], [`start_all`], [`status`].
//! - [`prometheus`]: the exposition at `web.telemetry_path` (Prometheus text and OpenMetrics,
//!   rendered at scrape time, shared by concurrent scrapes); the final state is delivered once
//!   `lifecycle.drain_scrapes` scrapes got it.
//! - [`otlp`]: OTLP metrics push to an OpenTelemetry collector every `otlp.interval`; the final
//!   state is delivered by the final export.
//!
//! Adding a sink is one folder implementing [`Sink`] and one line in [`REGISTRY`] (see
//! *Extending* in docs/internals.md).

mod framework;
pub mod otlp;
pub mod prometheus;
mod registry;

pub use framework::{Running, Sink, SinkEnv, SinkHandle};
pub use registry::{spawn_all, start_all, status, Delivering, Started, REGISTRY};
