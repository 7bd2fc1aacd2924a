//! What the model holds: every application, and the settings its rules need. Private to the
//! model: collectors change it through [`super::Observer`], exporters read it through
//! [`super::view`].

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::app::{AppState, NameAgg};
use super::labels::Labeler;
use crate::config::{CostConfig, ModelConfig, Settings};
use crate::hash::Map;

/// Everything the model holds (private: exporters read it through [`view::ModelView`]).
#[derive(Debug)]
pub(crate) struct State {
    /// Applications by id. A hash map: every event looks its application up, and among a
    /// fleet's 1,000 ids, which share their first 11 bytes (`local-17960...`), a tree's lookup
    /// is ten string comparisons (BENCHMARKS.md, *Cold start at the reader's speed*, step 6).
    /// Whatever walks the applications does so in id order ([`State::apps_in_order`]), so the
    /// exposition, checkpoints and every fold over them come out the same however they hash.
    pub(super) apps: Map<String, AppState>,
    /// Buckets of job, stage, SQL and batch durations.
    pub(super) duration_bounds: Arc<[f64]>,
    /// Buckets of task durations.
    pub(super) task_bounds: Arc<[f64]>,
    /// Retention settings.
    pub(super) retention: ModelConfig,
    /// Prices (`cost`): money is counted with them (`cost.rs`).
    pub(super) prices: Arc<CostConfig>,
    /// Wall-clock time of the write under way (set by [`super::Model`] before each write), for
    /// what is created on first sight.
    pub(super) now_ms: crate::clock::EpochMs,
    pub(super) labeler: Labeler,
    /// Where a job's group comes from (`labels.job_group_from`).
    pub(super) attribution: super::attribution::Attribution,
    /// `labels.connect_user`.
    pub(super) connect_user: bool,
    /// When the model was made (the exporter's start, epoch ms): in name mode only runs that
    /// end from then on count.
    pub(super) started_ms: crate::clock::EpochMs,
    /// Applications not kept (`model.app_name_filter`, `model.max_app_age`, another shard's
    /// name): later observations of them are ignored.
    pub(super) excluded: HashSet<Box<str>>,
    /// The excluded applications this exporter counted, then let go (aged out, retired after
    /// `model.app_retention`): a reshard hands them to the new shards, which must not count
    /// them again. The others are refused again by whichever shard reads them.
    pub(super) retired: HashSet<Box<str>>,
    /// Name mode: what runs that left the model added to their name's series.
    pub(super) names: BTreeMap<Arc<str>, NameAgg>,
    /// The applications this exporter follows (`model.app_name_filter`, `model.max_app_age`,
    /// in name mode the shard), the same filter the collectors ask.
    pub(super) filter: crate::filter::AppFilter,
    /// A diagnosis: no application is summarised, whatever `model.summary_level` says.
    pub(super) keep_detail: bool,
    /// `streaming.trigger_intervals`: seconds by query name (or stand-in).
    pub(super) trigger_intervals: BTreeMap<String, f64>,
    /// The sources the exporter runs and their start-up reads (`delivery.rs`).
    pub(super) sources: super::delivery::Sources,
    /// Settled stage attempts' details not taken yet, by application key, when asked to keep
    /// them (`details.rs`).
    pub(super) settled: Option<Vec<(String, super::details::StageDetail)>>,
}

/// What [`State::expire`] can change, counted: equal shapes before and after mean it changed
/// nothing an export shows.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Shape {
    apps: usize,
    stages: usize,
    orphans: usize,
    executors: usize,
    summarised: usize,
    excluded: usize,
    names: usize,
}

impl State {
    /// See [`Shape`].
    pub(super) fn shape(&self) -> Shape {
        let mut s = Shape {
            apps: self.apps.len(),
            stages: 0,
            orphans: 0,
            executors: 0,
            summarised: 0,
            excluded: self.excluded.len(),
            names: self.names.len(),
        };
        for d in self.apps.values().map(|a| a.detail.as_deref()) {
            let Some(d) = d else {
                s.summarised += 1;
                continue;
            };
            s.stages += d.stages.len();
            s.orphans += d.orphans.len();
            s.executors += d.executors.len();
        }
        s
    }

    /// An empty model's state with the histogram buckets, retention and label rules of
    /// `settings`, keeping the applications `filter` lets through.
    pub(super) fn new(settings: &Settings, filter: crate::filter::AppFilter) -> State {
        State {
            apps: Map::default(),
            duration_bounds: Arc::from(settings.histograms.duration_buckets.clone()),
            task_bounds: Arc::from(settings.histograms.task_duration_buckets.clone()),
            retention: settings.model.clone(),
            prices: Arc::new(settings.cost.clone()),
            now_ms: 0,
            labeler: Labeler::new(&settings.labels),
            attribution: super::attribution::Attribution::new(&settings.labels),
            connect_user: settings.labels.connect_user,
            started_ms: 0,
            excluded: HashSet::new(),
            retired: HashSet::new(),
            names: BTreeMap::new(),
            filter,
            keep_detail: false,
            trigger_intervals: settings
                .streaming
                .trigger_intervals
                .iter()
                .map(|(k, v)| (k.clone(), v.as_secs_f64()))
                .collect(),
            sources: Default::default(),
            settled: None,
        }
    }

    /// Every attempt of application `id` the model holds (keys `{id}/{attempt}`), in key order.
    pub(super) fn attempts_of<'a>(
        &'a self,
        id: &str,
    ) -> impl Iterator<Item = (&'a String, &'a AppState)> + 'a {
        let prefix = format!("{id}/");
        by_id(
            self.apps
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix))
                .collect(),
        )
        .into_iter()
    }

    /// Every application, in id order.
    pub(super) fn apps_in_order(&self) -> Vec<(&String, &AppState)> {
        by_id(self.apps.iter().collect())
    }

    /// Whether `app`'s series are served (`delivery.rs`).
    pub(super) fn serves(&self, app: &AppState) -> bool {
        app.summary.delivery.served() || self.sources.complete()
    }
}

/// Every application of `apps` (a [`State`]'s), in id order, to change.
pub(super) fn in_order_mut(apps: &mut Map<String, AppState>) -> Vec<(&String, &mut AppState)> {
    by_id(apps.iter_mut().collect())
}

/// Applications (or references to them) sorted by id, the order whatever walks them keeps.
pub(super) fn by_id<A>(mut apps: Vec<(&String, A)>) -> Vec<(&String, A)> {
    apps.sort_unstable_by(|a, b| a.0.cmp(b.0));
    apps
}
