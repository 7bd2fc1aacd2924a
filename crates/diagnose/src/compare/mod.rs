//! What changed: a run compared with its baseline (`diagnose --compare`), another run or the
//! median of the name's previous runs.
//!
//! - `shape`: what `diagnose` records of a run's jobs and SQL executions beside the model.
//! - `profile`: the run as a comparison reads it, keyed by what stays between runs (raw job
//!   groups and descriptions, stages by their place in their job, SQL executions by raw
//!   description and order).
//! - `baseline`: the median over many runs, and the run closest to it.
//! - `diff`: the comparison, ranked by share of the task-time difference.
//! - `render`: its text and page; `types`: its document, with its own versioned schema.

pub mod baseline;
pub mod diff;
pub mod profile;
pub mod render;
pub mod shape;
pub mod types;

pub use baseline::median_of;
pub use diff::compare;
pub use profile::Profile;
pub use shape::Shape;
pub use types::{Comparison, COMPARE_SCHEMA_PATH, COMPARE_SCHEMA_VERSION};

/// The comparison's JSON Schema (draft 2020-12), generated from [`Comparison`]: what
/// `schemas/diagnose-compare.v1.schema.json` holds.
pub fn schema() -> serde_json::Value {
    let mut s = crate::report::generator().into_root_schema_for::<Comparison>();
    s.insert(
        "$id".into(),
        "https://github.com/spark-exporter/spark-exporter/schemas/diagnose-compare.v1.schema.json"
            .into(),
    );
    s.insert(
        "title".into(),
        "spark-exporter diagnose comparison, version 1".into(),
    );
    s.insert(
        "description".into(),
        "What `spark-exporter diagnose --compare BASELINE --format json` prints: a run against \
         its baseline (another run, or per measure the median of the name's previous runs), \
         what changed ranked by its share of the task-time difference, the settings, plans and \
         findings apart. Version 1: a field removed, renamed or changed in meaning makes a new \
         version (and a new file); fields may be added within a version. Generated from the \
         comparison types (crates/diagnose/src/compare/types.rs): do not edit."
            .into(),
    );
    s.to_value()
}

#[cfg(test)]
mod tests;
