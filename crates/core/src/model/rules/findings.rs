//! The rules that count an application's diagnosis findings (`findings.rs`): what the
//! diagnose rules, run outside the model, hand in, and when an application's end findings are
//! due.

use super::super::app::AppSummary;
use super::super::findings::{tally, Found, Rate};
use crate::config::{cost::price_at, CostConfig};

/// The [`Rate`] findings of application `s` are counted at now: the core-hour price in
/// effect at its end, else at its latest time (0 without one).
fn rate(prices: &CostConfig, s: &AppSummary) -> Rate {
    priced_rate(prices, s).unwrap_or(Rate {
        per_core_second: 0.0,
        task_cpus: s.cost.cpus(),
    })
}

/// [`rate`], when a price applies to application `s` (`None`: no price list or entry for it).
pub(in crate::model) fn priced_rate(prices: &CostConfig, s: &AppSummary) -> Option<Rate> {
    let at = s.end_ms.unwrap_or(s.cost.seen_ms);
    let schedule = super::cost::schedule(prices, s)?;
    let price = price_at(&schedule, at)?;
    Some(Rate {
        per_core_second: price.core_hour / 3600.0,
        task_cpus: s.cost.cpus(),
    })
}

impl super::super::store::Model {
    /// Count the findings of stage attempt `stage` of application `key` (the model key, as
    /// [`crate::model::Model::take_settled_stages`] gives it), once, and add the attempt to its
    /// description's join inputs. An application the model no longer holds is skipped.
    pub fn count_stage_findings(
        &self,
        key: &str,
        stage: &super::super::details::StageDetail,
        found: Vec<Found>,
    ) {
        self.write(|s, _, _| {
            if let Some(app) = s.apps.get_mut(key) {
                let r = rate(&s.prices, &app.summary);
                app.summary.findings.count_stage(stage, found, r);
            }
        })
    }

    /// Count application `key`'s end findings and close them, once: a second call does
    /// nothing. First the findings of its stage attempts still held (not settled yet, as
    /// REST's without a final task summary), then its end findings; its window findings are
    /// set too (their final evaluation).
    pub fn close_findings(
        &self,
        key: &str,
        held: Vec<(super::super::details::StageDetail, Vec<Found>)>,
        found: Vec<Found>,
        window: Vec<Found>,
    ) {
        self.write(|s, t, now| {
            let Some(app) = s.apps.get_mut(key) else {
                return;
            };
            let r = rate(&s.prices, &app.summary);
            let f = &mut app.summary.findings;
            if f.closed {
                return;
            }
            for (stage, found) in held {
                f.count_stage(&stage, found, r);
            }
            f.count(found, r);
            f.window = tally(window);
            f.closed = true;
            // Its summary may have waited for this.
            s.review(key, t, now);
        })
    }

    /// Set application `key`'s window findings to this evaluation's (while it runs; once its
    /// findings are closed they stay).
    /// An evaluation equal to the last changes nothing (the next scrape's render is cached).
    pub fn set_window_findings(&self, key: &str, window: Vec<Found>) {
        let window = tally(window);
        let same = self.read(|s| {
            s.apps
                .get(key)
                .is_none_or(|a| a.summary.findings.closed || a.summary.findings.window == window)
        });
        if same {
            return;
        }
        self.write(|s, _, _| {
            if let Some(app) = s.apps.get_mut(key) {
                if !app.summary.findings.closed {
                    app.summary.findings.window = window;
                }
            }
        })
    }

    /// The model keys of the applications whose findings are open: `(key, due)`, `due` when
    /// the application has ended and no source is in the middle of delivering it (its end
    /// findings can be counted), else it runs (its window findings can be evaluated).
    pub fn open_findings(&self) -> Vec<(String, bool)> {
        let now = self.now_ms();
        self.read(|s| {
            s.apps_in_order()
                .into_iter()
                .filter(|(_, a)| !a.summary.findings.closed && a.detail.is_some())
                .map(|(k, a)| {
                    let due = a.summary.ended() && !a.summary.delivery.in_progress(now);
                    (k.clone(), due)
                })
                .collect()
        })
    }
}

impl super::super::state::State {
    /// Some application has ended and been delivered, and the rules that run on this model
    /// have not counted its end findings yet.
    pub(in crate::model) fn findings_due(&self) -> bool {
        self.settled.is_some()
            && self.apps.values().any(|a| {
                let s = &a.summary;
                !s.findings.closed
                    && a.detail.is_some()
                    && s.ended()
                    && !s.delivery.in_progress(self.now_ms)
            })
    }
}
