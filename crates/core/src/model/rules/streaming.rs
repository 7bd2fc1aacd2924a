//! How streaming observations change an application: a query's aggregate created at zero on its
//! start, each micro-batch counted once.

use std::sync::Arc;

use crate::model::obs::*;
use crate::model::state::State;
use crate::model::streaming::StreamAgg;
use crate::telemetry::Telemetry;

impl State {
    pub(in crate::model) fn streaming_started(
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
                    .get(&crate::model::streaming_labels::stand_in(query_id))
            })
            .copied();
        let (_, d, labeler) = self.live(app_id)?;
        let q = crate::model::streaming_labels::label(
            labeler,
            &mut d.label_sets,
            t,
            "query",
            name,
            query_id,
        );
        let agg = d
            .streaming
            .entry(q.clone())
            .or_insert_with(|| StreamAgg::new(bounds));
        if configured.is_some() {
            agg.configured_interval_s = configured;
        }
        Some(q)
    }

    pub(in crate::model) fn streaming_progress(
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
}
