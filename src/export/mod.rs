//! Exposition of the model: [`families`] builds the metric families at export time from the model
//! and the self-metrics; [`prometheus`] renders them for `/metrics`.

pub mod families;
pub mod prometheus;
