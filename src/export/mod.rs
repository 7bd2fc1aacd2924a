//! Exposition of the model. The [`catalogue`] declares every family once; [`families`] reads
//! them from the model's read view (`rows`, [`read`]) into the neutral form of `sample`;
//! [`prometheus`] writes them for `/metrics`, `cache` shares one render among concurrent
//! scrapes, [`otlp`] pushes the same families to an OpenTelemetry collector, and `docs`
//! renders the catalogue as the metric reference of `docs/metrics.md`.

pub(crate) mod cache;
pub mod catalogue;
#[cfg(test)]
mod docs;
pub mod families;
pub mod otlp;
pub mod prometheus;
pub mod read;
mod rows;
mod sample;
