//! Partial cache: a cached dataset not fully in the cache.

use super::{numbers, Cx, Draft, End, Find, Rule, TASK_SECONDS};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "partial_cache",
    step: "Cached data",
    scope: "a cached dataset",
    when: "a cached dataset has some but not all partitions cached",
    cost: "none (0): Spark does not time recomputation",
    has_cost: false,
    grouped: false,
    unit: TASK_SECONDS,
    sources: "both (event logs need `spark.eventLog.logBlockUpdates.enabled`)",
    thresholds: &[],
    remedy: "The rest is recomputed on each read: give storage more memory, cache \
             with MEMORY_AND_DISK or serialized, or cache less.",
    find: Find::End(find),
    notes: None,
};

/// A cached dataset with some but not all partitions cached (evicted, or never fitted). No
/// cost: Spark does not time recomputation.
fn find(cx: &Cx<'_, '_>, _: &End<'_, '_>) -> Vec<Draft> {
    cx.app
        .cached_datasets()
        .into_iter()
        .filter(|d| d.cached_fraction < 1.0)
        .map(|d| Draft {
            title: format!(
                "Cached dataset {} is only {:.0}% cached",
                d.name,
                d.cached_fraction * 100.0
            ),
            cost_seconds: 0.0,
            at: Place {
                subject: Some(format!("rdd {}: {}", d.rdd_id, d.name)),
                ..Place::default()
            },
            numbers: numbers([
                ("cached_fraction", d.cached_fraction),
                ("memory_bytes", d.memory_bytes as f64),
                ("disk_bytes", d.disk_bytes as f64),
            ]),
            url: cx.links.page(cx.app.id(), "storage/"),
            remedy: None,
        })
        .collect()
}
