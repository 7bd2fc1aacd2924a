//! How job observations change an application: a job counted once into its group, with its SQL
//! execution's group, broadcast placeholders and Spark Connect clients.

use std::sync::Arc;

use crate::model::app::{AppDetail, AppSummary};
use crate::model::group::GroupKey;
use crate::model::hist::Hist;
use crate::model::job::JobState;
use crate::model::labels::Labeler;
use crate::model::obs::*;
use crate::model::rules::group::{group_agg, job_group_key, resolve_broadcast};
use crate::model::sql::SqlAgg;
use crate::model::stage::span_secs;
use crate::model::state::State;
use crate::telemetry::Telemetry;

/// Job `obs` of group `group` tells its SQL execution's group: remembered for the execution's
/// end, and given to it now if it is running without one (its series then exist, at zero).
/// `raw` is the hash of the group as Spark gave it (the query's identity, `plan::query_id`).
fn sql_job(d: &mut AppDetail, obs: &JobObs, group: &Arc<str>, raw: u64, bounds: &Arc<[f64]>) {
    d.sql_groups
        .saw_job(obs.job_id, obs.sql_execution_id, group, raw);
    if let Some(q) = obs
        .sql_execution_id
        .and_then(|e| d.running_sql.get_mut(&e))
        .filter(|q| q.group.is_none())
    {
        q.group = Some(group.clone());
        q.raw_group = Some(raw);
        d.sql
            .entry((group.clone(), q.description.clone()))
            .or_insert_with(|| SqlAgg::new(bounds));
    }
}

/// The group job `obs` counts under, `group` as labelled (or as held, if `held`): a broadcast
/// exchange's job (Spark 3.4 and older) counts under its query's group (`broadcast.rs`); any
/// other job tells its SQL execution's group, and its execution's broadcasts.
fn broadcast_job(
    s: &mut AppSummary,
    d: &mut AppDetail,
    obs: &JobObs,
    held: bool,
    (group, raw): (GroupKey, u64),
    (dur_bounds, task_bounds): (&Arc<[f64]>, &Arc<[f64]>),
) -> GroupKey {
    if crate::model::broadcast::is_broadcast(obs) {
        return if held {
            group
        } else {
            d.broadcasts.group_of(obs, group)
        };
    }
    sql_job(d, obs, &group.0, raw, dur_bounds);
    for (from, to) in d.broadcasts.saw_job(obs, &group) {
        resolve_broadcast(s, d, &from, &to, || {
            crate::model::group::zero_group(dur_bounds, task_bounds)
        });
    }
    group
}

/// Count an ended Spark Connect job under its client application (and user, when
/// `labels.connect_user` is on), once. Only event logs know the client application.
fn count_connect_job(
    s: &mut AppSummary,
    d: &mut AppDetail,
    labeler: &Labeler,
    t: &Telemetry,
    obs: &JobObs,
    with_user: bool,
) {
    let Some(client) = obs.client_app.as_deref() else {
        return;
    };
    if !obs.status.is_terminal() || s.connect_counted.contains(obs.job_id) {
        return;
    }
    s.connect_counted.insert(obs.job_id);
    let user = with_user
        .then(|| crate::model::attribution::connect_user(&obs.tags))
        .flatten();
    let key = (
        labeler.value(&mut d.label_sets, t, "client_app", Some(client)),
        labeler.value(&mut d.label_sets, t, "user", user),
    );
    let n = s.connect_jobs.entry(key).or_default();
    n[usize::from(obs.status != JobStatus::Succeeded)] += 1;
}

impl State {
    pub(in crate::model) fn upsert_job(
        &mut self,
        src: Source,
        app_id: &str,
        obs: &JobObs,
        t: &Telemetry,
        now: EpochMs,
    ) {
        let held = self.upsert_job_inner(src, app_id, obs, t);
        for o in held {
            self.upsert_stage(app_id, &o, t, now, false);
        }
        self.hand_over_resolved(app_id);
    }

