//! The registry: every sink, and what the exporter asks of all of them (start them, list them
//! on the status page).

use std::sync::Arc;

use super::framework::{Running, Sink, SinkEnv, SinkHandle};
use super::{otlp, prometheus};
use crate::config::Settings;
use crate::health::Health;
use crate::sources::PlaceStatus;

/// Every sink.
pub static REGISTRY: &[&dyn Sink] = &[&prometheus::plugin::SINK, &otlp::plugin::SINK];

/// A started sink, for the drain.
pub struct Started {
    /// Its name.
    pub name: &'static str,
    /// How the drain names its end when it delivered the final state first.
    pub final_delivery: &'static str,
    /// The running sink.
    pub running: Running,
}

/// Start every sink the settings turn on, each with its handle onto `health`.
pub fn start_all(settings: &Arc<Settings>, env: &SinkEnv, health: &Arc<Health>) -> Vec<Started> {
    REGISTRY
        .iter()
        .filter_map(|s| {
            let place = s.place(settings)?;
            let env = SinkEnv {
                handle: SinkHandle::new(s.name(), place, health.clone()),
                ..env.clone()
            };
            Some(Started {
                name: s.name(),
                final_delivery: s.final_delivery(),
                running: s.start(settings, env),
            })
        })
        .collect()
}

/// The sinks' delivery tasks, for the drain.
#[derive(Debug)]
pub struct Delivering {
    /// Each answers its place in `names` and whether it delivered the final state.
    pub tasks: tokio::task::JoinSet<(usize, bool)>,
    /// Per sink: how the drain names its end when it delivered first, and whether it pushes
    /// (a delivery under way then gets the rest of the grace period).
    pub names: Vec<(&'static str, bool)>,
}

/// Start every sink the settings turn on and spawn its delivery (the exporter).
pub fn spawn_all(settings: &Arc<Settings>, env: &SinkEnv, health: &Arc<Health>) -> Delivering {
    let mut d = Delivering {
        tasks: tokio::task::JoinSet::new(),
        names: vec![],
    };
    for (i, started) in start_all(settings, env, health).into_iter().enumerate() {
        d.names.push((started.final_delivery, started.running.push));
        let delivered = started.running.delivered;
        d.tasks.spawn(async move { (i, delivered.await) });
    }
    d
}

/// Every sink the settings turn on, with how its deliveries went, for the status page.
pub fn status(settings: &Settings, health: &Health) -> Vec<PlaceStatus> {
    REGISTRY
        .iter()
        .filter_map(|s| {
            let place = s.place(settings)?;
            let state = health.place(s.name(), &place).unwrap_or_default();
            Some(PlaceStatus {
                title: s.title(),
                place,
                state,
            })
        })
        .collect()
}
