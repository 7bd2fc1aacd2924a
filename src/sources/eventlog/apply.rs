//! Applying parsed events to the model, per application log.
//!
//! Some events only make sense with what came before: a job end carries no job group or stage
//! ids, a stage completion no properties, a SQL end no start time. [`LogApp`] keeps the open
//! jobs, stages and SQL executions of one log (dropped when they end) and completes the
//! observations. It also settles the application id: Spark's `App ID` from
//! `SparkListenerApplicationStart` when the log has one (the name of the file is sanitised and
//! may carry an attempt suffix), else the id the name implies. Events seen before the id is known
//! wait, up to [`MAX_WAITING`] of them.

use std::collections::HashMap;
use std::fmt::Display;

use spark_exporter_core::hash::{Map, Set};

use crate::model::attribution::is_plan_dump;
use crate::model::{AppObs, JobObs, JobStatus, Observer, SqlObs, SqlPlanObs, SqlStatus};
use crate::telemetry::Telemetry;

use super::parser::{parse_line, Event, ParseError};
use super::tailer::LineSink;

/// Events kept while waiting for `SparkListenerApplicationStart`.
pub const MAX_WAITING: usize = 1024;

/// Spark Connect operations remembered at once (each is forgotten when it closes); past this,
/// the oldest are forgotten, so a server that never closes them stays bounded.
const MAX_CONNECT_OPS: usize = 4096;

/// What a Spark Connect operation gives its jobs and SQL executions.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct ConnectOp {
    /// Its statement, readable (SQL text or first relation).
    statement: Option<String>,
    /// The session's tags as the user wrote them.
    session_tags: Vec<String>,
}

impl ConnectOp {
    fn new(statement: Option<String>, session_tags: Vec<String>) -> ConnectOp {
        ConnectOp {
            statement,
            session_tags,
        }
    }
}

/// Per-error-kind log lines per log file before further ones go to `debug`.
const WARN_LIMIT: u64 = 10;

/// A stage attempt's job group and description: `(stage id, attempt, group, description)`.
type StageLabels = (u64, u32, Option<String>, Option<String>);

/// [`LogApp`]'s state in the middle of a log, as a value (`LogApp::state`): what a restart
/// needs to read on from where the log was.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogAppState {
    app_id: String,
    events: u64,
    spark_version: Option<String>,
    jobs: Vec<JobObs>,
    stages: Vec<StageLabels>,
    sql: Vec<SqlObs>,
    connect_ops: connect_ops::Ops,
    plans: open_plans::Plans,
}

// Compared in a reshard (a checkpoint's positions). Its values hold no NaN.
impl Eq for LogAppState {}

/// The state of one application's log.
#[derive(Debug)]
pub struct LogApp {
    name_id: String,
    /// Spark events read (known, ignored or unknown kinds): none means not an event log.
    events: u64,
    /// Shared, so applying an event borrows it without a copy.
    app_id: Option<std::sync::Arc<str>>,
    spark_version: Option<String>,
    waiting: Vec<Event>,
    jobs: Map<u64, JobObs>,
    stages: Map<(u64, u32), (Option<String>, Option<String>)>,
    sql: Map<u64, SqlObs>,
    /// Spark Connect operations by job tag, in arrival order.
    connect_ops: connect_ops::Ops,
    /// Plans of the SQL executions not ended yet.
    plans: open_plans::Plans,
}

impl LogApp {
    /// State for a log whose name implies the application id `name_id`.
    pub fn new(name_id: String) -> LogApp {
        LogApp {
            name_id,
            events: 0,
            app_id: None,
            spark_version: None,
            waiting: Vec::new(),
            jobs: Map::default(),
            stages: Map::default(),
            sql: Map::default(),
            connect_ops: connect_ops::Ops::default(),
            plans: open_plans::Plans::default(),
        }
    }

    /// State for a log a checkpoint says was read to its end, its events recorded under
    /// `app_id`: nothing is read of it again (see `positions.rs`).
    pub fn resumed(name_id: &str, app_id: &str) -> LogApp {
        let mut a = LogApp::new(name_id.to_string());
        a.app_id = Some(app_id.into());
        a.events = 1;
        a
    }

