//! How observations change an application's cost, and what its allocation is (`cost.rs`).

use crate::config::{CostConfig, Price};
use crate::model::app::{AppDetail, AppState, AppSummary};
use crate::model::cost::{Held, MemoryRule, Money, Profile};
use crate::model::obs::*;
use crate::model::state::State;

/// What an application's executors held so far: core-ms, MiB-ms and, when priced, money. The
/// retired executors' and those its detail still holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Allocated {
    /// Core-milliseconds.
    pub core_ms: u64,
    /// MiB-milliseconds.
    pub mib_ms: u64,
    /// Money, when a price applies (see [`schedule`]).
    pub money: Option<Money>,
}

/// The price schedule of application `s` (see [`CostConfig::schedule`]): `None` without
/// prices, before its properties are known when `cost.property` picks its prices, or when no
/// entry applies to it.
pub(in crate::model) fn schedule(cfg: &CostConfig, s: &AppSummary) -> Option<Vec<Price>> {
    if !cfg.priced() || (cfg.property.is_some() && s.cost.rule.is_none()) {
        return None;
    }
    Some(cfg.schedule(s.cost.property.as_deref())).filter(|p| !p.is_empty())
}

/// What application `s` (its detail `d`) held so far, money at `cfg`'s prices.
pub(in crate::model) fn allocated(
    s: &AppSummary,
    d: Option<&AppDetail>,
    cfg: &CostConfig,
) -> Allocated {
    let prices = schedule(cfg, s);
    let c = &s.cost;
    let mut out = Allocated {
        core_ms: c.retired_core_ms,
        mib_ms: c.retired_mib_ms,
        money: prices.as_ref().map(|_| c.retired_money),
    };
    for e in d.into_iter().flat_map(|d| d.executors.values()) {
        let held = Held::of(e, c.executor_mib(e), s.end_ms, c.seen_ms);
        out.core_ms = out.core_ms.saturating_add(held.core_ms());
        out.mib_ms = out.mib_ms.saturating_add(held.mib_ms());
        if let (Some(m), Some(p)) = (out.money.as_mut(), prices.as_deref()) {
            *m = m.plus(held.money(p));
        }
    }
    out
}

/// Drop the executors dead for `keep_ms` or more at `now`, what they held kept.
pub(in crate::model) fn expire_executors(
    s: &mut AppSummary,
    d: &mut AppDetail,
    now: EpochMs,
    keep_ms: EpochMs,
    cfg: &CostConfig,
) {
    let prices = schedule(cfg, s);
    let end = s.end_ms;
    let cost = &mut s.cost;
    d.executors.retain(|id, e| {
        let keep = e.dead_seen_ms.is_none_or(|d| now - d < keep_ms);
        if !keep {
            cost.retire(id, e, end, prices.as_deref());
        }
        keep
    });
}

/// Every executor of the detail leaves the model (its summary), what they held kept.
pub(in crate::model) fn retire_all(s: &mut AppSummary, d: &AppDetail, cfg: &CostConfig) {
    let prices = schedule(cfg, s);
    let end = s.end_ms;
    for (id, e) in &d.executors {
        s.cost.retire(id, e, end, prices.as_deref());
    }
}

/// Name mode: ended run `app` adds what it held to its name's summary `acc` (only a run that
/// counts, see `names.rs`); the name's tasks are read with the largest `spark.task.cpus` of its
/// runs. What the run held when it counts.
pub(in crate::model) fn fold(
    acc: &mut AppSummary,
    app: &AppState,
    counts: bool,
    cfg: &CostConfig,
) -> Option<Allocated> {
    if let Some(c) = app.summary.cost.task_cpus {
        acc.cost.task_cpus = Some(acc.cost.task_cpus.map_or(c, |x| x.max(c)));
    }
    let run = counts.then(|| allocated(&app.summary, app.detail.as_deref(), cfg))?;
    let c = &mut acc.cost;
    c.retired_core_ms = c.retired_core_ms.saturating_add(run.core_ms);
    c.retired_mib_ms = c.retired_mib_ms.saturating_add(run.mib_ms);
    if let Some(m) = run.money {
        c.retired_money = c.retired_money.plus(m);
    }
    Some(run)
}

impl AppSummary {
    /// The application ran at least until `t` (see [`crate::model::cost::Cost::seen_ms`]);
    /// nothing once it ended.
    pub(in crate::model) fn ran_until(&mut self, t: EpochMs) {
        if self.end_ms.is_none() && t > self.cost.seen_ms {
            self.cost.seen_ms = t;
        }
    }
}

impl State {
    /// Application `app_id` ran at least until `t` ([`AppSummary::ran_until`]).
    pub(in crate::model) fn app_ran_until(&mut self, app_id: &str, t: Option<EpochMs>) {
        if let (Some(t), Some(a)) = (t, self.apps.get_mut(app_id)) {
            a.summary.ran_until(t);
        }
    }

    /// Before an observation of executor `id`: the application's clock if the executor is
    /// counted as live (so its allocation already ran to that clock), else `None`.
    pub(in crate::model) fn live_executor_clock(&self, app_id: &str, id: &str) -> Option<EpochMs> {
        let app = self.apps.get(app_id)?;
        let s = &app.summary;
        app.detail
            .as_ref()?
            .executors
            .get(id)
            .filter(|e| e.active)
            .map(|_| s.cost.seen_ms)
    }

    /// After executor `obs` was applied: if it was counted live until `before` (see
    /// [`Self::live_executor_clock`]) and is now dead, its removal counts at least to that clock;
    /// and its times move the application's clock.
    pub(in crate::model) fn executor_seen(
        &mut self,
        app_id: &str,
        obs: &ExecutorObs,
        before: Option<EpochMs>,
    ) {
        if let Some(ex) = self
            .apps
            .get_mut(app_id)
            .and_then(|a| a.detail.as_deref_mut())
            .and_then(|d| d.executors.get_mut(&obs.executor_id))
        {
            if !ex.active && ex.alive_until_ms.is_none() {
                ex.alive_until_ms = before;
            }
        }
        self.app_ran_until(app_id, obs.add_ms);
        self.app_ran_until(app_id, obs.remove_ms);
    }

    /// The application's properties (`spark.task.cpus`, the memory rule, `cost.property`'s
    /// value) and resource profiles: the last said wins, except that the memory rule and the
    /// property's value, once known, stay (a price that changed under a running application
    /// would make its money fall).
    pub(in crate::model) fn set_app_props(&mut self, app_id: &str, obs: &AppPropsObs) {
        let property = self.prices.property.clone();
        let s = self.app(app_id);
        if let Some(c) = obs.task_cpus.filter(|c| *c > 0) {
            s.cost.task_cpus = Some(c);
        }
        if let (Some(props), None) = (&obs.properties, s.cost.rule) {
            s.cost.rule = Some(MemoryRule::from_properties(props));
            s.cost.property = property
                .and_then(|k| props.get(&k))
                .map(|v| v.as_str().into());
        }
        for p in &obs.profiles {
            s.cost
                .profiles
                .entry(p.id)
                .or_insert_with(|| Profile::from(p));
        }
    }
}
