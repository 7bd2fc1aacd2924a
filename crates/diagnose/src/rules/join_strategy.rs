//! Join strategy: a shuffled join (sort-merge, shuffled hash) whose smaller side was small
//! enough to broadcast.

use super::{human_bytes, numbers, secs, Cx, Draft, End, Find, Rule, TASK_SECONDS};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "join_strategy",
    step: "Join strategy",
    scope: "a job group and description (SQL)",
    when: "a description's final plans hold a SortMergeJoin or ShuffledHashJoin while the \
           smallest shuffle a stage of that job group and description wrote is ≤ \
           `broadcast_max_bytes`: a broadcast candidate",
    cost: "the task time of the description's stages, the most a broadcast could save",
    has_cost: true,
    grouped: true,
    unit: TASK_SECONDS,
    sources: "both",
    thresholds: &["broadcast_max_bytes"],
    remedy: "Broadcast the small side: a broadcast() hint, or \
             spark.sql.autoBroadcastJoinThreshold above its size; keep table \
             statistics current (ANALYZE TABLE ... COMPUTE STATISTICS) so the \
             planner sees how small it is.",
    find: Find::End(find),
    notes: None,
};

/// A description whose plans hold a sort-merge or shuffled hash join while the smallest
/// shuffle its stages wrote is at most `broadcast_max_bytes`: a broadcast join would have
/// spared the shuffle of the large side and the sort. Cost: the task time of the description's
/// stages (its job group and description), the most a broadcast could save.
fn find(cx: &Cx<'_, '_>, end: &End<'_, '_>) -> Vec<Draft> {
    let mut out = vec![];
    for q in end.sql {
        let Some(p) = q.plans else { continue };
        let (smj, shj) = (p.joins()[1], p.joins()[2]);
        if smj + shj == 0 {
            continue;
        }
        let t = cx.cfg.for_group(q.job_group);
        let mine = end
            .digest
            .iter()
            .find(|((g, d), _)| &**g == q.job_group && *d == *q.description)
            .map(|(_, v)| *v)
            .unwrap_or_default();
        let Some(smallest) = mine.min_shuffle_write_bytes else {
            continue;
        };
        if smallest > t.broadcast_max_bytes {
            continue;
        }
        let task_s = secs(mine.run_time_ms);
        let exec = p.latest().map(|l| l.execution_id());
        let strategy = if smj > 0 {
            "SortMergeJoin"
        } else {
            "ShuffledHashJoin"
        };
        out.push(Draft {
            title: format!(
                "{strategy} where one side wrote only {} of shuffle data: a broadcast \
                 candidate",
                human_bytes(smallest)
            ),
            cost_seconds: task_s,
            at: Place {
                job_group: Some(q.job_group.to_string()),
                description: Some(q.description.to_string()),
                execution_id: exec,
                subject: Some(strategy.into()),
                ..Place::default()
            },
            numbers: numbers([
                ("sort_merge_joins", smj as f64),
                ("shuffled_hash_joins", shj as f64),
                ("broadcast_hash_joins", p.joins()[0] as f64),
                ("smallest_shuffle_write_bytes", smallest as f64),
                ("broadcast_max_bytes", t.broadcast_max_bytes as f64),
                ("executions", p.plans() as f64),
                ("task_seconds", task_s),
            ]),
            url: exec.and_then(|e| cx.links.sql(cx.app.id(), e)),
            remedy: None,
        });
    }
    out
}
