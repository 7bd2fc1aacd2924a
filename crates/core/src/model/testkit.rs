//! The model's test kit: drive a [`Model`] on a test clock, build observations, and read back
//! what the model holds through its read view ([`Model::view`]), never through the exposition.
//!
//! One convention for every test of `src/model`; `use super::testkit::*;` brings all of it (the
//! observation types, [`Observer`] and the settings types too):
//!
//! - **The model.** `let m = TestModel::new();` (or `TestModel::with(|s| s.model.… = …)` for
//!   other settings) is a model on a clock at [`T0`]; `m.at(ms)` and `m.advance(ms)` move the
//!   clock, `m.rest()` and `m.log()` are its two sources, and it derefs to the `Arc<Model>`
//!   (`m.view(…)`, `m.expire(m.now_ms())`, `m.telemetry()`).
//! - **Observations.** A free function named after the entity builds one from its ids, with the
//!   defaults its doc gives: [`app`], [`job`], [`stage`], [`task_start`], [`task_end`],
//!   [`summary`], [`executor`], [`sql`], [`query_started`], [`rdd`], [`rdd_info`], [`block`]
//!   (and [`counts`] for task counts). Chainable setters change one field each and are named
//!   after it in short (`group` for `job_group`, `desc` for `description`, `cores` for
//!   `total_cores`), times after their event (`submitted`, `ended_at`, `launched`, `finished`,
//!   `added`, `removed`): `job(1).group("etl").stages([3]).status(JobStatus::Succeeded)`. Times
//!   are Spark's clock: a job or stage is submitted at [`SUBMITTED`], a terminal `.status(..)`
//!   ends it at [`ENDED`] (an `.ended_at(..)` after it says otherwise), `.removed(..)` makes an
//!   executor inactive, and a task's `.duration(..)` sets its finish from its launch.
//! - **Reads.** `m.app(APP)` is an owned [`App`]: everything the view shows of one served
//!   application, read at the clock's time: its job groups ([`Group`]), the stage attempts with
//!   per-stage values ([`Stage`]), executors, SQL descriptions, streaming queries, cost and cached
//!   datasets. `m.apps()` reads every served one, `m.names()` / `m.name(..)` the per-name states
//!   of `model.aggregate_by: app_name`. Methods on a read find one thing: `a.group("etl")` (or
//!   `a.group(("etl", "desc"))`, `a.group(Desc("desc"))`), `a.stage(3)`, `a.executor("1")`,
//!   `a.sql_desc("etl", "load")`, `a.dataset(3)`. Something the view does not give (no such
//!   group, stage, executor, dataset; a `None` histogram) is what the exposition shows as no
//!   series.
//!
//! Free functions build, methods read; scenario helpers in a test file (a run of jobs, a stage
//! with its tasks) compose these and nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A REST-like source of the tests (number 0, as the exporter's registry numbers REST).
pub const REST: Source = Source::new(0, Feed::Status);
/// An event-log-like source of the tests (number 1).
pub const LOG: Source = Source::new(1, Feed::Log);

pub use super::app_key;
pub use super::cache::MAX_DATASETS;
use super::executor::ExecutorTotals;
use super::hist::Hist;
pub use super::obs::*;
pub use super::observer::{ModelObserver, Observer};
use super::plan::{Latest, PlanAgg};
pub use super::stage::ORPHAN_WAIT_MS;
pub use super::store::Model;
pub use super::streaming::StreamAgg;
use super::view::{AppView, CostView, LastRunView, RddView};
pub use crate::config::{AggregateBy, Settings, SummaryLevel};
use crate::telemetry::Telemetry;

/// The application most tests observe.
pub const APP: &str = "app-1";
/// Where a [`TestModel`]'s clock starts (epoch ms): the exporter's start.
pub const T0: EpochMs = 1_000_000_000;
/// When a built job or stage was submitted (Spark's clock, epoch ms).
pub const SUBMITTED: EpochMs = 1_000;
/// When a built job or stage given a terminal status ended (Spark's clock, epoch ms).
pub const ENDED: EpochMs = 3_000;

// --- The model ---

