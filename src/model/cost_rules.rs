//! How observations change an application's cost and cached data, and what its allocation is
//! (the state itself: [`super::cost`] and [`super::cache`], which the application holds).

use super::app::AppState;
use super::cache::first_line;
use super::cost::core_ms;
use super::obs::{AppPropsObs, BlockObs, EpochMs, ExecutorObs, RddInfoObs, RddObs};
use super::state::State;
use crate::telemetry::Telemetry;

/// Core-milliseconds allocated to `app` so far: the retired executors' and the held ones'.
pub fn allocated_core_ms(app: &AppState) -> u64 {
    app.executors
        .values()
        .map(|e| core_ms(e, app.end_ms, app.cost.seen_ms))
        .fold(app.cost.retired_core_ms, u64::saturating_add)
}

/// Drop `app`'s executors dead for `keep_ms` or more at `now`, their core-milliseconds kept.
pub(super) fn expire_executors(app: &mut AppState, now: EpochMs, keep_ms: EpochMs) {
    let end = app.end_ms;
    let cost = &mut app.cost;
    app.executors.retain(|id, e| {
        let keep = e.dead_seen_ms.is_none_or(|d| now - d < keep_ms);
        if !keep {
            cost.retire(id, e, end);
        }
        keep
    });
}

/// Every executor of `app` leaves the model (its summary), their core-milliseconds kept.
pub(super) fn retire_all(app: &mut AppState) {
    let end = app.end_ms;
    for (id, e) in &app.executors {
        app.cost.retire(id, e, end);
    }
}

/// Name mode: ended run `app` adds its allocation to its name's state `acc` (only a run that
/// counts, see `names.rs`); the name's tasks are read with the largest `spark.task.cpus` of its
/// runs.
pub(super) fn fold(acc: &mut AppState, app: &AppState, counts: bool) {
    if let Some(c) = app.cost.task_cpus {
        acc.cost.task_cpus = Some(acc.cost.task_cpus.map_or(c, |x| x.max(c)));
    }
    if counts {
        acc.cost.retired_core_ms = acc
            .cost
            .retired_core_ms
            .saturating_add(allocated_core_ms(app));
    }
}

impl State {
    /// Application `app_id` ran at least until `t` (see [`super::cost::Cost::seen_ms`]); nothing once it
    /// ended.
    pub(super) fn app_ran_until(&mut self, app_id: &str, t: Option<EpochMs>) {
        let (Some(t), Some(app)) = (t, self.apps.get_mut(app_id)) else {
            return;
        };
        if app.end_ms.is_none() && t > app.cost.seen_ms {
            app.cost.seen_ms = t;
        }
    }

    /// Before an observation of executor `id`: the application's clock if the executor is
    /// counted as live (so its allocation already ran to that clock), else `None`.
    pub(super) fn live_executor_clock(&self, app_id: &str, id: &str) -> Option<EpochMs> {
        let app = self.apps.get(app_id)?;
        app.executors
            .get(id)
            .filter(|e| e.active)
            .map(|_| app.cost.seen_ms)
    }

    /// After executor `obs` was applied: if it was counted live until `before` (see
    /// [`Self::live_executor_clock`]) and is now dead, its removal counts at least to that clock;
    /// and its times move the application's clock.
    pub(super) fn executor_seen(
        &mut self,
        app_id: &str,
        obs: &ExecutorObs,
        before: Option<EpochMs>,
    ) {
        if let Some(ex) = self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.executors.get_mut(&obs.executor_id))
        {
            if !ex.active && ex.alive_until_ms.is_none() {
                ex.alive_until_ms = before;
            }
        }
        self.app_ran_until(app_id, obs.add_ms);
        self.app_ran_until(app_id, obs.remove_ms);
    }

    /// The application's properties (`spark.task.cpus`): the last said wins.
    pub(super) fn set_app_props(&mut self, app_id: &str, obs: &AppPropsObs) {
        let app = self.app(app_id);
        if let Some(c) = obs.task_cpus.filter(|c| *c > 0) {
            app.cost.task_cpus = Some(c);
        }
    }
}

impl State {
    /// REST `/storage/rdd` of `app_id`.
    pub(super) fn set_rdds(&mut self, app_id: &str, rdds: &[RddObs], t: &Telemetry) {
        let (app, labeler) = self.app_and_labeler(app_id);
        let sets = &mut app.label_sets;
        app.cache.set_rest(rdds, t, |n| {
            labeler.value_verbatim(sets, t, "rdd_name", first_line(n))
        });
    }

    /// Event log: a stage computes a persisted RDD.
    pub(super) fn rdd_persisted(&mut self, app_id: &str, obs: &RddInfoObs, t: &Telemetry) {
        let (app, labeler) = self.app_and_labeler(app_id);
        let sets = &mut app.label_sets;
        app.cache.persisted(obs, t, |n| {
            labeler.value_verbatim(sets, t, "rdd_name", first_line(n))
        });
    }

    /// Event log: a block of a persisted RDD changed.
    pub(super) fn block_updated(&mut self, app_id: &str, obs: &BlockObs, t: &Telemetry) {
        self.app(app_id).cache.block(obs, t);
    }

    /// Event log: an RDD was unpersisted.
    pub(super) fn rdd_unpersisted(&mut self, app_id: &str, rdd_id: u64) {
        self.app(app_id).cache.unpersisted(rdd_id);
    }
}
