//! The one in-memory model of every Spark application the sources see.
//!
//! One way in: both collectors report observations ([`obs`]) through the [`Observer`] trait
//! ([`observer`]), which the model implements per source ([`Model::observer`]); each call is
//! idempotent and keyed by Spark's own ids, so a job seen twice, or by the REST poller and the
//! event-log tailer both, counts once (the rules: `app.rs` and `update.rs`). One way out:
//! exporters read through [`Model::view`] and its read-only [`view::ModelView`]. The state
//! itself (`state.rs`) is private to this module; this file only wires the parts.

mod app;
pub mod attribution;
mod broadcast;
mod cache;
mod cost;
mod cost_rules;
mod delivery;
pub mod details;
mod executor;
pub mod hist;
mod idset;
mod labels;
mod names;
pub mod obs;
pub mod observer;
pub mod plan;
mod serial;
pub mod skew;
mod sql;
mod state;
mod store;
mod streaming;
mod streaming_labels;
mod summary;
mod tasks;
mod update;
pub mod view;

pub use app::{app_key, split_key, GroupKey};
pub use labels::OTHER;
pub use obs::*;
pub use observer::{ModelObserver, Observer};
pub use serial::{StateError, STATE_VERSION};
pub use store::Model;
pub use streaming::{OperatorAgg, SourceAgg, StreamAgg, TriggerInterval};

pub use crate::clock::{system_now_ms, Clock};

#[cfg(test)]
mod cost_tests;
#[cfg(test)]
mod fleet_tests;
#[cfg(test)]
mod stage_tests;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
