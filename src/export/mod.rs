//! Exposition of the model. The [`catalogue`] declares every family once; [`families`] reads
//! them from the model's read view (`rows`, [`read`]) into the neutral form of `sample`;
//! [`prometheus`] writes them for `/metrics`, `cache` shares one render among concurrent
//! scrapes, [`otlp`] pushes the same families to an OpenTelemetry collector, and `docs`
//! renders the catalogue as the metric reference of `docs/metrics.md`.

pub(crate) mod cache;
#[cfg(feature = "internals")]
pub mod catalogue;
#[cfg(not(feature = "internals"))]
#[allow(dead_code, unused_imports)] // what only the tests, benches and fuzz targets use
pub(crate) mod catalogue;
#[cfg(test)]
mod docs;
#[cfg(feature = "internals")]
pub mod families;
#[cfg(not(feature = "internals"))]
#[allow(dead_code, unused_imports)] // what only the tests, benches and fuzz targets use
pub(crate) mod families;
pub mod otlp;
pub mod prometheus;
#[cfg(feature = "internals")]
pub mod read;
#[cfg(not(feature = "internals"))]
#[allow(dead_code, unused_imports)] // what only the tests, benches and fuzz targets use
pub(crate) mod read;
mod rows;
mod sample;
