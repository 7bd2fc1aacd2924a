//! The REST collector: polls driver UIs and History Servers (`/api/v1`) and feeds the model.
//!
//! - [`api`]: serde types of the REST API, tolerant of missing, extra and odd fields.
//! - [`client`]: the HTTP client of one target (timeouts, body cap, byte counting,
//!   [`ClientError`]).
//! - [`convert`]: REST values to model observations (statuses, units, Spark's time format).
//! - `cost_cache`: `/environment` (once) and `/storage/rdd`, read for the cost and cache
//!   metrics; their failures never fail a poll.
//! - [`plugin`]: the source's registry entry and its collector ([`plugin::Rest`]).
//! - `settings`: what it reads of the configuration ([`RestSettings`]).
//! - [`positions`]: its part of the checkpoint (the completed applications read in full).
//! - [`tracker`]: which entity ids are known, so only new ones are fetched.
//! - `app`: the per-application incremental read (private).
//! - [`poller`]: the per-target poll loop ([`Mode::Follow`], [`run`]) and the one-shot reads
//!   ([`Mode::Once`], [`Mode::Whole`]: [`read_once`], [`poll_once`]) of a set of [`Targets`].

#[cfg(feature = "internals")]
pub mod api;
#[cfg(not(feature = "internals"))]
pub(crate) mod api;
mod app;
pub mod client;
pub mod config;
#[cfg(feature = "internals")]
pub mod convert;
#[cfg(not(feature = "internals"))]
pub(crate) mod convert;
mod cost_cache;
pub mod plugin;
#[cfg(feature = "internals")]
pub mod poller;
#[cfg(not(feature = "internals"))]
pub(crate) mod poller;
pub mod positions;
mod settings;
#[cfg(feature = "internals")]
pub mod tracker;
#[cfg(not(feature = "internals"))]
pub(crate) mod tracker;

pub use client::ClientError;
pub use plugin::Rest;
pub use poller::{poll_once, read_once, run, Mode, PollError, PollStats, TargetPoller, Targets};
pub use settings::RestSettings;
