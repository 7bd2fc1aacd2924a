//! GC pressure: a stage whose tasks spent much of their time in GC.

use spark_exporter_core::config::Thresholds;
use spark_exporter_core::model::details::StageDetail;

use super::{numbers, secs, Cx, Draft, Find, Rule, TASK_SECONDS};

/// The rule.
pub const RULE: Rule = Rule {
    id: "gc_pressure",
    step: "GC",
    scope: "a stage",
    when: "a stage's GC time ≥ `gc_ratio` × its task run time and ≥ `gc_min`",
    cost: "the GC time",
    has_cost: true,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &["gc_ratio", "gc_min"],
    remedy: "Hold less per task: more partitions, no huge collect_list/groupByKey values, \
             serialized caching; or give executors more heap (spark.executor.memory) and try \
             G1GC settings.",
    find: Find::Stage(find),
    notes: None,
};

/// A stage whose tasks spent at least `gc_ratio` of their run time, and at least `gc_min`, in
/// GC. Cost: the GC time.
fn find(cx: &Cx<'_, '_>, s: &StageDetail, t: &Thresholds) -> Vec<Draft> {
    let x = &s.totals;
    if x.run_time_ms == 0 {
        return vec![];
    }
    let ratio = x.gc_time_ms as f64 / x.run_time_ms as f64;
    let gc_s = secs(x.gc_time_ms);
    if ratio < t.gc_ratio || gc_s < t.gc_min.as_secs_f64() {
        return vec![];
    }
    let mut nums = numbers([
        ("gc_seconds", gc_s),
        ("task_seconds", secs(x.run_time_ms)),
        ("gc_ratio", ratio),
    ]);
    // Spark counts only the memory its operators reserve (sorts, hash aggregates, joins): 0 for
    // a stage whose tasks hold their data as objects (Python RDDs, `collect_list` groups), as
    // its REST `peakExecutionMemory` says. Left out then, not printed as 0 B.
    if x.peak_execution_memory_bytes > 0 {
        nums.insert(
            "peak_execution_memory_bytes".into(),
            x.peak_execution_memory_bytes as f64,
        );
    }
    vec![cx.stage_draft(
        s,
        format!(
            "Stage {} spent {:.0}% of its task time in GC",
            s.stage_id,
            ratio * 100.0
        ),
        gc_s,
        nums,
    )]
}
