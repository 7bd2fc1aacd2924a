//! The one in-memory model of every Spark application the sources see.
//!
//! Sources report observations ([`obs`]) through the [`Observer`] trait ([`observer`]), which
//! the model implements per source ([`Model::observer`]); each call is idempotent and keyed by
//! Spark's own ids, so a job seen twice, or by the REST poller and the event-log tailer both,
//! counts once (see [`app`] for the rules). Exporters
//! read the state at export time through [`Model::view`] and its read-only [`view::ModelView`];
//! the state itself is private to this module.

mod app;
mod executor;
pub mod hist;
mod idset;
mod labels;
pub mod obs;
pub mod observer;
mod sql;
mod streaming;
mod update;
pub mod view;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::config::{ModelConfig, Settings};
use crate::telemetry::Telemetry;
use app::AppState;
pub use app::GroupKey;
use labels::Labeler;
pub use labels::OTHER;
pub use obs::*;
pub use observer::{ModelObserver, Observer};
pub use streaming::StreamAgg;

pub use crate::clock::{system_now_ms, Clock};

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
        Self::with_clock(settings, telemetry, crate::clock::system())
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

    pub(super) fn write<R>(&self, f: impl FnOnce(&mut State, &Telemetry, EpochMs) -> R) -> R {
        let now = self.now_ms();
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let r = f(&mut g, &self.telemetry, now);
        // Bumped under the lock, after the change: a reader that sees the new number and then
        // takes the lock sees the change.
        self.generation.fetch_add(1, Ordering::Release);
        r
    }

    /// The model as the observer of one source's observations (the one way in).
    pub fn observer(self: &Arc<Self>, source: Source) -> ModelObserver {
        ModelObserver {
            model: self.clone(),
            source,
        }
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
