//! The one in-memory model of every Spark application the sources see.
//!
//! Sources call the `upsert_*` / `task_end` / `streaming_progress` methods with observations
//! ([`obs`]); each call is idempotent and keyed by Spark's own ids, so a job seen twice, or by the
//! REST poller and the event-log tailer both, counts once (see [`app`] for the rules). Exporters
//! read the state at export time through [`Model::view`] and its read-only [`view::ModelView`];
//! the state itself is private to this module.

mod app;
pub mod hist;
mod idset;
mod labels;
pub mod obs;
mod others;
mod update;
pub mod view;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::{ModelConfig, Settings};
use crate::telemetry::Telemetry;
use app::AppState;
pub use app::GroupKey;
use labels::Labeler;
pub use labels::OTHER;
pub use obs::*;
pub use others::StreamAgg;

/// Wall-clock source, replaceable in tests.
pub type Clock = Arc<dyn Fn() -> EpochMs + Send + Sync>;

/// The system clock in epoch milliseconds.
pub fn system_now_ms() -> EpochMs {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as EpochMs)
        .unwrap_or(0)
}

/// Everything the model holds (private: exporters read it through [`view::ModelView`]).
#[derive(Debug)]
pub(crate) struct State {
    /// Applications by id.
    apps: BTreeMap<String, AppState>,
    /// Buckets of job, stage, SQL and batch durations.
    duration_bounds: Arc<[f64]>,
    /// Buckets of task durations.
    task_bounds: Arc<[f64]>,
    /// Retention settings.
    retention: ModelConfig,
    labeler: Labeler,
}

/// Shared handle to the model.
pub struct Model {
    state: Mutex<State>,
    /// Bumped by every write, so exporters can tell whether anything changed since a render.
    generation: AtomicU64,
    telemetry: Arc<Telemetry>,
    clock: Clock,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").finish_non_exhaustive()
    }
}

impl Model {
    /// A new, empty model on the system clock.
    pub fn new(settings: &Settings, telemetry: Arc<Telemetry>) -> Arc<Model> {
        Self::with_clock(settings, telemetry, Arc::new(system_now_ms))
    }

    /// A new, empty model on the given clock (tests).
    pub fn with_clock(settings: &Settings, telemetry: Arc<Telemetry>, clock: Clock) -> Arc<Model> {
        Arc::new(Model {
            state: Mutex::new(State {
                apps: BTreeMap::new(),
                duration_bounds: Arc::from(settings.histograms.duration_buckets.clone()),
                task_bounds: Arc::from(settings.histograms.task_duration_buckets.clone()),
                retention: settings.model.clone(),
                labeler: Labeler::new(&settings.labels),
            }),
            generation: AtomicU64::new(0),
            telemetry,
            clock,
        })
    }

    /// The self-metrics sink.
    pub fn telemetry(&self) -> &Arc<Telemetry> {
        &self.telemetry
    }

    /// Current wall-clock time in epoch ms.
    pub fn now_ms(&self) -> EpochMs {
        (self.clock)()
    }

    /// A number that changes whenever the model or the self-metrics change: equal values mean
    /// an export made then shows the same state as one made now (up to the wall clock).
    pub fn generation(&self) -> u64 {
        // Both counters only grow, so their sum changes exactly when either does.
        self.generation
            .load(Ordering::Acquire)
            .wrapping_add(self.telemetry.generation())
    }

    /// Read the model under the lock, through its read view (exporters). Never `.await`
    /// inside `f`.
    pub fn view<R>(&self, f: impl FnOnce(view::ModelView<'_>) -> R) -> R {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(view::ModelView { state: &g })
    }

    fn write<R>(&self, f: impl FnOnce(&mut State, &Telemetry, EpochMs) -> R) -> R {
        let now = self.now_ms();
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let r = f(&mut g, &self.telemetry, now);
        // Bumped under the lock, after the change: a reader that sees the new number and then
        // takes the lock sees the change.
        self.generation.fetch_add(1, Ordering::Release);
        r
    }

    /// Add or update an application.
    pub fn upsert_app(&self, _src: Source, obs: &AppObs) {
        self.write(|s, _, now| s.upsert_app(obs, now))
    }
    /// The REST target no longer lists this (unfinished) application: its driver went away.
    /// Marks it ended at `now_ms` so it expires after the retention time.
    pub fn app_gone(&self, app_id: &str, now_ms: EpochMs) {
        self.write(|s, _, now| s.app_gone(app_id, now_ms, now))
    }
    /// Add or update a job.
    pub fn upsert_job(&self, src: Source, app_id: &str, obs: &JobObs) {
        self.write(|s, t, now| s.upsert_job(src, app_id, obs, t, now))
    }
    /// Add or update a stage attempt.
    pub fn upsert_stage(&self, _src: Source, app_id: &str, obs: &StageObs) {
        self.write(|s, t, now| s.upsert_stage(app_id, obs, t, now, false))
    }
    /// Set a stage attempt's task-duration summary (REST `taskSummary`).
    pub fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, sum: TaskSummaryObs) {
        self.write(|s, _, _| {
            if let Some(st) = s
                .apps
                .get_mut(app_id)
                .and_then(|a| a.stages.get_mut(&(stage_id, attempt)))
            {
                st.summary = Some(sum);
            }
        })
    }
    /// A task started (event log).
    pub fn task_start(&self, app_id: &str, obs: &TaskStartObs) {
        self.write(|s, _, _| s.task_start(app_id, obs))
    }
    /// A task ended (event log).
    pub fn task_end(&self, app_id: &str, obs: &TaskEndObs) {
        self.write(|s, t, _| s.task_end(app_id, obs, t))
    }
    /// Add or update an executor.
    pub fn upsert_executor(&self, _src: Source, app_id: &str, obs: &ExecutorObs) {
        self.write(|s, _, now| s.upsert_executor(app_id, obs, now))
    }
    /// Add or update a SQL execution.
    pub fn upsert_sql(&self, _src: Source, app_id: &str, obs: &SqlObs) {
        self.write(|s, t, _| s.upsert_sql(app_id, obs, t))
    }
    /// A streaming micro-batch finished (event log).
    pub fn streaming_progress(&self, app_id: &str, obs: &StreamingProgressObs) {
        self.write(|s, t, _| s.streaming_progress(app_id, obs, t))
    }
    /// Drop what has aged out: finished applications, finished stages' per-stage series (their
    /// totals fold into their job group), dead executors. Called periodically.
    pub fn expire(&self, now_ms: EpochMs) {
        self.write(|s, t, _| s.expire(now_ms, t))
    }
    /// Apply every held stage observation whose job is still unknown (end of a one-shot poll).
    pub fn flush_pending(&self) {
        self.write(|s, t, now| s.flush_orphans(EpochMs::MAX, t, now))
    }
}
#[cfg(test)]
mod tests;