/// A model on a clock the test moves.
pub struct TestModel {
    /// The model.
    pub model: Arc<Model>,
    /// Its clock (epoch ms).
    pub clock: Arc<AtomicI64>,
}

impl Default for TestModel {
    fn default() -> Self {
        Self::new()
    }
}

impl TestModel {
    /// A model with the default settings, its clock at [`T0`].
    pub fn new() -> TestModel {
        Self::with(|_| {})
    }

    /// A model with the default settings changed by `f`, its clock at [`T0`].
    pub fn with(f: impl FnOnce(&mut Settings)) -> TestModel {
        Self::on(Arc::new(AtomicI64::new(T0)), f)
    }

    /// Another model on this one's clock, started now (an exporter restarted).
    pub fn restarted(&self, f: impl FnOnce(&mut Settings)) -> TestModel {
        Self::on(self.clock.clone(), f)
    }

    fn on(clock: Arc<AtomicI64>, f: impl FnOnce(&mut Settings)) -> TestModel {
        let mut settings = Settings::default();
        f(&mut settings);
        let c = clock.clone();
        let model = Model::with_clock(
            &settings,
            Arc::new(Telemetry::default()),
            Arc::new(move || c.load(Ordering::SeqCst)),
        );
        TestModel { model, clock }
    }

    /// Set the clock to `ms`.
    pub fn at(&self, ms: EpochMs) {
        self.clock.store(ms, Ordering::SeqCst);
    }

    /// Move the clock on by `ms`; the new time.
    pub fn advance(&self, ms: EpochMs) -> EpochMs {
        self.clock.fetch_add(ms, Ordering::SeqCst) + ms
    }

    /// The REST poller's observer.
    pub fn rest(&self) -> ModelObserver {
        self.model.observer(REST)
    }

    /// The event-log tailer's observer.
    pub fn log(&self) -> ModelObserver {
        self.model.observer(LOG)
    }

    /// Every application the model serves, in id order, read now.
    pub fn apps(&self) -> Vec<App> {
        let now = self.now_ms();
        self.view(|v| v.apps().map(|a| App::of(&a, now)).collect())
    }

    /// The served application `key` ([`app_key`] for an attempt), read now, if served.
    pub fn find_app(&self, key: &str) -> Option<App> {
        self.apps().into_iter().find(|a| a.key == key)
    }

    /// The served application `key`, read now; panics if it is not served.
    pub fn app(&self, key: &str) -> App {
        self.find_app(key)
            .unwrap_or_else(|| panic!("application {key} not served: {:?}", self.keys()))
    }

    /// The keys of the served applications.
    pub fn keys(&self) -> Vec<String> {
        self.apps().into_iter().map(|a| a.key).collect()
    }

    /// In name mode (`model.aggregate_by: app_name`), the state of every application name, in
    /// name order, read now; panics in `app_id` mode.
    pub fn names(&self) -> Vec<App> {
        let now = self.now_ms();
        self.view(|v| {
            let names = v.by_name().expect("model.aggregate_by: app_name");
            names.views().map(|a| App::of(&a, now)).collect()
        })
    }

    /// In name mode, the state of application name `name`, read now; panics if absent.
    pub fn name(&self, name: &str) -> App {
        let all = self.names();
        let keys: Vec<String> = all.iter().map(|a| a.name.clone()).collect();
        all.into_iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no name {name}: {keys:?}"))
    }
}

impl std::ops::Deref for TestModel {
    type Target = Arc<Model>;
    fn deref(&self) -> &Arc<Model> {
        &self.model
    }
}

// --- Observations ---

/// Job `id`: running, no group, description, stages or SQL execution, submitted at
/// [`SUBMITTED`].
pub fn job(id: u64) -> JobObs {
    JobObs {
        job_id: id,
        job_group: None,
        description: None,
        status: JobStatus::Running,
        submission_ms: Some(SUBMITTED),
        completion_ms: None,
        stage_ids: vec![],
        sql_execution_id: None,
        tags: vec![],
        name: None,
        client_app: None,
    }
}

