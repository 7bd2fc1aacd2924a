//! OTLP push's registry entry ([`SINK`]): the families sent every `otlp.interval` to the
//! configured collector; the final state is delivered by the final export.

use std::sync::Arc;

use crate::config::Settings;
use crate::sinks::{Running, Sink, SinkEnv};

/// The sink's name.
pub const NAME: &str = "otlp";

/// OTLP metrics push.
#[derive(Debug)]
pub struct OtlpSink;

/// Its registry entry.
pub static SINK: OtlpSink = OtlpSink;

impl Sink for OtlpSink {
    fn name(&self) -> &'static str {
        NAME
    }
    fn title(&self) -> &'static str {
        "OTLP push"
    }
    fn place(&self, settings: &Settings) -> Option<String> {
        settings.otlp_push.as_ref().map(|r| r.endpoint.clone())
    }
    fn final_delivery(&self) -> &'static str {
        "OtlpSent"
    }
    fn start(&self, settings: &Arc<Settings>, env: SinkEnv) -> Running {
        Running {
            delivered: Box::pin(super::run(
                settings.clone(),
                env.model,
                env.handle,
                env.flush,
            )),
            push: true,
        }
    }
}
