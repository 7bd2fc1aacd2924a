//! The REST source's registry entry ([`PLUGIN`]) and its collector ([`Rest`]).

use super::config::SparkConfig;
use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::positions::RestPart;
use super::{Mode, RestSettings};
use crate::config::Settings;
use crate::model::{Feed, ModelObserver, Source};
use crate::sources::{BoxFuture, CollectError, Collector, Handle, OnceRead, OneShot, Plugin};

/// The source's name (`source="rest"`, its checkpoint part).
pub const NAME: &str = "rest";

/// The REST source: every `spark.urls` target.
#[derive(Debug)]
pub struct RestPlugin;

/// Its registry entry.
pub static PLUGIN: RestPlugin = RestPlugin;

impl Plugin for RestPlugin {
    fn name(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> &'static str {
        "REST"
    }
    fn feed(&self) -> Feed {
        Feed::Status
    }
    fn config(&self) -> Option<&'static crate::config::Declared> {
        Some(&super::config::SECTION)
    }
    fn places(&self, settings: &Settings) -> Vec<String> {
        SparkConfig::of(settings).urls.clone()
    }
    fn build(&self, settings: &Settings, handle: Handle) -> Arc<dyn Collector> {
        let part = handle.keeps_parts().then(|| {
            let part = Arc::new(RestPart::from_loaded(handle.loaded_part()));
            handle.publish_part(part.clone());
            part
        });
        let mut rest = Rest::new(settings.into(), handle);
        rest.part = part;
        Arc::new(rest)
    }
    fn once(
        &self,
        settings: &Arc<Settings>,
        shot: &OneShot<'_>,
        handle: Handle,
    ) -> Option<OnceRead> {
        // With --event-log only, do not also poll the default UI URL.
        let asked = shot.paths.is_empty() || shot.urls_given;
        (asked && !SparkConfig::of(settings).urls.is_empty()).then(|| OnceRead {
            collector: Arc::new(Rest::new((&**settings).into(), handle)),
            reads: SparkConfig::of(settings).urls.clone(),
            hint: String::new(),
        })
    }
    fn reportable(&self, part: &serde_json::Value) -> Vec<String> {
        // Unreadable: nothing is reportable (it is read again in full, as `RestPart` does).
        serde_json::from_value::<super::positions::RestPositions>(part.clone())
            .unwrap_or_default()
            .into_values()
            .flat_map(BTreeMap::into_keys)
            .collect()
    }
    // A reshard hands nothing over: the new shards read the done applications again once
    // (requests, not counts: the model's calls are idempotent).
}

/// The REST poller: every `spark.urls` target, or given targets; read once, as the exporter
/// would see them now, or whole (a diagnosis). It holds its own settings only.
#[derive(Debug, Clone)]
pub struct Rest {
    settings: RestSettings,
    handle: Handle,
    targets: Vec<String>,
    /// How a one-shot read reads ([`Mode::Once`] unless told otherwise).
    once: Mode,
    part: Option<Arc<RestPart>>,
}

impl Rest {
    /// Every target of `spark.urls`, reporting through `handle`.
    pub fn new(settings: RestSettings, handle: Handle) -> Rest {
        let targets = settings.spark.urls.clone();
        Rest {
            settings,
            handle,
            targets,
            once: Mode::Once,
            part: None,
        }
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

    /// The targets, the model's filter and the handle.
    fn scope(&self, observer: &ModelObserver) -> super::Targets {
        super::Targets {
            urls: self.targets.clone(),
            filter: observer.filter().clone(),
            handle: self.handle.clone(),
            part: self.part.clone(),
        }
    }
}

impl Collector for Rest {
    fn source(&self) -> Source {
        self.handle.source()
    }

    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()> {
        Box::pin(super::run(
            self.settings.clone(),
            self.scope(&observer),
            observer,
            self.handle.telemetry().clone(),
            finish,
        ))
    }

    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>> {
        let (s, t, mode) = (
            self.settings.clone(),
            self.handle.telemetry().clone(),
            self.once.clone(),
        );
        let targets = self.scope(&observer);
        Box::pin(async move {
            super::read_once(s, targets, mode, observer, t)
                .await
                .map_err(CollectError::of)
        })
    }
}