    /// Its parsing state, to resume reading the log where it is now after a restart
    /// (`positions.rs`): `None` until the application is settled, or while events wait for
    /// its start (a log is resumed only past its `ApplicationStart`).
    pub fn state(&self) -> Option<LogAppState> {
        if self.app_id.is_none() || !self.waiting.is_empty() {
            return None;
        }
        let mut jobs: Vec<JobObs> = self.jobs.values().cloned().collect();
        jobs.sort_by_key(|j| j.job_id);
        let mut stages: Vec<StageLabels> = self
            .stages
            .iter()
            .map(|(k, v)| (k.0, k.1, v.0.clone(), v.1.clone()))
            .collect();
        stages.sort_by_key(|s| (s.0, s.1));
        let mut sql: Vec<SqlObs> = self.sql.values().cloned().collect();
        sql.sort_by_key(|s| s.execution_id);
        Some(LogAppState {
            app_id: self.app_id.as_deref().unwrap_or_default().to_string(),
            events: self.events,
            spark_version: self.spark_version.clone(),
            jobs,
            stages,
            sql,
            connect_ops: self.connect_ops.clone(),
            plans: self.plans.clone(),
        })
    }

    /// A log's parsing state as [`Self::state`] gave it, for a log whose name implies
    /// `name_id`.
    pub fn from_state(name_id: &str, s: LogAppState) -> LogApp {
        let mut a = LogApp::new(name_id.to_string());
        a.app_id = Some(s.app_id.into());
        a.events = s.events;
        a.spark_version = s.spark_version;
        a.jobs = s.jobs.into_iter().map(|j| (j.job_id, j)).collect();
        a.stages = s
            .stages
            .into_iter()
            .map(|(id, att, g, d)| ((id, att), (g, d)))
            .collect();
        a.sql = s.sql.into_iter().map(|q| (q.execution_id, q)).collect();
        a.connect_ops = s.connect_ops;
        a.plans = s.plans;
        a
    }

    /// The application id its name implies.
    pub fn name_id(&self) -> &str {
        &self.name_id
    }

    /// A Spark Connect operation's job: its statement instead of a plan dump, and the session's
    /// tags as the user wrote them (Spark 3.5 records them in no job tag).
    fn connect_job(&self, job: &mut JobObs) {
        let Some(op) = self.connect_ops.find(&job.tags) else {
            return;
        };
        let op = op.clone();
        self.connect_description(&job.tags, &mut job.description);
        for t in op.session_tags {
            if !job.tags.contains(&t) {
                job.tags.push(t);
            }
        }
    }

    /// The statement of the operation one of `tags` names, instead of a plan dump.
    fn connect_description(&self, tags: &[String], description: &mut Option<String>) {
        if let Some(op) = self.connect_ops.find(tags) {
            if description.as_deref().is_none_or(is_plan_dump) && op.statement.is_some() {
                description.clone_from(&op.statement);
            }
        }
    }

    /// Spark events read so far (of any kind): 0 for a file that holds none, which is not an
    /// event log.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// True once the application id is known (its start read, or settled on the name's).
    pub fn settled(&self) -> bool {
        self.app_id.is_some()
    }

    /// The application id events are recorded under (the name-implied one until settled).
    pub fn app_id(&self) -> &str {
        self.app_id.as_deref().unwrap_or(&self.name_id)
    }

    /// Settle on the name-implied id and apply the events that waited (end of a log that never
    /// had an application start).
    pub fn settle(&mut self, obs: &dyn Observer) {
        if self.app_id.is_none() {
            self.app_id = Some(self.name_id.as_str().into());
            self.upsert_app(obs, AppObs::default());
            for ev in std::mem::take(&mut self.waiting) {
                self.apply(ev, obs);
            }
        }
    }

    fn upsert_app(&self, to: &dyn Observer, mut obs: AppObs) {
        obs.app_id = self.app_id().to_string();
        obs.spark_version = obs.spark_version.or_else(|| self.spark_version.clone());
        to.upsert_app(&obs);
    }

