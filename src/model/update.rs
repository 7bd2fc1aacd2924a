//! How observations change the state. Every function here is idempotent per Spark id.

use std::sync::Arc;

use super::app::{
    span_secs, AppDetail, AppState, AppSummary, GroupAgg, GroupKey, JobState, StageState,
};
use super::details::StageDetail;
use super::executor::normalise_reason;
use super::hist::Hist;
use super::labels::Labeler;
use super::obs::*;
use super::sql::{SqlAgg, SqlState};
use super::state::State;
use super::streaming::StreamAgg;
use crate::config::GroupSource;
use crate::telemetry::Telemetry;

fn set_str(dst: &mut Arc<str>, v: &Option<String>) {
    if let Some(v) = v {
        if !v.is_empty() && **dst != **v {
            *dst = Arc::from(v.as_str());
        }
    }
}

fn group_key(
    labeler: &Labeler,
    d: &mut AppDetail,
    t: &Telemetry,
    group: Option<&str>,
    desc: Option<&str>,
) -> GroupKey {
    // A streaming micro-batch's job or stage counts under its query (streaming_labels.rs).
    let runs = &mut d.stream_runs;
    if let Some(k) =
        super::streaming_labels::group_key(labeler, &mut d.label_sets, runs, t, group, desc)
    {
        return k;
    }
    (
        labeler.value(&mut d.label_sets, t, "job_group", group),
        labeler.value(&mut d.label_sets, t, "job_description", desc),
    )
}

/// The group key of a job whose group came from `source`: a call site keeps its line number
/// (the rewrite rules would make every line of a file one group), only capped.
fn job_group_key(
    labeler: &Labeler,
    d: &mut AppDetail,
    t: &Telemetry,
    group: Option<&(std::borrow::Cow<'_, str>, GroupSource)>,
    desc: Option<&str>,
) -> GroupKey {
    match group {
        Some((g, GroupSource::CallSite)) => (
            labeler.value_verbatim(&mut d.label_sets, t, "job_group", g),
            labeler.value(&mut d.label_sets, t, "job_description", desc),
        ),
        g => group_key(labeler, d, t, g.map(|(g, _)| &**g), desc),
    }
}

/// The job group's aggregate, created on first sight (a job or stage starting) with every
/// histogram at zero for every status, so each series exists before its first observation.
fn group_agg<'a>(
    s: &'a mut AppSummary,
    key: &GroupKey,
    (dur_bounds, task_bounds): (&Arc<[f64]>, &Arc<[f64]>),
) -> &'a mut GroupAgg {
    s.groups
        .entry(key.clone())
        .or_insert_with(|| super::names::zero_group(dur_bounds, task_bounds))
}

