//! Skew: a complete stage whose longest task ran far longer than its median one.

use spark_exporter_core::config::Thresholds;
use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::StageStatus;

use super::{numbers, secs, Cx, Draft, Find, Rule, TASK_SECONDS};

/// The rule.
pub const RULE: Rule = Rule {
    id: "skew",
    step: "Skew",
    scope: "a stage",
    when: "a complete stage's longest task ran ≥ `skew_ratio` × its median task and ≥ \
           `skew_min_excess` longer (Spark's `taskSummary` quantiles: REST's, or the same from \
           the event log's task ends)",
    cost: "longest − median task duration: how long the stage ran past a balanced one while \
           its other slots waited",
    has_cost: true,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &["skew_ratio", "skew_min_excess"],
    remedy: "Spread the hot key: salt it, or let adaptive execution split skewed join partitions \
             (spark.sql.adaptive.skewJoin.enabled); repartition by a better-spread column before \
             the wide operation.",
    find: Find::Stage(find),
    notes: None,
};

/// A complete stage whose longest task ran at least `skew_ratio` times its median one and at
/// least `skew_min_excess` longer. Cost: longest − median task duration, the time the stage ran
/// past a balanced one while its other task slots waited.
fn find(cx: &Cx<'_, '_>, s: &StageDetail, t: &Thresholds) -> Vec<Draft> {
    let Some((longest, median)) = s.longest_median_ms else {
        return vec![];
    };
    if s.status != StageStatus::Complete || median <= 0.0 {
        return vec![];
    }
    let ratio = longest / median;
    let excess = (longest - median) / 1000.0;
    if ratio < t.skew_ratio || excess < t.skew_min_excess.as_secs_f64() {
        return vec![];
    }
    vec![cx.stage_draft(
        s,
        format!(
            "Stage {} is skewed: its longest task ran {ratio:.1}x its median one",
            s.stage_id
        ),
        excess,
        numbers([
            ("longest_task_seconds", longest / 1000.0),
            ("median_task_seconds", median / 1000.0),
            ("skew_ratio", ratio),
            ("tasks", s.tasks.succeeded as f64),
            ("task_seconds", secs(s.totals.run_time_ms)),
        ]),
    )]
}
