//! What the model keeps of each application, so a fleet of them stays bounded:
//! - **Filters**: an application whose name does not match `model.app_name_filter`, that
//!   started more than `model.max_app_age` ago, or (in name mode) whose name is another shard's
//!   is dropped and remembered as excluded; later observations of it are ignored.
//! - **Summary level**: `model.summary_after` after its end (Spark's time), an ended
//!   application drops its detail: its stages fold into their job groups (as retired stages
//!   always do), and its executors, SQL executions and streaming queries go. At
//!   `model.summary_level: groups` its application and job-group series stay, except histograms
//!   still empty (they never fill now) and, per run, stage and task duration histograms; at
//!   `app` only its application series. Later observations of its detail are ignored, so nothing is
//!   counted
//!   twice; the ids already counted stay.

use super::app::AppState;
use super::obs::EpochMs;
use super::rules::stage::retire_stage;
use super::state::State;
use crate::config::{AggregateBy, SummaryLevel};
use crate::filter::Refusal;
use crate::telemetry::Telemetry;

impl State {
    /// Whether observations of `app_id` are taken: it is not excluded, and, for `detail`
    /// (jobs, stages, tasks, executors, SQL, streaming), not summarised.
    pub(super) fn takes(&self, app_id: &str, detail: bool) -> bool {
        if self.excluded.contains(app_id) {
            return false;
        }
        !detail || self.apps.get(app_id).is_none_or(|a| a.detail.is_some())
    }

    /// `source` is in the middle of delivering `app_id` (`delivery.rs`).
    pub(super) fn observed(&mut self, app_id: &str, source: super::obs::Source, now: EpochMs) {
        if let Some(a) = self.apps.get_mut(app_id) {
            a.summary.delivery.observed(source, now);
        }
    }

    /// After an application update: drop it if a filter refuses it, summarise it if its end is
    /// old enough and no source is in the middle of delivering it.
    pub(super) fn review(&mut self, app_id: &str, t: &Telemetry, now: EpochMs) {
        let Some(app) = self.apps.get(app_id) else {
            return;
        };
        if let Some(why) = self.refuses(app, now) {
            tracing::debug!(app_id, reason = ?why, "application not kept");
            // Only an application that ages out was ever this exporter's to count.
            self.exclude(app_id, why == Refusal::Age);
        } else if let Some(level) = self.summary_due(app, now) {
            self.summarise(app_id, level, t, now);
        }
    }

    /// Drop `app_id` for good; if it `retires`, its values stay in its name's series (name
    /// mode).
    fn exclude(&mut self, app_id: &str, retires: bool) {
        match self.apps.remove(app_id) {
            Some(app) if retires => {
                self.retire_app(&app);
                self.retired.insert(app_id.into());
            }
            _ => {}
        }
        self.excluded.insert(app_id.into());
    }

    /// Why the filter does not keep `app` (the one filter the collectors ask too).
    fn refuses(&self, app: &AppState, now: EpochMs) -> Option<Refusal> {
        self.filter
            .refuses(&app.summary.name, app.summary.start_ms, now)
    }

    /// The level `app` is to be summarised at now, if it is due: the one place that reads
    /// `model.summary_level` (what a level keeps is applied once, by [`Self::summarise`]). A
    /// diagnosis' model summarises nothing.
    fn summary_due(&self, app: &AppState, now: EpochMs) -> Option<SummaryLevel> {
        let after = i64::try_from(self.retention.summary_after.as_millis()).unwrap_or(i64::MAX);
        let level = self.retention.summary_level;
        let s = &app.summary;
        (level != SummaryLevel::Full
            && !self.keep_detail
            && app.detail.is_some()
            && !s.delivery.in_progress(now)
            // Its end findings are counted first, when anyone counts them (`findings.rs`).
            && (self.settled.is_none() || s.findings.closed)
            && s.end_ms.is_some_and(|e| e <= now.saturating_sub(after)))
        .then_some(level)
    }

