//! Polling one application: a full read the first time, then only what changed.
//!
//! Per poll, in order (jobs before stages, so the model knows each stage's job first):
//! - jobs: `/jobs?status=running`; jobs that were running and are no longer listed are fetched one
//!   by one (`/jobs/{id}`) for their final state; new ids are probed (see [`super::tracker`]).
//! - stages: `/stages?status=active&status=pending&details=false`; stages that left that list are
//!   fetched one by one (`/stages/{id}?details=false`, every attempt); new ids are probed. Pending
//!   stages are listed too so a stage that goes pending -> skipped is noticed.
//! - task summaries (`taskSummary?quantiles=0.5,1.0`) of active stages, and once for each stage
//!   that just ended.
//! - SQL: running executions re-fetched one by one, new ids probed (`/sql` has no status filter).
//! - SQL plans (`/sql/{id}?details=true&planDescription=false`): once per execution the poller
//!   first sees ended (on the first read, those that ended within the task-summary window), a
//!   slice of the backlog per poll, never per poll of a running one.
//! - executors: `/allexecutors` (small, and shows dead executors).
//! - `/environment` once, and `/storage/rdd` (small: cached datasets only), see
//!   [`super::cost_cache`].
//!
//! Idle, that is O(running jobs + unfinished stages + running SQL + executors) bytes, whatever the
//! history. Task lists are never fetched, and stage requests always say `details=false`.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;

use crate::model::obs::{EpochMs, JobStatus, StageStatus};

use super::api::{
    ExecutionData, ExecutionPlan, ExecutorSummary, JobData, StageData, TaskMetricDistributions,
};
use super::client::{Client, ClientError};
use super::convert::{self, job_obs, sql_obs, stage_obs};
use super::tracker::{IdTracker, PROBE_CAP, PROBE_LOOKAHEAD};
use crate::model::Observer;

/// `/sql` defaults to `details=true&planDescription=true`: the plan graph and the plan text are
/// most of the bytes and the exporter uses neither.
const SQL_QUERY: &str = "details=false&planDescription=false";
/// The full `/sql` list: Spark pages it, 20 executions from `offset` 0 unless `length` says
/// otherwise (`SqlResource`), so without these an application past 20 executions was listed
/// short. What the driver keeps is bounded by `spark.sql.ui.retainedExecutions`.
const SQL_LIST_QUERY: &str = "details=false&planDescription=false&offset=0&length=2147483647";
/// Most task summaries of ended stages fetched per poll (active stages are always fetched).
pub const SUMMARY_BACKLOG_PER_POLL: usize = 32;
/// An ended execution's plan graph, without the plan text.
const SQL_PLAN_QUERY: &str = "details=true&planDescription=false";
/// Most SQL plans fetched per poll (a backlog is worked off a slice per poll).
pub const PLANS_PER_POLL: usize = 32;
/// Most ended executions waiting for their plan fetch; past this the oldest are dropped.
const MAX_PLANS_DUE: usize = 4096;

/// What the poller remembers about one application between polls.
#[derive(Debug)]
pub struct PolledApp {
    /// The model's key for the attempt (`{id}/{attempt}`, or the id).
    app_id: String,
    /// `/api/v1/applications/{id}[/{attempt}]`.
    base: String,
    /// `lastUpdatedEpoch` of the read that made this state complete.
    last_updated: i64,
    /// Completed and fully read: nothing to poll until `lastUpdated` changes.
    done: bool,
    /// The listing said the application has ended.
    ended: bool,
    jobs: IdTracker,
    running_jobs: BTreeSet<u64>,
    stages: IdTracker,
    open_stages: BTreeMap<(u64, u32), StageStatus>,
    summary_due: BTreeSet<(u64, u32)>,
    sql: IdTracker,
    running_sql: BTreeSet<u64>,
    /// Executions first seen ended, waiting for their plan (fetched once each).
    plans_due: BTreeSet<u64>,
    /// `/environment` and `/storage/rdd` ([`super::cost_cache`]).
    extras: super::cost_cache::Extras,
}

/// Per-poll inputs shared by every application of a target.
#[derive(Debug, Clone, Copy)]
pub struct PollCtx {
    /// Wall clock at the start of the poll.
    pub now_ms: EpochMs,
    /// Stages that ended before `now_ms - summary_window_ms` get no task summary on a full read
    /// (their per-stage series would already have expired).
    pub summary_window_ms: i64,
    /// Most SQL plans fetched in this poll ([`PLANS_PER_POLL`]; unbounded for a one-shot read).
    pub plans_per_poll: usize,
    /// Most ended stages' task summaries fetched in this poll ([`SUMMARY_BACKLOG_PER_POLL`];
    /// unbounded for a one-shot read, which has no next poll).
    pub summaries_per_poll: usize,
    /// On the first read of an application, only executions that ended at or after this time
    /// get their plan read (`None`: all, for a one-shot read), as with task summaries.
    pub plans_since_ms: Option<EpochMs>,
}

