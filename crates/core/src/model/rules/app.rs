//! How application observations change an application (its summary).

use std::sync::Arc;

use crate::model::app::{AppDetail, AppState, AppSummary};
use crate::model::labels::Labeler;
use crate::model::obs::*;
use crate::model::state::State;

fn set_str(dst: &mut Arc<str>, v: &Option<String>) {
    if let Some(v) = v {
        if !v.is_empty() && **dst != **v {
            *dst = Arc::from(v.as_str());
        }
    }
}

impl State {
    /// The application `app_id`, created on first sight.
    fn app_state(&mut self, app_id: &str) -> &mut AppState {
        let now = self.now_ms;
        self.apps
            .entry(app_id.to_string())
            .or_insert_with(|| AppState::new(app_id, now))
    }

    /// The summary of application `app_id`, created on first sight.
    pub(in crate::model) fn app(&mut self, app_id: &str) -> &mut AppSummary {
        &mut self.app_state(app_id).summary
    }

    /// The summary and detail of application `app_id` (created on first sight) and the
    /// labeler, borrowed together; `None` once the application is summarised. The per-task
    /// path: looked up by `app_id` itself, not by a copy of it (an allocation for every task
    /// event), and a second time, one more hash of a short id, only where it is new.
    pub(in crate::model) fn live(
        &mut self,
        app_id: &str,
    ) -> Option<(&mut AppSummary, &mut AppDetail, &Labeler)> {
        if !self.apps.contains_key(app_id) {
            let now = self.now_ms;
            self.apps
                .insert(app_id.to_string(), AppState::new(app_id, now));
        }
        match self.apps.get_mut(app_id)?.parts() {
            (s, Some(d)) => Some((s, d, &self.labeler)),
            (_, None) => None,
        }
    }

    pub(in crate::model) fn upsert_app(&mut self, obs: &AppObs, now: EpochMs) {
        self.upsert_app_inner(obs, now);
        self.end_earlier_attempts(&obs.app_id, now);
    }

    fn upsert_app_inner(&mut self, obs: &AppObs, now: EpochMs) {
        let s = self.app(&obs.app_id);
        set_str(&mut s.name, &obs.name);
        set_str(&mut s.spark_version, &obs.spark_version);
        set_str(&mut s.user, &obs.user);
        if obs.start_ms.is_some_and(|t| t > 0) {
            s.start_ms = obs.start_ms;
        }
        if obs.exit_code.is_some() {
            s.exit_code = obs.exit_code;
        }
        match obs.end_ms.filter(|e| *e > 0) {
            Some(e) if s.end_ms != Some(e) => {
                s.end_ms = Some(e);
                s.ended_seen_ms = Some(now);
                s.gone = false;
            }
            // A source sees it running again (it was only marked gone): un-end it.
            None if s.ended_seen_ms.is_some() && s.gone => {
                s.end_ms = None;
                s.ended_seen_ms = None;
                s.gone = false;
            }
            _ => {}
        }
    }

    /// Once a later attempt of an application has started, an earlier attempt that never
    /// said it ended (its driver died, its log has no `ApplicationEnd`) ended then. Whatever
    /// order the attempts' logs are read in; a real end read later replaces this one.
    fn end_earlier_attempts(&mut self, key: &str, now: EpochMs) {
        let (id, Some(_)) = crate::model::app::split_key(key) else {
            return;
        };
        let mut starts: Vec<(EpochMs, String, bool)> = self
            .attempts_of(id)
            .filter_map(|(k, a)| {
                let a = &a.summary;
                a.start_ms.map(|s| (s, k.clone(), a.end_ms.is_none()))
            })
            .collect();
        starts.sort();
        let ends: Vec<(String, EpochMs)> = starts
            .windows(2)
            .filter(|w| w[0].2 && w[1].0 > w[0].0)
            .map(|w| (w[0].1.clone(), w[1].0))
            .collect();
        for (k, at) in ends {
            self.app_gone(&k, at, now);
        }
    }

    pub(in crate::model) fn app_gone(&mut self, app_id: &str, end_ms: EpochMs, now: EpochMs) {
        if let Some(s) = self.apps.get_mut(app_id).map(|a| &mut a.summary) {
            if s.end_ms.is_none() {
                s.end_ms = Some(end_ms);
                s.ended_seen_ms = Some(now);
                s.gone = true;
            }
        }
    }
}
