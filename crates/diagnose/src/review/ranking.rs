//! The review's types (the JSON document, [`Review`]), the fold ([`Ranking`]) that sums the
//! per-application reports by name and by (name, job group), per kind, and keeps the costliest
//! runs, and the review's schema.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::findings::Rate;

pub use super::settings::NameSetting;
use super::settings::SettingsAcc;
use crate::report::{AppReport, Finding, Kind, Place};

/// The review format's version: a field removed, renamed or changed in meaning is a new
/// version; a field added is not (readers ignore what they do not know).
pub const REVIEW_SCHEMA_VERSION: u32 = 1;

/// Where the review's schema is committed, from the repository's root.
pub const REVIEW_SCHEMA_PATH: &str = "schemas/diagnose-review.v1.schema.json";

/// Most findings of a worst run listed.
pub const TOP_FINDINGS: usize = 3;

/// Most stages of a worst run's timeline: its longest (the others are counted in
/// `stages_left_out`), so that an application of many thousand stages does not grow the review.
pub const MAX_TIMELINE_STAGES: usize = 200;

/// Most unreadable inputs named in a review (the rest are counted only), so that a store of
/// broken logs does not grow the review.
pub const MAX_FAILURES_LISTED: usize = 100;

/// A review of many applications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Review {
    /// [`REVIEW_SCHEMA_VERSION`].
    #[schemars(
        schema_with = "schema_version",
        description = "The review format's version: 1."
    )]
    pub schema_version: u32,
    /// `review`: what this document is (the per-application report has no such field).
    #[schemars(extend("const" = "review"))]
    pub document: String,
    /// `spark-exporter <version>`.
    #[schemars(pattern("^spark-exporter "))]
    pub generator: String,
    /// What was read and how it was filtered.
    pub source: ReviewSource,
    /// How many applications were listed, reviewed, left out and could not be read.
    pub counts: Counts,
    /// The currency of every `money` (`cost.currency`), when prices are configured (`cost.prices`);
    /// `null`: the review has no money.
    #[schemars(pattern("^[A-Z]{3}$"))]
    pub currency: Option<String>,
    /// The inputs that could not be read or diagnosed, with why (at most 100; `counts.failed`
    /// counts them all).
    pub failures: Vec<Failure>,
    /// Application names, the costliest first (by their costliest kind).
    pub names: Vec<NameRow>,
    /// Job groups of each application name, the costliest first (by their costliest kind). The
    /// findings without a job group (the application-wide kinds) are in `names` only.
    pub groups: Vec<GroupRow>,
    /// The costliest runs (by their costliest kind), with their top findings.
    pub worst_runs: Vec<Run>,
}

/// What a review read and how it was filtered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewSource {
    /// `rest` (a History Server) or `event_log`.
    #[schemars(extend("enum" = ["rest", "event_log"]))]
    pub kind: String,
    /// The URLs or paths read.
    #[schemars(length(min = 1))]
    pub inputs: Vec<String>,
    /// `--since`: only applications that ended at or after this time (epoch ms), and those still
    /// running.
    pub since_ms: Option<i64>,
    /// `--app-name`: only applications whose name matches this regex.
    pub app_name: Option<String>,
    /// `--job-group`: only findings of job groups matching this regex.
    pub job_group: Option<String>,
}

/// How many applications a review saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    /// Event logs (or History Server applications) listed.
    pub listed: u64,
    /// Applications diagnosed and ranked.
    pub reviewed: u64,
    /// Of those, still running (their findings so far).
    pub running: u64,
    /// Logs or applications left out by `--since` or `--app-name`.
    pub filtered: u64,
    /// Logs or applications that could not be read or diagnosed: skipped.
    pub failed: u64,
    /// Of those reviewed, with prices configured, applications no price applies to (no entry
    /// for their `cost.property` value, or none in effect at their end): their findings carry
    /// no money.
    #[serde(default)]
    pub unpriced: u64,
    /// Event-log lines, blocks or files that could not be read and were skipped inside the
    /// logs reviewed (the rest of each was diagnosed).
    pub read_errors: u64,
}