impl PolledApp {
    /// State for an application attempt never read before: Spark's `app_id`, the model's
    /// `key` for it ([`crate::model::app_key`]) and the `attempt` id, if any.
    pub fn new(app_id: &str, key: &str, attempt: Option<&str>) -> PolledApp {
        let mut base = format!("/api/v1/applications/{}", encode(app_id));
        if let Some(a) = attempt.filter(|a| !a.is_empty()) {
            base.push('/');
            base.push_str(&encode(a));
        }
        PolledApp {
            app_id: key.to_string(),
            base,
            last_updated: 0,
            done: false,
            ended: false,
            jobs: IdTracker::new(),
            running_jobs: BTreeSet::new(),
            stages: IdTracker::new(),
            open_stages: BTreeMap::new(),
            summary_due: BTreeSet::new(),
            sql: IdTracker::new(),
            running_sql: BTreeSet::new(),
            plans_due: BTreeSet::new(),
            extras: Default::default(),
        }
    }

    /// State for a completed attempt a checkpoint says was read in full at `last_updated`
    /// (`positions.rs`): done, nothing read again while the listing says the same.
    pub fn resumed(app_id: &str, key: &str, attempt: Option<&str>, last_updated: i64) -> PolledApp {
        let mut a = PolledApp::new(app_id, key, attempt);
        a.done = true;
        a.ended = true;
        a.last_updated = last_updated;
        a
    }

    /// The `lastUpdated` it was read in full at, if it is done.
    pub fn done_at(&self) -> Option<i64> {
        self.done.then_some(self.last_updated)
    }

    /// Record whether the latest listing shows the application as ended.
    pub fn set_ended(&mut self, ended: bool) {
        self.ended = ended;
    }

    /// True once a listing showed the application as ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// True when this state no longer needs polling for a listing with these values.
    pub fn is_done(&self, completed: bool, last_updated: i64) -> bool {
        self.done && completed && last_updated == self.last_updated
    }

    /// True when the state belongs to a finished read that is now stale: the History Server
    /// re-read the event log, so start over.
    pub fn is_stale(&self, last_updated: i64) -> bool {
        self.done && last_updated != self.last_updated
    }

    /// Poll everything that may have changed. `completed` and `last_updated` come from the
    /// listing; a completed application is marked done after one successful read.
    pub async fn poll(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        ctx: PollCtx,
        completed: bool,
        last_updated: i64,
    ) -> Result<(), ClientError> {
        self.poll_jobs(c, observer).await?;
        self.poll_stages(c, observer, ctx).await?;
        self.poll_summaries(c, observer, ctx.summaries_per_poll)
            .await?;
        self.poll_sql(c, observer, ctx).await?;
        self.poll_plans(c, observer, ctx).await?;
        let execs: Vec<ExecutorSummary> = c.get(&format!("{}/allexecutors", self.base)).await?;
        for e in &execs {
            observer.upsert_executor(&self.app_id, &convert::executor_obs(e));
        }
        self.extras
            .poll(c, &self.base, &self.app_id, observer)
            .await?;
        // A completed application is done once its ended stages' summaries are all read (a
        // first read of a busy one works them off over several polls).
        self.done = completed && self.summary_due.is_empty();
        self.last_updated = last_updated;
        Ok(())
    }

    async fn poll_jobs(&mut self, c: &Client, observer: &dyn Observer) -> Result<(), ClientError> {
        let app = self.app_id.clone();
        if self.jobs.needs_full() {
            return self.full_jobs(c, observer).await;
        }
        let listed: Vec<JobData> = c.get(&format!("{}/jobs?status=running", self.base)).await?;
        let listed_ids: BTreeSet<u64> = listed.iter().map(|j| j.job_id).collect();
        for j in &listed {
            self.jobs.saw(j.job_id);
            self.job_seen(observer, j);
        }
        // Jobs that left the running list ended (or were evicted): learn how.
        let ended: Vec<u64> = self.running_jobs.difference(&listed_ids).copied().collect();
        for id in ended {
            match c
                .get_opt::<JobData>(&format!("{}/jobs/{id}", self.base))
                .await?
            {
                Some(j) => self.job_seen(observer, &j),
                None => {
                    self.running_jobs.remove(&id);
                }
            }
        }
        let base = self.base.clone();
        let (tracker, running) = (&mut self.jobs, &mut self.running_jobs);
        discover(
            c,
            tracker,
            |id| format!("{base}/jobs/{id}"),
            |j: JobData| track_job(running, observer, &app, &j),
        )
        .await?;
        if self.jobs.needs_full() {
            self.full_jobs(c, observer).await?;
        }
        Ok(())
    }

