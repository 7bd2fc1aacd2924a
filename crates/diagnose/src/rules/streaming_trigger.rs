//! Streaming trigger: streaming batches near or over their trigger interval.

use spark_exporter_core::model::TriggerInterval;

use super::{numbers, secs, Cx, Draft, Find, Rule};
use crate::place::Place;

/// The rule.
pub const RULE: Rule = Rule {
    id: "streaming_trigger",
    step: "Streaming",
    scope: "a streaming query",
    when: "≥ `trigger_over_fraction` of a query's last 32 batches (`durationMs.triggerExecution`) \
           took longer than `trigger_ratio` × its trigger interval: configured in \
           `streaming.trigger_intervals`, else inferred from the batch starts. A query always \
           behind has no inferred interval: configure it",
    cost: "Σ over those batches of (duration − `trigger_ratio` × interval)",
    has_cost: false,
    grouped: true,
    unit: "batch-seconds over the budget",
    sources: "both",
    thresholds: &["trigger_ratio", "trigger_over_fraction"],
    remedy: "The query is close to falling behind: cap each batch's input (maxOffsetsPerTrigger, \
             maxFilesPerTrigger), add executors or partitions, or lengthen the trigger interval.",
    find: Find::Window(find),
    notes: Some(notes),
};

/// A query with at least `trigger_over_fraction` of its recent batches (the last 32) longer
/// than `trigger_ratio` of its trigger interval. Cost: Σ over those batches of (duration −
/// trigger_ratio × interval), reported but never filtered by `min_cost`.
fn find(cx: &Cx<'_, '_>) -> Vec<Draft> {
    let t = &cx.cfg.defaults;
    let mut out = vec![];
    for (name, q) in cx.app.streaming() {
        let (interval, how) = match q.trigger_interval() {
            Some(TriggerInterval::Configured(s)) if s > 0.0 => (s, "configured"),
            Some(TriggerInterval::Inferred(s)) if s > 0.0 => (s, "inferred"),
            // Not checked: notes() says so.
            _ => continue,
        };
        let budget_ms = interval * 1000.0 * t.trigger_ratio;
        let d: Vec<u64> = q.recent_durations_ms().collect();
        if d.is_empty() {
            continue;
        }
        let near: Vec<f64> = d
            .iter()
            .map(|x| *x as f64)
            .filter(|x| *x > budget_ms)
            .collect();
        let frac = near.len() as f64 / d.len() as f64;
        if near.is_empty() || frac < t.trigger_over_fraction {
            continue;
        }
        let cost: f64 = near.iter().map(|x| (x - budget_ms) / 1000.0).sum();
        let longest = d.iter().max().copied().unwrap_or(0);
        // Over the whole trigger, a batch starts the next one late: with half the recent
        // batches so, the query is behind, not close to it.
        let over = d.iter().filter(|x| **x as f64 > interval * 1000.0).count();
        let behind = over * 2 >= d.len();
        out.push(Draft {
            title: format!(
                "{} of the last {} batches took over {:.0}% of the {interval} s trigger, \
                 {over} over all of it",
                near.len(),
                d.len(),
                t.trigger_ratio * 100.0
            ),
            cost_seconds: cost,
            at: Place {
                query: Some(name.to_string()),
                subject: Some(format!("trigger {how}")),
                ..Place::default()
            },
            numbers: numbers([
                ("trigger_interval_seconds", interval),
                ("recent_batches", d.len() as f64),
                ("batches_near_trigger", near.len() as f64),
                ("longest_batch_seconds", secs(longest)),
                ("batches", q.batches() as f64),
                ("batches_over_trigger", over as f64),
            ]),
            url: cx.links.page(cx.app.id(), "StreamingQuery/"),
            remedy: Some(format!(
                "{} cap each batch's input (maxOffsetsPerTrigger, maxFilesPerTrigger), add \
                 executors or partitions, or lengthen the trigger interval.",
                if behind {
                    "The query is falling behind: its batches outlast the trigger, so each \
                     starts late and the backlog grows;"
                } else {
                    "The query is close to falling behind:"
                }
            )),
        });
    }
    out
}

/// What it could not check: each streaming query without a trigger interval (none configured
/// in `streaming.trigger_intervals`, and none inferred from its batch starts, as for a query
/// always behind, whose batches start back to back).
fn notes(cx: &Cx<'_, '_>) -> Vec<String> {
    cx.app
        .streaming()
        .filter(|(_, q)| q.batches() > 0)
        .filter(|(_, q)| {
            !matches!(
                q.trigger_interval(),
                Some(TriggerInterval::Configured(s) | TriggerInterval::Inferred(s)) if s > 0.0
            )
        })
        .map(|(name, q)| {
            format!(
                "streaming query {name:?} ({} batches) was not checked against its trigger: \
                 its interval is not configured and could not be inferred from its batch \
                 starts (a query always behind starts each batch right after the last). Set \
                 it in the configuration file (--config.file), e.g. `streaming: \
                 {{trigger_intervals: {{{name:?}: 10s}}}}`.",
                q.batches()
            )
        })
        .collect()
}