/// An input a review skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// The log (path or URL) or application id.
    pub input: String,
    /// Why.
    pub error: String,
}

/// The findings of one kind in a row: their number and summed cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KindCost {
    /// The finding kind.
    pub kind: Kind,
    /// The unit of its cost (`task-seconds`, `core-seconds`, ...).
    pub unit: String,
    /// Findings of this kind.
    pub findings: u64,
    /// Their cost, summed, seconds of `unit`.
    #[schemars(range(min = 0))]
    pub cost_seconds: f64,
    /// Their cost in money (`currency`), an estimate as `spark_diagnosis_cost_total`'s: each
    /// finding's core time at its application's core-hour price; `null` without prices.
    #[schemars(range(min = 0))]
    pub money: Option<f64>,
}

/// An application name's findings over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NameRow {
    /// Application name.
    pub app_name: String,
    /// Applications of this name reviewed.
    pub runs: u64,
    /// Findings, every kind.
    pub findings: u64,
    /// Per kind, the costliest first. Costs of different kinds overlap: never add them up.
    pub kinds: Vec<KindCost>,
    /// The settings the runs' diagnoses suggested, summed over the runs, the costliest first:
    /// what is most worth changing (absent in reviews made before advice).
    #[serde(default)]
    pub settings: Vec<NameSetting>,
}

/// A job group's findings over the runs of its application name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupRow {
    /// Application name.
    pub app_name: String,
    /// Job group label value (`""` for jobs without one).
    pub job_group: String,
    /// Runs with at least one finding in this group.
    pub runs: u64,
    /// Findings, every kind.
    pub findings: u64,
    /// Per kind, the costliest first. Costs of different kinds overlap: never add them up.
    pub kinds: Vec<KindCost>,
}

/// One of the costliest runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    /// Application id.
    pub app_id: String,
    /// Application name.
    pub app_name: String,
    /// Start (epoch ms), when known.
    pub start_ms: Option<i64>,
    /// End (epoch ms), when it has ended.
    pub end_ms: Option<i64>,
    /// Findings, every kind.
    pub findings: u64,
    /// Per kind, the costliest first. Costs of different kinds overlap: never add them up.
    pub kinds: Vec<KindCost>,
    /// Its costliest findings (at most 3), the costliest first.
    #[schemars(length(max = 3))]
    pub top_findings: Vec<TopFinding>,
    /// Its stage attempts, by start: the timeline of the run (at most 200, its longest).
    #[schemars(length(max = 200))]
    pub stages: Vec<StageSpan>,
    /// Stage attempts left out of `stages` (beyond the 200 longest).
    pub stages_left_out: u64,
    /// The run predicted on other executor counts (event logs of batch applications).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if: Option<crate::whatif::WhatIf>,
}

/// A stage attempt of a worst run, on its timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageSpan {
    /// Stage id.
    pub stage_id: u64,
    /// Attempt number.
    pub attempt: u32,
    /// Stage name.
    pub name: String,
    /// `pending`, `active`, `complete`, `failed` or `skipped`.
    pub status: String,
    /// Submission (epoch ms), when known.
    pub start_ms: Option<i64>,
    /// Completion (epoch ms), when it has ended.
    pub end_ms: Option<i64>,
    /// Tasks that ended (succeeded, failed or killed).
    pub tasks: u64,
    /// Task run time summed, seconds.
    #[schemars(range(min = 0))]
    pub task_seconds: f64,
    /// The kinds of the findings at this stage attempt.
    pub kinds: Vec<Kind>,
}

/// One application as a review folds it: its report, the price of its findings' time (with
/// prices configured and one applying to it: [`spark_exporter_core::model::AppView`]'s
/// `finding_rate`) and its stage attempts (for the worst runs' timelines).
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The application's report (a `--job-group` filter applied).
    pub report: AppReport,
    /// The price of its findings' time; `None`: no price applies.
    pub rate: Option<Rate>,
    /// Its stage attempts, in `(stage_id, attempt)` order.
    pub stages: Vec<StageDetail>,
}