impl JobObs {
    /// `job_group`.
    pub fn group(mut self, g: &str) -> Self {
        self.job_group = Some(g.into());
        self
    }
    /// `description`.
    pub fn desc(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
    /// `status`; a terminal one ends at [`ENDED`], a running one has no end.
    pub fn status(mut self, s: JobStatus) -> Self {
        self.status = s;
        self.completion_ms = s.is_terminal().then_some(ENDED);
        self
    }
    /// `submission_ms`.
    pub fn submitted(mut self, ms: impl Into<Option<EpochMs>>) -> Self {
        self.submission_ms = ms.into();
        self
    }
    /// `completion_ms`.
    pub fn ended_at(mut self, ms: impl Into<Option<EpochMs>>) -> Self {
        self.completion_ms = ms.into();
        self
    }
    /// `stage_ids`.
    pub fn stages(mut self, ids: impl IntoIterator<Item = u64>) -> Self {
        self.stage_ids = ids.into_iter().collect();
        self
    }
    /// `sql_execution_id`.
    pub fn sql(mut self, execution_id: u64) -> Self {
        self.sql_execution_id = Some(execution_id);
        self
    }
    /// `name` (the call site).
    pub fn name(mut self, n: &str) -> Self {
        self.name = Some(n.into());
        self
    }
    /// `tags`.
    pub fn tags(mut self, tags: &[&str]) -> Self {
        self.tags = tags.iter().map(|t| t.to_string()).collect();
        self
    }
}

/// Stage `id`, attempt 0: active, named `stage {id}`, 4 tasks, submitted at [`SUBMITTED`]; no
/// group or description of its own, no running-task count, task counts or totals (what the
/// event log's `StageSubmitted` gives).
pub fn stage(id: u64) -> StageObs {
    StageObs {
        stage_id: id,
        attempt: 0,
        status: StageStatus::Active,
        name: Some(format!("stage {id}")),
        job_group: None,
        description: None,
        num_tasks: Some(4),
        active_tasks: None,
        submission_ms: Some(SUBMITTED),
        completion_ms: None,
        task_counts: None,
        totals: None,
    }
}

impl StageObs {
    /// `status`; a terminal one ends at [`ENDED`], another has no end.
    pub fn status(mut self, s: StageStatus) -> Self {
        self.status = s;
        self.completion_ms = s.is_terminal().then_some(ENDED);
        self
    }
    /// `attempt`.
    pub fn attempt(mut self, a: u32) -> Self {
        self.attempt = a;
        self
    }
    /// `name`.
    pub fn name(mut self, n: Option<&str>) -> Self {
        self.name = n.map(str::to_string);
        self
    }
    /// `job_group` (the event log's stage properties).
    pub fn group(mut self, g: &str) -> Self {
        self.job_group = Some(g.into());
        self
    }
    /// `description`.
    pub fn desc(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
    /// `num_tasks`.
    pub fn tasks(mut self, n: u64) -> Self {
        self.num_tasks = Some(n);
        self
    }
    /// `active_tasks` (REST).
    pub fn active_tasks(mut self, n: impl Into<Option<u64>>) -> Self {
        self.active_tasks = n.into();
        self
    }
    /// `submission_ms`.
    pub fn submitted(mut self, ms: impl Into<Option<EpochMs>>) -> Self {
        self.submission_ms = ms.into();
        self
    }
    /// `completion_ms`.
    pub fn ended_at(mut self, ms: impl Into<Option<EpochMs>>) -> Self {
        self.completion_ms = ms.into();
        self
    }
    /// `task_counts` (REST).
    pub fn counts(mut self, c: TaskCounts) -> Self {
        self.task_counts = Some(c);
        self
    }
    /// `totals` (REST).
    pub fn totals(mut self, t: TaskTotals) -> Self {
        self.totals = Some(t);
        self
    }
    /// `totals.run_time_ms` (REST), the other totals as they were (zero if none).
    pub fn run_time(mut self, ms: u64) -> Self {
        self.totals
            .get_or_insert_with(TaskTotals::default)
            .run_time_ms = ms;
        self
    }
}

/// Task counts by outcome.
pub fn counts(succeeded: u64, failed: u64, killed: u64) -> TaskCounts {
    TaskCounts {
        succeeded,
        failed,
        killed,
    }
}

/// Task `id` of stage `stage_id`, attempt 0, ended: succeeded on executor `1`, launched and
/// finished at [`SUBMITTED`], no metrics, no locality.
pub fn task_end(id: u64, stage_id: u64) -> TaskEndObs {
    TaskEndObs {
        stage_id,
        attempt: 0,
        task_id: id,
        executor_id: "1".into(),
        outcome: TaskOutcome::Succeeded,
        launch_ms: SUBMITTED,
        finish_ms: SUBMITTED,
        metrics: TaskTotals::default(),
        locality: None,
    }
}

impl TaskEndObs {
    /// `executor_id`.
    pub fn executor(mut self, id: &str) -> Self {
        self.executor_id = id.into();
        self
    }
    /// `outcome`.
    pub fn outcome(mut self, o: TaskOutcome) -> Self {
        self.outcome = o;
        self
    }
    /// `launch_ms`, the duration kept.
    pub fn launched(mut self, ms: EpochMs) -> Self {
        self.finish_ms = ms + (self.finish_ms - self.launch_ms);
        self.launch_ms = ms;
        self
    }
    /// `finish_ms`.
    pub fn finished(mut self, ms: EpochMs) -> Self {
        self.finish_ms = ms;
        self
    }
    /// `finish_ms`, `ms` after launch.
    pub fn duration(mut self, ms: EpochMs) -> Self {
        self.finish_ms = self.launch_ms + ms;
        self
    }
    /// `metrics`.
    pub fn metrics(mut self, m: TaskTotals) -> Self {
        self.metrics = m;
        self
    }
    /// `metrics.run_time_ms`.
    pub fn run_time(mut self, ms: u64) -> Self {
        self.metrics.run_time_ms = ms;
        self
    }
    /// `locality`.
    pub fn locality(mut self, l: Locality) -> Self {
        self.locality = Some(l);
        self
    }
}

/// Task `id` of stage `stage_id`, attempt 0, launched on executor `1`.
pub fn task_start(id: u64, stage_id: u64) -> TaskStartObs {
    TaskStartObs {
        stage_id,
        attempt: 0,
        task_id: id,
        executor_id: "1".into(),
    }
}

impl TaskStartObs {
    /// `executor_id`.
    pub fn executor(mut self, id: &str) -> Self {
        self.executor_id = id.into();
        self
    }
}

/// Executor `id`, active, nothing else known.
pub fn executor(id: &str) -> ExecutorObs {
    ExecutorObs {
        executor_id: id.into(),
        active: Some(true),
        ..Default::default()
    }
}

impl ExecutorObs {
    /// `active`.
    pub fn active(mut self, a: impl Into<Option<bool>>) -> Self {
        self.active = a.into();
        self
    }
    /// `total_cores`.
    pub fn cores(mut self, n: u64) -> Self {
        self.total_cores = Some(n);
        self
    }
    /// `add_ms`.
    pub fn added(mut self, ms: EpochMs) -> Self {
        self.add_ms = Some(ms);
        self
    }
    /// `remove_ms`, and no longer active.
    pub fn removed(mut self, ms: EpochMs) -> Self {
        self.remove_ms = Some(ms);
        self.active = Some(false);
        self
    }
    /// `remove_reason`.
    pub fn reason(mut self, r: &str) -> Self {
        self.remove_reason = Some(r.into());
        self
    }
}

/// SQL execution `id`: running, no description or jobs, submitted at [`SUBMITTED`].
pub fn sql(id: u64) -> SqlObs {
    SqlObs {
        execution_id: id,
        description: None,
        status: SqlStatus::Running,
        submission_ms: Some(SUBMITTED),
        duration_ms: None,
        job_ids: vec![],
    }
}

impl SqlObs {
    /// `description`.
    pub fn desc(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
    /// `status`; a terminal one ends at [`ENDED`] (its duration from [`SUBMITTED`]), a running
    /// one has no duration.
    pub fn status(mut self, s: SqlStatus) -> Self {
        self.status = s;
        self.duration_ms = s.is_terminal().then_some((ENDED - SUBMITTED) as u64);
        self
    }
    /// `submission_ms`.
    pub fn submitted(mut self, ms: EpochMs) -> Self {
        self.submission_ms = Some(ms);
        self
    }
    /// `duration_ms`.
    pub fn duration(mut self, ms: u64) -> Self {
        self.duration_ms = Some(ms);
        self
    }
    /// `job_ids`.
    pub fn jobs(mut self, ids: impl IntoIterator<Item = u64>) -> Self {
        self.job_ids = ids.into_iter().collect();
        self
    }
}

/// Application `id`, nothing else known.
pub fn app(id: &str) -> AppObs {
    AppObs {
        app_id: id.into(),
        ..Default::default()
    }
}

impl AppObs {
    /// `name`.
    pub fn name(mut self, n: &str) -> Self {
        self.name = Some(n.into());
        self
    }
    /// `start_ms`.
    pub fn started(mut self, ms: EpochMs) -> Self {
        self.start_ms = Some(ms);
        self
    }
    /// `end_ms`.
    pub fn ended_at(mut self, ms: impl Into<Option<EpochMs>>) -> Self {
        self.end_ms = ms.into();
        self
    }
    /// `exit_code`.
    pub fn exit(mut self, code: i32) -> Self {
        self.exit_code = Some(code);
        self
    }
}

/// A stage attempt's task-duration summary: `median_ms` and `max_ms`, final (fetched after the
/// attempt ended) and of task durations.
pub fn summary(median_ms: f64, max_ms: f64) -> TaskSummaryObs {
    TaskSummaryObs {
        median_ms,
        max_ms,
        ended: true,
        of_duration: true,
    }
}

impl TaskSummaryObs {
    /// `ended`.
    pub fn ended(mut self, e: bool) -> Self {
        self.ended = e;
        self
    }
    /// `of_duration`.
    pub fn of_duration(mut self, d: bool) -> Self {
        self.of_duration = d;
        self
    }
}

/// Streaming query `query_id` started, without name or run id.
pub fn query_started(query_id: &str) -> StreamingStartObs {
    StreamingStartObs {
        query_id: query_id.into(),
        name: None,
        run_id: None,
    }
}

impl StreamingStartObs {
    /// `name`.
    pub fn name(mut self, n: &str) -> Self {
        self.name = Some(n.into());
        self
    }
    /// `run_id`.
    pub fn run(mut self, id: &str) -> Self {
        self.run_id = Some(id.into());
        self
    }
}

/// Cached dataset `id` as REST lists it: 4 partitions, none cached, named with a two-line plan
/// whose first line is `*(1) Project [k#{id}L]`.
pub fn rdd(id: u64) -> RddObs {
    RddObs {
        rdd_id: id,
        name: format!("*(1) Project [k#{id}L]\n+- *(1) Range (0, 10, step=1, splits=4)\n"),
        partitions: 4,
        ..Default::default()
    }
}

impl RddObs {
    /// `name`.
    pub fn name(mut self, n: &str) -> Self {
        self.name = n.into();
        self
    }
    /// `cached_partitions`.
    pub fn cached(mut self, n: u64) -> Self {
        self.cached_partitions = n;
        self
    }
    /// `memory_bytes`.
    pub fn memory(mut self, b: u64) -> Self {
        self.memory_bytes = b;
        self
    }
    /// `disk_bytes`.
    pub fn disk(mut self, b: u64) -> Self {
        self.disk_bytes = b;
        self
    }
}

/// A persisted RDD `id` named `name` of 4 partitions, as a stage submission lists it.
pub fn rdd_info(id: u64, name: &str) -> RddInfoObs {
    RddInfoObs {
        rdd_id: id,
        name: name.into(),
        partitions: 4,
    }
}

/// Block `partition` of RDD `rdd_id` on executor `executor_id`: removed (no bytes) until
/// `.memory(..)` or `.disk(..)` stores some.
pub fn block(rdd_id: u64, partition: u64, executor_id: &str) -> BlockObs {
    BlockObs {
        rdd_id,
        partition,
        executor_id: executor_id.into(),
        ..Default::default()
    }
}

impl BlockObs {
    /// `memory_bytes` (stored while it or `disk_bytes` is not 0).
    pub fn memory(mut self, b: u64) -> Self {
        self.memory_bytes = b;
        self.stored = self.memory_bytes > 0 || self.disk_bytes > 0;
        self
    }
    /// `disk_bytes` (stored while it or `memory_bytes` is not 0).
    pub fn disk(mut self, b: u64) -> Self {
        self.disk_bytes = b;
        self.stored = self.memory_bytes > 0 || self.disk_bytes > 0;
        self
    }
}

// --- Reads ---

/// One application as the read view shows it ([`AppView`]), owned: read once, at one time.
// Read whole: a test checks some fields, a failure message shows them all.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct App {
    /// Model key: [`app_key`] of id and attempt; the name, for a name's state.
    pub key: String,
    /// Application id (empty for a name's state).
    pub id: String,
    /// Attempt id.
    pub attempt: Option<String>,
    /// Application name.
    pub name: String,
    /// A name's state across runs (`model.aggregate_by: app_name`), not one run.
    pub by_name: bool,
    /// Start time.
    pub start_ms: Option<EpochMs>,
    /// End time.
    pub end_ms: Option<EpochMs>,
    /// Ended.
    pub ended: bool,
    /// When the model first saw it: its counters count from then.
    pub created_ms: EpochMs,
    /// Runs ended by status (`succeeded`, `failed`, `unknown`).
    pub runs: BTreeMap<&'static str, u64>,
    /// Run durations (a name's state only).
    pub run_duration: Option<Hist>,
    /// Core-seconds allocated per run (a name's state only).
    pub run_cost: Option<Hist>,
    /// The counted run that ended last (a name's state only, once one ended).
    pub last_run: Option<LastRunView>,
    /// Job groups, in label order ([`AppView::groups`]).
    pub groups: Vec<Group>,
    /// Stage attempts with per-stage values ([`AppView::stages`]), at the read's time.
    pub stages: Vec<Stage>,
    /// Stage attempts held, with per-stage values or not ([`AppView::stage_count`]).
    pub stage_count: usize,
    /// Executors, in id order.
    pub executors: Vec<Executor>,
    /// Executors by state (`active`, `dead`); empty for a name's state.
    pub executor_states: BTreeMap<&'static str, u64>,
    /// Executors removed, by normalised reason.
    pub executors_removed: BTreeMap<&'static str, u64>,
    /// SQL job groups and descriptions, in label order.
    pub sql: Vec<Sql>,
    /// The latest plan fingerprint per job group and description.
    pub fingerprints: Vec<(String, String, Latest)>,
    /// Streaming queries by label.
    pub streams: BTreeMap<String, StreamAgg>,
    /// Core-seconds allocated and used.
    pub cost: CostView,
    /// Cached datasets, by RDD id.
    pub datasets: Vec<RddView>,
}

/// A job group's counters and histograms ([`super::view::GroupView`]), owned.
#[derive(Debug, Clone)]
pub struct Group {
    /// `job_group`.
    pub group: String,
    /// `job_description`.
    pub desc: String,
    /// Jobs ended by status (`succeeded`, `failed`).
    pub jobs: BTreeMap<&'static str, u64>,
    /// Stage attempts ended by status (`complete`, `failed`, `skipped`).
    pub stages: BTreeMap<&'static str, u64>,
    /// Jobs running.
    pub active_jobs: u64,
    /// Stage attempts running.
    pub active_stages: u64,
    /// Task outcomes.
    pub tasks: TaskCounts,
    /// Task metric sums.
    pub totals: TaskTotals,
    /// Job durations by status (empty when the view gives none).
    pub job_duration: BTreeMap<&'static str, Hist>,
    /// Stage durations by status (empty when the view gives none).
    pub stage_duration: BTreeMap<&'static str, Hist>,
    /// Task durations.
    pub task_duration: Option<Hist>,
    /// Skew ratios of complete stage attempts.
    pub skew_ratio: Option<Hist>,
    /// Task ends by locality label (`PROCESS_LOCAL`, …, `other`); empty when the view gives
    /// none.
    pub locality: BTreeMap<&'static str, u64>,
    /// The event log reports on the application.
    pub from_log: bool,
}

/// A stage attempt with per-stage values ([`super::view::StageView`]), owned.
// Read whole: a test checks some fields, a failure message shows them all.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct Stage {
    /// `job_group`.
    pub group: String,
    /// `job_description`.
    pub desc: String,
    /// Stage id.
    pub stage_id: u64,
    /// Attempt.
    pub attempt: u32,
    /// Name.
    pub name: String,
    /// Running.
    pub active: bool,
    /// Tasks running.
    pub running_tasks: u64,
    /// Seconds since a task last ended (or since submission), for an active stage.
    pub stalled_seconds: Option<f64>,
    /// Longest / median task duration.
    pub skew_ratio: Option<f64>,
}

/// An executor ([`super::view::ExecutorView`]), owned.
// Read whole: a test checks some fields, a failure message shows them all.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct Executor {
    /// Executor id.
    pub id: String,
    /// Totals, both sources merged.
    pub totals: ExecutorTotals,
    /// Tasks running.
    pub running_tasks: u64,
    /// Task slots.
    pub max_tasks: Option<u64>,
    /// Peak memory by type.
    pub peak_memory: BTreeMap<String, u64>,
}

