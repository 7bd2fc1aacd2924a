//! The model as metric families, built at export time: every catalogue entry reads its samples
//! from the model's read view (`super::rows`). This neutral form is what both the Prometheus
//! exposition and the OTLP exporter render, so the two can never disagree.

use super::catalogue::{Metric, CATALOGUE};
use super::rows::Ctx;
pub use super::sample::{Kind, Sample, Value};
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub use super::sample::{Labels, SampleLabels};
use crate::model::Model;

/// One metric family: its catalogue entry and its samples at export time.
#[derive(Debug, Clone)]
pub struct Family {
    /// Prometheus name without the `_total` / `_info` suffix (e.g. `spark_jobs`).
    pub name: &'static str,
    /// HELP text.
    pub help: &'static str,
    /// Type.
    pub kind: Kind,
    /// The catalogue entry it was read by (OTLP form, labels, stability).
    pub metric: &'static Metric,
    /// Samples.
    pub samples: Vec<Sample>,
}

/// Every family of the catalogue, read from the model and the self-metrics now.
pub fn collect(model: &Model) -> Vec<Family> {
    collect_from(model, CATALOGUE.iter())
}

/// The families of `metrics` (the catalogue, or the catalogue and more in tests).
pub fn collect_from(
    model: &Model,
    metrics: impl IntoIterator<Item = &'static Metric>,
) -> Vec<Family> {
    let now = model.now_ms();
    let tele = model.telemetry().snapshot();
    model.view(|view| {
        // Name mode: one state per application name, built for this read.
        let names = view.by_name();
        let ctx = match &names {
            Some(n) => Ctx::of(n.views(), now, &tele),
            None => Ctx::new(&view, now, &tele),
        };
        metrics
            .into_iter()
            .map(|m| {
                let mut samples = Vec::new();
                (m.read)(&ctx, &mut samples);
                Family {
                    name: m.name,
                    help: m.help,
                    kind: m.kind,
                    metric: m,
                    samples,
                }
            })
            .collect()
    })
}
