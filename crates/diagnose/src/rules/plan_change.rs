//! Plan change: one description ran with more than one plan shape.

use super::{numbers, Cx, Draft, End, Find, Rule, TASK_SECONDS};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "plan_change",
    step: "Plan changes",
    scope: "a job group and description (SQL)",
    when: "the ended executions of one query (the same job group and description as Spark \
           gave them, before any rewrite or cap: different queries whose labels fold into one \
           series are not compared) ran with more than one plan shape (the \
           `spark_sql_plan_fingerprint` hash) within the application; not a streaming query's \
           micro-batches, whose first batches always plan differently",
    cost: "none (0)",
    has_cost: false,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &[],
    remedy: "Compare the executions' plans in the SQL tab: a join strategy that \
             flips with data size or configuration, or statistics that changed; pin \
             the strategy with a hint if the change is unwanted.",
    find: Find::End(find),
    notes: None,
};

/// One query whose ended executions ran with more than one plan shape (fingerprint). No cost:
/// a signal to compare the plans. A query is its raw job group and description
/// (`PlanAgg::queries`): executions of different queries whose labels fold together (under
/// `__other__`, or a user's rule) are not one query's. A streaming query's micro-batches (their
/// job group is the query's name) are left out: their first batches plan differently from the
/// rest (no data yet, state being set up) in every healthy query.
fn find(cx: &Cx<'_, '_>, end: &End<'_, '_>) -> Vec<Draft> {
    let streams: Vec<String> = cx.app.streaming().map(|(n, _)| n.to_string()).collect();
    let mut out = vec![];
    for q in end.sql {
        let Some(p) = q.plans else { continue };
        if streams.iter().any(|n| n == q.job_group) {
            continue;
        }
        for one in p.queries().iter().filter(|one| one.shapes().len() >= 2) {
            out.push(draft(cx, q, one));
        }
    }
    out
}

/// The finding of query `one` of the SQL aggregate `q`.
fn draft(
    cx: &Cx<'_, '_>,
    q: &spark_exporter_core::model::view::SqlView<'_>,
    one: &spark_exporter_core::model::plan::QueryPlans,
) -> Draft {
    let exec = Some(one.latest().execution_id());
    let mut nums = numbers([
        ("plan_shapes", one.shapes().len() as f64),
        ("executions", one.plans() as f64),
    ]);
    for (i, (_, first)) in one.shapes().iter().enumerate() {
        nums.insert(format!("shape_{}_first_execution", i + 1), *first as f64);
    }
    Draft {
        title: format!(
            "The plan changed: {} shapes over {} executions",
            one.shapes().len(),
            one.plans()
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
    }
}
