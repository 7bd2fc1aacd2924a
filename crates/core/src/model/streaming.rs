//! Structured-streaming queries of one application: batches, rows, rates and batch durations;
//! the watermark and its lag; state per stateful operator; time per batch phase; rows and rates
//! per source; and the trigger interval (configured, or inferred from batch start times).
//!
//! Every per-query label beyond `query` (`operator`, `phase`, `source`) is capped at
//! [`MAX_KEYS`] values per query; later ones fold into `__other__`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::hist::Hist;
use super::obs::{EpochMs, StreamingProgressObs};

/// Distinct `operator`, `phase` and `source` values kept per query.
pub const MAX_KEYS: usize = 32;

/// Batch starts kept per query for inferring the trigger interval.
const RECENT_BATCHES: usize = 32;

/// A batch that started less than this after the previous one ended started back-to-back
/// (the previous batch overran its trigger), not on the trigger's schedule.
const BACK_TO_BACK_MS: i64 = 25;

/// One stateful operator's latest state and its dropped rows.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct OperatorAgg {
    /// Rows in the state (latest batch).
    pub(super) rows_total: u64,
    /// Memory of the state, bytes (latest batch).
    pub(super) memory_bytes: u64,
    /// Rows dropped by the watermark, summed over batches.
    pub(super) dropped_by_watermark: u64,
}

/// One source's rows and latest rates.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SourceAgg {
    /// Rows read, summed over batches.
    pub(super) input_rows: u64,
    /// Latest input rate (absent until Spark computed one).
    #[serde(with = "crate::model::serial::exact::opt")]
    pub(super) input_rows_per_second: Option<f64>,
    /// Latest processing rate (absent until Spark computed one).
    #[serde(with = "crate::model::serial::exact::opt")]
    pub(super) processed_rows_per_second: Option<f64>,
}

/// Where a query's trigger interval comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TriggerInterval {
    /// `streaming.trigger_intervals`, seconds.
    Configured(f64),
    /// The smallest spacing of two on-schedule batch starts among the recent batches, seconds.
    Inferred(f64),
}

/// Aggregates of one streaming query.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StreamAgg {
    /// Highest batch id counted, per query id (a query name can have several runs).
    pub(super) last_batch: BTreeMap<String, u64>,
    /// Batches counted.
    pub(super) batches: u64,
    /// Input rows counted.
    pub(super) input_rows: u64,
    /// Latest input rate.
    #[serde(with = "crate::model::serial::exact")]
    pub(super) input_rows_per_second: f64,
    /// Latest processing rate.
    #[serde(with = "crate::model::serial::exact")]
    pub(super) processed_rows_per_second: f64,
    /// Batch durations.
    pub(super) batch_duration: Hist,
    /// Latest watermark (epoch ms); `None` until a batch reported one.
    pub(super) watermark_ms: Option<EpochMs>,
    /// `eventTime.max - watermark` of the latest batch that had both, seconds.
    #[serde(with = "crate::model::serial::exact::opt")]
    pub(super) watermark_lag_s: Option<f64>,
    /// Milliseconds per `durationMs` phase, summed over batches.
    pub(super) phases_ms: BTreeMap<Arc<str>, u64>,
    /// Per stateful operator (`stateStoreSave`, a repeated name as `stateStoreSave#2`).
    pub(super) operators: BTreeMap<Arc<str>, OperatorAgg>,
    /// Per source (label value from its description).
    pub(super) sources: BTreeMap<Arc<str>, SourceAgg>,
    /// `streaming.trigger_intervals` for this query, seconds.
    #[serde(with = "crate::model::serial::exact::opt")]
    pub(super) configured_interval_s: Option<f64>,
    /// Recent batches: (start, duration) in ms, oldest first.
    recent: VecDeque<(EpochMs, u64)>,
}

impl OperatorAgg {
    /// Rows in the state (latest batch).
    pub fn rows_total(&self) -> u64 {
        self.rows_total
    }
    /// Memory of the state, bytes (latest batch).
    pub fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }
    /// Rows dropped by the watermark, summed over batches.
    pub fn dropped_by_watermark(&self) -> u64 {
        self.dropped_by_watermark
    }
}

impl SourceAgg {
    /// Rows read, summed over batches.
    pub fn input_rows(&self) -> u64 {
        self.input_rows
    }
    /// Latest input rate.
    pub fn input_rows_per_second(&self) -> Option<f64> {
        self.input_rows_per_second
    }
    /// Latest processing rate.
    pub fn processed_rows_per_second(&self) -> Option<f64> {
        self.processed_rows_per_second
    }
}

