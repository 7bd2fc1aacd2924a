//! How stage observations change an application: an attempt counted once when first seen
//! terminal, REST's and the event log's counts merged with `max`, a REST stage whose job is not
//! known yet held ([`ORPHAN_WAIT_MS`](crate::model::stage::ORPHAN_WAIT_MS)), an attempt retired
//! into its group and settled once (`details.rs`).

use std::sync::Arc;

use crate::model::app::{AppDetail, AppSummary};
use crate::model::details::StageDetail;
use crate::model::hist::Hist;
use crate::model::labels::Labeler;
use crate::model::obs::*;
use crate::model::rules::group::{group_agg, group_key};
use crate::model::stage::{span_secs, StageState};
use crate::model::state::State;
use crate::telemetry::Telemetry;

impl State {
    /// Apply held stages whose job never showed up, labelled from their own description.
    pub(in crate::model) fn flush_orphans(
        &mut self,
        older_than: EpochMs,
        t: &Telemetry,
        now: EpochMs,
    ) {
        let mut due: Vec<(String, StageObs)> = vec![];
        for (id, app) in crate::model::state::in_order_mut(&mut self.apps) {
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

    pub(in crate::model) fn upsert_stage(
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
                    crate::model::attribution::readable_description(
                        obs.description.as_deref(),
                        None,
                    )
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

    pub(in crate::model) fn set_task_summary(
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
    pub(in crate::model) fn hand_over_resolved(&mut self, app_id: &str) {
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
    pub(in crate::model) fn hand_over(&mut self, app_id: &str, settled: Option<StageDetail>) {
        if let (Some(out), Some(d)) = (self.settled.as_mut(), settled) {
            out.push((app_id.to_string(), d));
        }
    }
}

/// A stage attempt leaves the model: its task counts and sums fold into its job group. Returns
/// its detail if it settles only now (`details.rs`).
pub(in crate::model) fn retire_stage(
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
