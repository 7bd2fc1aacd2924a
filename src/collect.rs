//! Collectors: the sources that report what Spark does to the model, as one concept.
//!
//! A collector is one [`Collector`]: it names its [`Source`] (the model keeps what each source
//! delivered apart), and it either runs until shutdown (the exporter) or fills a model once
//! (`dump`, `diagnose`, the benches: a one-shot read is a mode of its own, such as
//! [`crate::spark::Mode`], not a poll with rewritten settings). Both ways report through the
//! model's [`crate::model::Observer`], and read only the applications of the model's
//! [`crate::filter::AppFilter`] (asked before reading). A running collector writes how its
//! sources answer to the [`Health`] handle (readiness, the lifecycle) and counts in
//! [`Telemetry`] (exported only). The REST poller ([`Rest`]) and the event-log reader
//! ([`EventLogs`]) are the two; [`configured`] is the list the exporter runs, and a new source
//! that emits the existing observations is one module implementing [`Collector`] and one entry
//! there.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::health::Health;
use crate::model::{Model, ModelObserver, Source};
use crate::positions::ReadPositions;
use crate::spark::Mode;
use crate::telemetry::Telemetry;

/// A boxed future a collector returns (the trait is object safe, so the list is one `Vec`).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Why a one-shot read failed (a running collector logs, counts and retries instead).
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A REST target failed.
    #[error(transparent)]
    Rest(#[from] crate::spark::poller::PollError),
    /// An event log could not be read at all.
    #[error(transparent)]
    EventLog(#[from] crate::eventlog::EventLogError),
    /// The read's task ended abnormally.
    #[error("the read stopped: {0}")]
    Task(String),
}

/// One source of observations.
pub trait Collector: Send + Sync {
    /// The source its observations are.
    fn source(&self) -> Source;
    /// Report to `observer` until `finish` is cancelled, then make a last pass and return.
    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()>;
    /// Read everything there is once, into `observer`.
    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>>;
}

/// The REST poller: every `spark.urls` target, or given targets; read once, as the exporter
/// would see them now, or whole (a diagnosis).
#[derive(Debug, Clone)]
pub struct Rest {
    settings: Arc<Settings>,
    telemetry: Arc<Telemetry>,
    health: Arc<Health>,
    targets: Vec<String>,
    /// How a one-shot read reads ([`Mode::Once`] unless told otherwise).
    once: Mode,
    positions: Arc<ReadPositions>,
}

impl Rest {
    /// Every target of `settings.spark.urls`.
    pub fn new(settings: Arc<Settings>, telemetry: Arc<Telemetry>) -> Rest {
        let targets = settings.spark.urls.clone();
        Rest {
            settings,
            telemetry,
            health: Arc::default(),
            targets,
            once: Mode::Once,
            positions: Arc::default(),
        }
    }

    /// Resume from, and publish to, the positions a checkpoint keeps (the completed
    /// applications read in full); by default, a handle nobody reads.
    pub fn positions(mut self, positions: Arc<ReadPositions>) -> Rest {
        self.positions = positions;
        self
    }

    /// Read these targets (base URLs) instead (`diagnose` reads one).
    pub fn targets(mut self, urls: Vec<String>) -> Rest {
        self.targets = urls;
        self
    }

    /// A one-shot read reads everything there is, every task summary however old (a
    /// diagnosis, [`Mode::Whole`]), and only application `only_app` when given (a History
    /// Server serves many).
    pub fn whole(mut self, only_app: Option<String>) -> Rest {
        self.once = Mode::Whole { only_app };
        self
    }

    /// Write how each target answers to `health` (readiness, the lifecycle); by default, to a
    /// handle nobody reads.
    pub fn health(mut self, health: Arc<Health>) -> Rest {
        self.health = health;
        self
    }

    /// The targets, the model's filter and the health handle.
    fn scope(&self, observer: &ModelObserver) -> crate::spark::Targets {
        crate::spark::Targets {
            urls: self.targets.clone(),
            filter: observer.filter().clone(),
            health: self.health.clone(),
            positions: self.positions.clone(),
        }
    }
}

impl Collector for Rest {
    fn source(&self) -> Source {
        Source::Rest
    }

    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()> {
        Box::pin(crate::spark::run(
            self.settings.clone(),
            self.scope(&observer),
            observer,
            self.telemetry.clone(),
            finish,
        ))
    }

    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>> {
        let (s, t, mode) = (
            self.settings.clone(),
            self.telemetry.clone(),
            self.once.clone(),
        );
        let targets = self.scope(&observer);
        Box::pin(async move {
            crate::spark::read_once(s, targets, mode, observer, t)
                .await
                .map_err(CollectError::from)
        })
    }
}

/// The event-log reader: the folders of `event_log.dirs` (followed), or given paths (read once).
#[derive(Debug, Clone)]
pub struct EventLogs {
    settings: Arc<Settings>,
    telemetry: Arc<Telemetry>,
    health: Arc<Health>,
    paths: Vec<String>,
    positions: Arc<ReadPositions>,
}

impl EventLogs {
    /// The folders of `settings.event_log.dirs`.
    pub fn new(settings: Arc<Settings>, telemetry: Arc<Telemetry>) -> EventLogs {
        let paths = settings
            .event_log
            .dirs
            .iter()
            .map(ToString::to_string)
            .collect();
        EventLogs {
            settings,
            telemetry,
            health: Arc::default(),
            paths,
            positions: Arc::default(),
        }
    }

    /// Resume from, and publish to, the read positions a checkpoint keeps (by default, a
    /// handle nobody reads).
    pub fn positions(mut self, positions: Arc<ReadPositions>) -> EventLogs {
        self.positions = positions;
        self
    }

    /// Tell `health` when the first discovery pass is done (readiness); by default, a handle
    /// nobody reads.
    pub fn health(mut self, health: Arc<Health>) -> EventLogs {
        self.health = health;
        self
    }

    /// Files, folders or object-store URLs to read once instead.
    pub fn paths(mut self, paths: Vec<String>) -> EventLogs {
        self.paths = paths;
        self
    }
}

impl Collector for EventLogs {
    fn source(&self) -> Source {
        Source::EventLog
    }

    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()> {
        Box::pin(crate::eventlog::run(
            self.settings.clone(),
            observer.filter().clone(),
            self.health.clone(),
            observer,
            self.telemetry.clone(),
            self.positions.clone(),
            finish,
        ))
    }

    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>> {
        let (s, t, p) = (
            self.settings.clone(),
            self.telemetry.clone(),
            self.paths.clone(),
        );
        // On the blocking pool: object stores block on the runtime.
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                crate::eventlog::ingest_paths_with(&p, &s, observer.filter(), &*observer, &t)
            })
            .await
            .map_err(|e| CollectError::Task(e.to_string()))?
            .map_err(CollectError::from)
        })
    }
}

