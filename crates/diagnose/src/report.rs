//! What a diagnosis says, in the shape `--format json` prints: versioned
//! ([`SCHEMA_VERSION`]), described by the JSON Schema generated from these types ([`schema`]),
//! committed as `schemas/diagnose-report.v1.schema.json` (a test fails when it drifts; the tests
//! validate every report against it).
//!
//! The schema is the v1 contract: the `schemars` attributes here (required nullable fields,
//! minimums, lengths, the source kinds) make the generated schema accept exactly what v1 does.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::place::{Place, Summary};
pub use crate::rules::Kind;

/// The report format's version: a field removed, renamed or changed in meaning is a new
/// version; a field or a finding kind added is not (readers ignore what they do not know).
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report: one entry per application diagnosed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    #[schemars(
        schema_with = "schema_version",
        description = "The report format's version: 1."
    )]
    pub schema_version: u32,
    /// `spark-exporter <version>`.
    #[schemars(pattern("^spark-exporter "))]
    pub generator: String,
    /// Where the data came from.
    pub source: SourceInfo,
    /// The applications, in id order.
    pub applications: Vec<AppReport>,
}

/// Where a report's data came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = read_errors_optional)]
pub struct SourceInfo {
    /// `rest` (a live driver or History Server) or `event_log`.
    #[schemars(extend("enum" = ["rest", "event_log"]))]
    pub kind: String,
    /// The URLs or paths read.
    #[schemars(length(min = 1))]
    pub inputs: Vec<String>,
    /// Event-log lines, blocks or files that could not be read and were skipped (damaged or
    /// unreadable input; the rest was diagnosed). 0 for REST.
    #[serde(default)]
    pub read_errors: u64,
}

/// One application's diagnosis, its findings of kind `K` (a registry's kinds: [`Kind`], the
/// built-in rules').
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "AppReport", description = "One application's diagnosis.")]
pub struct AppReport<K = Kind> {
    /// Application id.
    #[schemars(length(min = 1))]
    pub app_id: String,
    /// Application name.
    pub app_name: String,
    /// Spark version, when known.
    pub spark_version: String,
    /// Start (epoch ms), when known.
    pub start_ms: Option<i64>,
    /// End (epoch ms), when it has ended.
    pub end_ms: Option<i64>,
    /// The application's totals, for scale.
    pub summary: Summary,
    /// The stages with the most task time, most first (at most 5): where the time went.
    #[schemars(length(max = 5))]
    pub bottlenecks: Vec<Bottleneck>,
    /// The findings, most costly first.
    pub findings: Vec<Finding<K>>,
    /// The settings to try, one value per property per scope, with the findings each serves
    /// (`diagnose` adds them from the run's configuration; absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<crate::advice::types::SettingChange>,
    /// Task time by job group and description, most first: where the time went, per group.
    /// For the text only (the JSON report, schema v1, is unchanged).
    #[serde(skip)]
    pub group_times: Vec<GroupTime>,
    /// The run predicted on other executor counts (event logs of batch applications; absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if: Option<crate::whatif::WhatIf>,
    /// What the procedure could not check, and how to let it (a streaming query whose trigger
    /// interval is unknown, ...). For the text only.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// One job group's (and description's) share of an application's task time.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTime {
    /// Job group label value.
    pub job_group: String,
    /// Job description label value.
    pub description: String,
    /// Task run time, seconds.
    pub task_seconds: f64,
    /// Jobs ended.
    pub jobs: u64,
}

/// A stage with much of the application's task time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bottleneck {
    /// Where.
    #[serde(flatten)]
    pub at: Place,
    /// Its task run time, seconds.
    #[schemars(range(min = 0))]
    pub task_seconds: f64,
    /// Its share of the application's task run time (1, give or take rounding, at most).
    #[schemars(range(min = 0, max = 1.000001))]
    pub share: f64,
    /// Its wall-clock duration, seconds, when known.
    #[schemars(range(min = 0))]
    pub duration_seconds: Option<f64>,
    /// Its page in the Spark UI, when known.
    pub url: Option<String>,
}

