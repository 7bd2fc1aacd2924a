//! Executor loss: executors lost (not removed by the driver), and the tasks that failed.

use std::collections::BTreeMap;

use super::{numbers, secs, Cx, Draft, End, Find, Rule, TASK_SECONDS};
use crate::place::Place;

/// Executor removal reasons that mean the executor was lost, not released.
const LOST_REASONS: [&str; 3] = ["lost", "heartbeat_timeout", "exited"];

/// The rule.
pub const RULE: Rule = Rule {
    id: "executor_loss",
    step: "Lost executors",
    scope: "the application",
    when: "executors removed as lost, for a heartbeat timeout or an exit (not those the driver \
           released)",
    cost: "the failed tasks' time, estimated per job group as its task time × failed / all its \
           tasks",
    has_cost: true,
    grouped: false,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &[],
    remedy: "Read the executors' logs for the cause: out of memory (more \
             spark.executor.memoryOverhead or memory, fewer cores per executor), \
             preemption or node loss (spark.decommission.enabled), long GC pauses \
             (spark.network.timeout).",
    find: Find::End(find),
    notes: None,
};

/// Executors removed as lost, for a heartbeat timeout or a process exit. Cost: the task time of
/// failed tasks, estimated per job group as its task time × failed tasks / all its tasks.
fn find(cx: &Cx<'_, '_>, end: &End<'_, '_>) -> Vec<Draft> {
    let removed: BTreeMap<&str, u64> = cx.app.executors_removed().collect();
    let lost: u64 = LOST_REASONS
        .iter()
        .map(|r| removed.get(r).copied().unwrap_or(0))
        .sum();
    if lost == 0 {
        return vec![];
    }
    let (mut failed, mut cost) = (0u64, 0.0);
    for g in end.groups {
        let all = g.tasks.succeeded + g.tasks.failed + g.tasks.killed;
        if all > 0 && g.tasks.failed > 0 {
            failed += g.tasks.failed;
            cost += secs(g.totals.run_time_ms) * g.tasks.failed as f64 / all as f64;
        }
    }
    let mut nums = numbers([
        ("executors_lost", lost as f64),
        ("failed_tasks", failed as f64),
    ]);
    for r in LOST_REASONS {
        nums.insert(
            format!("removed_{r}"),
            removed.get(r).copied().unwrap_or(0) as f64,
        );
    }
    vec![Draft {
        title: format!("{lost} executor(s) lost; {failed} task(s) failed"),
        cost_seconds: cost,
        at: Place {
            subject: Some(
                LOST_REASONS
                    .iter()
                    .filter(|r| removed.get(*r).is_some_and(|n| *n > 0))
                    .copied()
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ..Place::default()
        },
        numbers: nums,
        url: cx.links.page(cx.app.id(), "executors/"),
        remedy: None,
    }]
}
