//! What every sink reads: the [`catalogue`] declares every family once; [`families`] reads
//! them from the model's read view (`rows`, [`read`]) into the neutral form of `sample`, which
//! the sinks (`crate::sinks`: the Prometheus exposition, OTLP push) write out; `docs` renders
//! the catalogue as the metric reference of `docs/metrics.md`.

#[cfg(feature = "internals")]
pub mod catalogue;
#[cfg(not(feature = "internals"))]
pub(crate) mod catalogue;
#[cfg(test)]
mod docs;
#[cfg(feature = "internals")]
pub mod families;
#[cfg(not(feature = "internals"))]
pub(crate) mod families;
#[cfg(feature = "internals")]
pub mod read;
#[cfg(not(feature = "internals"))]
pub(crate) mod read;
mod rows;
pub(crate) mod sample;