/// The collectors the settings ask for: a REST poller when `spark.urls` names a target, an
/// event-log reader when `event_log.dirs` names a folder, each writing how its sources answer to
/// `health`. A new source joins here.
pub fn configured(
    settings: &Arc<Settings>,
    telemetry: &Arc<Telemetry>,
    health: &Arc<Health>,
    positions: &Arc<ReadPositions>,
) -> Vec<Arc<dyn Collector>> {
    let mut v: Vec<Arc<dyn Collector>> = vec![];
    if !settings.spark.urls.is_empty() {
        let rest = Rest::new(settings.clone(), telemetry.clone())
            .health(health.clone())
            .positions(positions.clone());
        v.push(Arc::new(rest));
    }
    if !settings.event_log.dirs.is_empty() {
        let logs = EventLogs::new(settings.clone(), telemetry.clone())
            .health(health.clone())
            .positions(positions.clone());
        v.push(Arc::new(logs));
    }
    v
}

/// Start every collector on `model` until `finish` (the exporter). After a start an
/// application is served only once each of them has given its start-up state for it.
pub fn spawn_all(
    collectors: &[Arc<dyn Collector>],
    model: &Arc<Model>,
    finish: &CancellationToken,
) -> tokio::task::JoinSet<()> {
    let sources: Vec<Source> = collectors.iter().map(|c| c.source()).collect();
    model.expect_sources(&sources);
    let mut set = tokio::task::JoinSet::new();
    for c in collectors {
        set.spawn(c.run(Arc::new(model.observer(c.source())), finish.clone()));
    }
    set
}

/// Fill `model` once from every collector, one after the other, then apply the stages still
/// waiting for their job. Every collector is read even if one fails; the errors, in order.
pub async fn fill_once(collectors: &[Arc<dyn Collector>], model: &Arc<Model>) -> Vec<CollectError> {
    let mut errors = vec![];
    for c in collectors {
        if let Err(e) = c.fill_once(Arc::new(model.observer(c.source()))).await {
            errors.push(e);
        }
    }
    model.flush_pending();
    errors
}
