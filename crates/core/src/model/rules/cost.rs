//! How observations change an application's cost, and what its allocation is (`cost.rs`).

use crate::model::app::{AppDetail, AppState, AppSummary};
use crate::model::cost::core_ms;
use crate::model::obs::*;
use crate::model::state::State;

/// Core-milliseconds allocated to an application so far: the retired executors' and those its
/// detail still holds.
pub(in crate::model) fn allocated_core_ms(s: &AppSummary, d: Option<&AppDetail>) -> u64 {
    d.into_iter()
        .flat_map(|d| d.executors.values())
        .map(|e| core_ms(e, s.end_ms, s.cost.seen_ms))
        .fold(s.cost.retired_core_ms, u64::saturating_add)
}

/// Drop the executors dead for `keep_ms` or more at `now`, their core-milliseconds kept.
pub(in crate::model) fn expire_executors(
    s: &mut AppSummary,
    d: &mut AppDetail,
    now: EpochMs,
    keep_ms: EpochMs,
) {
    let end = s.end_ms;
    let cost = &mut s.cost;
    d.executors.retain(|id, e| {
        let keep = e.dead_seen_ms.is_none_or(|d| now - d < keep_ms);
        if !keep {
            cost.retire(id, e, end);
        }
        keep
    });
}

/// Every executor of the detail leaves the model (its summary), their core-milliseconds kept.
pub(in crate::model) fn retire_all(s: &mut AppSummary, d: &AppDetail) {
    let end = s.end_ms;
    for (id, e) in &d.executors {
        s.cost.retire(id, e, end);
    }
}

/// Name mode: ended run `app` adds its allocation to its name's summary `acc` (only a run that
/// counts, see `names.rs`); the name's tasks are read with the largest `spark.task.cpus` of its
/// runs. The run's allocation (core-ms) when it counts.
pub(in crate::model) fn fold(acc: &mut AppSummary, app: &AppState, counts: bool) -> Option<u64> {
    if let Some(c) = app.summary.cost.task_cpus {
        acc.cost.task_cpus = Some(acc.cost.task_cpus.map_or(c, |x| x.max(c)));
    }
    let run = counts.then(|| allocated_core_ms(&app.summary, app.detail.as_deref()))?;
    acc.cost.retired_core_ms = acc.cost.retired_core_ms.saturating_add(run);
    Some(run)
}

impl State {
    /// Application `app_id` ran at least until `t` (see [`crate::model::cost::Cost::seen_ms`]); nothing once it
    /// ended.
    pub(in crate::model) fn app_ran_until(&mut self, app_id: &str, t: Option<EpochMs>) {
        let (Some(t), Some(s)) = (t, self.apps.get_mut(app_id).map(|a| &mut a.summary)) else {
            return;
        };
        if s.end_ms.is_none() && t > s.cost.seen_ms {
            s.cost.seen_ms = t;
        }
    }

    /// Before an observation of executor `id`: the application's clock if the executor is
    /// counted as live (so its allocation already ran to that clock), else `None`.
    pub(in crate::model) fn live_executor_clock(&self, app_id: &str, id: &str) -> Option<EpochMs> {
        let app = self.apps.get(app_id)?;
        let s = &app.summary;
        app.detail
            .as_ref()?
            .executors
            .get(id)
            .filter(|e| e.active)
            .map(|_| s.cost.seen_ms)
    }

    /// After executor `obs` was applied: if it was counted live until `before` (see
    /// [`Self::live_executor_clock`]) and is now dead, its removal counts at least to that clock;
    /// and its times move the application's clock.
    pub(in crate::model) fn executor_seen(
        &mut self,
        app_id: &str,
        obs: &ExecutorObs,
        before: Option<EpochMs>,
    ) {
        if let Some(ex) = self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
            .and_then(|d| d.executors.get_mut(&obs.executor_id))
        {
            if !ex.active && ex.alive_until_ms.is_none() {
                ex.alive_until_ms = before;
            }
        }
        self.app_ran_until(app_id, obs.add_ms);
        self.app_ran_until(app_id, obs.remove_ms);
    }

    /// The application's properties (`spark.task.cpus`): the last said wins.
    pub(in crate::model) fn set_app_props(&mut self, app_id: &str, obs: &AppPropsObs) {
        let s = self.app(app_id);
        if let Some(c) = obs.task_cpus.filter(|c| *c > 0) {
            s.cost.task_cpus = Some(c);
        }
    }
}