/// The timeline of `stages` with each attempt's finding kinds from `findings`: the
/// [`MAX_TIMELINE_STAGES`] longest, by start, and how many were left out.
pub fn timeline(stages: &[StageDetail], findings: &[Finding]) -> (Vec<StageSpan>, u64) {
    let mut v: Vec<&StageDetail> = stages.iter().collect();
    let wall = |s: &StageDetail| match (s.submission_ms, s.completion_ms) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    let left_out = v.len().saturating_sub(MAX_TIMELINE_STAGES) as u64;
    if left_out > 0 {
        v.sort_by_key(|s| std::cmp::Reverse(wall(s)));
        v.truncate(MAX_TIMELINE_STAGES);
    }
    v.sort_by_key(|s| (s.submission_ms.unwrap_or(i64::MAX), s.stage_id, s.attempt));
    let spans = v
        .into_iter()
        .map(|s| {
            let mut kinds: Vec<Kind> = findings
                .iter()
                .filter(|f| {
                    f.at.stage_id == Some(s.stage_id) && f.at.stage_attempt == Some(s.attempt)
                })
                .map(|f| f.kind)
                .collect();
            kinds.sort();
            kinds.dedup();
            StageSpan {
                stage_id: s.stage_id,
                attempt: s.attempt,
                name: s.name.to_string(),
                status: s.status.label().to_string(),
                start_ms: s.submission_ms,
                end_ms: s.completion_ms,
                tasks: s.tasks.succeeded + s.tasks.failed + s.tasks.killed,
                task_seconds: s.totals.run_time_ms as f64 / 1000.0,
                kinds,
            }
        })
        .collect();
    (spans, left_out)
}

/// A finding of a worst run, in short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TopFinding {
    /// What kind.
    pub kind: Kind,
    /// One line for a human.
    pub title: String,
    /// The time it explains, seconds of its kind's unit.
    #[schemars(range(min = 0))]
    pub cost_seconds: f64,
    /// Its cost in money (`currency`), an estimate; `null` without prices.
    #[schemars(range(min = 0))]
    pub money: Option<f64>,
    /// Where.
    #[serde(flatten)]
    pub at: Place,
}

/// Per-kind sums, as they are folded: findings, seconds, money.
type Kinds = BTreeMap<Kind, (u64, f64, f64)>;

fn add(k: &mut Kinds, kind: Kind, cost: f64, money: f64) {
    let e = k.entry(kind).or_default();
    e.0 += 1;
    e.1 += cost;
    e.2 += money;
}

/// What a kind's row is ranked by: its money in a priced review, else its seconds.
fn key(c: &KindCost) -> f64 {
    c.money.unwrap_or(c.cost_seconds)
}

/// The per-kind rows, the costliest first (ties in the procedure's order); with `priced`, with
/// their money, and the costliest by money.
fn kind_costs(k: &Kinds, priced: bool) -> Vec<KindCost> {
    let mut v: Vec<KindCost> = k
        .iter()
        .map(|(kind, (n, c, m))| KindCost {
            kind: *kind,
            unit: kind.rule().unit.to_string(),
            findings: *n,
            cost_seconds: *c,
            money: priced.then_some(*m),
        })
        .collect();
    v.sort_by(|a, b| {
        key(b)
            .total_cmp(&key(a))
            .then(b.cost_seconds.total_cmp(&a.cost_seconds))
            .then(a.kind.cmp(&b.kind))
    });
    v
}

/// The ranking key of a row: the cost of its costliest kind, in money in a priced review (never
/// a sum over kinds).
fn top_cost(k: &[KindCost]) -> f64 {
    k.first().map_or(0.0, key)
}

#[derive(Debug, Default)]
struct NameAcc {
    runs: u64,
    kinds: Kinds,
    settings: SettingsAcc,
}

#[derive(Debug, Default)]
struct GroupAcc {
    runs: u64,
    kinds: Kinds,
}

