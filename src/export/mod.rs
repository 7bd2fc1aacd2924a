//! Exposition of the model: [`families`] builds the metric families at export time from the model
//! and the self-metrics; [`prometheus`] renders them for `/metrics`, [`cache`] shares one render
//! among concurrent scrapes; [`otlp`] pushes the same families to an OpenTelemetry collector.

pub mod cache;
pub mod families;
pub mod otlp;
pub mod prometheus;