    /// Fold the application's detail into its summary, then drop it (see the module docs).
    fn summarise(&mut self, app_id: &str, level: SummaryLevel, t: &Telemetry, now: EpochMs) {
        // Stages still waiting for their job are applied first, so their counts stay.
        let held: Vec<_> = match self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
        {
            Some(d) => d.orphans.drain().map(|(_, (o, _))| o).collect(),
            None => return,
        };
        for o in held {
            self.upsert_stage(app_id, &o, t, now, true);
        }
        let bounds = (self.duration_bounds.clone(), self.task_bounds.clone());
        let per_run = self.retention.aggregate_by == AggregateBy::AppId;
        let prices = self.prices.clone();
        let Some((s, Some(d))) = self.apps.get_mut(app_id).map(|a| a.parts()) else {
            return;
        };
        // Broadcast jobs still waiting for their query's group keep their own (`broadcast.rs`).
        for (from, to) in d.broadcasts.give_up() {
            super::rules::group::resolve_broadcast(s, d, &from, &to, || {
                super::group::zero_group(&bounds.0, &bounds.1)
            });
        }
        let mut keys: Vec<(u64, u32)> = d.stages.keys().copied().collect();
        keys.sort_unstable();
        let mut settled = std::mem::take(&mut d.resolved);
        for k in keys {
            settled.extend(super::rules::stage::retire_stage(s, d, k, &bounds));
        }
        // Histograms still at zero never change now: their series go (a fleet's exposition is
        // mostly histogram buckets, and most `failed` ones are empty). Per run, stage and task
        // duration histograms are detail and go too; job durations stay. This is the one place a
        // summary level is applied: the read view shows what stays. In name mode they stay:
        // a name's series sum its runs' at read time, and must never go down.
        for g in s.groups.values_mut() {
            g.job_duration.retain(|_, h| h.count > 0);
            g.stage_duration.retain(|_, h| h.count > 0 && !per_run);
            if per_run || g.task_duration.as_ref().is_some_and(|h| h.count == 0) {
                g.task_duration = None;
            }
            // Stage skew ratios go as stage durations do.
            if per_run || g.skew_ratio.as_ref().is_some_and(|h| h.count == 0) {
                g.skew_ratio = None;
            }
        }
        s.executors_seen = d.executors.len() as u64;
        super::rules::cost::retire_all(s, d, &prices);
        s.groups_hidden = level == SummaryLevel::App;
        // The detail's counts are in the summary now: summarising is dropping it.
        drop(self.apps.get_mut(app_id).and_then(|a| a.detail.take()));
        for rec in settled {
            self.hand_over(app_id, Some(rec));
        }
    }

    /// The periodic part: applications past `model.max_app_age` leave, ended ones past
    /// `model.summary_after` are summarised.
    pub(super) fn review_all(&mut self, t: &Telemetry, now: EpochMs) {
        let ids: Vec<String> = self
            .apps_in_order()
            .into_iter()
            .filter(|(_, a)| self.refuses(a, now).is_some() || self.summary_due(a, now).is_some())
            .map(|(k, _)| k.clone())
            .collect();
        for id in ids {
            self.review(&id, t, now);
        }
    }
}

impl State {
    pub(super) fn expire(&mut self, now: EpochMs, t: &Telemetry) {
        self.flush_orphans(now - super::stage::ORPHAN_WAIT_MS, t, now);
        self.review_all(t, now);
        let r = self.retention.clone();
        let ms = |d: std::time::Duration| d.as_millis() as EpochMs;
        let bounds = (self.duration_bounds.clone(), self.task_bounds.clone());
        let gone: Vec<String> = self
            .apps_in_order()
            .into_iter()
            .filter(|(_, a)| {
                a.summary
                    .ended_seen_ms
                    .is_some_and(|e| now - e >= ms(r.app_retention))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for id in gone {
            if let Some(app) = self.apps.remove(&id) {
                self.retire_app(&app);
            }
            // Retired for good: a source that reports it again (a History Server's listing, a
            // log read again after a restart from a checkpoint) does not bring it back.
            self.retired.insert(id.as_str().into());
            self.excluded.insert(id.into());
        }
        let settled = &mut self.settled;
        let prices = self.prices.clone();
        for (id, app) in super::state::in_order_mut(&mut self.apps) {
            let (s, Some(d)) = app.parts() else {
                continue;
            };
            let old: Vec<(u64, u32)> = d
                .stages
                .iter()
                .filter(|(_, s)| {
                    s.ended_seen_ms
                        .is_some_and(|e| now - e >= ms(r.stage_retention))
                })
                .map(|(k, _)| *k)
                .collect();
            for k in old {
                if let (Some(out), Some(rec)) = (settled.as_mut(), retire_stage(s, d, k, &bounds)) {
                    out.push((id.clone(), rec));
                }
            }
            super::rules::cost::expire_executors(s, d, now, ms(r.dead_executor_retention), &prices);
            shrink(&mut d.stages);
            shrink(&mut d.stage_groups);
            shrink(&mut d.running_jobs);
            shrink(&mut d.orphans);
            shrink(&mut d.running_sql);
        }
    }
}

/// Give back a map's spare room once it is mostly empty: a burst of stages or jobs must not pin
/// its peak capacity (hash maps never shrink by themselves) for the rest of the application.
fn shrink<K: Eq + std::hash::Hash, V>(m: &mut crate::hash::Map<K, V>) {
    if m.capacity() > 64 && m.capacity() > 4 * m.len() {
        m.shrink_to(2 * m.len());
    }
}