    async fn full_jobs(&mut self, c: &Client, observer: &dyn Observer) -> Result<(), ClientError> {
        let all: Vec<JobData> = c.get(&format!("{}/jobs", self.base)).await?;
        self.running_jobs.clear();
        for j in &all {
            self.job_seen(observer, j);
        }
        self.jobs.reset_from_full(all.iter().map(|j| j.job_id));
        Ok(())
    }

    fn job_seen(&mut self, observer: &dyn Observer, j: &JobData) {
        track_job(&mut self.running_jobs, observer, &self.app_id, j);
    }

    async fn poll_stages(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        ctx: PollCtx,
    ) -> Result<(), ClientError> {
        if self.stages.needs_full() {
            return self.full_stages(c, observer, ctx).await;
        }
        let path = format!(
            "{}/stages?status=active&status=pending&details=false",
            self.base
        );
        let listed: Vec<StageData> = c.get(&path).await?;
        let mut listed_keys = BTreeSet::new();
        for s in &listed {
            self.stages.saw(s.stage_id);
            listed_keys.insert(stage_key(s));
            self.stage_seen(observer, s, None);
        }
        // Stages that left the unfinished list ended: fetch every attempt of each once.
        let left: BTreeSet<u64> = self
            .open_stages
            .keys()
            .filter(|k| !listed_keys.contains(k))
            .map(|k| k.0)
            .collect();
        for id in left {
            let path = format!("{}/stages/{id}?details=false", self.base);
            let attempts = c
                .get_opt::<Vec<StageData>>(&path)
                .await?
                .unwrap_or_default();
            let fetched: BTreeSet<(u64, u32)> = attempts.iter().map(stage_key).collect();
            for s in &attempts {
                self.stage_seen(observer, s, None);
            }
            // Attempts Spark no longer has (evicted) stop being tracked.
            self.open_stages
                .retain(|k, _| k.0 != id || fetched.contains(k));
        }
        let base = self.base.clone();
        let mut found = vec![];
        let probed = discover(
            c,
            &mut self.stages,
            |id| format!("{base}/stages/{id}?details=false"),
            |attempts: Vec<StageData>| found.extend(attempts),
        )
        .await;
        // Stages found by probing are new since the last poll, so any that ended just did.
        // Record them even if a later probe failed: the tracker already counts them as seen.
        for s in &found {
            self.stage_seen(observer, s, Some(i64::MIN));
        }
        probed?;
        if self.stages.needs_full() {
            self.full_stages(c, observer, ctx).await?;
        }
        Ok(())
    }

    async fn full_stages(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        ctx: PollCtx,
    ) -> Result<(), ClientError> {
        let all: Vec<StageData> = c
            .get(&format!("{}/stages?details=false", self.base))
            .await?;
        self.open_stages.clear();
        let cutoff = ctx.now_ms.saturating_sub(ctx.summary_window_ms);
        for s in &all {
            self.stage_seen(observer, s, Some(cutoff));
        }
        self.stages.reset_from_full(all.iter().map(|s| s.stage_id));
        Ok(())
    }

    /// Upsert a stage attempt and update the unfinished set. An attempt that is now terminal
    /// (and ran) gets a task summary if it was open before, or, when `new_since` is given, if it
    /// completed after that time.
    fn stage_seen(&mut self, observer: &dyn Observer, s: &StageData, new_since: Option<EpochMs>) {
        let Some(obs) = stage_obs(s) else {
            return;
        };
        observer.upsert_stage(&self.app_id, &obs);
        let key = (obs.stage_id, obs.attempt);
        if !obs.status.is_terminal() {
            self.open_stages.insert(key, obs.status);
            return;
        }
        let was_open = self.open_stages.remove(&key).is_some();
        let recent = new_since.is_some_and(|t| obs.completion_ms.is_some_and(|c| c >= t));
        if obs.status != StageStatus::Skipped && (was_open || recent) {
            self.summary_due.insert(key);
        }
    }