    /// Returns the held stage observations this job resolves.
    fn upsert_job_inner(
        &mut self,
        src: Source,
        app_id: &str,
        obs: &JobObs,
        t: &Telemetry,
    ) -> Vec<StageObs> {
        let (dur_bounds, task_bounds) = (self.duration_bounds.clone(), self.task_bounds.clone());
        let raw_group =
            self.attribution
                .group_source(obs.job_group.as_deref(), &obs.tags, obs.name.as_deref());
        let raw_hash = crate::model::plan::raw_hash(raw_group.as_ref().map(|(g, _)| &**g));
        let raw_desc = crate::model::attribution::readable_description(
            obs.description.as_deref(),
            obs.name.as_deref(),
        );
        let connect_user = self.connect_user;
        let Some((s, d, labeler)) = self.live(app_id) else {
            return vec![];
        };
        count_connect_job(s, d, labeler, t, obs, connect_user);
        // Whether REST counted the job first or not, the log reports on the application.
        if src.feed() == Feed::Log {
            s.from_log = true;
        }
        if s.counted_jobs.contains(obs.job_id) {
            return vec![];
        }
        let prev = d.running_jobs.remove(&obs.job_id);
        let group = match &prev {
            Some(j) => j.group.clone(),
            None => job_group_key(labeler, d, t, raw_group.as_ref(), raw_desc.as_deref()),
        };
        let group = broadcast_job(
            s,
            d,
            obs,
            prev.is_some(),
            (group, raw_hash),
            (&dur_bounds, &task_bounds),
        );
        for sid in &obs.stage_ids {
            if !s.counted_stages.contains(*sid) {
                d.stage_groups.entry(*sid).or_insert_with(|| group.clone());
            }
        }
        let held: Vec<StageObs> = obs
            .stage_ids
            .iter()
            .flat_map(|sid| {
                let keys: Vec<(u64, u32)> =
                    d.orphans.keys().filter(|k| k.0 == *sid).copied().collect();
                keys.into_iter()
                    .filter_map(|k| d.orphans.remove(&k).map(|(o, _)| o))
                    .collect::<Vec<_>>()
            })
            .collect();
        let submission_ms = obs
            .submission_ms
            .or(prev.as_ref().and_then(|j| j.submission_ms));
        // The group's series exist from its first job's start, at zero.
        group_agg(s, &group, (&dur_bounds, &task_bounds));
        if !obs.status.is_terminal() {
            let mut stage_ids = prev.map(|p| p.stage_ids).unwrap_or_default();
            if stage_ids.is_empty() {
                stage_ids = obs.stage_ids.clone();
            }
            d.running_jobs.insert(
                obs.job_id,
                JobState {
                    group,
                    submission_ms,
                    stage_ids,
                },
            );
            return held;
        }
        s.counted_jobs.insert(obs.job_id);
        let status = obs.status.label();
        let agg = group_agg(s, &group, (&dur_bounds, &task_bounds));
        *agg.jobs.entry(status).or_default() += 1;
        let h = agg
            .job_duration
            .entry(status)
            .or_insert_with(|| Hist::new(dur_bounds.clone()));
        if let Some(d) = span_secs(submission_ms, obs.completion_ms) {
            h.observe(d);
        }
        // The event log never says "skipped": a stage of an ended job that was never submitted
        // was skipped (this is what Spark's own status store does at job end).
        if src.feed() == Feed::Log {
            let mut ids = obs.stage_ids.clone();
            if let Some(p) = &prev {
                ids.extend(p.stage_ids.iter().copied());
            }
            for sid in ids {
                if s.counted_stages.contains(sid) || d.stages.keys().any(|(s, _)| *s == sid) {
                    continue;
                }
                s.counted_stages.insert(sid);
                let g = d.stage_groups.remove(&sid).unwrap_or_else(|| group.clone());
                *group_agg(s, &g, (&dur_bounds, &task_bounds))
                    .stages
                    .entry("skipped")
                    .or_default() += 1;
            }
        }
        held
    }
}
