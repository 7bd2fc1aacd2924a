//! Locality: many tasks ran far from their data.

use spark_exporter_core::config::Thresholds;
use spark_exporter_core::model::view::GroupView;

use super::{group_place, numbers, Cx, Draft, Find, Rule, TASK_SECONDS};

/// The rule.
pub const RULE: Rule = Rule {
    id: "locality",
    step: "Locality",
    scope: "a job group",
    when: "≥ `locality_remote_ratio` of a job group's tasks with a preference (≥ \
           `locality_min_tasks`) ran `RACK_LOCAL` or `ANY`",
    cost: "none (0): Spark does not time remote reads",
    has_cost: false,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "event logs",
    thresholds: &["locality_remote_ratio", "locality_min_tasks"],
    remedy: "Raise spark.locality.wait if executors sit near the data but are busy; \
             run executors where the data is (HDFS) or accept remote reads for object \
             storage.",
    find: Find::Group(find),
    notes: None,
};

/// Of a job group's tasks with a locality preference, at least `locality_remote_ratio` ran
/// `RACK_LOCAL` or `ANY` (event logs only). No cost: Spark does not time remote reads.
fn find(_: &Cx<'_, '_>, g: &GroupView<'_>, t: &Thresholds) -> Vec<Draft> {
    let Some(l) = g.locality else { return vec![] };
    let all: u64 = l.iter().sum();
    let with_pref = all - l[3];
    let remote = l[2] + l[4];
    if with_pref == 0 || with_pref < t.locality_min_tasks {
        return vec![];
    }
    let ratio = remote as f64 / with_pref as f64;
    if ratio < t.locality_remote_ratio {
        return vec![];
    }
    vec![Draft {
        title: format!("{:.0}% of tasks ran far from their data", ratio * 100.0),
        cost_seconds: 0.0,
        at: group_place(g),
        numbers: numbers([
            ("process_local", l[0] as f64),
            ("node_local", l[1] as f64),
            ("rack_local", l[2] as f64),
            ("no_pref", l[3] as f64),
            ("any", l[4] as f64),
            ("remote_ratio", ratio),
        ]),
        url: None,
        remedy: None,
    }]
}