    async fn poll_summaries(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        backlog: usize,
    ) -> Result<(), ClientError> {
        let active = self
            .open_stages
            .iter()
            .filter(|(_, st)| **st == StageStatus::Active)
            .map(|(k, _)| *k);
        // Ended stages wait in `summary_due`; a backlog (first read of a busy application) is
        // worked off a slice per poll so no single poll hammers the driver.
        let due = self.summary_due.iter().copied().take(backlog);
        let keys: BTreeSet<(u64, u32)> = active.chain(due).collect();
        for (id, attempt) in keys {
            let path = format!(
                "{}/stages/{id}/{attempt}/taskSummary?quantiles=0.5,1.0",
                self.base
            );
            // 404: no task has reported metrics yet.
            let summary = c.get_opt::<TaskMetricDistributions>(&path).await?;
            // An attempt waiting in `summary_due` has ended: this is its final summary.
            let ended = self.summary_due.remove(&(id, attempt));
            if let Some(s) = summary
                .as_ref()
                .and_then(|s| convert::task_summary_obs(s, ended))
            {
                observer.set_task_summary(&self.app_id, id, attempt, s);
            }
        }
        Ok(())
    }

    async fn poll_sql(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        ctx: PollCtx,
    ) -> Result<(), ClientError> {
        let app_id = self.app_id.clone();
        let app = app_id.as_str();
        let base = self.base.clone();
        // Executions first seen ended (running before, or new to the poller): plans due.
        let mut ended = vec![];
        if !self.sql.needs_full() {
            for id in self.running_sql.clone() {
                let path = format!("{base}/sql/{id}?{SQL_QUERY}");
                match c.get_opt::<ExecutionData>(&path).await? {
                    Some(e) => {
                        if track_sql(&mut self.running_sql, observer, app, &e).is_some() {
                            ended.push(e.id);
                        }
                    }
                    None => {
                        self.running_sql.remove(&id);
                    }
                }
            }
            let (tracker, running) = (&mut self.sql, &mut self.running_sql);
            let found = discover(
                c,
                tracker,
                |id| format!("{base}/sql/{id}?{SQL_QUERY}"),
                |e: ExecutionData| {
                    if track_sql(running, observer, app, &e).is_some() {
                        ended.push(e.id);
                    }
                },
            )
            .await;
            self.queue_plans(std::mem::take(&mut ended));
            found?;
        }
        if self.sql.needs_full() {
            let all: Vec<ExecutionData> = c.get(&format!("{base}/sql?{SQL_LIST_QUERY}")).await?;
            let known = self.sql.max();
            let was_running = std::mem::take(&mut self.running_sql);
            for e in &all {
                let Some(end) = track_sql(&mut self.running_sql, observer, app, e) else {
                    continue;
                };
                let new = was_running.contains(&e.id) || known.is_none_or(|m| e.id > m);
                // A first read of a long history reads only the recent plans.
                let recent = known.is_some()
                    || ctx
                        .plans_since_ms
                        .is_none_or(|since| end.is_some_and(|t| t >= since));
                if new && recent {
                    ended.push(e.id);
                }
            }
            self.sql.reset_from_full(all.iter().map(|e| e.id));
        }
        self.queue_plans(ended);
        Ok(())
    }

    /// Remember executions whose plan is due (bounded: the oldest go first).
    fn queue_plans(&mut self, ids: Vec<u64>) {
        self.plans_due.extend(ids);
        while self.plans_due.len() > MAX_PLANS_DUE {
            self.plans_due.pop_first();
        }
    }

    /// Fetch the plans of executions that ended, once each, oldest first, at most
    /// `ctx.plans_per_poll`. An execution Spark no longer has (404) or whose answer is not a
    /// plan is logged, counted in `spark_exporter_scrape_errors_total` and skipped; a target
    /// that does not answer fails the poll, and the plan is asked for again next time.
    async fn poll_plans(
        &mut self,
        c: &Client,
        observer: &dyn Observer,
        ctx: PollCtx,
    ) -> Result<(), ClientError> {
        let due: Vec<u64> = self
            .plans_due
            .iter()
            .copied()
            .take(ctx.plans_per_poll)
            .collect();
        for id in due {
            let path = format!("{}/sql/{id}?{SQL_PLAN_QUERY}", self.base);
            let app_id = self.app_id.as_str();
            match c.get_opt::<ExecutionPlan>(&path).await {
                Ok(Some(mut p)) => {
                    p.id = id;
                    if let Some(obs) = convert::sql_plan_obs(&p) {
                        observer.sql_plan(app_id, &obs);
                    }
                }
                Ok(None) => {
                    c.count_error("http_status");
                    tracing::debug!(
                        app_id,
                        execution_id = id,
                        "SQL execution gone before its plan was read."
                    );
                }
                Err(
                    e @ (ClientError::Decode { .. }
                    | ClientError::Body { .. }
                    | ClientError::HttpStatus { .. }),
                ) => {
                    c.count_error(e.kind());
                    tracing::warn!(app_id, execution_id = id, error = %e, "Skipped a SQL plan \
                        Spark did not give.");
                }
                Err(e) => return Err(e),
            }
            self.plans_due.remove(&id);
        }
        Ok(())
    }
}

