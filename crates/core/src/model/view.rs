//! The read view: the one door through which exporters see the model.
//!
//! The state is private to `src/model`; [`Model::view`](super::Model::view) lends a [`ModelView`]
//! under the lock, and everything an exporter needs is a method here. The model's rules live
//! here too, so no exporter re-implements them: a group's totals are its retired stages' plus
//! its live stages'; an executor's running tasks come from REST when REST reports them, else
//! from the event log; a stage is stalled since its last task end, or since submission; which
//! stage attempts have per-stage series ([`AppView::stages`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::app::{AppDetail, AppState, AppSummary, NameAgg};
use super::cost::Money;
use super::details::StageDetail;
use super::executor::ExecutorTotals;
use super::group::{GroupAgg, GroupKey};
use super::hist::Hist;
use super::obs::{EpochMs, TaskCounts, TaskTotals};
use super::sql::SqlAgg;
use super::stage::StageState;
use super::state::State;
use super::store::Model;
use super::streaming::StreamAgg;
use crate::config::CostConfig;
use crate::hash::Map;

impl Model {
    /// Read the model under the lock, through its read view (exporters). Never `.await`
    /// inside `f`.
    pub fn view<R>(&self, f: impl FnOnce(ModelView<'_>) -> R) -> R {
        self.read(|state| f(ModelView { state }))
    }
}

/// Read-only view of every application (see the module docs).
pub struct ModelView<'a> {
    pub(super) state: &'a State,
}

impl<'a> ModelView<'a> {
    /// Applications in id order: those served (after a start, each once every source has
    /// given its start-up state for it, `delivery.rs`).
    pub fn apps(&self) -> impl Iterator<Item = AppView<'a>> + 'a {
        let keep = StageKeep::of(&self.state.retention);
        let state = self.state;
        state
            .apps_in_order()
            .into_iter()
            .map(|(_, app)| app)
            .filter(move |app| state.serves(app))
            .map(move |app| AppView::run(app, keep, &state.prices))
    }

    /// True once every source the exporter runs has finished its start-up read
    /// (`spark_exporter_startup_complete`, `/readyz?complete`).
    /// ... and the diagnose rules, when they run on this model, have counted the end findings
    /// of every application whose end was read (`findings.rs`).
    pub fn startup_complete(&self) -> bool {
        self.state.sources.complete() && !self.state.findings_due()
    }

    /// The application `id` (a model key, `{id}/{attempt}` for an attempt), if the model holds
    /// it; an id without its attempt gives the latest attempt.
    pub fn app(&self, id: &str) -> Option<AppView<'a>> {
        let keep = StageKeep::of(&self.state.retention);
        let apps = &self.state.apps;
        apps.get(id)
            .or_else(|| {
                self.state
                    .attempts_of(id)
                    .max_by_key(|(_, a)| a.summary.start_ms)
                    .map(|(_, a)| a)
            })
            .map(|app| AppView::run(app, keep, &self.state.prices))
    }
}

/// Which finished stage attempts keep their per-stage series: `model.max_finished_stages`,
/// `model.stage_skew_ratio`, `model.stage_skew_min_duration`.
#[derive(Debug, Clone, Copy)]
pub(super) struct StageKeep {
    /// Most finished stage attempts with series, per application.
    cap: usize,
    /// Longest / median task duration from which a stage is skewed.
    skew_ratio: f64,
    /// ... when its longest task ran at least this long (ms).
    skew_min_ms: f64,
}

impl StageKeep {
    fn of(c: &crate::config::ModelConfig) -> StageKeep {
        StageKeep {
            cap: c.max_finished_stages,
            skew_ratio: c.stage_skew_ratio,
            skew_min_ms: c.stage_skew_min_duration.as_secs_f64() * 1000.0,
        }
    }
    /// No finished stage: for name states, which hold no stages.
    const NONE: StageKeep = StageKeep {
        cap: 0,
        skew_ratio: f64::INFINITY,
        skew_min_ms: f64::INFINITY,
    };
}

/// Why a finished stage attempt keeps its series, most telling first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Worth {
    Failed,
    Skewed,
    Longest,
}

