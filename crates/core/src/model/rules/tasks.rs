//! Tasks and stages for a diagnosis: the skew ratio of every finished stage attempt, as a
//! histogram per job group, and task locality counts per job group.
//!
//! **Skew ratio** of a stage attempt: its longest successful task's duration over its median
//! one, with the quantiles Spark's own `taskSummary` takes (`AppStatusStore.taskSummary`, live
//! UI): the durations (finish − launch) of the attempt's successful tasks, sorted, and the value
//! at index `min(floor(q × n), n − 1)`; so the median of 4 tasks is the 3rd shortest, the
//! maximum the longest. Each complete stage attempt is observed once, into its job group's
//! histogram, by whichever source gives its ratio first:
//! - the event log, when it reports the attempt complete, from the durations of its successful
//!   tasks, kept from the log's `StageSubmitted` of the attempt to its `StageCompleted` (at most
//!   [`crate::model::skew::MAX_DURATIONS`]; an attempt with more, or whose submission the log did
//!   not show, gets no
//!   ratio from the log);
//! - REST, from the attempt's final `taskSummary?quantiles=0.5,1.0` (fetched once it ended).
//!
//! Failed attempts are not observed (their task set is incomplete), nor is an attempt whose
//! median task took 0 ms (no ratio). Durations are kept as `u32` milliseconds (49 days), freed
//! when the log reports the attempt ended, or when the model lets the attempt go.
//!
//! **Locality**: every task end the event log reports counts under its `Task Info`.`Locality`
//! (REST has no per-task locality without task lists, which the poller never reads).

use crate::model::app::{AppDetail, AppSummary};
use crate::model::obs::*;
use crate::model::rules::group::{group_agg, group_key};
use crate::model::skew::{longest_median, skew_ratio, summary_ratio};
use crate::model::stage::StageState;
use crate::model::state::State;
use crate::telemetry::Telemetry;

/// Count a task end of the attempt `st` (held by the model) towards its skew ratio.
pub(in crate::model) fn note_task(st: &mut StageState, obs: &TaskEndObs) {
    if obs.outcome == TaskOutcome::Succeeded {
        let ms = obs.finish_ms.saturating_sub(obs.launch_ms).max(0) as u64;
        st.skew.push(ms);
    }
}

impl State {
    /// The event log reported stage attempt `obs` (after the model applied it): its submission
    /// opens the attempt's duration list; its completion observes the ratio (if no source did
    /// yet) and frees the list.
    pub(in crate::model) fn log_stage(&mut self, app_id: &str, obs: &StageObs) {
        let Some((s, Some(d))) = self.apps.get_mut(app_id).map(|a| a.parts()) else {
            return;
        };
        let Some(st) = d.stages.get_mut(&(obs.stage_id, obs.attempt)) else {
            return;
        };
        match obs.status {
            StageStatus::Active if !st.skew.observed && st.skew.durations.is_none() => {
                st.skew.durations = Some(Vec::new());
            }
            status if status.is_terminal() => {
                let key = (obs.stage_id, obs.attempt);
                let durations = st.skew.durations.take();
                let complete = status == StageStatus::Complete && st.status == status;
                if let Some(mut ms) = durations.filter(|ms| complete && !ms.is_empty()) {
                    st.skew.longest_median_ms = longest_median(&mut ms);
                    let ratio = skew_ratio(&mut ms);
                    observe(s, d, key, ratio);
                }
                // Its tasks' spread is known now: the attempt settles (`details.rs`).
                let settled = d.stages.get_mut(&key).and_then(StageState::settle);
                self.hand_over(app_id, settled);
            }
            _ => {}
        }
    }

    /// A REST task summary of a held stage attempt: its final one, for a complete attempt not
    /// observed yet, gives the ratio.
    pub(in crate::model) fn rest_skew(
        &mut self,
        app_id: &str,
        key: (u64, u32),
        sum: &TaskSummaryObs,
    ) {
        if !(sum.ended && sum.of_duration) {
            return;
        }
        let Some((s, Some(d))) = self.apps.get_mut(app_id).map(|a| a.parts()) else {
            return;
        };
        if d.stages
            .get(&key)
            .is_some_and(|st| st.status == StageStatus::Complete)
        {
            observe(s, d, key, summary_ratio(sum));
        }
    }
}

/// Observe the ratio of the held attempt `key` once; a `None` ratio (median 0) settles it too.
fn observe(s: &mut AppSummary, d: &mut AppDetail, key: (u64, u32), ratio: Option<f64>) {
    let Some(st) = d.stages.get_mut(&key) else {
        return;
    };
    if st.skew.observed {
        return;
    }
    st.skew.observed = true;
    st.skew.durations = None;
    let Some(r) = ratio else {
        return;
    };
    if let Some(h) = s
        .groups
        .get_mut(&st.group)
        .and_then(|g| g.skew_ratio.as_mut())
    {
        h.observe(r);
    }
}

impl State {
    pub(in crate::model) fn task_start(&mut self, app_id: &str, obs: &TaskStartObs) {
        let Some((s, d, _)) = self.live(app_id) else {
            return;
        };
        if s.counted_tasks.contains(obs.task_id) || !d.started_tasks.insert(obs.task_id) {
            return;
        }
        if let Some(st) = d.stages.get_mut(&(obs.stage_id, obs.attempt)) {
            st.log_running += 1;
        }
        d.with_executor(&obs.executor_id, |ex| ex.log_running += 1);
    }

    pub(in crate::model) fn task_end(&mut self, app_id: &str, obs: &TaskEndObs, t: &Telemetry) {
        let (dur_bounds, task_bounds) = (self.duration_bounds.clone(), self.task_bounds.clone());
        let Some((s, d, labeler)) = self.live(app_id) else {
            return;
        };
        // The application's clock (`cost.rs`), here where the application is at hand.
        s.ran_until(obs.finish_ms);
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
                crate::model::rules::tasks::note_task(st, obs);
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
            agg.locality[crate::model::skew::locality_index(l)] += 1;
        }
        d.with_executor(&obs.executor_id, |ex| {
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
        });
    }
}