    /// Apply one event.
    pub fn apply(&mut self, ev: Event, obs: &dyn Observer) {
        match ev {
            Event::AppStart {
                mut app,
                attempt_id,
            } => {
                if self.app_id.is_none() {
                    let id = std::mem::take(&mut app.app_id);
                    // An attempt (YARN) is its own run: `{id}/{attempt}` in the model.
                    self.app_id = Some(if id.is_empty() {
                        self.name_id.as_str().into()
                    } else {
                        crate::model::app_key(&id, attempt_id.as_deref()).into()
                    });
                }
                self.upsert_app(obs, app);
                for ev in std::mem::take(&mut self.waiting) {
                    self.apply(ev, obs);
                }
                return;
            }
            Event::LogStart { spark_version } => {
                self.spark_version = Some(spark_version);
                if self.app_id.is_some() {
                    self.upsert_app(obs, AppObs::default());
                }
                return;
            }
            ev if self.app_id.is_none() => {
                self.waiting.push(ev);
                if self.waiting.len() >= MAX_WAITING {
                    self.settle(obs);
                }
                return;
            }
            _ => {}
        }
        let app_id = self
            .app_id
            .clone()
            .unwrap_or_else(|| self.name_id.as_str().into());
        self.apply_to(&app_id, ev, obs);
    }

    /// Apply one event of application `app`, whose id is settled.
    fn apply_to(&mut self, app: &str, ev: Event, obs: &dyn Observer) {
        match ev {
            Event::AppStart { .. } | Event::LogStart { .. } => {}
            Event::AppEnd { end_ms, exit_code } => self.upsert_app(
                obs,
                AppObs {
                    end_ms: Some(end_ms),
                    exit_code,
                    ..AppObs::default()
                },
            ),
            Event::ConnectOperation {
                job_tag,
                statement,
                session_tags,
            } => self
                .connect_ops
                .insert(job_tag, ConnectOp::new(statement, session_tags)),
            Event::ConnectOperationClosed { job_tag } => self.connect_ops.remove(&job_tag),
            Event::JobStart { mut job, parents } => {
                self.connect_job(&mut job);
                obs.stage_parents(app, job.job_id, &parents);
                obs.upsert_job(app, &job);
                self.jobs.insert(job.job_id, job);
            }
            Event::JobEnd {
                job_id,
                completion_ms,
                succeeded,
            } => {
                let job = self.job_ended(job_id, completion_ms, succeeded);
                obs.upsert_job(app, &job);
            }
            Event::StageSubmitted(s, rdds) => {
                obs.upsert_stage(app, &s);
                rdds.iter().for_each(|r| obs.rdd_persisted(app, r));
                self.stages
                    .insert((s.stage_id, s.attempt), (s.job_group, s.description));
            }
            Event::StageCompleted(mut s, records) => {
                obs.stage_records(app, &records);
                if let Some((group, desc)) = self.stages.remove(&(s.stage_id, s.attempt)) {
                    s.job_group = s.job_group.or(group);
                    s.description = s.description.or(desc);
                }
                obs.upsert_stage(app, &s);
            }
            Event::TaskStart(t) => obs.task_start(app, &t),
            Event::TaskEnd(t) => obs.task_end(app, &t),
            Event::Executor(e) => obs.upsert_executor(app, &e),
            ev @ (Event::SqlStart { .. }
            | Event::SqlEnd { .. }
            | Event::SqlPlanUpdate { .. }
            | Event::SqlDriverAccums { .. }) => self.apply_sql(ev, app, obs),
            Event::StreamingProgress(p) => obs.streaming_progress(app, &p),
            Event::StreamingStarted(q) => obs.streaming_started(app, &q),
            ev @ (Event::AppProps(_) | Event::BlockUpdated(_) | Event::RddUnpersisted { .. }) => {
                cost_cache(app, ev, obs)
            }
            Event::StagePeaks(p) => obs.stage_executor_peaks(app, &p),
        }
    }