/// SQL executions of one job group and description ([`super::view::SqlView`]), owned.
#[derive(Debug, Clone)]
pub struct Sql {
    /// `job_group`.
    pub group: String,
    /// `description`.
    pub desc: String,
    /// Executions ended by status (`completed`, `failed`).
    pub ended: BTreeMap<&'static str, u64>,
    /// Executions running.
    pub running: u64,
    /// Durations by status; `None` for a key without counters of its own (a running execution
    /// whose group is not known yet).
    pub duration: Option<BTreeMap<&'static str, Hist>>,
    /// Final plans of its ended executions; `None` exactly when `duration` is.
    pub plans: Option<PlanAgg>,
}

/// Which job group a read looks for.
pub trait GroupSel: std::fmt::Debug {
    /// Whether `g` is one.
    fn matches(&self, g: &Group) -> bool;
}

/// By `job_group`, whatever the description.
impl GroupSel for &str {
    fn matches(&self, g: &Group) -> bool {
        g.group == *self
    }
}

/// By `job_group` and `job_description`.
impl GroupSel for (&str, &str) {
    fn matches(&self, g: &Group) -> bool {
        g.group == self.0 && g.desc == self.1
    }
}

/// By `job_description`, whatever the group.
#[derive(Debug)]
pub struct Desc<'a>(pub &'a str);

