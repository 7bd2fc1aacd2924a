//! The exporter's end: what it does between SIGTERM (or, in classic mode, the application's end)
//! and its exit, so that the application's last state is exported before the process goes.
//!
//! - `state`: [`Lifecycle`], the phase shared with the server (`/healthz`, `/readyz`, which
//!   scrapes count as scrapes of the final state).
//! - [`ending`]: when the followed application has ended (`lifecycle.exit_when_app_ends`).
//! - [`drain`]: the drain itself: the sources' last reads, the final state, then serving it until
//!   enough scrapes, the final OTLP export or the grace period.

pub mod drain;
pub mod ending;
mod state;

pub use state::{Lifecycle, Phase};
