//! Scheduler delay: tasks waited long for the scheduler.

use spark_exporter_core::config::Thresholds;
use spark_exporter_core::model::view::GroupView;

use super::{group_place, numbers, secs, Cx, Draft, Find, Rule, TASK_SECONDS};

/// The rule.
pub const RULE: Rule = Rule {
    id: "scheduler_delay",
    step: "Scheduler overhead",
    scope: "a job group",
    when: "a job group's scheduler delay (the UI's formula) ≥ `scheduler_delay_ratio` × its \
           task run time and ≥ `scheduler_delay_min`",
    cost: "the scheduler delay",
    has_cost: true,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "event logs",
    thresholds: &["scheduler_delay_ratio", "scheduler_delay_min"],
    remedy: "Tasks too short for their overhead: fewer, larger partitions (coalesce, \
             adaptive coalescing); smaller closures and broadcast variables; a driver \
             with more cores if it is busy.",
    find: Find::Group(find),
    notes: None,
};

/// A job group whose tasks waited at least `scheduler_delay_ratio` of their run time, and at
/// least `scheduler_delay_min`, between being scheduled and running (the UI's scheduler delay;
/// event logs only). Cost: the scheduler delay.
fn find(_: &Cx<'_, '_>, g: &GroupView<'_>, t: &Thresholds) -> Vec<Draft> {
    if !g.from_log || g.totals.run_time_ms == 0 {
        return vec![];
    }
    let delay = secs(g.totals.scheduler_delay_ms);
    let ratio = g.totals.scheduler_delay_ms as f64 / g.totals.run_time_ms as f64;
    if ratio < t.scheduler_delay_ratio || delay < t.scheduler_delay_min.as_secs_f64() {
        return vec![];
    }
    vec![Draft {
        title: format!(
            "Tasks waited {delay:.1} s for the scheduler ({:.0}% of their run time)",
            ratio * 100.0
        ),
        cost_seconds: delay,
        at: group_place(g),
        numbers: numbers([
            ("scheduler_delay_seconds", delay),
            ("task_seconds", secs(g.totals.run_time_ms)),
            ("ratio", ratio),
            ("deserialize_seconds", secs(g.totals.deserialize_ms)),
        ]),
        url: None,
        remedy: None,
    }]
}
