//! Idle cores: cores the application held but did not use.

use super::{numbers, Cx, Draft, End, Find, Rule};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "idle_cores",
    step: "Core utilisation",
    scope: "the application",
    when: "the tasks used < `min_core_utilization` of the core time the executors held, once ≥ \
           `utilization_min_core_time` was held",
    cost: "the idle core-seconds (held − used; see [Cost](internals.md#cost))",
    has_cost: true,
    grouped: false,
    unit: "core-seconds",
    sources: "both",
    thresholds: &["min_core_utilization", "utilization_min_core_time"],
    remedy: "Hold fewer cores while they wait: dynamic allocation \
             (spark.dynamicAllocation.enabled, with shuffle tracking), fewer or smaller \
             executors, more partitions where too few tasks run, and less driver-only \
             work between jobs.",
    find: Find::End(find),
    notes: None,
};

/// Used / allocated core time below `min_core_utilization`, once at least
/// `utilization_min_core_time` was allocated. Cost: the idle core-seconds (allocated − used).
fn find(cx: &Cx<'_, '_>, end: &End<'_, '_>) -> Vec<Draft> {
    let t = &cx.cfg.defaults;
    let s = end.summary;
    let Some(u) = s.core_utilization else {
        return vec![];
    };
    if s.allocated_core_seconds < t.utilization_min_core_time.as_secs_f64()
        || u >= t.min_core_utilization
    {
        return vec![];
    }
    // Allocated − used, from the summary's reading of the cost (held ≥ used, at least 0).
    let idle = (s.allocated_core_seconds - s.used_core_seconds).max(0.0);
    vec![Draft {
        title: format!(
            "Executors' cores were busy {:.0}% of the time they were held",
            u * 100.0
        ),
        cost_seconds: idle,
        at: Place::default(),
        numbers: numbers([
            ("allocated_core_seconds", s.allocated_core_seconds),
            ("used_core_seconds", s.used_core_seconds),
            ("idle_core_seconds", idle),
            ("core_utilization", u),
        ]),
        url: cx.links.page(cx.app.id(), "executors/"),
        remedy: None,
    }]
}
