//! Advice: for each finding where Spark has a setting for it, the property to change, the value
//! the run had (and where that value came from), the value to try, computed from the run's own
//! numbers, and what it is based on; changes that are code (a `broadcast()` hint, more
//! partitions of an RDD, a salted key, a streaming trigger) apart from the settings; and one
//! value per property per scope for the whole application ([`SettingChange`]).
//!
//! Advice reads what the run was configured with ([`RunConf`]: the application's properties,
//! each SQL execution's session settings, which execution each stage and job group ran), which
//! `diagnose` gathers beside the model, never the long-running model itself.
//!
//! - [`spark`]: the settings advice names, their defaults, how Spark reads a size.
//! - `kinds`: one advisor per finding kind.

pub mod apply;
mod cx;
mod kinds;
pub mod spark;
pub mod types;

pub use apply::{advise, advised_kinds, doc_tables, paste_block};
pub use cx::Cx;
pub use types::{Advice, CodeChange, Origin, Peaks, RunConf, Scope, SettingChange, Suggestion};

#[cfg(test)]
mod tests;