impl StreamAgg {
    /// Batches counted.
    pub fn batches(&self) -> u64 {
        self.batches
    }
    /// Input rows counted.
    pub fn input_rows(&self) -> u64 {
        self.input_rows
    }
    /// Latest input rate.
    pub fn input_rows_per_second(&self) -> f64 {
        self.input_rows_per_second
    }
    /// Latest processing rate.
    pub fn processed_rows_per_second(&self) -> f64 {
        self.processed_rows_per_second
    }
    /// Batch durations.
    pub fn batch_duration(&self) -> &Hist {
        &self.batch_duration
    }
    /// Latest watermark (epoch ms).
    pub fn watermark_ms(&self) -> Option<EpochMs> {
        self.watermark_ms
    }
    /// `eventTime.max - watermark` of the latest batch that had both, seconds.
    pub fn watermark_lag_s(&self) -> Option<f64> {
        self.watermark_lag_s
    }
    /// Milliseconds per `durationMs` phase, summed over batches.
    pub fn phases_ms(&self) -> &BTreeMap<Arc<str>, u64> {
        &self.phases_ms
    }
    /// Per stateful operator.
    pub fn operators(&self) -> &BTreeMap<Arc<str>, OperatorAgg> {
        &self.operators
    }
    /// Per source.
    pub fn sources(&self) -> &BTreeMap<Arc<str>, SourceAgg> {
        &self.sources
    }
}

impl StreamAgg {
    /// A query's aggregate on first sight: every counter and the histogram at zero.
    pub fn new(bounds: std::sync::Arc<[f64]>) -> StreamAgg {
        StreamAgg {
            last_batch: BTreeMap::new(),
            batches: 0,
            input_rows: 0,
            input_rows_per_second: 0.0,
            processed_rows_per_second: 0.0,
            batch_duration: Hist::new(bounds),
            watermark_ms: None,
            watermark_lag_s: None,
            phases_ms: BTreeMap::new(),
            operators: BTreeMap::new(),
            sources: BTreeMap::new(),
            configured_interval_s: None,
            recent: VecDeque::new(),
        }
    }

    /// Count one new batch (the caller checked it is new). `source_label` turns a source
    /// description into its label value.
    pub fn add_batch(
        &mut self,
        obs: &StreamingProgressObs,
        mut source_label: impl FnMut(&str) -> Arc<str>,
    ) {
        self.batches += 1;
        self.input_rows += obs.num_input_rows;
        self.input_rows_per_second = obs.input_rows_per_second;
        self.processed_rows_per_second = obs.processed_rows_per_second;
        self.batch_duration
            .observe(obs.batch_duration_ms as f64 / 1000.0);
        if let Some(w) = obs.watermark_ms {
            self.watermark_ms = Some(w);
            // An empty batch has no `max`: the lag stays what the last batch with rows said.
            if let Some(max) = obs.event_time_max_ms {
                self.watermark_lag_s = Some(max.saturating_sub(w).max(0) as f64 / 1000.0);
            }
        }
        for (phase, ms) in &obs.phases_ms {
            let k = capped_key(&self.phases_ms, phase);
            *self.phases_ms.entry(k).or_default() += ms;
        }
        // Operators past the cap share `__other__`: their state is the batch's sum.
        if let Some(o) = self.operators.get_mut(super::labels::OTHER) {
            (o.rows_total, o.memory_bytes) = (0, 0);
        }
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for op in &obs.state_operators {
            let n = seen.entry(op.name.as_str()).or_default();
            *n += 1;
            let name = match *n {
                1 => op.name.clone(),
                i => format!("{}#{i}", op.name),
            };
            let k = capped_key(&self.operators, &name);
            let folded = &*k == super::labels::OTHER;
            let agg = self.operators.entry(k).or_default();
            if folded {
                agg.rows_total += op.rows_total;
                agg.memory_bytes += op.memory_bytes;
            } else {
                agg.rows_total = op.rows_total;
                agg.memory_bytes = op.memory_bytes;
            }
            agg.dropped_by_watermark += op.dropped_by_watermark;
        }
        for s in &obs.sources {
            let label = source_label(&s.description);
            let k = capped_key(&self.sources, &label);
            let agg = self.sources.entry(k).or_default();
            agg.input_rows += s.input_rows;
            if s.input_rows_per_second.is_some() {
                agg.input_rows_per_second = s.input_rows_per_second;
            }
            if s.processed_rows_per_second.is_some() {
                agg.processed_rows_per_second = s.processed_rows_per_second;
            }
        }
        if let Some(start) = obs.start_ms {
            // Batches arrive in order; one out of order restarts the window.
            if self.recent.back().is_some_and(|(s, _)| *s > start) {
                self.recent.clear();
            }
            self.recent.push_back((start, obs.batch_duration_ms));
            if self.recent.len() > RECENT_BATCHES {
                self.recent.pop_front();
            }
        }
    }

