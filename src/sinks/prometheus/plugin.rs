//! The Prometheus exposition's registry entry ([`SINK`]): the families rendered at each scrape
//! of `web.telemetry_path` (the server answers the request, `cache` shares one render among
//! concurrent scrapes); the final state is delivered once `lifecycle.drain_scrapes` scrapes got
//! it.

use std::sync::Arc;

use crate::config::Settings;
use crate::sinks::{Running, Sink, SinkEnv};

/// The sink's name.
pub const NAME: &str = "prometheus";

/// The exposition at `web.telemetry_path`.
#[derive(Debug)]
pub struct PrometheusSink;

/// Its registry entry.
pub static SINK: PrometheusSink = PrometheusSink;

impl Sink for PrometheusSink {
    fn name(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> &'static str {
        "Prometheus exposition"
    }
    fn place(&self, settings: &Settings) -> Option<String> {
        Some(format!(
            "{}{}",
            settings.web.listen_address, settings.web.telemetry_path
        ))
    }
    fn final_delivery(&self) -> &'static str {
        "Scrapes"
    }
    fn start(&self, settings: &Arc<Settings>, env: SinkEnv) -> Running {
        let scrapes = settings.lifecycle.drain_scrapes;
        Running {
            delivered: Box::pin(async move {
                env.flush.cancelled().await;
                env.lifecycle.scrapes_reached(scrapes).await;
                true
            }),
            push: false,
        }
    }
}

/// A scrape was answered at `at_ms` (the server calls it; the status page's outputs).
pub fn scraped(health: &crate::health::Health, settings: &Settings, at_ms: i64) {
    if let Some(place) = SINK.place(settings) {
        health.answered(NAME, &place, at_ms);
    }
}
