//! Diagnosis that never stops: the serving exporter (sidecar and fleet) runs the diagnose rules
//! on its own model and counts their findings there (`model/findings.rs`), which the catalogue
//! exports as `spark_diagnosis_*`.
//!
//! Each pass (every second, and once more when the exporter drains):
//! - the stage attempts settled since the last pass: their findings (skew, spill, GC pressure)
//!   are counted, final;
//! - each application that has ended and that every source has delivered: its end findings
//!   (executor loss, join strategy, plan change, partial cache, idle cores) are counted, once,
//!   and its window findings evaluated a last time;
//! - each application still running: its window findings (locality, scheduler delay, streaming
//!   trigger) evaluated again.
//!
//! The rules are `diagnose`'s own (`rules`), with the same thresholds (`diagnose.*`), so once an
//! application has ended and its logs are read to the end, its findings here equal
//! `spark-exporter diagnose --format json` of the same application.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::links::Links;
use super::rules;
use crate::config::DiagnoseConfig;
use crate::model::findings::Found;
use crate::model::Model;

/// How often the model is looked at: a pass runs when it changed, so an application read to
/// its end is counted (and can be summarised) within this long, and the details of settled
/// stages wait no longer than this (a fleet's cold start settles thousands a second).
pub const PASS_INTERVAL: Duration = Duration::from_millis(50);

/// How often the window findings of running applications are evaluated again.
pub const WINDOW_INTERVAL: Duration = Duration::from_secs(1);

/// The rules run on one model.
#[derive(Debug, Clone)]
pub struct Live {
    cfg: Arc<DiagnoseConfig>,
}

impl Live {
    /// Run the rules on `model` from now on: it keeps each stage attempt's detail as it settles
    /// until a pass takes it, and each ended application's detail until its end findings are
    /// counted.
    pub fn new(cfg: &DiagnoseConfig, model: &Model) -> Live {
        model.keep_settled_stages();
        Live {
            cfg: Arc::new(cfg.clone()),
        }
    }

    /// One pass (see the module docs).
    pub fn pass(&self, model: &Model) {
        self.pass_with(model, true)
    }

    /// One pass; the window findings of running applications are evaluated again only with
    /// `windows`.
    fn pass_with(&self, model: &Model, windows: bool) {
        let cfg = &*self.cfg;
        let none = Links::none();
        let counted = |v: Vec<super::report::Finding>| -> Vec<Found> {
            v.iter().map(rules::counted).collect()
        };
        let settled = model.take_settled_stages();
        if !settled.is_empty() {
            let found: Vec<_> = model.view(|v| {
                settled
                    .into_iter()
                    .filter_map(|(key, d)| {
                        let a = v.app(&key)?;
                        let f = counted(rules::stage_findings(&a, &d, cfg, &none));
                        Some((key, d, f))
                    })
                    .collect()
            });
            for (key, d, f) in found {
                model.count_stage_findings(&key, &d, f);
            }
        }
        for (key, due) in model.open_findings() {
            if !due && !windows {
                continue;
            }
            let found = model.view(|v| {
                let a = v.app(&key)?;
                let window = counted(rules::window_findings(&a, cfg, &none));
                if !due {
                    return Some((None, window));
                }
                // The stage attempts not settled yet count now, as `diagnose` reads them.
                let f = a.findings();
                let held: Vec<_> = a
                    .stage_details()
                    .into_iter()
                    .filter(|d| !f.stage_counted(d.stage_id, d.attempt))
                    .map(|d| {
                        let found = counted(rules::stage_findings(&a, &d, cfg, &none));
                        (d, found)
                    })
                    .collect();
                let mut digest = f.digest().clone();
                for (d, _) in &held {
                    digest
                        .entry(d.group.clone())
                        .or_default()
                        .add(d.totals.run_time_ms, d.totals.shuffle_write_bytes);
                }
                let end = counted(rules::end_findings(&a, &digest, cfg, &none));
                Some((Some((held, end)), window))
            });
            match found {
                Some((Some((held, end)), window)) => model.close_findings(&key, held, end, window),
                Some((None, window)) => model.set_window_findings(&key, window),
                None => {}
            }
        }
    }

    /// Until `shutdown`: a pass each [`PASS_INTERVAL`] in which the model changed, and at
    /// least each [`WINDOW_INTERVAL`] (a delivery that went stale makes an end due with no
    /// change), evaluating the windows again then.
    pub async fn run(self, model: Arc<Model>, shutdown: CancellationToken) {
        let mut tick = tokio::time::interval(PASS_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (mut seen, mut windows_at) = (None, tokio::time::Instant::now());
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {
                    let windows = windows_at.elapsed() >= WINDOW_INTERVAL;
                    let g = model.generation();
                    if windows || seen != Some(g) {
                        self.pass_with(&model, windows);
                        // What the pass itself changed needs no other pass.
                        seen = Some(model.generation());
                    }
                    if windows {
                        windows_at = tokio::time::Instant::now();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::model::{AppObs, Observer};
    use crate::telemetry::Telemetry;

    /// A pass that finds nothing new writes nothing: an idle exporter's render stays cached
    /// (the model's generation does not move).
    #[test]
    fn a_pass_with_nothing_new_changes_nothing() {
        let s = Settings::default();
        let m = Model::new(&s, Arc::new(Telemetry::default()));
        let live = Live::new(&s.diagnose, &m);
        let o = m.observer(crate::sources::source("event_log"));
        o.upsert_app(&AppObs {
            app_id: "local-1".into(),
            name: Some("running".into()),
            start_ms: Some(1),
            ..AppObs::default()
        });
        live.pass(&m);
        let g = m.generation();
        live.pass(&m);
        live.pass(&m);
        assert_eq!(m.generation(), g);
        // An end read: the next pass counts its end findings, once.
        o.upsert_app(&AppObs {
            app_id: "local-1".into(),
            end_ms: Some(2),
            ..AppObs::default()
        });
        o.app_delivered("local-1");
        live.pass(&m);
        assert!(m.view(|v| v.app("local-1").unwrap().findings().closed()));
        let g = m.generation();
        live.pass(&m);
        assert_eq!(m.generation(), g);
    }
}
