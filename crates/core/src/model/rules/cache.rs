//! How observations change an application's cached datasets (`cache.rs`).

use crate::model::cache::first_line;
use crate::model::obs::*;
use crate::model::state::State;
use crate::telemetry::Telemetry;

impl State {
    /// REST `/storage/rdd` of `app_id`.
    pub(in crate::model) fn set_rdds(&mut self, app_id: &str, rdds: &[RddObs], t: &Telemetry) {
        let Some((_, d, labeler)) = self.live(app_id) else {
            return;
        };
        let sets = &mut d.label_sets;
        d.cache.set_rest(rdds, t, |n| {
            labeler.value_verbatim(sets, t, "rdd_name", first_line(n))
        });
    }

    /// Event log: a stage computes a persisted RDD.
    pub(in crate::model) fn rdd_persisted(
        &mut self,
        app_id: &str,
        obs: &RddInfoObs,
        t: &Telemetry,
    ) {
        let Some((_, d, labeler)) = self.live(app_id) else {
            return;
        };
        let sets = &mut d.label_sets;
        d.cache.persisted(obs, t, |n| {
            labeler.value_verbatim(sets, t, "rdd_name", first_line(n))
        });
    }

    /// Event log: a block of a persisted RDD changed.
    pub(in crate::model) fn block_updated(&mut self, app_id: &str, obs: &BlockObs, t: &Telemetry) {
        if let Some((_, d, _)) = self.live(app_id) {
            d.cache.block(obs, t);
        }
    }

    /// Event log: an RDD was unpersisted.
    pub(in crate::model) fn rdd_unpersisted(&mut self, app_id: &str, rdd_id: u64) {
        if let Some((_, d, _)) = self.live(app_id) {
            d.cache.unpersisted(rdd_id);
        }
    }
}
