//! The diagnosis of a Spark application, read the way the Spark UI teaches: where the time went,
//! the bottleneck stage, then skew, spill, GC, join strategy, cache, locality, idle cores and
//! streaming batches near their trigger, each finding ranked by the time it explains.
//!
//! The rules read an application through the model's view ([`spark_exporter_core::model::view`]);
//! gathering it (event logs, REST) is the main crate's `diagnose` module.
//!
//! - [`report`]: the report's types and schema version.
//! - [`rules`]: the procedure, a file per rule (its kind, level, cost formula, thresholds and
//!   remedy), and the registry that makes the finding kinds from the rules.
//! - [`advice`]: per finding, the setting to change (its value in the run, the value to try)
//!   and the code to change; the application's settings as one paste-able block.
//! - [`links`]: Spark UI links of stages and SQL executions.
//! - [`text`]: the human rendering; [`app_html`]: the same as a self-contained HTML page.
//! - [`review`]: many applications' reports folded into a ranking of names and job groups by
//!   cost per kind (`diagnose --review`), its text and its own versioned schema.

pub mod advice;
pub mod app_html;
pub mod compare;
pub mod links;
mod page;
mod place;
pub mod report;
pub mod review;
pub mod rules;
pub mod text;
mod units;
pub mod whatif;

/// What the [`registry!`] macro's expansion names, so that a crate using it needs neither serde
/// nor schemars itself.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
}
