//! Series per application name across runs (`model.aggregate_by: app_name`).
//!
//! A daily job's counters and histograms keep growing over its runs, so `increase()` and
//! `histogram_quantile()` over weeks work with no per-run series. The rules:
//! - A run counts into its name's series **when it ends**, and only a run that ends after this
//!   exporter started ([`State::started_ms`]). A restarted exporter therefore starts every name
//!   from zero (a new `_created`), counts the runs that end from then on, and never counts a run
//!   its predecessor counted: Prometheus sees one counter reset, and `increase()` is exact. Runs
//!   that end while no exporter runs are not counted (as with any scrape gap); persisting the
//!   state instead would need a volume per shard and an exact hand-over when shards change.
//! - A run still running is not in the counters; its job groups are (at zero), so every series
//!   exists before the first run that counts into it, and `increase()` sees that run whole.
//! - Runs the model still holds are summed at read time (a late REST update of a run that just
//!   ended still counts); when a run leaves the model (`model.app_retention`, the age window),
//!   its values fold into the name's accumulator ([`State::names`]) for good.
//! - Runs that regress: each counted run's duration and allocated core-seconds go into
//!   histograms on fine buckets ([`RUN_BOUNDS`]), and the counted run that ended last is kept
//!   (`LastRun`: its duration, core-seconds and end), so a run can be compared with its
//!   name's history (`SparkRunSlowerThanUsual`, `SparkRunCostlierThanUsual`). Folding keeps the
//!   greatest `LastRun` (the latest end), so the order of the runs does not matter.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use super::app::{AppState, AppSummary, LastRun, NameAgg};
use super::group::{zero_group, GroupAgg, GroupKey};
use super::hist::Hist;
use super::labels::Labeler;
use super::state::State;
use super::view::{AppView, ModelView};

/// Bounds of a name's per-run histograms, `spark_app_run_duration_seconds` (seconds) and
/// `spark_app_run_core_seconds` (core-seconds): 1 to about 1e7 (115 days, or 2,770
/// core-hours), [`RUN_STEPS`] per doubling, so two bounds are 2^(1/4) ≈ 1.19 apart. A quantile
/// read from them lies in the true value's bucket, so within 19 % of it: fine enough to tell a
/// run twice as slow or as costly as usual from the usual ones (`SparkRunSlowerThanUsual`,
/// `SparkRunCostlierThanUsual`). 95 buckets a histogram (with `+Inf`), the price of that
/// precision.
pub const RUN_BOUNDS: [f64; 94] = run_bounds();

/// Bounds of [`RUN_BOUNDS`] per doubling.
pub const RUN_STEPS: usize = 4;

/// 2^(k/4) for k = 0..=93: a power of two (exact) times 2^(0, 1/4, 1/2 or 3/4) (the nearest
/// floats), so the bounds are the same bits on every platform (no `powf`).
const fn run_bounds() -> [f64; 94] {
    const ROOTS: [f64; RUN_STEPS] = [
        1.0,
        1.189_207_115_002_721,
        std::f64::consts::SQRT_2,
        1.681_792_830_507_429,
    ];
    let mut out = [0.0; 94];
    let mut k = 0;
    while k < out.len() {
        out[k] = ROOTS[k % RUN_STEPS] * (1u64 << (k / RUN_STEPS)) as f64;
        k += 1;
    }
    out
}

/// [`RUN_BOUNDS`], shared by every name's histograms.
static RUN: LazyLock<Arc<[f64]>> = LazyLock::new(|| Arc::from(&RUN_BOUNDS[..]));

/// An empty per-run histogram (a name's, before its first counted run).
pub(super) fn run_hist() -> Hist {
    Hist::new(RUN.clone())
}

impl State {
    /// Whether the run counts into its name's series: it ended after the exporter started.
    pub(super) fn counts_by_name(&self, app: &AppState) -> bool {
        app.summary.end_ms.is_some_and(|e| e >= self.started_ms)
    }

