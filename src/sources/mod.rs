//! The sources: what reads Spark and reports to the model, one folder each, numbered by one
//! registry.
//!
//! A source is a [`Plugin`] (as node_exporter's `registerCollector`, vector's `SourceConfig`):
//! it names itself, says what it reads ([`Feed`]), which places the settings give it, how it is
//! ready, and builds its [`Collector`] from its own settings. The framework gives every running
//! source the same [`Handle`]: health by place and the self-metrics by name every source has
//! (`spark_exporter_source_up{source, place}`, `spark_exporter_source_ready{source}`), and its
//! part of the checkpoint ([`parts`]). Readiness, the status page, the checkpoint, `dump` and
//! the exporter's start go through [`REGISTRY`]; nothing else counts the sources by hand.
//!
//! - [`rest`]: the REST collector: API types, client, per-application incremental reads, the
//!   poll loop.
//! - [`eventlog`]: the event-log collector: discovery, codecs, tailing, parsing, applying events.
//! - `framework`: the [`Plugin`] trait, the [`Collector`] it builds, the [`Handle`] it gets.
//! - `registry`: [`REGISTRY`] and what the exporter asks of every source.
//! - [`parts`]: each source's part of the checkpoint (its read positions), kept by name.
//!
//! Adding a source is one folder implementing [`Plugin`] and one line in [`REGISTRY`] (see
//! *Extending* in docs/internals.md).

pub mod eventlog;
mod framework;
pub mod parts;
pub mod registry;
pub mod rest;

#[cfg(test)]
mod config_docs_tests;
#[cfg(test)]
mod config_tests;

pub use framework::{
    BoxFuture, CollectError, Collector, Handle, OnceRead, OneShot, Plugin, Reshard,
};
pub use parts::{Part, Parts};
pub use registry::{
    configured, counting, declare_config, fill_once, named, names, once, ready, source, spawn_all,
    status, PlaceStatus, REGISTRY,
};
