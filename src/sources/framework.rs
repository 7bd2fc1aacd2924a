//! The framework every source plugs into: the [`Plugin`] a source's folder implements, the
//! [`Collector`] it builds, and the [`Handle`] the framework gives it (health by place, the
//! self-metrics every source has, its part of the checkpoint). Nothing here names a source.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::parts::{Part, Parts};
use crate::clock::EpochMs;
use crate::config::Settings;
use crate::health::{Health, Place};
use crate::model::{Feed, ModelObserver, Source};
use crate::telemetry::Telemetry;

/// A boxed future a collector returns (the trait is object safe, so the list is one `Vec`).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Why a one-shot read failed (a running collector logs, counts and retries instead).
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// The source could not read (its own error: a REST target failed, an event log could not
    /// be read at all).
    #[error(transparent)]
    Source(Box<dyn std::error::Error + Send + Sync>),
    /// The read's task ended abnormally.
    #[error("the read stopped: {0}")]
    Task(String),
}

impl CollectError {
    /// A source's own error.
    pub fn of(e: impl std::error::Error + Send + Sync + 'static) -> CollectError {
        CollectError::Source(Box::new(e))
    }

    /// The source's own error, if it is an `E`.
    pub fn downcast<E: std::error::Error + 'static>(self) -> Result<E, CollectError> {
        match self {
            CollectError::Source(b) => b.downcast::<E>().map(|e| *e).map_err(CollectError::Source),
            other => Err(other),
        }
    }
}

/// A kind of source: one per folder, one line in [`REGISTRY`].
pub trait Plugin: Sync {
    /// Its name: the `source` label of the framework's self-metrics, its key in checkpoints and
    /// on the status page (`rest`, `event_log`).
    fn name(&self) -> &'static str;
    /// How the status page titles it (`REST`, `event log`).
    fn title(&self) -> &'static str;
    /// What it reads.
    fn feed(&self) -> Feed;
    /// Its section of the configuration (its keys, declared in its folder), if it has one.
    fn config(&self) -> Option<&'static crate::config::Declared> {
        None
    }
    /// The places the settings give it (targets, folders), as shown; none: the exporter does
    /// not run it.
    fn places(&self, settings: &Settings) -> Vec<String>;
    /// The collector the exporter runs, from its own settings and the framework's handle.
    fn build(&self, settings: &Settings, handle: Handle) -> Arc<dyn Collector>;
    /// Its collector for a one-shot read (`dump`) of `shot`, reporting through `handle`;
    /// `None` when the read does not ask for it.
    fn once(
        &self,
        settings: &Arc<Settings>,
        shot: &OneShot<'_>,
        handle: Handle,
    ) -> Option<OnceRead>;
    /// Whether it has finished its first round (readiness): by default, once it said so
    /// ([`Handle::round_done`]).
    fn ready(&self, settings: &Settings, health: &Health) -> bool {
        let _ = settings;
        health.first_round_done(self.name())
    }
    /// The applications its checkpoint part `part` can still report (a checkpoint forgets
    /// the applications not kept that no source can report again); none by default.
    fn reportable(&self, part: &serde_json::Value) -> Vec<String> {
        let _ = part;
        vec![]
    }
    /// A reshard: this shard's part from the old shards' parts (`parts` by old shard index),
    /// or `None` to read everything again (the default).
    fn hand_over(
        &self,
        parts: &std::collections::BTreeMap<usize, serde_json::Value>,
        reshard: &Reshard<'_>,
    ) -> Option<serde_json::Value> {
        let _ = (parts, reshard);
        None
    }
}

/// What a one-shot read (`dump`) was asked to read.
#[derive(Debug, Clone, Copy)]
pub struct OneShot<'a> {
    /// `--event-log` paths (files, folders, object-store URLs).
    pub paths: &'a [String],
    /// `--spark.url` was given (without it, `--event-log` alone does not also poll the default
    /// UI URL).
    pub urls_given: bool,
}

/// A source's part of a one-shot read.
pub struct OnceRead {
    /// Its collector.
    pub collector: Arc<dyn Collector>,
    /// What it reads, as shown.
    pub reads: Vec<String>,
    /// What to say when it found nothing (what it looks for), or empty.
    pub hint: String,
}

/// What a reshard hands over: the old shard count and how applications are now owned.
#[derive(Debug)]
pub struct Reshard<'a> {
    /// How many shards there were.
    pub count: usize,
    /// Every old shard read every log (`model.aggregate_by: app_name`).
    pub by_name: bool,
    /// Which applications this shard owns now.
    pub mine: &'a crate::shard::Shard,
}

/// One running source of observations.
pub trait Collector: Send + Sync {
    /// The source its observations are.
    fn source(&self) -> Source;
    /// Report to `observer` until `finish` is cancelled, then make a last pass and return.
    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()>;
    /// Read everything there is once, into `observer`.
    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>>;
}

/// What the framework gives a running source besides its settings and the observer: where it
/// says how its places answer (health, and the self-metrics every source has), and its part of
/// the checkpoint.
#[derive(Debug, Clone, Default)]
pub struct Handle {
    name: &'static str,
    source: Option<Source>,
    health: Arc<Health>,
    telemetry: Arc<Telemetry>,
    parts: Arc<Parts>,
}

impl Handle {
    /// Source `name` (number and feed `source`)'s handle onto these.
    pub fn new(
        (name, source): (&'static str, Source),
        health: Arc<Health>,
        telemetry: Arc<Telemetry>,
        parts: Arc<Parts>,
    ) -> Handle {
        Handle {
            name,
            source: Some(source),
            health,
            telemetry,
            parts,
        }
    }

    /// A handle of source `name` that only counts into `telemetry`: one-shot reads (`dump`,
    /// `diagnose`).
    pub fn counting(source: (&'static str, Source), telemetry: Arc<Telemetry>) -> Handle {
        Handle::new(source, Arc::default(), telemetry, Arc::default())
    }

    /// The source's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The source's number and feed, as the registry gave them.
    ///
    /// # Panics
    /// On a handle nobody reads (`Handle::default()`, which no collector is built with).
    pub fn source(&self) -> Source {
        self.source
            .expect("a collector's handle comes from the registry")
    }

    /// The self-metrics sink.
    pub fn telemetry(&self) -> &Arc<Telemetry> {
        &self.telemetry
    }

    /// `place` was read at `at_ms`.
    pub fn answered(&self, place: &str, at_ms: EpochMs) {
        self.health.answered(self.name, place, at_ms);
        self.telemetry.set_source_up(self.name, place, true);
    }

    /// `place` could not be read at `at_ms`, because of `error`.
    pub fn failed(&self, place: &str, at_ms: EpochMs, error: &str) {
        self.health.failed(self.name, place, at_ms, error);
        self.telemetry.set_source_up(self.name, place, false);
    }

    /// How `place` answered so far.
    pub fn place(&self, place: &str) -> Option<Place> {
        self.health.place(self.name, place)
    }

    /// The first round is done (readiness, `spark_exporter_source_ready`).
    pub fn round_done(&self) {
        self.health.round_done(self.name);
        self.telemetry.set_source_ready(self.name, true);
    }

    /// Its part of the checkpoint loaded at start, if any.
    pub fn loaded_part(&self) -> Option<serde_json::Value> {
        self.parts.loaded(self.name)
    }

    /// Whether checkpoints are kept (a part is then worth publishing).
    pub fn keeps_parts(&self) -> bool {
        self.parts.kept()
    }

    /// Publish its part for the next checkpoint (replacing the one published before).
    pub fn publish_part(&self, part: Arc<dyn Part>) {
        self.parts.publish(self.name, part);
    }
}