    /// A SQL execution's start or end, a new plan of it, or its driver's accumulator values.
    fn apply_sql(&mut self, ev: Event, app: &str, obs: &dyn Observer) {
        match ev {
            Event::SqlStart {
                execution_id,
                mut description,
                time_ms,
                tags,
                plan,
                settings,
            } => {
                self.connect_description(&tags, &mut description);
                self.sql_started(app, obs, execution_id, description, time_ms);
                self.plans.started(execution_id, plan);
                if !settings.is_empty() {
                    obs.sql_settings(app, execution_id, &settings);
                }
            }
            Event::SqlPlanUpdate { execution_id, plan } => {
                self.plans.updated(execution_id, plan);
            }
            Event::SqlDriverAccums {
                execution_id,
                updates,
            } => self.plans.accums(execution_id, &updates),
            Event::SqlEnd {
                execution_id,
                time_ms,
                error,
            } => {
                let s = self.sql_ended(execution_id, time_ms, error.is_some());
                obs.upsert_sql(app, &s);
                // After its end, so the plan counts under the execution's final labels.
                if let Some(plan) = self.plans.ended(execution_id) {
                    obs.sql_plan(app, &SqlPlanObs { execution_id, plan });
                }
            }
            _ => {}
        }
    }

    fn sql_started(
        &mut self,
        app: &str,
        obs: &dyn Observer,
        execution_id: u64,
        description: Option<String>,
        time_ms: Option<i64>,
    ) {
        let s = SqlObs {
            execution_id,
            description,
            status: SqlStatus::Running,
            submission_ms: time_ms,
            duration_ms: None,
            job_ids: vec![],
        };
        obs.upsert_sql(app, &s);
        self.sql.insert(execution_id, s);
    }

    /// The job `job_id` as it ended, completed from its start event when the log had one.
    fn job_ended(&mut self, job_id: u64, completion_ms: Option<i64>, succeeded: bool) -> JobObs {
        let mut job = self.jobs.remove(&job_id).unwrap_or(JobObs {
            job_id,
            job_group: None,
            description: None,
            status: JobStatus::Running,
            submission_ms: None,
            completion_ms: None,
            stage_ids: Vec::new(),
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        });
        job.status = if succeeded {
            JobStatus::Succeeded
        } else {
            JobStatus::Failed
        };
        job.completion_ms = completion_ms;
        job
    }

    /// The SQL execution `execution_id` as it ended, with its duration when its start is known.
    fn sql_ended(&mut self, execution_id: u64, time_ms: Option<i64>, failed: bool) -> SqlObs {
        let mut s = self.sql.remove(&execution_id).unwrap_or(SqlObs {
            execution_id,
            description: None,
            status: SqlStatus::Running,
            submission_ms: None,
            duration_ms: None,
            job_ids: vec![],
        });
        s.status = if failed {
            SqlStatus::Failed
        } else {
            SqlStatus::Completed
        };
        s.duration_ms = match (s.submission_ms, time_ms) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).max(0) as u64),
            _ => None,
        };
        s
    }
}

/// The events of the cost and cache metrics: application properties, RDD blocks, unpersists.
fn cost_cache(app: &str, ev: Event, obs: &dyn Observer) {
    match ev {
        Event::AppProps(p) => obs.set_app_props(app, &p),
        Event::BlockUpdated(b) => obs.block_updated(app, &b),
        Event::RddUnpersisted { rdd_id } => obs.rdd_unpersisted(app, rdd_id),
        _ => {}
    }
}

/// Counters of one polling step, reported to telemetry once per step.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadStats {
    /// Decoded bytes (newlines included).
    pub bytes: u64,
    /// Event lines read (used or not).
    pub events: u64,
    /// Newest event timestamp seen.
    pub newest_ms: Option<i64>,
}

/// Warning budget of one log file, per error kind.
#[derive(Debug, Default)]
pub struct Warnings {
    counts: HashMap<&'static str, u64>,
}

impl Warnings {
    /// Count a problem and log it (the first few per kind at `warn`, the rest at `debug`).
    pub fn report(&mut self, t: &Telemetry, file: &str, kind: &'static str, detail: &dyn Display) {
        t.eventlog_error(kind);
        let n = self.counts.entry(kind).or_default();
        *n += 1;
        if *n <= WARN_LIMIT {
            tracing::warn!(file, kind, n = *n, %detail, "Skipped bad event-log input.");
        } else {
            tracing::debug!(file, kind, n = *n, %detail, "Skipped bad event-log input.");
        }
    }
}

