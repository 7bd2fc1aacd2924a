//! Spill: a stage that spilled to disk.

use spark_exporter_core::config::Thresholds;
use spark_exporter_core::model::details::StageDetail;

use super::{human_bytes, numbers, secs, Cx, Draft, Find, Rule, TASK_SECONDS};

/// The rule.
pub const RULE: Rule = Rule {
    id: "spill",
    step: "Spill",
    scope: "a stage",
    when: "a stage spilled ≥ `spill_min_bytes` to disk",
    cost: "Spark does not time spills: the stage's task time × min(1, disk bytes spilled / \
           (input + shuffle bytes read))",
    has_cost: true,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &["spill_min_bytes"],
    remedy: "Give each task less data or more memory: more shuffle partitions \
             (spark.sql.shuffle.partitions, or adaptive execution's advisory partition size), \
             more executor memory or spark.memory.fraction; for windows, a larger \
             spark.sql.windowExec.buffer.spill.threshold.",
    find: Find::Stage(find),
    notes: None,
};

/// A stage that spilled at least `spill_min_bytes` to disk. Spark does not time spills; the
/// cost is the stage's task time × min(1, disk bytes spilled / bytes read (input + shuffle
/// read)).
fn find(cx: &Cx<'_, '_>, s: &StageDetail, t: &Thresholds) -> Vec<Draft> {
    let x = &s.totals;
    if x.disk_spilled_bytes == 0 || x.disk_spilled_bytes < t.spill_min_bytes {
        return vec![];
    }
    let read = x.input_bytes.saturating_add(x.shuffle_read_bytes).max(1);
    let share = (x.disk_spilled_bytes as f64 / read as f64).min(1.0);
    let task_s = secs(x.run_time_ms);
    vec![cx.stage_draft(
        s,
        format!(
            "Stage {} spilled {} to disk",
            s.stage_id,
            human_bytes(x.disk_spilled_bytes)
        ),
        task_s * share,
        numbers([
            ("disk_spilled_bytes", x.disk_spilled_bytes as f64),
            ("memory_spilled_bytes", x.memory_spilled_bytes as f64),
            ("input_bytes", x.input_bytes as f64),
            ("shuffle_read_bytes", x.shuffle_read_bytes as f64),
            ("task_seconds", task_s),
        ]),
    )]
}