/// One application, read-only: a run (its summary, and its detail unless summarised), or a
/// name's series across runs (`model.aggregate_by: app_name`).
#[derive(Clone, Copy)]
pub struct AppView<'a> {
    s: &'a AppSummary,
    detail: Option<&'a AppDetail>,
    name: Option<&'a NameAgg>,
    keep: StageKeep,
    /// Prices (`cost`): the money families.
    prices: &'a CostConfig,
}

/// No prices (a run read while it folds into its name).
static NO_PRICES: CostConfig = CostConfig {
    currency: None,
    property: None,
    prices: Vec::new(),
};

/// What a summarised application or a name reads as its detail: nothing.
static NO_DETAIL: std::sync::LazyLock<AppDetail> = std::sync::LazyLock::new(AppDetail::default);

/// A job group's counters and histograms: retired stages and live ones summed.
pub struct GroupView<'a> {
    /// `(job_group, job_description)` label values.
    pub key: &'a GroupKey,
    /// Jobs ended, as `(status, count)` for `succeeded` and `failed`.
    pub jobs: [(&'static str, u64); 2],
    /// Stage attempts ended, as `(status, count)` for `complete`, `failed` and `skipped`.
    pub stages: [(&'static str, u64); 3],
    /// Jobs running now.
    pub active_jobs: u64,
    /// Stage attempts running now.
    pub active_stages: u64,
    /// Task outcomes, retired and live stages together.
    pub tasks: TaskCounts,
    /// Task metric sums, retired and live stages together.
    pub totals: TaskTotals,
    /// Job durations by status (`succeeded` and `failed`, at zero until observed).
    pub job_duration: Option<&'a BTreeMap<&'static str, Hist>>,
    /// Stage durations by status (`complete` and `failed`, at zero until observed).
    pub stage_duration: Option<&'a BTreeMap<&'static str, Hist>>,
    /// Task durations: when the event log reports on the application, or a task was observed.
    pub task_duration: Option<&'a Hist>,
    /// Skew ratios of complete stage attempts (both sources; see `tasks.rs`).
    pub skew_ratio: Option<&'a Hist>,
    /// Task ends by locality, in [`super::obs::Locality::ALL`] order: when the event log
    /// reports on the application (REST cannot tell), or a task was counted.
    pub locality: Option<[u64; 6]>,
    /// Whether the event log reports on the application: the totals' event-log-only field
    /// (`scheduler_delay_ms`) means something only then.
    pub from_log: bool,
}

/// A stage attempt the model still holds.
pub struct StageView<'a> {
    /// Its job group's label values.
    pub group: &'a GroupKey,
    /// Stage id.
    pub stage_id: u64,
    /// Attempt number.
    pub attempt: u32,
    /// Stage name (length-capped).
    pub name: &'a Arc<str>,
    /// Still running (and its application too).
    pub active: bool,
    /// Tasks running now (0 unless active).
    pub running_tasks: u64,
    /// For an active stage: seconds since a task last finished, or since submission.
    pub stalled_seconds: Option<f64>,
    /// Longest / median task duration, when a summary with a non-zero median is known.
    pub skew_ratio: Option<f64>,
}

/// One executor.
pub struct ExecutorView<'a> {
    /// Executor id (`driver` for the driver).
    pub id: &'a str,
    /// Totals, both sources merged.
    pub totals: ExecutorTotals,
    /// Tasks running now (0 once dead).
    pub running_tasks: u64,
    /// Task slots, when known.
    pub max_tasks: Option<u64>,
    /// Storage memory used, when known.
    pub storage_memory_used_bytes: Option<u64>,
    /// Storage memory available, when known.
    pub max_memory_bytes: Option<u64>,
    /// Disk used by cached blocks, when known.
    pub disk_used_bytes: Option<u64>,
    /// Peak memory by type.
    pub peak_memory: &'a BTreeMap<String, u64>,
}

/// SQL executions of one description.
pub struct SqlView<'a> {
    /// Job group label value.
    pub job_group: &'a str,
    /// Description label value.
    pub description: &'a Arc<str>,
    /// Executions ended, as `(status, count)` for `completed` and `failed`.
    pub ended: [(&'static str, u64); 2],
    /// Executions running now.
    pub running: u64,
    /// Durations by status; `None` for a key with only running executions whose group is not
    /// known yet (no counter or histogram series of its own).
    pub duration: Option<&'a BTreeMap<&'static str, Hist>>,
    /// The final plans of its ended executions; `None` exactly when `duration` is.
    pub plans: Option<&'a super::plan::PlanAgg>,
}

/// Per-group values summed over the stages the model still holds.
#[derive(Default)]
struct Live {
    tasks: TaskCounts,
    totals: TaskTotals,
    active_stages: u64,
    active_jobs: u64,
}

impl<'a> AppView<'a> {
    fn run(app: &'a AppState, keep: StageKeep, prices: &'a CostConfig) -> AppView<'a> {
        AppView {
            s: &app.summary,
            detail: app.detail.as_deref(),
            name: None,
            keep,
            prices,
        }
    }
    /// The view of run `app` being folded into its name's series (only its groups are read).
    pub(super) fn of(app: &'a AppState) -> AppView<'a> {
        Self::run(app, StageKeep::NONE, &NO_PRICES)
    }
    /// The view of a name's series across runs (which holds no stages), priced at `prices`.
    pub(super) fn of_name(n: &'a NameAgg, prices: &'a CostConfig) -> AppView<'a> {
        AppView {
            s: &n.summary,
            detail: None,
            name: Some(n),
            keep: StageKeep::NONE,
            prices,
        }
    }
    /// The application's detail; empty once summarised, and for a name.
    pub(super) fn d(&self) -> &'a AppDetail {
        self.detail.unwrap_or(&NO_DETAIL)
    }
    /// A run whose detail was dropped (`summary.rs`).
    fn summarised(&self) -> bool {
        self.detail.is_none() && self.name.is_none()
    }
    /// Application id.
    pub fn id(&self) -> &'a Arc<str> {
        &self.s.id
    }
    /// Attempt id, when Spark reports one (YARN): the `attempt_id` label of per-run series.
    pub fn attempt(&self) -> Option<&'a Arc<str>> {
        self.s.attempt.as_ref()
    }
    /// Application name.
    pub fn name(&self) -> &'a Arc<str> {
        &self.s.name
    }
    /// Spark version.
    pub fn spark_version(&self) -> &'a Arc<str> {
        &self.s.spark_version
    }
    /// User.
    pub fn user(&self) -> &'a Arc<str> {
        &self.s.user
    }
    /// Start time (epoch ms).
    pub fn start_ms(&self) -> Option<EpochMs> {
        self.s.start_ms
    }
    /// End time (epoch ms): Spark's, or when its driver went away.
    pub fn end_ms(&self) -> Option<EpochMs> {
        self.s.end_ms
    }
    /// True once the application has ended.
    pub fn ended(&self) -> bool {
        self.s.ended()
    }
    /// When the model first saw the application (epoch ms): its counters and histograms count
    /// from then (OpenMetrics `_created`).
    pub fn created_ms(&self) -> EpochMs {
        self.s.created_ms
    }
    /// True when Spark itself said the application ended (`ApplicationEnd` in its log, or REST
    /// listing it completed), not only that its driver went away.
    pub fn ended_by_spark(&self) -> bool {
        self.s.ended() && !self.s.gone
    }
    /// Job-group aggregates held (for cardinality checks).
    pub fn group_count(&self) -> usize {
        self.s.groups.len()
    }
    /// Jobs not ended yet.
    pub fn running_job_count(&self) -> usize {
        self.d().running_jobs.len()
    }
    /// Stage attempts held (active, pending, or within retention).
    pub fn stage_count(&self) -> usize {
        self.d().stages.len()
    }

    fn sorted_stages(&self) -> Vec<(&'a (u64, u32), &'a StageState)> {
        let mut v: Vec<_> = self.d().stages.iter().collect();
        v.sort_by_key(|(k, _)| **k);
        v
    }

    fn stage_active(&self, sg: &StageState) -> bool {
        !sg.status.is_terminal() && !self.s.ended()
    }

    /// Whether a finished stage attempt is worth a look: it failed; its longest task ran at least
    /// `model.stage_skew_ratio` times its median and at least `model.stage_skew_min_duration`;
    /// or it is among the application's `model.max_finished_stages` longest.
    fn worth(&self, sg: &StageState, longest: Option<usize>) -> Option<(Worth, usize)> {
        if sg.status == super::obs::StageStatus::Failed {
            return Some((Worth::Failed, 0));
        }
        let skewed = sg.summary.is_some_and(|x| {
            x.median_ms > 0.0
                && x.max_ms / x.median_ms >= self.keep.skew_ratio
                && x.max_ms >= self.keep.skew_min_ms
        });
        if skewed {
            return Some((Worth::Skewed, 0));
        }
        longest.map(|rank| (Worth::Longest, rank))
    }

    /// The finished stage attempts that keep their per-stage series: those [`Self::worth`] a
    /// look, at most `model.max_finished_stages`, failed first, then skewed (newest first
    /// within each), then the longest (longest first).
    fn kept_finished(&self) -> HashSet<(u64, u32)> {
        if self.keep.cap == 0 {
            return HashSet::new();
        }
        let rank: HashMap<(u64, u32), usize> = self
            .d()
            .longest
            .iter()
            .enumerate()
            .map(|(i, (_, id, attempt))| ((*id, *attempt), i))
            .collect();
        let mut worth: Vec<(Worth, usize, (u64, u32))> = self
            .d()
            .stages
            .iter()
            .filter(|(_, sg)| !self.stage_active(sg))
            .filter_map(|(k, sg)| {
                self.worth(sg, rank.get(k).copied())
                    .map(|(w, r)| (w, r, *k))
            })
            .collect();
        worth.sort_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| match a.0 {
                Worth::Longest => a.1.cmp(&b.1),
                _ => b.2.cmp(&a.2),
            })
        });
        worth
            .into_iter()
            .take(self.keep.cap)
            .map(|(_, _, k)| k)
            .collect()
    }

    /// Stage attempts with per-stage series, in `(stage_id, attempt)` order, with the stall time
    /// at `now`: every active one, and the finished ones `Self::kept_finished` lets through
    /// (the others still count in their job group's series until `model.stage_retention`).
    pub fn stages(&self, now: EpochMs) -> Vec<StageView<'a>> {
        let kept = self.kept_finished();
        self.sorted_stages()
            .into_iter()
            .filter(|(k, sg)| self.stage_active(sg) || kept.contains(k))
            .filter(|(_, sg)| !super::broadcast::is_placeholder(&sg.group))
            .map(|(_, sg)| {
                let active = self.stage_active(sg);
                let stalled_seconds = active.then(|| {
                    let since = sg
                        .last_task_end_ms
                        .or(sg.submission_ms)
                        .unwrap_or(sg.first_seen_ms)
                        .max(sg.submission_ms.unwrap_or(0));
                    now.saturating_sub(since).max(0) as f64 / 1000.0
                });
                StageView {
                    group: &sg.group,
                    stage_id: sg.stage_id,
                    attempt: sg.attempt,
                    name: &sg.name,
                    active,
                    running_tasks: if active { sg.running() } else { 0 },
                    stalled_seconds,
                    skew_ratio: sg
                        .summary
                        .filter(|x| x.median_ms > 0.0)
                        .map(|x| x.max_ms / x.median_ms),
                }
            })
            .collect()
    }

    /// Every job group with a counter or something running, in label order; none once an ended
    /// application is summarised at `model.summary_level: app`.
    pub fn groups(&self) -> Vec<GroupView<'a>> {
        if self.s.groups_hidden {
            return vec![];
        }
        self.all_groups()
    }

    /// Every job group, whatever the summary level.
    pub(super) fn all_groups(&self) -> Vec<GroupView<'a>> {
        let (s, d) = (self.s, self.d());
        let mut live: Map<&GroupKey, Live> = Map::default();
        for j in d.running_jobs.values() {
            live.entry(&j.group).or_default().active_jobs += 1;
        }
        for (_, sg) in self.sorted_stages() {
            let l = live.entry(&sg.group).or_default();
            l.tasks.add(&sg.counts());
            l.totals.add(&sg.totals());
            if self.stage_active(sg) {
                l.active_stages += 1;
            }
        }
        // Placeholders of broadcast jobs waiting for their query's group are not shown.
        let mut keys: Vec<&GroupKey> = s
            .groups
            .keys()
            .chain(live.keys().copied())
            .filter(|k| !super::broadcast::is_placeholder(k))
            .collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|key| {
                let mut g = group_view(key, s.groups.get(key), live.get(key), s.from_log);
                g.from_log = s.from_log;
                g.locality = g
                    .locality
                    .filter(|l| s.from_log || l.iter().any(|n| *n > 0));
                g
            })
            .collect()
    }

    /// Executors in id order.
    pub fn executors(&self) -> Vec<ExecutorView<'a>> {
        self.d()
            .executors
            .iter()
            .map(|(id, e)| ExecutorView {
                id,
                totals: e.totals(),
                running_tasks: if e.active {
                    e.active_tasks.unwrap_or(e.log_running)
                } else {
                    0
                },
                max_tasks: e.max_tasks,
                storage_memory_used_bytes: e.storage_memory_used_bytes,
                max_memory_bytes: e.max_memory_bytes,
                disk_used_bytes: e.disk_used_bytes,
                peak_memory: &e.peak_memory,
            })
            .collect()
    }

    /// Executors `(active, dead)`; once the application has ended, all are dead. `None` for a
    /// name's series across runs.
    pub fn executor_states(&self) -> Option<[(&'static str, u64); 2]> {
        if self.name.is_some() {
            return None;
        }
        if self.summarised() {
            return Some([("active", 0), ("dead", self.s.executors_seen)]);
        }
        let active = if self.s.ended() {
            0
        } else {
            self.d().executors.values().filter(|e| e.active).count() as u64
        };
        let dead = self.d().executors.len() as u64 - active;
        Some([("active", active), ("dead", dead)])
    }

    /// True for a name's series across runs (`model.aggregate_by: app_name`), not one run.
    pub fn by_name(&self) -> bool {
        self.name.is_some()
    }

    /// Runs ended, as `(status, count)` for `succeeded`, `failed` and `unknown`: 0 or 1 for a
    /// run, the runs counted so far for a name.
    pub fn runs(&self) -> [(&'static str, u64); 3] {
        let n = match self.name {
            Some(n) => n.runs,
            None => {
                let mut n = [0; 3];
                if let Some(i) = self.s.outcome() {
                    n[i] = 1;
                }
                n
            }
        };
        let s = super::app::RUN_STATUSES;
        [(s[0], n[0]), (s[1], n[1]), (s[2], n[2])]
    }

    /// Run durations of a name's runs (name mode only).
    pub fn run_duration(&self) -> Option<&'a Hist> {
        self.name.map(|n| &n.run_duration)
    }

    /// Core-seconds allocated to each of a name's counted runs (name mode only), on
    /// `RUN_BOUNDS` (`names.rs`).
    pub fn run_cost(&self) -> Option<&'a Hist> {
        self.name.map(|n| &n.run_cost)
    }

    /// A name's counted run that ended last (name mode only; `None` until one ended).
    pub fn last_run(&self) -> Option<LastRunView> {
        let r = self.name?.last_run?;
        Some(LastRunView {
            duration_seconds: r.start_ms.map(|s| (r.end_ms - s).max(0) as f64 / 1000.0),
            core_seconds: r.core_ms as f64 / 1000.0,
            end_seconds: r.end_ms as f64 / 1000.0,
            money: self
                .name
                .and_then(|n| n.last_run_money)
                .filter(|_| self.prices.priced())
                .map(|m| m.cores + m.memory),
        })
    }

    /// Spark Connect jobs ended, as `(client_app, user, status, count)`.
    pub fn connect_jobs(&self) -> impl Iterator<Item = (&'a str, &'a str, &'static str, u64)> + 'a {
        self.s.connect_jobs.iter().flat_map(|((c, u), n)| {
            [("succeeded", n[0]), ("failed", n[1])].map(|(s, v)| (&**c, &**u, s, v))
        })
    }

    /// Executors removed, by normalised reason.
    pub fn executors_removed(&self) -> impl Iterator<Item = (&'static str, u64)> + 'a {
        self.s.executors_removed.iter().map(|(k, v)| (*k, *v))
    }

    /// SQL job groups and descriptions with an ended or running execution, in label order. A
    /// running execution whose group is not known yet counts under the empty group.
    pub fn sql(&self) -> Vec<SqlView<'a>> {
        type Entry<'a> = (Option<&'a SqlAgg>, u64);
        let detail = self.d();
        let mut keys: BTreeMap<(&'a str, &'a Arc<str>), Entry<'a>> = BTreeMap::new();
        for ((g, d), agg) in &detail.sql {
            keys.entry((&**g, d)).or_default().0 = Some(agg);
        }
        for q in detail.running_sql.values() {
            let g = q.group.as_deref().unwrap_or("");
            keys.entry((g, &q.description)).or_default().1 += 1;
        }
        keys.into_iter()
            .map(|((g, d), (agg, running))| {
                let n =
                    |s: &'static str| (s, agg.and_then(|a| a.ended.get(s)).copied().unwrap_or(0));
                SqlView {
                    job_group: g,
                    description: d,
                    ended: [n("completed"), n("failed")],
                    running,
                    duration: agg.map(|a| &a.duration),
                    plans: agg.map(|a| &a.plans),
                }
            })
            .collect()
    }

    /// The plan fingerprint per job group and description, with its newest execution: of this
    /// run's ended executions, or (a name's state across runs) of its runs', one query's latest
    /// plan, or the latest of each query's when several share the labels
    /// ([`super::plan::latest_fingerprint`]).
    pub fn plan_fingerprints(&self) -> Vec<(&'a str, &'a Arc<str>, super::plan::Latest, u64)> {
        use super::plan::latest_fingerprint;
        if let Some(n) = self.name {
            return n
                .plan_latest
                .iter()
                .filter_map(|((g, d), l)| {
                    latest_fingerprint(l.latest()).map(|(newest, fp)| (&**g, d, newest, fp))
                })
                .collect();
        }
        let mut v: Vec<_> = self
            .d()
            .sql
            .iter()
            .filter_map(|((g, d), a)| {
                latest_fingerprint(&a.plans.latest_by_query())
                    .map(|(newest, fp)| (&**g, d, newest, fp))
            })
            .collect();
        v.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        v
    }

    /// Streaming queries in label order.
    pub fn streaming(&self) -> impl Iterator<Item = (&'a Arc<str>, &'a StreamAgg)> + 'a {
        self.d().streaming.iter()
    }
}