/// Where reading a log goes: events to the model (through its observer), problems and
/// progress to telemetry.
#[derive(Clone, Copy)]
pub struct Out<'a> {
    /// The model's event-log observer.
    pub observer: &'a dyn Observer,
    /// The exporter's own metrics.
    pub telemetry: &'a Telemetry,
}

/// Events parsed and applied together, under one take of the model's lock
/// ([`Observer::batch`]): enough that readers on two threads seldom meet at the lock, few
/// enough that the events waiting stay small.
const BATCH: usize = 64;

/// Most events parsed and not applied yet: from [`BATCH`] on, a reader that finds the model's
/// lock taken by another goes on parsing ([`Observer::try_batch`]) rather than sleep there
/// (each sleep and wake-up is two system calls and a context switch); from here on it waits.
const MAX_PENDING: usize = 16 * BATCH;

/// The [`LineSink`] of one log: parse, apply, count. Events are parsed one line at a time and
/// applied [`BATCH`] at a time; every event parsed is applied by the time it is dropped.
pub struct Applier<'a> {
    app: &'a mut LogApp,
    out: Out<'a>,
    /// The file, for log lines.
    file: &'a str,
    stats: &'a mut ReadStats,
    /// Warning budget.
    pub warnings: &'a mut Warnings,
    /// Parsed, not applied yet.
    pending: Vec<Event>,
}

impl<'a> Applier<'a> {
    /// The sink of a log's application `app` in file `file`, counting into `stats`.
    pub fn new(
        app: &'a mut LogApp,
        out: Out<'a>,
        file: &'a str,
        stats: &'a mut ReadStats,
        warnings: &'a mut Warnings,
    ) -> Applier<'a> {
        Applier {
            app,
            out,
            file,
            stats,
            warnings,
            // Made at its working size once, not grown through 4, 8, 16 and 32 events (five
            // allocations of a few kilobytes for each log read).
            pending: Vec::with_capacity(BATCH),
        }
    }

    /// Apply the events parsed so far.
    fn flush(&mut self) {
        self.apply_pending(true);
    }

    /// [`Self::flush`] if the model's lock is free, or if [`MAX_PENDING`] events wait.
    fn flush_soon(&mut self) {
        self.apply_pending(self.pending.len() >= MAX_PENDING);
    }

    /// Apply the pending events under one take of the model's lock; unless `wait`, only if
    /// the lock is free now.
    fn apply_pending(&mut self, wait: bool) {
        if self.pending.is_empty() {
            return;
        }
        let Applier { app, pending, .. } = self;
        let f = &mut |o: &dyn Observer| {
            for ev in pending.drain(..) {
                app.apply(ev, o);
            }
        };
        if wait {
            self.out.observer.batch(f);
        } else {
            self.out.observer.try_batch(f);
        }
    }
}

impl Drop for Applier<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl LineSink for Applier<'_> {
    fn line(&mut self, line: &[u8]) {
        self.stats.bytes += line.len() as u64 + 1;
        match parse_line(line) {
            Ok(Some(ev)) => {
                self.stats.events += 1;
                self.app.events += 1;
                if let Some(t) = ev.time_ms() {
                    self.stats.newest_ms = Some(self.stats.newest_ms.map_or(t, |n| n.max(t)));
                }
                self.pending.push(ev);
                if self.pending.len() >= BATCH {
                    self.flush_soon();
                }
            }
            Ok(None) => {
                if !line.trim_ascii().is_empty() {
                    self.stats.events += 1;
                    self.app.events += 1;
                }
            }
            Err(e @ ParseError::UnknownEvent(_)) => {
                self.stats.events += 1;
                self.app.events += 1;
                self.warnings
                    .report(self.out.telemetry, self.file, e.kind(), &e);
            }
            Err(e) => self
                .warnings
                .report(self.out.telemetry, self.file, e.kind(), &e),
        }
    }

    fn error(&mut self, kind: &'static str, detail: &dyn Display) {
        self.warnings
            .report(self.out.telemetry, self.file, kind, detail);
    }
}

/// The Spark Connect operations of one log, by job tag, oldest first (bounded).
mod connect_ops {
    use std::collections::{HashMap, VecDeque};