/// The ranking being folded: one row per name and per (name, job group), and the `top`
/// costliest runs.
#[derive(Debug, Default)]
pub struct Ranking {
    top: usize,
    priced: bool,
    names: BTreeMap<String, NameAcc>,
    groups: BTreeMap<(String, String), GroupAcc>,
    worst: Vec<Run>,
}

impl Ranking {
    /// An empty ranking keeping the `top` costliest runs; `priced`: prices are configured,
    /// every cost has its money (0 for the applications no price applies to).
    pub fn new(top: usize, priced: bool) -> Ranking {
        Ranking {
            top,
            priced,
            ..Ranking::default()
        }
    }

    /// Fold one application in (its findings as they are: a `--job-group` filter is applied to
    /// the report before).
    pub fn fold(&mut self, r: &Reviewed) {
        let a = &r.report;
        let money = |f: &Finding| {
            r.rate
                .map_or(0.0, |rate| rate.money(f.kind.as_str(), f.cost_seconds))
        };
        let name = self.names.entry(a.app_name.clone()).or_default();
        name.runs += 1;
        name.settings.fold(a, &money);
        let mut run = Kinds::new();
        let mut groups: BTreeMap<&str, Kinds> = BTreeMap::new();
        for f in &a.findings {
            let m = money(f);
            add(&mut name.kinds, f.kind, f.cost_seconds, m);
            add(&mut run, f.kind, f.cost_seconds, m);
            if let Some(g) = &f.at.job_group {
                add(groups.entry(g).or_default(), f.kind, f.cost_seconds, m);
            }
        }
        for (g, k) in groups {
            let row = self
                .groups
                .entry((a.app_name.clone(), g.to_string()))
                .or_default();
            row.runs += 1;
            for (kind, (n, c, m)) in k {
                let e = row.kinds.entry(kind).or_default();
                e.0 += n;
                e.1 += c;
                e.2 += m;
            }
        }
        if self.top == 0 || a.findings.is_empty() {
            return;
        }
        let kinds = kind_costs(&run, self.priced);
        // A run that would not make the top is not built (its timeline is not copied).
        if self.worst.len() >= self.top
            && self
                .worst
                .last()
                .is_some_and(|w| top_cost(&w.kinds) > top_cost(&kinds))
        {
            return;
        }
        let priced = self.priced;
        let mut top: Vec<&Finding> = a.findings.iter().collect();
        top.sort_by(|x, y| {
            money(y)
                .total_cmp(&money(x))
                .then(y.cost_seconds.total_cmp(&x.cost_seconds))
        });
        let (stages, stages_left_out) = timeline(&r.stages, &a.findings);
        self.worst.push(Run {
            app_id: a.app_id.clone(),
            app_name: a.app_name.clone(),
            start_ms: a.start_ms,
            end_ms: a.end_ms,
            findings: a.findings.len() as u64,
            kinds,
            top_findings: top
                .into_iter()
                .take(TOP_FINDINGS)
                .map(|f| TopFinding {
                    kind: f.kind,
                    title: f.title.clone(),
                    cost_seconds: f.cost_seconds,
                    money: priced.then(|| money(f)),
                    at: f.at.clone(),
                })
                .collect(),
            stages,
            stages_left_out,
            what_if: a.what_if.clone(),
        });
        // Keep the `top` costliest only: the ranking stays small whatever the store holds.
        sort_runs(&mut self.worst);
        self.worst.truncate(self.top);
    }

