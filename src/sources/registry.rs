//! The registry: every source, numbered by its place, and what the exporter asks of all of
//! them (the collectors to run, readiness, the status page, a one-shot read).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::framework::{CollectError, Collector, Handle, OnceRead, OneShot, Plugin};
use super::parts::Parts;
use super::{eventlog, rest};
use crate::config::Settings;
use crate::health::{Health, Place};
use crate::model::{Model, Source};
use crate::telemetry::Telemetry;

/// Every source, numbered by its place here: the model's [`Source`] number, which checkpoints
/// keep (they also keep the names, so a reordered registry is renumbered on load). A new
/// source goes at the end.
pub static REGISTRY: &[&dyn Plugin] = &[&rest::plugin::PLUGIN, &eventlog::plugin::PLUGIN];

/// Declare every source's configuration section to the core's configuration (once per
/// process: later calls do nothing). `main` does it first; so does anything else that reads,
/// lists or documents the configuration (tests).
pub fn declare_config() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::config::declare(REGISTRY.iter().filter_map(|p| p.config()).collect());
    });
}

/// Source `name`'s number and feed: its place in [`REGISTRY`].
///
/// # Panics
/// When no source of the registry is called `name` (a programming error: names are constants).
pub fn source(name: &str) -> Source {
    REGISTRY
        .iter()
        .position(|p| p.name() == name)
        .map(|n| Source::new(n, REGISTRY[n].feed()))
        .unwrap_or_else(|| panic!("no source {name} in the registry"))
}

/// The registry's names, by number (what a checkpoint keeps).
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name()).collect()
}

/// Source `name` with its number, for a [`Handle`].
pub fn named(name: &'static str) -> (&'static str, Source) {
    (name, source(name))
}

/// A handle of source `name` that only counts into `telemetry` (one-shot reads).
pub fn counting(name: &'static str, telemetry: Arc<Telemetry>) -> Handle {
    Handle::counting(named(name), telemetry)
}

/// The collectors of a one-shot read of `shot`, each with what it reads.
pub fn once(
    settings: &Arc<Settings>,
    shot: &OneShot<'_>,
    telemetry: &Arc<Telemetry>,
) -> Vec<OnceRead> {
    REGISTRY
        .iter()
        .filter_map(|p| p.once(settings, shot, counting(p.name(), telemetry.clone())))
        .collect()
}

/// The collectors the settings ask for: each source of the registry that has places, built
/// with its handle onto `health`, `telemetry` and `parts`.
pub fn configured(
    settings: &Settings,
    telemetry: &Arc<Telemetry>,
    health: &Arc<Health>,
    parts: &Arc<Parts>,
) -> Vec<Arc<dyn Collector>> {
    REGISTRY
        .iter()
        .filter(|p| !p.places(settings).is_empty())
        .map(|p| {
            telemetry.set_source_ready(p.name(), false);
            let handle = Handle::new(
                named(p.name()),
                health.clone(),
                telemetry.clone(),
                parts.clone(),
            );
            p.build(settings, handle)
        })
        .collect()
}

/// True once every configured source has finished its first round.
pub fn ready(settings: &Settings, health: &Health) -> bool {
    REGISTRY
        .iter()
        .filter(|p| !p.places(settings).is_empty())
        .all(|p| p.ready(settings, health))
}

/// One place of a source, for the status page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceStatus {
    /// The source's title.
    pub title: &'static str,
    /// The place (target URL, folder), as shown.
    pub place: String,
    /// How it answered (all `None` before its first read).
    pub state: Place,
}

/// Every configured source's places: as configured, then any other place it read, in the
/// registry's order.
pub fn status(settings: &Settings, health: &Health) -> Vec<PlaceStatus> {
    let mut out = vec![];
    for p in REGISTRY {
        let configured = p.places(settings);
        if configured.is_empty() {
            continue;
        }
        let read = health.places(p.name());
        let row = |place: String, state: Place| PlaceStatus {
            title: p.title(),
            place,
            state,
        };
        for c in &configured {
            let state = read.iter().find(|(n, _)| n == c).map(|(_, s)| s.clone());
            out.push(row(c.clone(), state.unwrap_or_default()));
        }
        for (n, s) in read {
            if !configured.contains(&n) {
                out.push(row(n, s));
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_numbers_at_most_source_max_sources_with_distinct_names() {
        assert!(REGISTRY.len() <= Source::MAX);
        let mut names = names();
        // Release 0.2.0's checkpoints had two fixed slots in this order.
        assert_eq!(names[..2], ["rest", "event_log"]);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len(), "a name twice");
        for (n, p) in REGISTRY.iter().enumerate() {
            assert_eq!(source(p.name()).number(), n);
        }
    }
}
