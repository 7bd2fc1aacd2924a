//! The framework every sink plugs into: the [`Sink`] a sink's folder implements, what it is
//! given ([`SinkEnv`]) and what the drain waits for ([`Running`]). Nothing here names a sink.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::clock::EpochMs;
use crate::config::Settings;
use crate::health::Health;
use crate::lifecycle::Lifecycle;
use crate::model::Model;
use crate::sources::BoxFuture;

/// A kind of sink: one per folder, one line in the registry. A sink reads the catalogue's
/// families from the model's view (`crate::export::families`) when it chooses (a scrape, an
/// interval), says how its deliveries went through its [`SinkHandle`], and after the drain's
/// flush delivers the final state once.
pub trait Sink: Sync {
    /// Its name: its key on the status page and in the health handle (`prometheus`, `otlp`).
    fn name(&self) -> &'static str;
    /// How the status page titles it.
    fn title(&self) -> &'static str;
    /// Where it delivers, as shown (the exposition's path, the collector's endpoint); `None`:
    /// the settings turn it off.
    fn place(&self, settings: &Settings) -> Option<String>;
    /// How the drain names its end when this sink delivered the final state first (the log's
    /// `ended=`).
    fn final_delivery(&self) -> &'static str;
    /// Start delivering (only when [`Sink::place`] is `Some`).
    fn start(&self, settings: &Arc<Settings>, env: SinkEnv) -> Running;
}

/// What the framework gives a starting sink.
#[derive(Debug, Clone)]
pub struct SinkEnv {
    /// The model whose view it reads.
    pub model: Arc<Model>,
    /// The exporter's phase (the final state, the scrapes of it).
    pub lifecycle: Arc<Lifecycle>,
    /// Where it says how its deliveries went.
    pub handle: SinkHandle,
    /// Cancelled once the sources' last reads are done: the model is the final state.
    pub flush: CancellationToken,
}

/// A started sink.
pub struct Running {
    /// Resolves once the sink has delivered the final state (`true`), or knows it will not
    /// (`false`: its final delivery failed).
    pub delivered: BoxFuture<bool>,
    /// It pushes: a final delivery under way may use the rest of the grace period after the
    /// drain ended on another sink's.
    pub push: bool,
}

/// Where a sink says how its deliveries went (the status page's outputs).
#[derive(Debug, Clone, Default)]
pub struct SinkHandle {
    name: &'static str,
    place: String,
    health: Arc<Health>,
}

impl SinkHandle {
    /// Sink `name`, delivering to `place`, writing to `health`.
    pub fn new(name: &'static str, place: String, health: Arc<Health>) -> SinkHandle {
        SinkHandle {
            name,
            place,
            health,
        }
    }

    /// A delivery succeeded at `at_ms`.
    pub fn delivered(&self, at_ms: EpochMs) {
        self.health.answered(self.name, &self.place, at_ms);
    }

    /// A delivery failed at `at_ms`, because of `error`.
    pub fn failed(&self, at_ms: EpochMs, error: &str) {
        self.health.failed(self.name, &self.place, at_ms, error);
    }
}