    /// The rows, ranked: the name rows and the group rows.
    pub fn finish(self) -> (Vec<NameRow>, Vec<GroupRow>, Vec<Run>) {
        let priced = self.priced;
        let mut names: Vec<NameRow> = self
            .names
            .into_iter()
            .map(|(app_name, a)| NameRow {
                app_name,
                runs: a.runs,
                findings: a.kinds.values().map(|(n, _, _)| n).sum(),
                kinds: kind_costs(&a.kinds, priced),
                settings: a.settings.finish(priced),
            })
            .collect();
        names.sort_by(|a, b| {
            top_cost(&b.kinds)
                .total_cmp(&top_cost(&a.kinds))
                .then(b.findings.cmp(&a.findings))
                .then(a.app_name.cmp(&b.app_name))
        });
        let mut groups: Vec<GroupRow> = self
            .groups
            .into_iter()
            .map(|((app_name, job_group), a)| GroupRow {
                app_name,
                job_group,
                runs: a.runs,
                findings: a.kinds.values().map(|(n, _, _)| n).sum(),
                kinds: kind_costs(&a.kinds, priced),
            })
            .collect();
        groups.sort_by(|a, b| {
            top_cost(&b.kinds)
                .total_cmp(&top_cost(&a.kinds))
                .then(b.findings.cmp(&a.findings))
                .then((&a.app_name, &a.job_group).cmp(&(&b.app_name, &b.job_group)))
        });
        (names, groups, self.worst)
    }
}

/// Runs, the costliest first (by their costliest kind), then by id.
fn sort_runs(v: &mut [Run]) {
    v.sort_by(|a, b| {
        top_cost(&b.kinds)
            .total_cmp(&top_cost(&a.kinds))
            .then(a.app_id.cmp(&b.app_id))
    });
}

/// `schema_version`: exactly [`REVIEW_SCHEMA_VERSION`].
fn schema_version(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": REVIEW_SCHEMA_VERSION })
}