/// What an application's executors cost, in core-seconds, GiB-seconds and money (`cost.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostView {
    /// Executors' lifetimes × their cores, up to now (or the application's end), core-ms.
    pub allocated_core_ms: u64,
    /// Executors' lifetimes × the memory they hold, MiB-ms.
    pub allocated_mib_ms: u64,
    /// What that cost, with prices (`None` without, or while none applies).
    pub money: Option<Money>,
    /// Tasks' executor run time × `spark.task.cpus`, every job group, core-ms.
    pub used_core_ms: u64,
    /// `spark.task.cpus` (1 until a source says).
    pub task_cpus: u64,
}

impl CostView {
    /// Allocated core-seconds.
    pub fn allocated_core_seconds(&self) -> f64 {
        self.allocated_core_ms as f64 / 1000.0
    }
    /// Allocated GiB-seconds of executor memory (GiB = 1024 MiB).
    pub fn memory_gib_seconds(&self) -> f64 {
        self.allocated_mib_ms as f64 / 1024.0 / 1000.0
    }
    /// Used core-seconds.
    pub fn used_core_seconds(&self) -> f64 {
        self.used_core_ms as f64 / 1000.0
    }
    /// Allocated but not used, at least 0, core-seconds (exact to the millisecond).
    pub fn idle_core_seconds(&self) -> f64 {
        self.allocated_core_ms.saturating_sub(self.used_core_ms) as f64 / 1000.0
    }
}