    use super::{ConnectOp, MAX_CONNECT_OPS};

    #[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    pub(super) struct Ops {
        by_tag: HashMap<String, ConnectOp>,
        order: VecDeque<String>,
    }

    impl Ops {
        pub(super) fn insert(&mut self, tag: String, op: ConnectOp) {
            if self.by_tag.len() >= MAX_CONNECT_OPS {
                while let Some(old) = self.order.pop_front() {
                    if self.by_tag.remove(&old).is_some() {
                        break;
                    }
                }
            }
            if self.by_tag.insert(tag.clone(), op).is_none() {
                self.order.push_back(tag);
            }
        }
        pub(super) fn remove(&mut self, tag: &str) {
            self.by_tag.remove(tag);
            if self.order.len() > 2 * self.by_tag.len() + 64 {
                let live = &self.by_tag;
                self.order.retain(|t| live.contains_key(t));
            }
        }
        /// The operation one of `tags` names.
        pub(super) fn find(&self, tags: &[String]) -> Option<&ConnectOp> {
            tags.iter().find_map(|t| self.by_tag.get(t))
        }
    }
}

/// The plans of one log's SQL executions not ended yet: the latest plan (an adaptive update
/// replaces the start's; once a final plan is seen, only another final one does) and the
/// driver's accumulator values, summed per accumulator as Spark's status store sums them, from
/// which adaptive execution's numbers are read when the execution ends. Bounded: past
/// [`MAX_OPEN_PLANS`] executions the oldest are dropped; an execution keeps the values of the
/// accumulators its plans name for adaptive execution, and at most [`MAX_OTHER_ACCUMS`] others
/// (a value that arrives before the plan naming it, which Spark does not do in practice).
mod open_plans {
    use std::collections::BTreeMap;

    use crate::model::plan::PlanSummary;
    use crate::sources::eventlog::sqlplan::LogPlan;

    /// Most SQL executions open at once whose plan is kept.
    pub(super) const MAX_OPEN_PLANS: usize = 1024;
    /// Most values kept per execution of accumulators its plans do not name.
    pub(super) const MAX_OTHER_ACCUMS: usize = 256;

    #[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Open {
        plan: Option<Box<LogPlan>>,
        /// Accumulators the plans seen name for adaptive execution.
        named: super::Set<u64>,
        accums: super::Map<u64, u64>,
    }

    impl Open {
        fn set(&mut self, plan: Box<LogPlan>) {
            self.named.extend(plan.aqe.iter().map(|(_, a)| *a));
            self.plan = Some(plan);
        }
    }

    #[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    pub(super) struct Plans {
        open: BTreeMap<u64, Open>,
    }

    impl Plans {
        fn open(&mut self, id: u64) -> &mut Open {
            if !self.open.contains_key(&id) && self.open.len() >= MAX_OPEN_PLANS {
                self.open.pop_first();
            }
            self.open.entry(id).or_default()
        }

        pub(super) fn started(&mut self, id: u64, plan: Option<Box<LogPlan>>) {
            let o = self.open(id);
            if let Some(p) = plan {
                o.set(p);
            }
        }

        pub(super) fn updated(&mut self, id: u64, plan: Box<LogPlan>) {
            let o = self.open(id);
            if plan.is_final || !o.plan.as_ref().is_some_and(|p| p.is_final) {
                o.set(plan);
            }
        }

        pub(super) fn accums(&mut self, id: u64, updates: &[(u64, u64)]) {
            let Some(o) = self.open.get_mut(&id) else {
                return;
            };
            for &(a, v) in updates {
                let other = o.accums.len().saturating_sub(o.named.len());
                if o.named.contains(&a) || o.accums.contains_key(&a) || other < MAX_OTHER_ACCUMS {
                    let n = o.accums.entry(a).or_default();
                    *n = n.saturating_add(v);
                }
            }
        }

        /// The execution's final plan with adaptive execution's numbers; it is forgotten.
        pub(super) fn ended(&mut self, id: u64) -> Option<PlanSummary> {
            let o = self.open.remove(&id)?;
            let plan = o.plan?;
            Some(plan.resolve(|a| o.accums.get(&a).copied()))
        }
    }
}
