//! How SQL observations change an application: an execution counted once into its job group
//! and description, its final plan counted once (`plan.rs`).

use crate::model::hist::Hist;
use crate::model::obs::*;
use crate::model::rules::group::resolve_broadcast;
use crate::model::sql::{SqlAgg, SqlState};
use crate::model::state::State;
use crate::telemetry::Telemetry;

/// The parts of a SQL execution's query identity (`plan::query_id`): its raw group's and raw
/// description's hashes, as first seen (`prev`), else from `obs` and its jobs. A streaming
/// query's micro-batches (`streaming`: its name), whose descriptions name each batch and run,
/// are one query: its name's.
fn raw_identity(
    prev: Option<&SqlState>,
    streaming: Option<&std::sync::Arc<str>>,
    groups: &crate::model::sql::SqlGroups,
    obs: &SqlObs,
) -> (Option<u64>, u64) {
    use crate::model::plan::raw_hash;
    let group = match streaming {
        Some(_) => Some(0),
        None => prev
            .and_then(|p| p.raw_group)
            .or_else(|| groups.raw_of(obs.execution_id, &obs.job_ids)),
    };
    let description = match (prev, streaming) {
        (Some(p), _) => p.raw_description,
        (None, Some(name)) => raw_hash(Some(name)),
        (None, None) => raw_hash(obs.description.as_deref()),
    };
    (group, description)
}

impl State {
    pub(in crate::model) fn upsert_sql(&mut self, app_id: &str, obs: &SqlObs, t: &Telemetry) {
        self.upsert_sql_inner(app_id, obs, t);
        self.hand_over_resolved(app_id);
    }

    fn upsert_sql_inner(&mut self, app_id: &str, obs: &SqlObs, t: &Telemetry) {
        let bounds = self.duration_bounds.clone();
        let task_bounds = self.task_bounds.clone();
        let Some((s, d, labeler)) = self.live(app_id) else {
            return;
        };
        let ended = obs.status.is_terminal();
        for (from, to) in d
            .broadcasts
            .saw_execution(obs.execution_id, &obs.job_ids, ended)
        {
            resolve_broadcast(s, d, &from, &to, || {
                crate::model::group::zero_group(&bounds, &task_bounds)
            });
        }
        if s.counted_sql.contains(obs.execution_id) {
            return;
        }
        let prev = d.running_sql.remove(&obs.execution_id);
        let prev_group = prev.as_ref().and_then(|p| p.group.clone());
        let prev_plan = prev.as_ref().and_then(|p| p.plan);
        // A streaming micro-batch's description names its query (streaming_labels.rs): read
        // until the execution has a group, not at every poll of a running one.
        let streaming = match prev_group {
            Some(_) => None,
            None => crate::model::streaming_labels::sql_description(
                labeler,
                &mut d.label_sets,
                t,
                obs.description.as_deref(),
            ),
        };
        let description = match (&prev, &streaming) {
            (Some(p), _) => p.description.clone(),
            (None, Some(name)) => name.clone(),
            (None, None) => labeler.value(
                &mut d.label_sets,
                t,
                "description",
                crate::model::attribution::readable_description(obs.description.as_deref(), None)
                    .as_deref(),
            ),
        };
        // Its jobs' group: unknown while it runs no job, the empty group if it ends so; a
        // streaming micro-batch's is its query's, whose name its description gives (to both
        // sources), jobs or not.
        let group = prev_group
            .or(streaming.clone())
            .or_else(|| d.sql_groups.of(obs.execution_id, &obs.job_ids));
        let (raw_group, raw_description) =
            raw_identity(prev.as_ref(), streaming.as_ref(), &d.sql_groups, obs);
        if !obs.status.is_terminal() {
            // The key's series exist from its first execution's start, at zero.
            if let Some(g) = &group {
                d.sql
                    .entry((g.clone(), description.clone()))
                    .or_insert_with(|| SqlAgg::new(&bounds));
            }
            d.running_sql.insert(
                obs.execution_id,
                SqlState {
                    group,
                    description,
                    submission_ms: obs.submission_ms.or(prev.and_then(|p| p.submission_ms)),
                    plan: prev_plan,
                    raw_group,
                    raw_description,
                },
            );
            return;
        }
        let submission_ms = obs.submission_ms.or(prev.and_then(|p| p.submission_ms));
        let group = group.unwrap_or_else(|| labeler.value(&mut d.label_sets, t, "job_group", None));
        s.counted_sql.insert(obs.execution_id);
        d.sql_groups.ended(obs.execution_id);
        let key = (group, description);
        let agg = d
            .sql
            .entry(key.clone())
            .or_insert_with(|| SqlAgg::new(&bounds));
        let status = obs.status.label();
        *agg.ended.entry(status).or_default() += 1;
        let h = agg
            .duration
            .entry(status)
            .or_insert_with(|| Hist::new(bounds.clone()));
        if let Some(d) = obs.duration_ms {
            h.observe(d as f64 / 1000.0);
        }
        // Its plan counts now if a source told it already, else when it arrives.
        let end_ms = submission_ms
            .zip(obs.duration_ms)
            .map(|(s, d)| s.saturating_add(i64::try_from(d).unwrap_or(i64::MAX)));
        let id = obs.execution_id;
        let query = crate::model::plan::query_id(raw_group.unwrap_or(0), raw_description);
        match prev_plan {
            Some(p) if d.sql_plans.count(id) => agg.plans.add(&p, id, end_ms, query),
            Some(_) => {}
            None => d
                .sql_plans
                .wait(id, crate::model::plan::Ended { key, end_ms, query }),
        }
    }

    /// A SQL execution's final plan: counted into its aggregate if the execution has ended,
    /// kept with it if it is running, once either way (see `plan.rs`).
    pub(in crate::model) fn sql_plan(&mut self, app_id: &str, obs: &SqlPlanObs) {
        let bounds = self.duration_bounds.clone();
        let Some(d) = self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
        else {
            return;
        };
        let id = obs.execution_id;
        if d.sql_plans.counted(id) {
            return;
        }
        if let Some(q) = d.running_sql.get_mut(&id) {
            q.plan = Some(obs.plan);
            return;
        }
        if let Some(e) = d.sql_plans.take(id) {
            d.sql
                .entry(e.key)
                .or_insert_with(|| SqlAgg::new(&bounds))
                .plans
                .add(&obs.plan, id, e.end_ms, e.query);
        }
    }
}
