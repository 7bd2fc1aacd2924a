//! The one in-memory model of every Spark application the sources see.
//!
//! **One way in**: both collectors report observations ([`obs`]) through the [`Observer`] trait
//! (`observer`), which the model implements per source ([`Model::observer`]); each call is
//! idempotent and keyed by Spark's own ids, so a job seen twice, or by the REST poller and the
//! event-log tailer both, counts once. **One way out**: exporters read through [`Model::view`]
//! and its read-only [`view::ModelView`]; no field of the state is public.
//!
//! **The state** (`state.rs`: every application, the names' accumulators, what is not kept) is
//! values: it is written out and read back whole (`serial.rs`). One file per entity holds its
//! state, and one file per entity in `rules/` the rules that change it (`impl State`, keyed by
//! Spark's ids); the state's files know nothing of the rules, so no file imports back up:
//! - `app.rs`: an application, its summary (always kept) and its detail (dropped when it is
//!   summarised), and a name's series across runs; `rules/app.rs`.
//! - `job.rs`, `stage.rs` (attempts, settled once: `details.rs`), `group.rs` (job groups' labels
//!   and counters), `executor.rs`, `cost.rs` (core-seconds, memory held, money), `cache.rs`
//!   (cached datasets), `sql.rs` and `plan.rs` (SQL executions and their plans), `streaming.rs`
//!   (streaming queries): each with its rules in `rules/` (`rules/tasks.rs`: task starts and
//!   ends, skew ratios, locality).
//! - `broadcast.rs` (broadcast jobs waiting for their query's group), `names.rs` (a name's series
//!   across runs, `model.aggregate_by: app_name`), `summary.rs` (what is kept: filters, the
//!   summary level, retention), `delivery.rs` (when an application may be summarised and served).
//! - Values the entities share: `hist.rs`, `idset.rs`, `labels.rs` (label rules and caps),
//!   `streaming_labels.rs`, `attribution.rs` (where a job's group comes from), `skew.rs`.
//!
//! **The read side**: `view.rs` (applications, groups, stages, executors, SQL, streaming),
//! `details.rs` (every stage attempt, for a diagnosis), `names.rs` (per-name views). `store.rs`
//! is the shared handle: the state under one lock. `testkit.rs`: the model's test kit.

mod app;
pub mod attribution;
mod broadcast;
mod cache;
mod cost;
mod delivery;
pub mod details;
mod executor;
pub mod findings;
mod group;
pub mod hist;
mod idset;
mod job;
pub mod labels;
mod names;
pub mod obs;
mod observer;
pub mod plan;
mod rules;
mod serial;
pub mod skew;
mod sql;
mod stage;
mod state;
mod store;
mod streaming;
mod streaming_labels;
mod summary;
pub mod view;

pub use app::{app_key, split_key};
pub use cost::Money;
pub use group::GroupKey;
pub use labels::OTHER;
pub use obs::*;
pub use observer::{ModelObserver, Observer};
pub use serial::{StateError, STATE_VERSION};
pub use store::Model;
pub use streaming::{OperatorAgg, SourceAgg, StreamAgg, TriggerInterval};

pub use crate::clock::{system_now_ms, Clock};

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
