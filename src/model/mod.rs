//! The one in-memory model of every Spark application the sources see.
//!
//! Sources call the `upsert_*` / `task_end` / `streaming_progress` methods with observations
//! ([`obs`]); each call is idempotent and keyed by Spark's own ids, so a job seen twice, or by the
//! REST poller and the event-log tailer both, counts once. Exporters read the state at export time
//! through [`Model::read`].

pub mod obs;

use std::sync::{Arc, Mutex};

use crate::config::Settings;
use crate::telemetry::Telemetry;
pub use obs::*;

/// Shared handle to the model.
#[derive(Debug)]
pub struct Model {
    state: Mutex<State>,
    telemetry: Arc<Telemetry>,
}

/// Everything the model holds (filled in by `state.rs`).
#[derive(Debug, Default)]
pub struct State {}

impl Model {
    /// A new, empty model.
    pub fn new(_settings: &Settings, telemetry: Arc<Telemetry>) -> Arc<Model> {
        Arc::new(Model {
            state: Mutex::new(State::default()),
            telemetry,
        })
    }
    /// The self-metrics sink.
    pub fn telemetry(&self) -> &Arc<Telemetry> {
        &self.telemetry
    }
    /// Read the state under the lock (exporters). Never `.await` inside `f`.
    pub fn read<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&g)
    }
    /// Add or update an application.
    pub fn upsert_app(&self, _src: Source, _obs: &AppObs) {}
    /// The REST target no longer lists this (unfinished) application: its driver went away.
    /// Marks it ended at `now_ms` so it expires after the retention time.
    pub fn app_gone(&self, _app_id: &str, _now_ms: EpochMs) {}
    /// Add or update a job.
    pub fn upsert_job(&self, _src: Source, _app_id: &str, _obs: &JobObs) {}
    /// Add or update a stage attempt.
    pub fn upsert_stage(&self, _src: Source, _app_id: &str, _obs: &StageObs) {}
    /// Set a stage attempt's task-duration summary (REST `taskSummary`).
    pub fn set_task_summary(&self, _app_id: &str, _stage_id: u64, _attempt: u32, _s: TaskSummaryObs) {}
    /// A task ended (event log).
    pub fn task_end(&self, _app_id: &str, _obs: &TaskEndObs) {}
    /// Add or update an executor.
    pub fn upsert_executor(&self, _src: Source, _app_id: &str, _obs: &ExecutorObs) {}
    /// Add or update a SQL execution.
    pub fn upsert_sql(&self, _src: Source, _app_id: &str, _obs: &SqlObs) {}
    /// A streaming micro-batch finished (event log).
    pub fn streaming_progress(&self, _app_id: &str, _obs: &StreamingProgressObs) {}
    /// Drop what has aged out: finished applications, finished stages' per-stage series, dead
    /// executors. Called periodically.
    pub fn expire(&self, _now_ms: EpochMs) {}
}
