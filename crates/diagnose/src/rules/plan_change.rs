//! Plan change: one description ran with more than one plan shape.

use super::{numbers, Cx, Draft, End, Find, Rule, TASK_SECONDS};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "plan_change",
    step: "Plan changes",
    scope: "a job group and description (SQL)",
    when: "a description's ended executions ran with more than one plan shape (the \
           `spark_sql_plan_fingerprint` hash) within the application; not a streaming query's \
           micro-batches, whose first batches always plan differently",
    cost: "none (0)",
    has_cost: false,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &[],
    remedy: "Compare the executions' plans in the SQL tab: a join strategy that \
             flips with data size or configuration, or statistics that changed; pin \
             the strategy with a hint if the change is unwanted.",
    find: Find::End(find),
    notes: None,
};

/// One description whose ended executions ran with more than one plan shape (fingerprint). No
/// cost: a signal to compare the plans. A streaming query's micro-batches (their job group is
/// the query's name) are left out: their first batches plan differently from the rest (no data
/// yet, state being set up) in every healthy query.
fn find(cx: &Cx<'_, '_>, end: &End<'_, '_>) -> Vec<Draft> {
    let queries: Vec<String> = cx.app.streaming().map(|(n, _)| n.to_string()).collect();
    let mut out = vec![];
    for q in end.sql {
        let Some(p) = q.plans else { continue };
        if p.shapes().len() < 2 || queries.iter().any(|n| n == q.job_group) {
            continue;
        }
        let exec = p.latest().map(|l| l.execution_id());
        let mut nums = numbers([
            ("plan_shapes", p.shapes().len() as f64),
            ("executions", p.plans() as f64),
        ]);
        for (i, (_, first)) in p.shapes().iter().enumerate() {
            nums.insert(format!("shape_{}_first_execution", i + 1), *first as f64);
        }
        out.push(Draft {
            title: format!(
                "The plan changed: {} shapes over {} executions",
                p.shapes().len(),
                p.plans()
            ),
            cost_seconds: 0.0,
            at: Place {
                job_group: Some(q.job_group.to_string()),
                description: Some(q.description.to_string()),
                execution_id: exec,
                ..Place::default()
            },
            numbers: nums,
            url: exec.and_then(|e| cx.links.sql(cx.app.id(), e)),
            remedy: None,
        });
    }
    out
}
