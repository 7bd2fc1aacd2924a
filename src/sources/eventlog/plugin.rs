//! The event-log source's registry entry ([`PLUGIN`]) and its collector ([`EventLogs`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::config::EventLogConfig;
use super::positions::{from_part, LogPositions};
use crate::config::Settings;
use crate::model::{Feed, ModelObserver, Source};
use crate::sources::{
    BoxFuture, CollectError, Collector, Handle, OnceRead, OneShot, Plugin, Reshard,
};

/// The source's name (`source="event_log"`, its checkpoint part).
pub const NAME: &str = "event_log";

/// The event-log source: every `event_log.dirs` folder, followed.
#[derive(Debug)]
pub struct EventLogPlugin;

/// Its registry entry.
pub static PLUGIN: EventLogPlugin = EventLogPlugin;

impl Plugin for EventLogPlugin {
    fn name(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> &'static str {
        "event log"
    }
    fn feed(&self) -> Feed {
        Feed::Log
    }
    fn config(&self) -> Option<&'static crate::config::Declared> {
        Some(&super::config::SECTION)
    }
    fn places(&self, settings: &Settings) -> Vec<String> {
        folders(&EventLogConfig::of(settings))
    }
    fn build(&self, settings: &Settings, handle: Handle) -> Arc<dyn Collector> {
        Arc::new(EventLogs::new(&EventLogConfig::of(settings), handle))
    }
    fn once(
        &self,
        settings: &Arc<Settings>,
        shot: &OneShot<'_>,
        handle: Handle,
    ) -> Option<OnceRead> {
        let paths = shot.paths.to_vec();
        (!paths.is_empty()).then(|| OnceRead {
            collector: Arc::new(
                EventLogs::new(&EventLogConfig::of(settings), handle).paths(paths.clone()),
            ),
            reads: paths,
            hint: super::what_is_read(EventLogConfig::of(settings).depth),
        })
    }
    fn reportable(&self, part: &serde_json::Value) -> Vec<String> {
        from_part(Some(part.clone()))
            .into_values()
            .map(|d| d.app_id)
            .collect()
    }
    /// A log is taken as done only where every old shard that read it (in name mode all of
    /// them, which each read every log; by id, the one that owned it) had it done, so its
    /// application is in the state loaded.
    fn hand_over(
        &self,
        parts: &BTreeMap<usize, serde_json::Value>,
        reshard: &Reshard<'_>,
    ) -> Option<serde_json::Value> {
        let per_shard: BTreeMap<usize, LogPositions> = parts
            .iter()
            .map(|(i, v)| (*i, from_part(Some(v.clone()))))
            .collect();
        let mut merged = LogPositions::new();
        for p in per_shard.values() {
            for (path, done) in p {
                if merged.contains_key(path) || !reshard.mine.owns(&done.app_id) {
                    continue;
                }
                let mut readers = if reshard.by_name {
                    (0..reshard.count).collect::<Vec<_>>()
                } else {
                    vec![crate::shard::shard_of(&done.app_id, reshard.count)]
                }
                .into_iter();
                if readers.all(|i| per_shard.get(&i).and_then(|p| p.get(path)) == Some(done)) {
                    merged.insert(path.clone(), done.clone());
                }
            }
        }
        serde_json::to_value(merged).ok()
    }
}

/// The folders of `config`, as shown (its places).
fn folders(config: &EventLogConfig) -> Vec<String> {
    config.dirs.iter().map(ToString::to_string).collect()
}

/// The event-log reader: the folders of `event_log.dirs` (followed), or given paths (read once).
/// It holds its own section of the configuration only.
#[derive(Debug, Clone)]
pub struct EventLogs {
    config: EventLogConfig,
    handle: Handle,
    paths: Vec<String>,
}

impl EventLogs {
    /// The folders of `config.dirs`, reporting through `handle`.
    pub fn new(config: &EventLogConfig, handle: Handle) -> EventLogs {
        EventLogs {
            paths: folders(config),
            config: config.clone(),
            handle,
        }
    }

    /// Read `paths` (files, folders or object-store URLs) once instead.
    pub fn paths(mut self, paths: Vec<String>) -> EventLogs {
        self.paths = paths;
        self
    }
}

impl Collector for EventLogs {
    fn source(&self) -> Source {
        self.handle.source()
    }

    fn run(&self, observer: Arc<ModelObserver>, finish: CancellationToken) -> BoxFuture<()> {
        Box::pin(super::run(
            self.config.clone(),
            observer.filter().clone(),
            self.handle.clone(),
            observer,
            finish,
        ))
    }

    fn fill_once(&self, observer: Arc<ModelObserver>) -> BoxFuture<Result<(), CollectError>> {
        let (s, t, p) = (
            self.config.clone(),
            self.handle.telemetry().clone(),
            self.paths.clone(),
        );
        // On the blocking pool: object stores block on the runtime.
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                super::ingest_paths_with(&p, &s, observer.filter(), &*observer, &t)
            })
            .await
            .map_err(|e| CollectError::Task(e.to_string()))?
            .map_err(CollectError::of)
        })
    }
}
