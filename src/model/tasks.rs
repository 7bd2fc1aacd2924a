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
//!   [`MAX_DURATIONS`]; an attempt with more, or whose submission the log did not show, gets no
//!   ratio from the log);
//! - REST, from the attempt's final `taskSummary?quantiles=0.5,1.0` (fetched once it ended).
//!
//! Failed attempts are not observed (their task set is incomplete), nor is an attempt whose
//! median task took 0 ms (no ratio). Durations are kept as `u32` milliseconds (49 days), freed
//! when the log reports the attempt ended, or when the model lets the attempt go.
//!
//! **Locality**: every task end the event log reports counts under its `Task Info`.`Locality`
//! (REST has no per-task locality without task lists, which the poller never reads).

use std::sync::{Arc, LazyLock};

use super::app::StageState;
use super::hist::Hist;
use super::obs::{Locality, StageObs, StageStatus, TaskEndObs, TaskOutcome, TaskSummaryObs};
use super::state::State;

/// Upper bounds of the `spark_stage_skew_ratio` buckets: ratios, not seconds. 1 is a perfectly
/// even stage; the default `model.stage_skew_ratio` (5) is a bound.
pub const SKEW_BOUNDS: [f64; 9] = [1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0];

/// Most successful task durations kept per open stage attempt (4 bytes each: 800 KB).
pub const MAX_DURATIONS: usize = 200_000;

static BOUNDS: LazyLock<Arc<[f64]>> = LazyLock::new(|| Arc::from(&SKEW_BOUNDS[..]));

/// An empty skew-ratio histogram.
pub(super) fn skew_hist() -> Hist {
    Hist::new(BOUNDS.clone())
}

/// A stage attempt's skew bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct StageSkew {
    /// Successful task durations (ms) from the event log, while the log shows the attempt open
    /// (from its `StageSubmitted`); `None` before, after, or once over [`MAX_DURATIONS`].
    durations: Option<Vec<u32>>,
    /// The attempt has been observed in its group's histogram (or decided to have no ratio).
    pub(super) observed: bool,
}

impl StageSkew {
    /// A successful task of the attempt ended after `ms`.
    fn push(&mut self, ms: u64) {
        if let Some(d) = &mut self.durations {
            if d.len() >= MAX_DURATIONS {
                self.durations = None;
            } else {
                d.push(u32::try_from(ms).unwrap_or(u32::MAX));
            }
        }
    }
}

/// Longest / median of `durations` with `taskSummary`'s quantiles (see the module docs);
/// `None` without tasks or with a median of 0. Reorders `durations`.
pub fn skew_ratio(durations: &mut [u32]) -> Option<f64> {
    let n = durations.len();
    let max = *durations.iter().max()?;
    // `(0.5 * n).toLong` in Spark: floor(n / 2), at most n - 1.
    let at = (n / 2).min(n - 1);
    let (_, median, _) = durations.select_nth_unstable(at);
    (*median > 0).then(|| f64::from(max) / f64::from(*median))
}

/// Longest / median of a REST summary; `None` with a median of 0.
pub fn summary_ratio(sum: &TaskSummaryObs) -> Option<f64> {
    (sum.median_ms > 0.0).then(|| sum.max_ms / sum.median_ms)
}

/// Count a task end of the attempt `st` (held by the model) towards its skew ratio.
pub(super) fn note_task(st: &mut StageState, obs: &TaskEndObs) {
    if obs.outcome == TaskOutcome::Succeeded {
        let ms = obs.finish_ms.saturating_sub(obs.launch_ms).max(0) as u64;
        st.skew.push(ms);
    }
}

/// Index of a locality in [`Locality::ALL`].
pub fn locality_index(l: Locality) -> usize {
    Locality::ALL.iter().position(|x| *x == l).unwrap_or(5)
}

impl State {
    /// The event log reported stage attempt `obs` (after the model applied it): its submission
    /// opens the attempt's duration list; its completion observes the ratio (if no source did
    /// yet) and frees the list.
    pub(super) fn log_stage(&mut self, app_id: &str, obs: &StageObs) {
        let Some(app) = self.apps.get_mut(app_id) else {
            return;
        };
        let Some(st) = app.stages.get_mut(&(obs.stage_id, obs.attempt)) else {
            return;
        };
        match obs.status {
            StageStatus::Active if !st.skew.observed && st.skew.durations.is_none() => {
                st.skew.durations = Some(Vec::new());
            }
            s if s.is_terminal() => {
                let durations = st.skew.durations.take();
                if s != StageStatus::Complete || st.status != StageStatus::Complete {
                    return;
                }
                if let Some(mut d) = durations.filter(|d| !d.is_empty()) {
                    let ratio = skew_ratio(&mut d);
                    observe(app, (obs.stage_id, obs.attempt), ratio);
                }
            }
            _ => {}
        }
    }

    /// A REST task summary of a held stage attempt: its final one, for a complete attempt not
    /// observed yet, gives the ratio.
    pub(super) fn rest_skew(&mut self, app_id: &str, key: (u64, u32), sum: &TaskSummaryObs) {
        if !(sum.ended && sum.of_duration) {
            return;
        }
        let Some(app) = self.apps.get_mut(app_id) else {
            return;
        };
        if app
            .stages
            .get(&key)
            .is_some_and(|st| st.status == StageStatus::Complete)
        {
            observe(app, key, summary_ratio(sum));
        }
    }
}

/// Observe the ratio of the held attempt `key` once; a `None` ratio (median 0) settles it too.
fn observe(app: &mut super::app::AppState, key: (u64, u32), ratio: Option<f64>) {
    let Some(st) = app.stages.get_mut(&key) else {
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
    if let Some(h) = app
        .groups
        .get_mut(&st.group)
        .and_then(|g| g.skew_ratio.as_mut())
    {
        h.observe(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_uses_task_summary_quantiles() {
        // n = 4: the median is index 2 (the 3rd shortest), as Spark's taskSummary gives.
        assert_eq!(skew_ratio(&mut [40, 10, 20, 30]), Some(40.0 / 30.0));
        // n = 5: index 2.
        assert_eq!(skew_ratio(&mut [1, 2, 3, 4, 100]), Some(100.0 / 3.0));
        assert_eq!(skew_ratio(&mut [7]), Some(1.0));
        assert_eq!(skew_ratio(&mut [0, 5]), Some(1.0));
        assert_eq!(skew_ratio(&mut [0, 0, 5]), None, "median 0");
        assert_eq!(skew_ratio(&mut []), None);
    }

    #[test]
    fn durations_are_capped() {
        let mut s = StageSkew {
            durations: Some(vec![1; MAX_DURATIONS - 1]),
            observed: false,
        };
        s.push(5);
        assert_eq!(s.durations.as_ref().map(Vec::len), Some(MAX_DURATIONS));
        s.push(5);
        assert!(s.durations.is_none(), "over the cap: no ratio from the log");
        s.push(5);
        assert!(s.durations.is_none());
    }

    #[test]
    fn locality_index_follows_all() {
        for (i, l) in Locality::ALL.iter().enumerate() {
            assert_eq!(locality_index(*l), i);
        }
    }
}

#[cfg(test)]
#[path = "tasks_tests.rs"]
mod model_tests;