    /// The accumulator of `name`, created at zero on first sight.
    pub(super) fn name_acc(&mut self, name: &Arc<str>, now: i64) -> &mut NameAgg {
        self.names
            .entry(name.clone())
            .or_insert_with(|| name_state(name, now))
    }

    /// A run leaves the model: in name mode its values (or, if it does not count, its job
    /// groups at zero) stay in its name's accumulator.
    pub(super) fn retire_app(&mut self, app: &AppState) {
        let name = &app.summary.name;
        if self.retention.aggregate_by != crate::config::AggregateBy::AppName || name.is_empty() {
            return;
        }
        let counts = self.counts_by_name(app);
        let now = self.now_ms;
        let bounds = (self.duration_bounds.clone(), self.task_bounds.clone());
        self.name_acc(name, now);
        if let Some(acc) = self.names.get_mut(name) {
            fold(acc, app, counts, &self.labeler, &bounds, &self.prices);
        }
    }
}

impl<'a> ModelView<'a> {
    /// In name mode, one state per application name: its accumulator plus the runs the model
    /// still holds; `None` in `app_id` mode.
    pub fn by_name(&self) -> Option<NameStates> {
        let st = self.state;
        if st.retention.aggregate_by != crate::config::AggregateBy::AppName {
            return None;
        }
        let bounds = (st.duration_bounds.clone(), st.task_bounds.clone());
        let mut out: BTreeMap<Arc<str>, NameAgg> = st
            .names
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (_, app) in st
            .apps_in_order()
            .into_iter()
            .filter(|(_, a)| !a.summary.name.is_empty() && st.serves(a))
        {
            let s = &app.summary;
            let acc = out
                .entry(s.name.clone())
                .or_insert_with(|| name_state(&s.name, s.created_ms));
            fold(
                acc,
                app,
                st.counts_by_name(app),
                &st.labeler,
                &bounds,
                &st.prices,
            );
        }
        Some(NameStates(out.into_values().collect(), st.prices.clone()))
    }
}

/// The state of `name` across runs, at zero, first seen at `created_ms`.
fn name_state(name: &Arc<str>, created_ms: i64) -> NameAgg {
    let mut summary = AppSummary::new("", created_ms);
    summary.name = name.clone();
    NameAgg {
        summary,
        runs: [0; 3],
        run_duration: run_hist(),
        run_cost: run_hist(),
        last_run: None,
        last_run_money: None,
        plan_latest: BTreeMap::new(),
        label_sets: Default::default(),
    }
}

/// Per-name states built for one read (see [`ModelView::by_name`]), and the prices.
pub struct NameStates(Vec<NameAgg>, Arc<crate::config::CostConfig>);

impl NameStates {
    /// One view per name, in name order.
    pub fn views(&self) -> impl Iterator<Item = AppView<'_>> {
        self.0.iter().map(|n| AppView::of_name(n, &self.1))
    }
}