impl GroupSel for Desc<'_> {
    fn matches(&self, g: &Group) -> bool {
        g.desc == self.0
    }
}

/// The view's plan fingerprints, each with its newest execution (`fingerprint` the value
/// exported).
fn fingerprints(a: &AppView<'_>) -> Vec<(String, String, super::plan::Latest)> {
    a.plan_fingerprints()
        .into_iter()
        .map(|(g, d, l, fp)| {
            let l = super::plan::Latest {
                fingerprint: fp,
                ..l
            };
            (g.to_string(), d.to_string(), l)
        })
        .collect()
}

impl App {
    /// What `a` shows, with stage stall times at `now`.
    pub fn of(a: &AppView<'_>, now: EpochMs) -> App {
        let attempt = a.attempt().map(|s| s.to_string());
        App {
            key: if a.by_name() {
                a.name().to_string()
            } else {
                app_key(a.id(), attempt.as_deref())
            },
            id: a.id().to_string(),
            attempt,
            name: a.name().to_string(),
            by_name: a.by_name(),
            start_ms: a.start_ms(),
            end_ms: a.end_ms(),
            ended: a.ended(),
            created_ms: a.created_ms(),
            runs: a.runs().into_iter().collect(),
            run_duration: a.run_duration().cloned(),
            run_cost: a.run_cost().cloned(),
            last_run: a.last_run(),
            groups: a
                .groups()
                .into_iter()
                .map(|g| Group {
                    group: g.key.0.to_string(),
                    desc: g.key.1.to_string(),
                    jobs: g.jobs.into_iter().collect(),
                    stages: g.stages.into_iter().collect(),
                    active_jobs: g.active_jobs,
                    active_stages: g.active_stages,
                    tasks: g.tasks,
                    totals: g.totals,
                    job_duration: g.job_duration.cloned().unwrap_or_default(),
                    stage_duration: g.stage_duration.cloned().unwrap_or_default(),
                    task_duration: g.task_duration.cloned(),
                    skew_ratio: g.skew_ratio.cloned(),
                    locality: g
                        .locality
                        .map(|l| Locality::ALL.iter().map(|k| k.label()).zip(l).collect())
                        .unwrap_or_default(),
                    from_log: g.from_log,
                })
                .collect(),
            stages: a
                .stages(now)
                .into_iter()
                .map(|s| Stage {
                    group: s.group.0.to_string(),
                    desc: s.group.1.to_string(),
                    stage_id: s.stage_id,
                    attempt: s.attempt,
                    name: s.name.to_string(),
                    active: s.active,
                    running_tasks: s.running_tasks,
                    stalled_seconds: s.stalled_seconds,
                    skew_ratio: s.skew_ratio,
                })
                .collect(),
            stage_count: a.stage_count(),
            executors: a
                .executors()
                .into_iter()
                .map(|e| Executor {
                    id: e.id.to_string(),
                    totals: e.totals,
                    running_tasks: e.running_tasks,
                    max_tasks: e.max_tasks,
                    peak_memory: e.peak_memory.clone(),
                })
                .collect(),
            executor_states: a.executor_states().into_iter().flatten().collect(),
            executors_removed: a.executors_removed().collect(),
            sql: a
                .sql()
                .into_iter()
                .map(|q| Sql {
                    group: q.job_group.to_string(),
                    desc: q.description.to_string(),
                    ended: q.ended.into_iter().collect(),
                    running: q.running,
                    duration: q.duration.cloned(),
                    plans: q.plans.cloned(),
                })
                .collect(),
            fingerprints: fingerprints(a),
            streams: a
                .streaming()
                .map(|(q, s)| (q.to_string(), s.clone()))
                .collect(),
            cost: a.cost(),
            datasets: a.cached_datasets(),
        }
    }