/// A name's counted run that ended last (`spark_app_last_run_*`, name mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastRunView {
    /// Seconds from its start to its end (Spark's clock, at least 0); `None` when its start is
    /// not known.
    pub duration_seconds: Option<f64>,
    /// Core-seconds allocated to its executors.
    pub core_seconds: f64,
    /// Its end, seconds since the Unix epoch.
    pub end_seconds: f64,
    /// Its money, cores and memory (with prices; `None` without, or when no price applied to
    /// it).
    pub money: Option<f64>,
}

/// A cached dataset (`cache.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct RddView {
    /// RDD id.
    pub rdd_id: u64,
    /// Name label value: the first line of Spark's RDD name, capped.
    pub name: Arc<str>,
    /// Cached partitions / partitions.
    pub cached_fraction: f64,
    /// Bytes cached in memory, every replica.
    pub memory_bytes: u64,
    /// Bytes cached on disk, every replica.
    pub disk_bytes: u64,
}

impl<'a> AppView<'a> {
    /// `spark.task.cpus` of the application (1 until a source says).
    pub fn task_cpus(&self) -> u64 {
        self.s.cost.cpus()
    }

    /// Its diagnosis findings as counted (`findings.rs`); a name's: its runs' final findings
    /// summed.
    pub fn findings(&self) -> &'a super::findings::Findings {
        &self.s.findings
    }

    /// The price of the time its findings explain, when a configured price applies to it (the
    /// core-hour price in effect at its end, else at its latest time): what
    /// `spark_diagnosis_cost_total` counts them at.
    pub fn finding_rate(&self) -> Option<super::findings::Rate> {
        super::rules::findings::priced_rate(self.prices, self.s)
    }

    /// The configured currency (`cost.currency`).
    pub fn currency(&self) -> &'a str {
        self.prices.currency()
    }

    /// Core-seconds allocated and used so far (see `cost.rs`).
    pub fn cost(&self) -> CostView {
        let cpus = self.task_cpus();
        let run_ms = self
            .all_groups()
            .iter()
            .fold(0u64, |n, g| n.saturating_add(g.totals.run_time_ms));
        let held = super::rules::cost::allocated(self.s, self.detail, self.prices);
        let money = match self.name {
            Some(_) => self.prices.priced().then_some(self.s.cost.retired_money),
            None => held.money,
        };
        CostView {
            allocated_core_ms: held.core_ms,
            allocated_mib_ms: held.mib_ms,
            money,
            used_core_ms: run_ms.saturating_mul(cpus),
            task_cpus: cpus,
        }
    }

    /// Cached datasets with at least one partition cached, by RDD id (see `cache.rs`).
    pub fn cached_datasets(&self) -> Vec<RddView> {
        self.d()
            .cache
            .datasets()
            .into_iter()
            .map(|(rdd_id, d)| RddView {
                rdd_id,
                cached_fraction: d.cached_fraction(),
                name: d.name,
                memory_bytes: d.memory_bytes,
                disk_bytes: d.disk_bytes,
            })
            .collect()
    }
}