/// One finding, of kind `K` (a registry's kinds: [`Kind`], the built-in rules').
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Finding", description = "One finding.")]
pub struct Finding<K = Kind> {
    /// What kind (a stable identifier, see [`Kind`]).
    pub kind: K,
    /// One line for a human.
    #[schemars(length(min = 1))]
    pub title: String,
    /// The task time (or core time) it explains, seconds; the ranking key. `docs/diagnose.md`
    /// gives each kind's formula.
    #[schemars(range(min = 0))]
    pub cost_seconds: f64,
    /// Where.
    #[serde(flatten)]
    pub at: Place,
    /// The numbers behind it, by name (seconds, bytes, ratios, counts).
    pub numbers: BTreeMap<String, f64>,
    /// What the Spark tuning guides suggest.
    #[schemars(length(min = 1))]
    pub remedy: String,
    /// The stage or SQL page in the Spark UI, when known.
    pub url: Option<String>,
    /// The settings to change for it: the property, the value it ran with and where that came
    /// from, the value to try and what that is based on (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<crate::advice::types::Suggestion>,
    /// Changes to the job's code for it (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<crate::advice::types::CodeChange>,
}

/// `read_errors` may be missing: v1 had reports without it (read as 0).
fn read_errors_optional(s: &mut schemars::Schema) {
    if let Some(serde_json::Value::Array(r)) = s.get_mut("required") {
        r.retain(|f| f != "read_errors");
    }
}

/// `schema_version`: exactly [`SCHEMA_VERSION`].
fn schema_version(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": SCHEMA_VERSION })
}

/// Where the schema is committed, from the repository's root.
pub const SCHEMA_PATH: &str = "schemas/diagnose-report.v1.schema.json";

/// The generator of the committed schemas (the report's, the review's): draft 2020-12, for
/// what is printed.
pub(crate) fn generator() -> schemars::SchemaGenerator {
    // What is printed (the serialize contract): every field is there, null where it does not
    // apply, but `read_errors` (see `read_errors_optional`). Rust's number formats (`uint64`,
    // `double`) are no constraint v1 states, and validators in strict mode reject formats they
    // do not know: left out. The descriptions are the doc comments as plain lines.
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(schemars::transform::RecursiveTransform(
            |s: &mut schemars::Schema| {
                s.remove("format");
                if let Some(serde_json::Value::String(d)) = s.get_mut("description") {
                    *d = d.replace('\n', " ").replace("[`", "`").replace("`]", "`");
                }
            },
        ))
        .into_generator()
}

/// The report's JSON Schema (draft 2020-12), generated from [`Report`]: what
/// `schemas/diagnose-report.v1.schema.json` holds (pretty-printed, with a final newline).
pub fn schema() -> serde_json::Value {
    let mut s = generator().into_root_schema_for::<Report>();
    s.insert(
        "$id".into(),
        "https://github.com/spark-exporter/spark-exporter/schemas/diagnose-report.v1.schema.json"
            .into(),
    );
    s.insert(
        "title".into(),
        "spark-exporter diagnose report, version 1".into(),
    );
    s.insert(
        "description".into(),
        "What `spark-exporter diagnose --format json` prints. Version 1: a field removed, \
         renamed or changed in meaning makes a new version (and a new file); fields and finding \
         kinds may be added within a version, so readers ignore what they do not know. \
         Generated from the report types (crates/diagnose/src/report.rs): do not edit."
            .into(),
    );
    s.to_value()
}

/// For tests: panics unless the committed schema at `path` (from the repository's root) is
/// `schema`; with `UPDATE_SCHEMA` set it rewrites it. `module` names the tests that do
/// (`cargo test -p spark-exporter-diagnose <module>::`).
#[cfg(test)]
pub(crate) fn check_schema(path: &str, schema: &serde_json::Value, module: &str) {
    // The repository root, two levels above this crate.
    let file = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    let want = serde_json::to_string_pretty(schema).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&file, &want).expect("schema writable");
        return;
    }
    let have = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        have == want,
        "{path} drifted from its types: run \
         `UPDATE_SCHEMA=1 cargo test -p spark-exporter-diagnose {module}::`"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema is the one the types generate: `UPDATE_SCHEMA=1 cargo test -p
    /// spark-exporter-diagnose report::` rewrites it.
    #[test]
    fn the_committed_schema_is_generated_from_the_types() {
        check_schema(SCHEMA_PATH, &schema(), "report");
    }
}
