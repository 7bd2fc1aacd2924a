//! The `labels` section (label values and their cardinality) and the `histograms` section.

use super::parse::{self, Pattern};
use serde::Serialize;

/// Default cap on a label value's length, in characters.
pub const DEFAULT_MAX_VALUE_LENGTH: usize = 120;
/// Default cap on distinct values per label per application.
pub const DEFAULT_MAX_VALUES_PER_LABEL: usize = 200;
/// Default buckets for job, stage, SQL and batch durations (seconds to hours).
/// From 1 s to 4 h in steps where batch jobs fall (1-2-5 to a minute, then every few minutes to
/// an hour, then 1.5, 2, 3 and 4 h), so a quantile over long jobs moves in small steps; below 1 s
/// three more for stages and streaming batches, which share these buckets and are often
/// sub-second.
pub const DEFAULT_DURATION_BUCKETS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1200.0,
    1800.0, 2700.0, 3600.0, 5400.0, 7200.0, 10800.0, 14400.0,
];
/// Default buckets for task durations (milliseconds to an hour).
pub const DEFAULT_TASK_DURATION_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];

/// Default label rewrite rules, applied in order: UUIDs, dates/times, long numbers, long hex ids
/// (8+ hex digits), other numbers. Compiled once per process: a configuration's defaults are
/// made more than once at start, and compiling the five costs about 9 M instructions.
pub fn default_rewrite_rules() -> Vec<RewriteRule> {
    static RULES: std::sync::LazyLock<Vec<RewriteRule>> =
        std::sync::LazyLock::new(compile_default_rewrite_rules);
    RULES.clone()
}

fn compile_default_rewrite_rules() -> Vec<RewriteRule> {
    [
        (
            r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            "{uuid}",
        ),
        (
            r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?",
            "{date}",
        ),
        (r"\b\d{8,}\b", "{n}"),
        (r"\b(?:0x)?[0-9a-fA-F]{8,}\b", "{hex}"),
        (r"\d+", "{n}"),
    ]
    .iter()
    .filter_map(|(p, r)| {
        Some(RewriteRule {
            pattern: parse::regex(p).ok().flatten()?,
            replacement: r.to_string(),
        })
    })
    .collect()
}

/// A regex rewrite applied to every job group, description and SQL description.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RewriteRule {
    /// Regular expression (Rust `regex` syntax), compiled.
    pub pattern: Pattern,
    /// Replacement; `$1` refers to capture groups.
    pub replacement: String,
}

/// Label cardinality control.
#[derive(Debug, Clone, Serialize)]
pub struct LabelsConfig {
    /// Longest label value, in characters; longer ones are cut and end in `…`.
    pub max_value_length: usize,
    /// Distinct values per label per application; more go to `__other__`.
    pub max_values_per_label: usize,
    /// Rewrite rules, applied in order.
    pub rewrite_rules: Vec<RewriteRule>,
    /// Where `job_group` comes from, first match wins (see `model/attribution.rs`).
    pub job_group_from: Vec<GroupSource>,
    /// Picks the user tag that names a group when there are several (a capture group picks a
    /// part); none: any user tag, the first in sorted order.
    pub tag_pattern: Option<Pattern>,
    /// `spark_connect_jobs_total` carries the Spark Connect user (`user` label; empty when
    /// off).
    pub connect_user: bool,
}

impl Default for LabelsConfig {
    fn default() -> Self {
        LabelsConfig {
            max_value_length: DEFAULT_MAX_VALUE_LENGTH,
            max_values_per_label: DEFAULT_MAX_VALUES_PER_LABEL,
            rewrite_rules: default_rewrite_rules(),
            job_group_from: vec![
                GroupSource::JobGroup,
                GroupSource::Tag,
                GroupSource::CallSite,
            ],
            tag_pattern: None,
            connect_user: false,
        }
    }
}

/// A source of the `job_group` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupSource {
    /// `setJobGroup`.
    JobGroup,
    /// A user's job tag (3.5+, Spark Connect's `addTag`).
    Tag,
    /// The call site Spark records as the job's name.
    CallSite,
}

/// Histogram buckets, in seconds.
#[derive(Debug, Clone, Serialize)]
pub struct HistogramConfig {
    /// Job, stage, SQL and streaming-batch durations.
    pub duration_buckets: Vec<f64>,
    /// Task durations.
    pub task_duration_buckets: Vec<f64>,
}

impl Default for HistogramConfig {
    fn default() -> Self {
        HistogramConfig {
            duration_buckets: DEFAULT_DURATION_BUCKETS.to_vec(),
            task_duration_buckets: DEFAULT_TASK_DURATION_BUCKETS.to_vec(),
        }
    }
}