fn stage_key(s: &StageData) -> (u64, u32) {
    (s.stage_id, u32::try_from(s.attempt_id).unwrap_or(u32::MAX))
}

/// Upsert a job; keep it in `running` while it runs. `UNKNOWN` jobs are not upserted and stop
/// being tracked.
fn track_job(running: &mut BTreeSet<u64>, observer: &dyn Observer, app: &str, j: &JobData) {
    match job_obs(j) {
        Some(obs) => {
            observer.upsert_job(app, &obs);
            if obs.status == JobStatus::Running {
                running.insert(j.job_id);
            } else {
                running.remove(&j.job_id);
            }
        }
        None => {
            running.remove(&j.job_id);
        }
    }
}

/// Upsert a SQL execution; keep it in `running` while it runs. `Some(end time, if known)` if
/// it has ended.
fn track_sql(
    running: &mut BTreeSet<u64>,
    observer: &dyn Observer,
    app: &str,
    e: &ExecutionData,
) -> Option<Option<EpochMs>> {
    match sql_obs(e) {
        Some(obs) if !obs.status.is_terminal() => {
            observer.upsert_sql(app, &obs);
            running.insert(e.id);
            None
        }
        Some(obs) => {
            observer.upsert_sql(app, &obs);
            running.remove(&e.id);
            let end = obs
                .submission_ms
                .zip(obs.duration_ms)
                .map(|(s, d)| s.saturating_add(i64::try_from(d).unwrap_or(i64::MAX)));
            Some(end)
        }
        None => {
            running.remove(&e.id);
            None
        }
    }
}

/// Probe the tracker's holes, then new ids from `max + 1` until [`PROBE_LOOKAHEAD`] 404s in a row
/// or [`PROBE_CAP`] finds; hand every entity found to `found` as soon as it arrives, so an error
/// later in the poll loses nothing already recorded. An id skipped by the lookahead becomes a
/// hole, so one id that is never published (or published late) does not hide the ones after it.
async fn discover<T: DeserializeOwned>(
    c: &Client,
    t: &mut IdTracker,
    path: impl Fn(u64) -> String,
    mut found: impl FnMut(T),
) -> Result<(), ClientError> {
    for id in t.holes() {
        match c.get_opt::<T>(&path(id)).await? {
            Some(v) => {
                t.saw(id);
                found(v);
            }
            None => t.hole_missed(id),
        }
    }
    let mut finds = 0;
    let mut misses = 0;
    let mut id = t.next_probe();
    while misses < PROBE_LOOKAHEAD {
        match c.get_opt::<T>(&path(id)).await? {
            Some(v) => {
                t.saw(id);
                found(v);
                finds += 1;
                misses = 0;
                if finds == PROBE_CAP {
                    // A burst: one full list is cheaper than probing on.
                    t.request_full();
                    return Ok(());
                }
            }
            None => misses += 1,
        }
        id = id.saturating_add(1);
    }
    Ok(())
}

/// Percent-encodes everything but RFC 3986 unreserved characters (ids are plain in practice).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_include_attempt_and_encode_ids() {
        let s = PolledApp::new("local-1795981136444", "local-1795981136444", None);
        assert_eq!(s.base, "/api/v1/applications/local-1795981136444");
        let s = PolledApp::new("application_1/x y", "application_1/x y/2", Some("2"));
        assert_eq!(s.base, "/api/v1/applications/application_1%2Fx%20y/2");
        assert_eq!(s.app_id, "application_1/x y/2");
    }

    #[test]
    fn done_and_stale_follow_last_updated() {
        let mut s = PolledApp::new("a", "a", None);
        assert!(!s.is_done(true, 5));
        s.done = true;
        s.last_updated = 5;
        assert!(s.is_done(true, 5));
        assert!(!s.is_done(true, 6));
        assert!(s.is_stale(6));
        assert!(!s.is_stale(5));
    }
}