    /// The one job group `sel` picks; panics if none or several.
    pub fn group(&self, sel: impl GroupSel) -> &Group {
        let found: Vec<&Group> = self.groups.iter().filter(|g| sel.matches(g)).collect();
        let keys: Vec<(&str, &str)> = self.groups.iter().map(|g| (&*g.group, &*g.desc)).collect();
        match found[..] {
            [g] => g,
            _ => panic!(
                "{sel:?} picks {} groups in {}: {keys:?}",
                found.len(),
                self.key
            ),
        }
    }

    /// The stage attempt with per-stage values of stage `id`, if any; panics if several
    /// attempts have them.
    pub fn stage(&self, id: u64) -> Option<&Stage> {
        let found: Vec<&Stage> = self.stages.iter().filter(|s| s.stage_id == id).collect();
        assert!(found.len() <= 1, "stage {id}: {} attempts", found.len());
        found.first().copied()
    }

    /// The ids of the stages with per-stage values that `keep` keeps.
    pub fn stage_ids(&self, keep: impl Fn(&Stage) -> bool) -> BTreeSet<u64> {
        self.stages
            .iter()
            .filter(|s| keep(s))
            .map(|s| s.stage_id)
            .collect()
    }

    /// Executor `id`, if held.
    pub fn executor(&self, id: &str) -> Option<&Executor> {
        self.executors.iter().find(|e| e.id == id)
    }

    /// The SQL executions of job group `group` and description `desc`, if any.
    pub fn sql_desc(&self, group: &str, desc: &str) -> Option<&Sql> {
        self.sql.iter().find(|q| q.group == group && q.desc == desc)
    }

    /// Cached dataset `rdd_id`, if shown.
    pub fn dataset(&self, rdd_id: u64) -> Option<&RddView> {
        self.datasets.iter().find(|d| d.rdd_id == rdd_id)
    }
}