/// The review's JSON Schema (draft 2020-12), generated from [`Review`] as the report's is
/// ([`crate::report::schema`]): what `schemas/diagnose-review.v1.schema.json` holds.
pub fn schema() -> serde_json::Value {
    let mut s = crate::report::generator().into_root_schema_for::<Review>();
    s.insert(
        "$id".into(),
        "https://github.com/spark-exporter/spark-exporter/schemas/diagnose-review.v1.schema.json"
            .into(),
    );
    s.insert(
        "title".into(),
        "spark-exporter diagnose review, version 1".into(),
    );
    s.insert(
        "description".into(),
        "What `spark-exporter diagnose --review --format json` prints: many applications' \
         findings ranked by application name and job group, per kind (costs of different kinds \
         overlap: never add them up), and the worst runs. Version 1: a field removed, renamed \
         or changed in meaning makes a new version (and a new file); fields and finding kinds \
         may be added within a version, so readers ignore what they do not know. Generated \
         from the review types (crates/diagnose/src/review/ranking.rs): do not edit."
            .into(),
    );
    s.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Finding, Summary};
    use crate::review::render;

    fn finding(kind: Kind, group: Option<&str>, cost: f64) -> Finding {
        Finding {
            kind,
            title: format!("{} here", kind.as_str()),
            cost_seconds: cost,
            at: Place {
                job_group: group.map(String::from),
                ..Place::default()
            },
            numbers: BTreeMap::new(),
            remedy: "r".into(),
            url: None,
            suggestions: vec![],
            code: vec![],
        }
    }

    fn app(id: &str, name: &str, findings: Vec<Finding>) -> AppReport {
        AppReport {
            app_id: id.into(),
            app_name: name.into(),
            spark_version: "4.1.1".into(),
            start_ms: Some(1),
            end_ms: Some(2),
            summary: Summary::default(),
            bottlenecks: vec![],
            findings,
            settings: vec![],
            group_times: vec![],
            what_if: None,
            notes: vec![],
        }
    }

    fn rev(report: AppReport) -> Reviewed {
        Reviewed {
            report,
            rate: None,
            stages: vec![],
        }
    }

    #[test]
    fn rows_sum_per_kind_and_rank_by_the_costliest_kind_never_by_a_sum() {
        let mut r = Ranking::new(2, false);
        r.fold(&rev(app(
            "a1",
            "etl",
            vec![
                finding(Kind::Skew, Some("g"), 5.0),
                finding(Kind::Spill, Some("g"), 4.0),
                finding(Kind::IdleCores, None, 1.0),
            ],
        )));
        r.fold(&rev(app(
            "a2",
            "etl",
            vec![finding(Kind::Skew, Some("h"), 2.0)],
        )));
        // Its kinds add up to 9 + 9 = 18 > 10: a sum over kinds would rank it first.
        r.fold(&rev(app(
            "b1",
            "adhoc",
            vec![
                finding(Kind::Skew, Some("x"), 9.0),
                finding(Kind::Spill, Some("x"), 9.0),
            ],
        )));
        r.fold(&rev(app("c1", "quiet", vec![])));
        let (names, groups, worst) = r.finish();
        let order: Vec<&str> = names.iter().map(|n| n.app_name.as_str()).collect();
        assert_eq!(order, ["adhoc", "etl", "quiet"]);
        let etl = &names[1];
        assert_eq!((etl.runs, etl.findings), (2, 4));
        assert_eq!(etl.kinds[0].kind, Kind::Skew);
        assert_eq!(etl.kinds[0].cost_seconds, 7.0);
        assert_eq!(etl.kinds[0].findings, 2);
        assert_eq!(etl.kinds[0].unit, "task-seconds");
        assert_eq!(names[2].runs, 1);
        assert!(names[2].kinds.is_empty());
        // The application-wide finding is in its name's row only.
        assert!(groups
            .iter()
            .all(|g| g.kinds.iter().all(|k| k.kind != Kind::IdleCores)));
        let g: Vec<(&str, &str, u64)> = groups
            .iter()
            .map(|g| (g.app_name.as_str(), g.job_group.as_str(), g.runs))
            .collect();
        assert_eq!(g, [("adhoc", "x", 1), ("etl", "g", 1), ("etl", "h", 1)]);
        // Two kept of the three runs with findings, the costliest first.
        let w: Vec<&str> = worst.iter().map(|r| r.app_id.as_str()).collect();
        assert_eq!(w, ["b1", "a1"]);
        assert_eq!(worst[1].top_findings.len(), 3);
        assert_eq!(worst[1].top_findings[0].cost_seconds, 5.0);
    }

    #[test]
    fn the_text_is_aligned_and_says_costs_overlap() {
        let mut r = Ranking::new(5, false);
        r.fold(&rev(app(
            "a1",
            "a-long-application-name",
            vec![finding(Kind::Skew, Some("g"), 1234.4)],
        )));
        r.fold(&rev(app(
            "b1",
            "b",
            vec![finding(Kind::Spill, Some("g"), 3.0)],
        )));
        let (names, groups, worst_runs) = r.finish();
        let review = Review {
            schema_version: REVIEW_SCHEMA_VERSION,
            document: "review".into(),
            generator: "spark-exporter test".into(),
            source: ReviewSource {
                kind: "event_log".into(),
                inputs: vec!["/logs".into()],
                since_ms: None,
                app_name: None,
                job_group: None,
            },
            counts: Counts {
                listed: 2,
                reviewed: 2,
                ..Counts::default()
            },
            currency: None,
            failures: vec![],
            names,
            groups,
            worst_runs,
        };
        let text = render(&review);
        assert!(text.contains("never add them up"), "{text}");
        assert!(
            text.contains("1,234 task-seconds") && text.contains("3.0 task-seconds"),
            "{text}"
        );
        // The kind column starts at the same place on every row of the names' table.
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Application names"))
            .skip(1)
            .take(3)
            .collect();
        let at: Vec<Option<usize>> = rows
            .iter()
            .zip(["kind", "skew", "spill"])
            .map(|(l, k)| l.find(k))
            .collect();
        assert!(at.iter().all(|a| a.is_some() && *a == at[0]), "{rows:#?}");
    }

    /// The committed schema is the one the types generate: `UPDATE_SCHEMA=1 cargo test -p
    /// spark-exporter-diagnose review::` rewrites it.
    #[test]
    fn the_committed_review_schema_is_generated_from_the_types() {
        crate::report::check_schema(REVIEW_SCHEMA_PATH, &schema(), "review");
    }
}