/// Job `obs` of group `group` tells its SQL execution's group: remembered for the execution's
/// end, and given to it now if it is running without one (its series then exist, at zero).
fn sql_job(d: &mut AppDetail, obs: &JobObs, group: &Arc<str>, bounds: &Arc<[f64]>) {
    d.sql_groups
        .saw_job(obs.job_id, obs.sql_execution_id, group);
    if let Some(q) = obs
        .sql_execution_id
        .and_then(|e| d.running_sql.get_mut(&e))
        .filter(|q| q.group.is_none())
    {
        q.group = Some(group.clone());
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
    group: GroupKey,
    (dur_bounds, task_bounds): (&Arc<[f64]>, &Arc<[f64]>),
) -> GroupKey {
    if super::broadcast::is_broadcast(obs) {
        return if held {
            group
        } else {
            d.broadcasts.group_of(obs, group)
        };
    }
    sql_job(d, obs, &group.0, dur_bounds);
    for (from, to) in d.broadcasts.saw_job(obs, &group) {
        resolve_broadcast(s, d, &from, &to, || {
            super::names::zero_group(dur_bounds, task_bounds)
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
        .then(|| super::attribution::connect_user(&obs.tags))
        .flatten();
    let key = (
        labeler.value(&mut d.label_sets, t, "client_app", Some(client)),
        labeler.value(&mut d.label_sets, t, "user", user),
    );
    let n = s.connect_jobs.entry(key).or_default();
    n[usize::from(obs.status != JobStatus::Succeeded)] += 1;
}

impl State {
    /// The application `app_id`, created on first sight.
    fn app_state(&mut self, app_id: &str) -> &mut AppState {
        let now = self.now_ms;
        self.apps
            .entry(app_id.to_string())
            .or_insert_with(|| AppState::new(app_id, now))
    }

    /// The summary of application `app_id`, created on first sight.
    pub(super) fn app(&mut self, app_id: &str) -> &mut AppSummary {
        &mut self.app_state(app_id).summary
    }

    /// The summary and detail of application `app_id` (created on first sight) and the
    /// labeler, borrowed together; `None` once the application is summarised.
    pub(super) fn live(
        &mut self,
        app_id: &str,
    ) -> Option<(&mut AppSummary, &mut AppDetail, &Labeler)> {
        let now = self.now_ms;
        let app = self
            .apps
            .entry(app_id.to_string())
            .or_insert_with(|| AppState::new(app_id, now));
        match app.parts() {
            (s, Some(d)) => Some((s, d, &self.labeler)),
            (_, None) => None,
        }
    }

    pub(super) fn upsert_app(&mut self, obs: &AppObs, now: EpochMs) {
        self.upsert_app_inner(obs, now);
        self.end_earlier_attempts(&obs.app_id, now);
    }

    fn upsert_app_inner(&mut self, obs: &AppObs, now: EpochMs) {
        let s = self.app(&obs.app_id);
        set_str(&mut s.name, &obs.name);
        set_str(&mut s.spark_version, &obs.spark_version);
        set_str(&mut s.user, &obs.user);
        if obs.start_ms.is_some_and(|t| t > 0) {
            s.start_ms = obs.start_ms;
        }
        if obs.exit_code.is_some() {
            s.exit_code = obs.exit_code;
        }
        match obs.end_ms.filter(|e| *e > 0) {
            Some(e) if s.end_ms != Some(e) => {
                s.end_ms = Some(e);
                s.ended_seen_ms = Some(now);
                s.gone = false;
            }
            // A source sees it running again (it was only marked gone): un-end it.
            None if s.ended_seen_ms.is_some() && s.gone => {
                s.end_ms = None;
                s.ended_seen_ms = None;
                s.gone = false;
            }
            _ => {}
        }
    }

    /// Once a later attempt of an application has started, an earlier attempt that never
    /// said it ended (its driver died, its log has no `ApplicationEnd`) ended then. Whatever
    /// order the attempts' logs are read in; a real end read later replaces this one.
    fn end_earlier_attempts(&mut self, key: &str, now: EpochMs) {
        let (id, Some(_)) = super::app::split_key(key) else {
            return;
        };
        let mut starts: Vec<(EpochMs, String, bool)> = self
            .attempts_of(id)
            .filter_map(|(k, a)| {
                let a = &a.summary;
                a.start_ms.map(|s| (s, k.clone(), a.end_ms.is_none()))
            })
            .collect();
        starts.sort();
        let ends: Vec<(String, EpochMs)> = starts
            .windows(2)
            .filter(|w| w[0].2 && w[1].0 > w[0].0)
            .map(|w| (w[0].1.clone(), w[1].0))
            .collect();
        for (k, at) in ends {
            self.app_gone(&k, at, now);
        }
    }

    pub(super) fn app_gone(&mut self, app_id: &str, end_ms: EpochMs, now: EpochMs) {
        if let Some(s) = self.apps.get_mut(app_id).map(|a| &mut a.summary) {
            if s.end_ms.is_none() {
                s.end_ms = Some(end_ms);
                s.ended_seen_ms = Some(now);
                s.gone = true;
            }
        }
    }

    pub(super) fn upsert_job(
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
        let raw_desc = super::attribution::readable_description(
            obs.description.as_deref(),
            obs.name.as_deref(),
        );
        let connect_user = self.connect_user;
        let Some((s, d, labeler)) = self.live(app_id) else {
            return vec![];
        };
        count_connect_job(s, d, labeler, t, obs, connect_user);
        // Whether REST counted the job first or not, the log reports on the application.
        if src == Source::EventLog {
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
            group,
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
        if src == Source::EventLog {
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

    /// Apply held stages whose job never showed up, labelled from their own description.
    pub(super) fn flush_orphans(&mut self, older_than: EpochMs, t: &Telemetry, now: EpochMs) {
        let mut due: Vec<(String, StageObs)> = vec![];
        for (id, app) in self.apps.iter_mut() {
            let Some(d) = app.detail.as_deref_mut() else {
                continue;
            };
            let keys: Vec<(u64, u32)> = d
                .orphans
                .iter()
                .filter(|(_, (_, first))| *first <= older_than)
                .map(|(k, _)| *k)
                .collect();
            for k in keys {
                if let Some((o, _)) = d.orphans.remove(&k) {
                    due.push((id.clone(), o));
                }
            }
        }
        for (id, o) in due {
            self.upsert_stage(&id, &o, t, now, true);
        }
    }

    pub(super) fn upsert_stage(
        &mut self,
        app_id: &str,
        obs: &StageObs,
        t: &Telemetry,
        now: EpochMs,
        force: bool,
    ) {
        let (dur_bounds, task_bounds) = (self.duration_bounds.clone(), self.task_bounds.clone());
        let longest_cap = self.retention.max_finished_stages;
        let Some((s, d, labeler)) = self.live(app_id) else {
            return;
        };
        let key = (obs.stage_id, obs.attempt);
        let counted = s.stage_counted(obs.stage_id, obs.attempt);
        if !d.stages.contains_key(&key) {
            if counted || obs.status == StageStatus::Pending {
                return;
            }
            let group = match d.stage_groups.get(&obs.stage_id) {
                Some(g) => g.clone(),
                // REST stages carry no job group: wait for the job that lists this stage.
                None if obs.job_group.is_none() && !force => {
                    let first = d.orphans.get(&key).map_or(now, |(_, t)| *t);
                    d.orphans.insert(key, (obs.clone(), first));
                    return;
                }
                None => group_key(
                    labeler,
                    d,
                    t,
                    obs.job_group.as_deref(),
                    super::attribution::readable_description(obs.description.as_deref(), None)
                        .as_deref(),
                ),
            };
            d.orphans.remove(&key);
            if obs.status == StageStatus::Skipped {
                s.mark_stage_counted(obs.stage_id, obs.attempt);
                d.stage_groups.remove(&obs.stage_id);
                *group_agg(s, &group, (&dur_bounds, &task_bounds))
                    .stages
                    .entry("skipped")
                    .or_default() += 1;
                return;
            }
            group_agg(s, &group, (&dur_bounds, &task_bounds));
            let name = labeler.cap(obs.name.as_deref().unwrap_or(""));
            let st = StageState::new(obs.stage_id, obs.attempt, group, Arc::from(name), now);
            d.stages.insert(key, st);
        }
        let Some(st) = d.stages.get_mut(&key) else {
            return;
        };
        merge_stage(st, obs, labeler, now);
        if st.status.is_terminal() {
            return;
        }
        if obs.active_tasks.is_some() {
            st.active_tasks = obs.active_tasks;
        }
        if !obs.status.is_terminal() {
            return;
        }
        // First time this attempt is seen ended: count it once.
        st.status = obs.status;
        st.active_tasks = Some(0);
        st.ended_seen_ms = Some(now);
        let (group, dur) = (
            st.group.clone(),
            span_secs(st.submission_ms, st.completion_ms),
        );
        let status = obs.status.label();
        s.mark_stage_counted(obs.stage_id, obs.attempt);
        if let Some(secs) = dur {
            let ms = (secs * 1000.0).round() as EpochMs;
            d.note_stage_duration(obs.stage_id, obs.attempt, ms, longest_cap);
        }
        let agg = group_agg(s, &group, (&dur_bounds, &task_bounds));
        *agg.stages.entry(status).or_default() += 1;
        let h = agg
            .stage_duration
            .entry(status)
            .or_insert_with(|| Hist::new(dur_bounds.clone()));
        if let Some(d) = dur {
            h.observe(d);
        }
    }

    pub(super) fn set_task_summary(
        &mut self,
        app_id: &str,
        stage_id: u64,
        attempt: u32,
        sum: TaskSummaryObs,
    ) {
        if let Some(st) = self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
            .and_then(|d| d.stages.get_mut(&(stage_id, attempt)))
        {
            st.summary = Some(sum);
        }
        self.rest_skew(app_id, (stage_id, attempt), &sum);
        // REST's final summary of an ended attempt: it settles (`details.rs`).
        if sum.ended {
            let settled = self
                .apps
                .get_mut(app_id)
                .and_then(|a| a.detail.as_deref_mut())
                .and_then(|d| d.stages.get_mut(&(stage_id, attempt)))
                .and_then(StageState::settle);
            self.hand_over(app_id, settled);
        }
    }

    /// Hand over the stage attempts that settled as their broadcast group was resolved.
    pub(super) fn hand_over_resolved(&mut self, app_id: &str) {
        let resolved = match self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
        {
            Some(d) if !d.resolved.is_empty() => std::mem::take(&mut d.resolved),
            _ => return,
        };
        for r in resolved {
            self.hand_over(app_id, Some(r));
        }
    }

    /// Keep the detail of a stage attempt that settled, if asked to (`details.rs`).
    pub(super) fn hand_over(&mut self, app_id: &str, settled: Option<StageDetail>) {
        if let (Some(out), Some(d)) = (self.settled.as_mut(), settled) {
            out.push((app_id.to_string(), d));
        }
    }

    pub(super) fn task_start(&mut self, app_id: &str, obs: &TaskStartObs) {
        let Some((s, d, _)) = self.live(app_id) else {
            return;
        };
        if s.counted_tasks.contains(obs.task_id) || !d.started_tasks.insert(obs.task_id) {
            return;
        }
        if let Some(st) = d.stages.get_mut(&(obs.stage_id, obs.attempt)) {
            st.log_running += 1;
        }
        d.executor(&obs.executor_id).log_running += 1;
    }

    pub(super) fn task_end(&mut self, app_id: &str, obs: &TaskEndObs, t: &Telemetry) {
        let (dur_bounds, task_bounds) = (self.duration_bounds.clone(), self.task_bounds.clone());
        let Some((s, d, labeler)) = self.live(app_id) else {
            return;
        };
        if !s.counted_tasks.insert(obs.task_id) {
            return;
        }
        let was_running = d.started_tasks.contains(obs.task_id);
        let key = (obs.stage_id, obs.attempt);
        let group = match d.stages.get_mut(&key) {
            Some(st) => {
                match obs.outcome {
                    TaskOutcome::Succeeded => st.log_counts.succeeded += 1,
                    TaskOutcome::Failed => st.log_counts.failed += 1,
                    TaskOutcome::Killed => st.log_counts.killed += 1,
                }
                st.log_totals.add(&obs.metrics);
                if was_running {
                    st.log_running = st.log_running.saturating_sub(1);
                }
                st.last_task_end_ms = Some(
                    st.last_task_end_ms
                        .map_or(obs.finish_ms, |l| l.max(obs.finish_ms)),
                );
                super::tasks::note_task(st, obs);
                st.group.clone()
            }
            None => {
                // The stage already retired (a late speculative task): fold straight into its
                // group so nothing is lost.
                let g = match d.stage_groups.get(&obs.stage_id) {
                    Some(g) => g.clone(),
                    None => group_key(labeler, d, t, None, None),
                };
                let agg = group_agg(s, &g, (&dur_bounds, &task_bounds));
                match obs.outcome {
                    TaskOutcome::Succeeded => agg.retired_counts.succeeded += 1,
                    TaskOutcome::Failed => agg.retired_counts.failed += 1,
                    TaskOutcome::Killed => agg.retired_counts.killed += 1,
                }
                agg.retired_totals.add(&obs.metrics);
                g
            }
        };
        let dur_ms = obs.finish_ms.saturating_sub(obs.launch_ms).max(0) as u64;
        let agg = group_agg(s, &group, (&dur_bounds, &task_bounds));
        if let Some(h) = agg.task_duration.as_mut() {
            h.observe(dur_ms as f64 / 1000.0);
        }
        if let Some(l) = obs.locality {
            agg.locality[super::skew::locality_index(l)] += 1;
        }
        let ex = d.executor(&obs.executor_id);
        if was_running {
            ex.log_running = ex.log_running.saturating_sub(1);
        }
        let l = &mut ex.log;
        l.task_time_ms = l.task_time_ms.saturating_add(dur_ms);
        l.gc_time_ms = l.gc_time_ms.saturating_add(obs.metrics.gc_time_ms);
        match obs.outcome {
            TaskOutcome::Succeeded => l.completed_tasks += 1,
            TaskOutcome::Failed => l.failed_tasks += 1,
            TaskOutcome::Killed => {}
        }
        l.input_bytes = l.input_bytes.saturating_add(obs.metrics.input_bytes);
        l.shuffle_read_bytes = l
            .shuffle_read_bytes
            .saturating_add(obs.metrics.shuffle_read_bytes);
        l.shuffle_write_bytes = l
            .shuffle_write_bytes
            .saturating_add(obs.metrics.shuffle_write_bytes);
    }

    pub(super) fn upsert_executor(&mut self, app_id: &str, obs: &ExecutorObs, now: EpochMs) {
        let Some((s, d, _)) = self.live(app_id) else {
            return;
        };
        // An executor that left the model stays gone (`cost.rs`): REST lists dead ones a while.
        if s.cost.is_retired(&obs.executor_id) {
            return;
        }
        let is_new = !d.executors.contains_key(&obs.executor_id);
        let ex = d.executor(&obs.executor_id);
        ex.merge(obs);
        let removed =
            obs.active == Some(false) && ex.remove_reason.is_none() && (ex.active || is_new);
        if removed {
            let reason = normalise_reason(obs.remove_reason.as_deref());
            ex.active = false;
            ex.remove_reason = Some(reason);
            ex.dead_seen_ms = Some(now);
            ex.active_tasks = Some(0);
            d.cache.executor_removed(&obs.executor_id);
            // The driver "executor" only goes away with the application.
            if obs.executor_id != "driver" {
                *s.executors_removed.entry(reason).or_default() += 1;
            }
        }
    }

    pub(super) fn upsert_sql(&mut self, app_id: &str, obs: &SqlObs, t: &Telemetry) {
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
                super::names::zero_group(&bounds, &task_bounds)
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
            None => super::streaming_labels::sql_description(
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
                super::attribution::readable_description(obs.description.as_deref(), None)
                    .as_deref(),
            ),
        };
        // Its jobs' group: unknown while it runs no job, the empty group if it ends so; a
        // streaming micro-batch's is its query's, whose name its description gives (to both
        // sources), jobs or not.
        let group = prev_group
            .or(streaming)
            .or_else(|| d.sql_groups.of(obs.execution_id, &obs.job_ids));
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
        match prev_plan {
            Some(p) if d.sql_plans.count(id) => agg.plans.add(&p, id, end_ms),
            Some(_) => {}
            None => d.sql_plans.wait(id, super::plan::Ended { key, end_ms }),
        }
    }

    /// A SQL execution's final plan: counted into its aggregate if the execution has ended,
    /// kept with it if it is running, once either way (see `plan.rs`).
    pub(super) fn sql_plan(&mut self, app_id: &str, obs: &SqlPlanObs) {
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
                .add(&obs.plan, id, e.end_ms);
        }
    }

    pub(super) fn streaming_started(
        &mut self,
        app_id: &str,
        obs: &StreamingStartObs,
        t: &Telemetry,
    ) {
        self.stream_agg(app_id, obs.name.as_deref(), &obs.query_id, t);
        if let (Some(run), Some((_, d, _))) = (&obs.run_id, self.live(app_id)) {
            d.stream_runs
                .insert(run, obs.name.as_deref(), &obs.query_id);
        }
    }

    /// The label of a streaming query's aggregate (its name, or its stand-in, see
    /// `streaming_labels.rs`); the aggregate is created at zero on first sight.
    fn stream_agg(
        &mut self,
        app_id: &str,
        name: Option<&str>,
        query_id: &str,
        t: &Telemetry,
    ) -> Option<Arc<str>> {
        let bounds = self.duration_bounds.clone();
        let configured = name
            .and_then(|n| self.trigger_intervals.get(n))
            .or_else(|| {
                self.trigger_intervals
                    .get(&super::streaming_labels::stand_in(query_id))
            })
            .copied();
        let (_, d, labeler) = self.live(app_id)?;
        let q =
            super::streaming_labels::label(labeler, &mut d.label_sets, t, "query", name, query_id);
        let agg = d
            .streaming
            .entry(q.clone())
            .or_insert_with(|| StreamAgg::new(bounds));
        if configured.is_some() {
            agg.configured_interval_s = configured;
        }
        Some(q)
    }

    pub(super) fn streaming_progress(
        &mut self,
        app_id: &str,
        obs: &StreamingProgressObs,
        t: &Telemetry,
    ) {
        let Some(q) = self.stream_agg(app_id, obs.name.as_deref(), &obs.query_id, t) else {
            return;
        };
        let Some((_, d, labeler)) = self.live(app_id) else {
            return;
        };
        let Some(agg) = d.streaming.get_mut(&q) else {
            return;
        };
        if agg
            .last_batch
            .get(&obs.query_id)
            .is_some_and(|last| obs.batch_id <= *last)
        {
            return;
        }
        agg.last_batch.insert(obs.query_id.clone(), obs.batch_id);
        agg.add_batch(obs, |d| Arc::from(labeler.rewrite(d)));
    }

    pub(super) fn expire(&mut self, now: EpochMs, t: &Telemetry) {
        self.flush_orphans(now - super::app::ORPHAN_WAIT_MS, t, now);
        self.review_all(t, now);
        let r = self.retention.clone();
        let ms = |d: std::time::Duration| d.as_millis() as EpochMs;
        let bounds = (self.duration_bounds.clone(), self.task_bounds.clone());
        let gone: Vec<String> = self
            .apps
            .iter()
            .filter(|(_, a)| {
                a.summary
                    .ended_seen_ms
                    .is_some_and(|e| now - e >= ms(r.app_retention))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for id in gone {
            if let Some(app) = self.apps.remove(&id) {
                self.retire_app(&app);
            }
        }
        let settled = &mut self.settled;
        for (id, app) in self.apps.iter_mut() {
            let (s, Some(d)) = app.parts() else {
                continue;
            };
            let old: Vec<(u64, u32)> = d
                .stages
                .iter()
                .filter(|(_, s)| {
                    s.ended_seen_ms
                        .is_some_and(|e| now - e >= ms(r.stage_retention))
                })
                .map(|(k, _)| *k)
                .collect();
            for k in old {
                if let (Some(out), Some(rec)) = (settled.as_mut(), retire_stage(s, d, k, &bounds)) {
                    out.push((id.clone(), rec));
                }
            }
            super::cost_rules::expire_executors(s, d, now, ms(r.dead_executor_retention));
            shrink(&mut d.stages);
            shrink(&mut d.stage_groups);
            shrink(&mut d.running_jobs);
            shrink(&mut d.orphans);
            shrink(&mut d.running_sql);
        }
    }
}

/// Move what placeholder `from` counted into group `to`: its aggregate, and its live stages,
/// stage-to-group entries and running job.
pub(super) fn resolve_broadcast(
    s: &mut AppSummary,
    d: &mut AppDetail,
    from: &GroupKey,
    to: &GroupKey,
    zero: impl FnOnce() -> GroupAgg,
) {
    if let Some(agg) = s.groups.remove(from) {
        merge(s.groups.entry(to.clone()).or_insert_with(zero), &agg);
    }
    for st in d.stages.values_mut().filter(|s| &s.group == from) {
        st.group = to.clone();
        d.resolved.extend(st.settle_resolved());
    }
    for g in d.stage_groups.values_mut().filter(|g| *g == from) {
        *g = to.clone();
    }
    for j in d.running_jobs.values_mut().filter(|j| &j.group == from) {
        j.group = to.clone();
    }
}

/// Add every counter and histogram of `from` to `into`.
fn merge(into: &mut GroupAgg, from: &GroupAgg) {
    for (s, n) in &from.jobs {
        *into.jobs.entry(s).or_default() += n;
    }
    for (s, n) in &from.stages {
        *into.stages.entry(s).or_default() += n;
    }
    for (into_h, from_h) in [
        (&mut into.job_duration, &from.job_duration),
        (&mut into.stage_duration, &from.stage_duration),
    ] {
        for (s, h) in from_h {
            match into_h.get_mut(s) {
                Some(a) => a.merge(h),
                None => {
                    into_h.insert(s, h.clone());
                }
            }
        }
    }
    into.retired_counts.add(&from.retired_counts);
    into.retired_totals.add(&from.retired_totals);
    match (&mut into.task_duration, &from.task_duration) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => into.task_duration = Some(b.clone()),
        _ => {}
    }
    match (&mut into.skew_ratio, &from.skew_ratio) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => into.skew_ratio = Some(b.clone()),
        _ => {}
    }
    for (n, m) in into.locality.iter_mut().zip(from.locality) {
        *n += m;
    }
}

/// A stage attempt leaves the model: its task counts and sums fold into its job group. Returns
/// its detail if it settles only now (`details.rs`).
pub(super) fn retire_stage(
    s: &mut AppSummary,
    d: &mut AppDetail,
    k: (u64, u32),
    bounds: &(Arc<[f64]>, Arc<[f64]>),
) -> Option<StageDetail> {
    let mut st = d.stages.remove(&k)?;
    d.stage_groups.remove(&k.0);
    let agg = group_agg(s, &st.group, (&bounds.0, &bounds.1));
    agg.retired_counts.add(&st.counts());
    agg.retired_totals.add(&st.totals());
    st.settle()
}

/// Give back a map's spare room once it is mostly empty: a burst of stages or jobs must not pin
/// its peak capacity (hash maps never shrink by themselves) for the rest of the application.
/// Merge what `obs` adds to a held stage attempt: times, name, and REST's cumulative counts and
/// totals (kept per source and merged with `max`).
fn merge_stage(st: &mut StageState, obs: &StageObs, labeler: &Labeler, now: EpochMs) {
    if st.submission_ms.is_none() {
        st.submission_ms = obs.submission_ms;
    }
    if obs.completion_ms.is_some() {
        st.completion_ms = obs.completion_ms;
    }
    if let Some(n) = &obs.name {
        if st.name.is_empty() && !n.is_empty() {
            st.name = Arc::from(labeler.cap(n));
        }
    }
    if let Some(c) = obs.task_counts {
        let before = st.counts().finished();
        st.rest_counts = st.rest_counts.max(&c);
        // REST cannot say when a task finished; the first poll that sees more finished
        // tasks is the best bound.
        if st.counts().finished() > before {
            st.last_task_end_ms = Some(st.last_task_end_ms.map_or(now, |l| l.max(now)));
        }
    }
    if let Some(tot) = obs.totals {
        st.rest_totals = st.rest_totals.max(&tot);
    }
}

fn shrink<K: Eq + std::hash::Hash, V>(m: &mut std::collections::HashMap<K, V>) {
    if m.capacity() > 64 && m.capacity() > 4 * m.len() {
        m.shrink_to(2 * m.len());
    }
}
