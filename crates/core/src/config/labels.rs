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

/// One of the default rewrite rules: its pattern, its replacement and what it folds (the docs'
/// list of default rules is made from [`DEFAULT_RULES`]).
#[derive(Debug, Clone, Copy)]
pub struct DefaultRule {
    /// Regular expression (Rust `regex` syntax); a group named `next` only looks ahead.
    pub pattern: &'static str,
    /// Replacement; `${1}` puts back the character before the match that the pattern read.
    pub replacement: &'static str,
    /// What it folds, for the docs.
    pub folds: &'static str,
}

/// The default rewrite rules, applied in order: they fold what makes a label's values many
/// (ids, dates, times, hashes, numbers that count) and keep what names a job (`q01`, `step_3`,
/// `etl-v2`, `load_region_eu1`: a number of up to four digits inside a word). A group named
/// `next` is a look-ahead ([`RewriteRule`]): what it matches stays, for the next match to read.
pub const DEFAULT_RULES: &[DefaultRule] = &[
    DefaultRule {
        pattern: r"(?:app|driver)-\d{14}-\d{4,}|application_\d{10,}_\d{4,}|local-\d{10,}",
        replacement: "{app_id}",
        folds: "Spark and YARN application ids (`app-20261206205520-0000`, \
                `application_1733500000000_0042`, `local-1796000000000`)",
    },
    DefaultRule {
        pattern: r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        replacement: "{uuid}",
        folds: "UUIDs",
    },
    DefaultRule {
        pattern: r"\d{4}(?:-\d{2}-\d{2}|_\d{2}_\d{2}|/\d{2}/\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
        replacement: "{date}",
        folds: "dates and date-times (`2026-12-06`, `2026_12_06`, `2026/12/06`, \
                `2026-12-06T12:30:00Z`)",
    },
    DefaultRule {
        pattern: r"(^|[^0-9])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?P<next>$|[^0-9])",
        replacement: "${1}{time}",
        folds: "times of day (`12:30`, `12:30:00`)",
    },
    DefaultRule {
        pattern: r"\d{5,}",
        replacement: "{n}",
        folds: "runs of 5 or more digits, in a word or not (`run_20261206`, `load_1733500000`)",
    },
    DefaultRule {
        pattern: r"(^|[^0-9A-Za-z])(?:0x)?[0-9a-fA-F]{8,}(?P<next>$|[^0-9A-Za-z])",
        replacement: "${1}{hex}",
        folds: "runs of 8 or more hex digits between non-alphanumerics (`deadbeef01`, \
                `sha_3f2a9c81d0`)",
    },
    DefaultRule {
        pattern: r"(^|[^A-Za-z0-9_-])[0-9_-]*[0-9][0-9_-]*(?P<next>$|[^A-Za-z0-9_-])",
        replacement: "${1}{n}",
        folds: "a number standing alone (`batch 42`, `42`, `1.5`, `10-20`): not one inside a \
                word, with a letter before or after it, directly or through `_` or `-` \
                (`q01`, `q14a`, `step_3`, `v2`, `etl-v2`, `eu1`, `2nd` stay)",
    },
];

/// The default rules of 0.1.0 and 0.2.0 before they kept numbers inside words (every number
/// folded, `q01` into `q{n}`): a checkpoint written under them is still read (see
/// `Settings::accepted_model_fingerprints`), and CHANGELOG shows them for whoever wants that
/// folding back.
pub const PREVIOUS_DEFAULT_RULES: &[(&str, &str)] = &[
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
];

/// Default label rewrite rules ([`DEFAULT_RULES`]). Compiled once per process: a
/// configuration's defaults are made more than once at start, and compiling them costs millions
/// of instructions.
pub fn default_rewrite_rules() -> Vec<RewriteRule> {
    static RULES: std::sync::LazyLock<Vec<RewriteRule>> = std::sync::LazyLock::new(|| {
        compile(DEFAULT_RULES.iter().map(|r| (r.pattern, r.replacement)))
    });
    RULES.clone()
}

/// [`PREVIOUS_DEFAULT_RULES`], compiled.
pub fn previous_default_rewrite_rules() -> Vec<RewriteRule> {
    compile(PREVIOUS_DEFAULT_RULES.iter().copied())
}

fn compile<'a>(rules: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<RewriteRule> {
    rules
        .filter_map(|(p, r)| {
            Some(RewriteRule {
                pattern: parse::regex(p).ok().flatten()?,
                replacement: r.to_string(),
            })
        })
        .collect()
}

/// A regex rewrite applied to every job group, description and SQL description. Every match
/// is replaced, left to right, as `regex`'s `replace_all` does, with one addition: what a group
/// named `next` matches is checked but not replaced, and the next match may read it (a
/// look-ahead, which Rust's `regex` lacks: `(^|\W)\d+(?P<next>$|\W)` folds both numbers of
/// `1 2`).
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