    /// The durations (ms) of the recent batches (at most 32), oldest first.
    pub fn recent_durations_ms(&self) -> impl Iterator<Item = u64> + '_ {
        self.recent.iter().map(|(_, d)| *d)
    }

    /// The trigger interval: configured, else inferred from the recent batch starts.
    ///
    /// A processing-time trigger starts a batch on its schedule (a multiple of the interval)
    /// unless the previous batch overran, when the next one starts right after it
    /// (back-to-back). The spacing of two batch starts is a multiple of the interval when both
    /// started on schedule, so the interval is the smallest such spacing. A start can be late by
    /// a few tens of ms (the trigger's thread woke late on a loaded machine: 970 ms between two
    /// starts of a 1 s trigger was seen), so it is the median of the spacings within 10% of the
    /// smallest, rounded to 10 ms. A batch started on schedule when it began at least
    /// `BACK_TO_BACK_MS` after the previous one ended; the first batch kept counts as off
    /// schedule. No such pair (a query always behind, `Trigger.AvailableNow`): no inferred
    /// interval.
    pub fn trigger_interval(&self) -> Option<TriggerInterval> {
        if let Some(c) = self.configured_interval_s {
            return Some(TriggerInterval::Configured(c));
        }
        let on_schedule = |i: usize| {
            i > 0 && {
                let (prev_start, prev_dur) = self.recent[i - 1];
                self.recent[i].0 - (prev_start + prev_dur as i64) >= BACK_TO_BACK_MS
            }
        };
        let mut spacings: Vec<i64> = (2..self.recent.len())
            .filter(|&i| on_schedule(i) && on_schedule(i - 1))
            .map(|i| self.recent[i].0 - self.recent[i - 1].0)
            .filter(|d| *d > 0)
            .collect();
        spacings.sort_unstable();
        let least = *spacings.first()?;
        let near: Vec<i64> = spacings
            .into_iter()
            .take_while(|d| *d * 10 <= least * 11)
            .collect();
        let ms = near[near.len() / 2];
        Some(TriggerInterval::Inferred(
            ((ms as f64) / 10.0).round() / 100.0,
        ))
    }
}

/// The key `v` is kept under: itself while the map has room, else `__other__`.
fn capped_key<V>(m: &BTreeMap<Arc<str>, V>, v: &str) -> Arc<str> {
    if m.contains_key(v) || m.len() < MAX_KEYS {
        Arc::from(v)
    } else {
        Arc::from(super::labels::OTHER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(start: i64, dur: u64) -> StreamingProgressObs {
        StreamingProgressObs {
            start_ms: Some(start),
            batch_duration_ms: dur,
            ..Default::default()
        }
    }

    fn inferred(batches: &[(i64, u64)]) -> Option<TriggerInterval> {
        let mut a = StreamAgg::new(Arc::from(vec![1.0]));
        for (s, d) in batches {
            a.add_batch(&batch(*s, *d), |s| Arc::from(s));
        }
        a.trigger_interval()
    }

    #[test]
    fn the_interval_is_the_smallest_on_schedule_spacing() {
        // Real spacings of a 1 s trigger (healthy_sink, Spark 4.1.1): a slow first batch, two
        // back-to-back ones, then on schedule.
        let b = [
            (0, 3653),
            (3664, 929),
            (4599, 586),
            (5246, 417),
            (6246, 466),
            (7246, 570),
            (8249, 300),
        ];
        assert_eq!(inferred(&b), Some(TriggerInterval::Inferred(1.0)));
        // The off-schedule start (5246, right after a back-to-back batch) is 647 ms after its
        // predecessor, which is not the interval.
        assert_eq!(inferred(&b[..4]), None);
    }

    #[test]
    fn a_late_start_does_not_shorten_the_interval() {
        // A 1 s trigger on a loaded machine: the start at 4030 woke 30 ms late, so the next
        // start is 970 ms after it; the others are on time or a few ms late.
        let b = [
            (0, 300),
            (1000, 300),
            (2002, 300),
            (3000, 300),
            (4030, 300),
            (5000, 300),
            (6001, 300),
            (7000, 300),
        ];
        assert_eq!(inferred(&b), Some(TriggerInterval::Inferred(1.0)));
        // Spacings of two intervals (a skipped schedule) are not near the smallest.
        let b = [(0, 300), (1000, 300), (2000, 300), (4000, 300), (6000, 300)];
        assert_eq!(inferred(&b), Some(TriggerInterval::Inferred(1.0)));
    }

    #[test]
    fn a_query_always_behind_has_no_inferred_interval() {
        let b: Vec<(i64, u64)> = (0..10).map(|i| (i * 2005, 2000)).collect();
        assert_eq!(inferred(&b), None);
        let mut a = StreamAgg::new(Arc::from(vec![1.0]));
        a.configured_interval_s = Some(1.0);
        assert_eq!(a.trigger_interval(), Some(TriggerInterval::Configured(1.0)));
    }

    #[test]
    fn operator_phase_and_source_keys_are_capped() {
        let mut a = StreamAgg::new(Arc::from(vec![1.0]));
        let mut o = batch(0, 1);
        o.phases_ms = (0..40).map(|i| (format!("p{i}"), 1)).collect();
        o.state_operators = (0..3)
            .map(|_| super::super::obs::StateOperatorObs {
                name: "stateStoreSave".into(),
                rows_total: 2,
                ..Default::default()
            })
            .collect();
        a.add_batch(&o, |s| Arc::from(s));
        assert_eq!(a.phases_ms.len(), MAX_KEYS + 1);
        assert_eq!(a.phases_ms.get(super::super::labels::OTHER), Some(&8));
        let ops: Vec<&str> = a.operators.keys().map(|k| &**k).collect();
        assert_eq!(
            ops,
            ["stateStoreSave", "stateStoreSave#2", "stateStoreSave#3"]
        );
    }
}
