//! How executor observations change an application.

use crate::model::executor::normalise_reason;
use crate::model::obs::*;
use crate::model::state::State;

impl State {
    pub(in crate::model) fn upsert_executor(
        &mut self,
        app_id: &str,
        obs: &ExecutorObs,
        now: EpochMs,
    ) {
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
}
