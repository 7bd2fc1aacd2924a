//! What the model holds: every application, and the settings its rules need. Private to the
//! model: collectors change it through [`super::Observer`], exporters read it through
//! [`super::view`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::app::AppState;
use super::labels::Labeler;
use crate::config::{ModelConfig, Settings};

/// Everything the model holds (private: exporters read it through [`view::ModelView`]).
#[derive(Debug)]
pub(crate) struct State {
    /// Applications by id.
    pub(super) apps: BTreeMap<String, AppState>,
    /// Buckets of job, stage, SQL and batch durations.
    pub(super) duration_bounds: Arc<[f64]>,
    /// Buckets of task durations.
    pub(super) task_bounds: Arc<[f64]>,
    /// Retention settings.
    pub(super) retention: ModelConfig,
    /// Wall-clock time of the write under way (set by [`super::Model`] before each write), for
    /// what is created on first sight.
    pub(super) now_ms: crate::clock::EpochMs,
    pub(super) labeler: Labeler,
}

impl State {
    /// An empty model's state with the histogram buckets, retention and label rules of
    /// `settings`.
    pub(super) fn new(settings: &Settings) -> State {
        State {
            apps: BTreeMap::new(),
            duration_bounds: Arc::from(settings.histograms.duration_buckets.clone()),
            task_bounds: Arc::from(settings.histograms.task_duration_buckets.clone()),
            retention: settings.model.clone(),
            now_ms: 0,
            labeler: Labeler::new(&settings.labels),
        }
    }
}