/// Add run `app` to the name state `acc`: its job groups at zero, and, if it `counts`, its
/// job-group totals and histograms, removed-executor counts, outcome, duration and allocation,
/// and whether it is the name's last run.
fn fold(
    name: &mut NameAgg,
    app: &AppState,
    counts: bool,
    labeler: &Labeler,
    (dur, task): &(Arc<[f64]>, Arc<[f64]>),
    prices: &crate::config::CostConfig,
) {
    fold_plans(name, app, labeler);
    let acc = &mut name.summary;
    let run = &app.summary;
    if run.start_ms > acc.start_ms {
        acc.start_ms = run.start_ms;
        acc.spark_version = run.spark_version.clone();
        acc.user = run.user.clone();
    }
    acc.created_ms = acc.created_ms.min(run.created_ms);
    acc.from_log |= run.from_log;
    let held = super::rules::cost::fold(acc, app, counts, prices);
    for g in AppView::of(app).all_groups() {
        let key: GroupKey = (
            labeler.keep(&mut name.label_sets, "job_group", &g.key.0),
            labeler.keep(&mut name.label_sets, "job_description", &g.key.1),
        );
        let a = acc
            .groups
            .entry(key)
            .or_insert_with(|| zero_group(dur, task));
        if !counts {
            continue;
        }
        for (s, n) in g.jobs {
            *a.jobs.entry(s).or_default() += n;
        }
        for (s, n) in g.stages {
            *a.stages.entry(s).or_default() += n;
        }
        a.retired_counts.add(&g.tasks);
        a.retired_totals.add(&g.totals);
        merge_hists(&mut a.job_duration, g.job_duration);
        merge_hists(&mut a.stage_duration, g.stage_duration);
        if let (Some(into), Some(h)) = (a.task_duration.as_mut(), g.task_duration) {
            into.merge(h);
        }
        fold_tasks(a, &g);
    }
    if !counts {
        return;
    }
    if run.end_ms > acc.end_ms {
        acc.end_ms = run.end_ms;
    }
    for (k, n) in &run.executors_removed {
        *acc.executors_removed.entry(k).or_default() += n;
    }
    let sets = &mut name.label_sets;
    run.findings.fold_into(&mut acc.findings, |g, d| {
        (
            labeler.keep(sets, "job_group", g),
            labeler.keep(sets, "job_description", d),
        )
    });
    if let Some(i) = run.outcome() {
        name.runs[i] += 1;
    }
    if let (Some(s), Some(e)) = (run.start_ms, run.end_ms) {
        name.run_duration.observe((e - s) as f64 / 1000.0);
    }
    let held = held.unwrap_or_default();
    let core_ms = held.core_ms;
    name.run_cost.observe(core_ms as f64 / 1000.0);
    if let Some(end_ms) = run.end_ms {
        let this = LastRun {
            end_ms,
            start_ms: run.start_ms,
            core_ms,
        };
        if name.last_run.is_none_or(|l| this > l) {
            name.last_run = Some(this);
            name.last_run_money = held.money;
        }
    }
}

/// The skew ratios and locality counts of a run's group, added to its name's (`tasks.rs`).
fn fold_tasks(a: &mut GroupAgg, g: &super::view::GroupView<'_>) {
    if let (Some(into), Some(h)) = (a.skew_ratio.as_mut(), g.skew_ratio) {
        into.merge(h);
    }
    if let Some(l) = g.locality {
        for (n, m) in a.locality.iter_mut().zip(l) {
            *n += m;
        }
    }
}

/// The latest plans per job group and description of run `app` into its name's state (the
/// latest run's), whether the run counts or not: a gauge of the latest plans, not a count.
fn fold_plans(acc: &mut NameAgg, app: &AppState, labeler: &Labeler) {
    for ((g, d), agg) in app.detail.iter().flat_map(|d| &d.sql) {
        let latest = agg.plans.latest_by_query();
        if latest.is_empty() {
            continue;
        }
        let key = (
            labeler.keep(&mut acc.label_sets, "job_group", g),
            labeler.keep(&mut acc.label_sets, "description", d),
        );
        acc.plan_latest.entry(key).or_default().fold_run(latest);
    }
}

fn merge_hists(
    into: &mut BTreeMap<&'static str, Hist>,
    from: Option<&BTreeMap<&'static str, Hist>>,
) {
    for (s, h) in from.into_iter().flatten() {
        match into.get_mut(s) {
            Some(a) => a.merge(h),
            None => {
                into.insert(s, h.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step is 2^(1/4) to the float, from 1 to just under 1e7.
    #[test]
    fn run_bounds_are_geometric_from_1_to_1e7() {
        let b = RUN_BOUNDS;
        assert_eq!((b[0], b[4], b[92]), (1.0, 2.0, 8_388_608.0));
        assert!((9.9e6..1e7).contains(&b[93]), "{}", b[93]);
        for w in b.windows(2) {
            let r = w[1] / w[0];
            assert!((r - 2f64.powf(0.25)).abs() < 1e-12, "{w:?}");
        }
    }
}