impl AppView<'_> {
    /// Every stage attempt the model holds, in `(stage_id, attempt)` order, as it is now.
    pub fn stage_details(&self) -> Vec<StageDetail> {
        let mut v: Vec<StageDetail> = self.d().stages.values().map(StageState::detail).collect();
        v.sort_by_key(|s| (s.stage_id, s.attempt));
        v
    }
}

fn group_view<'a>(
    key: &'a GroupKey,
    agg: Option<&'a GroupAgg>,
    live: Option<&Live>,
    from_log: bool,
) -> GroupView<'a> {
    let jobs = |s: &'static str| (s, agg.and_then(|a| a.jobs.get(s)).copied().unwrap_or(0));
    let stages = |s: &'static str| (s, agg.and_then(|a| a.stages.get(s)).copied().unwrap_or(0));
    let mut tasks = agg.map(|a| a.retired_counts).unwrap_or_default();
    let mut totals = agg.map(|a| a.retired_totals).unwrap_or_default();
    if let Some(l) = live {
        tasks.add(&l.tasks);
        totals.add(&l.totals);
    }
    GroupView {
        key,
        jobs: [jobs("succeeded"), jobs("failed")],
        stages: [stages("complete"), stages("failed"), stages("skipped")],
        active_jobs: live.map_or(0, |l| l.active_jobs),
        active_stages: live.map_or(0, |l| l.active_stages),
        tasks,
        totals,
        job_duration: agg.map(|a| &a.job_duration),
        stage_duration: agg.map(|a| &a.stage_duration),
        // Task durations are known from the event log only: at zero from the group's first
        // sight when the log reports on the application, absent otherwise.
        task_duration: agg
            .and_then(|a| a.task_duration.as_ref())
            .filter(|h| from_log || h.count > 0),
        skew_ratio: agg.and_then(|a| a.skew_ratio.as_ref()),
        locality: Some(agg.map(|a| a.locality).unwrap_or_default()),
        from_log,
    }
}
