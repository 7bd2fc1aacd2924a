//! The one way into the model: both collectors (the REST poller and the event-log tailer)
//! report what they observe through [`Observer`]. The model implements it per source
//! ([`Model::observer`]); tests implement it to record what a collector reports.
//!
//! Every call is idempotent and keyed by Spark's own ids (see [`super::app`] for the rules), so
//! the same job reported twice, or by both sources, counts once.

use std::sync::{Arc, Mutex};

use super::obs::*;
use super::state::State;
use super::store::Model;
use crate::telemetry::Telemetry;

/// Receives a collector's observations.
pub trait Observer: Send + Sync {
    /// Add or update an application.
    fn upsert_app(&self, obs: &AppObs);
    /// The REST target no longer lists this (unfinished) application: its driver went away at
    /// `at_ms`. It is marked ended then, so it expires after the retention time.
    fn app_gone(&self, app_id: &str, at_ms: EpochMs);
    /// Add or update a job.
    fn upsert_job(&self, app_id: &str, obs: &JobObs);
    /// Add or update a stage attempt.
    fn upsert_stage(&self, app_id: &str, obs: &StageObs);
    /// A stage attempt's task-duration summary (REST `taskSummary`).
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, sum: TaskSummaryObs);
    /// A task started (event log).
    fn task_start(&self, app_id: &str, obs: &TaskStartObs);
    /// A task ended (event log).
    fn task_end(&self, app_id: &str, obs: &TaskEndObs);
    /// Add or update an executor.
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs);
    /// Add or update a SQL execution.
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs);
    /// A SQL execution's final plan: counted once, into its SQL aggregate, once the execution
    /// has ended (a plan told earlier waits for the end).
    fn sql_plan(&self, app_id: &str, obs: &SqlPlanObs) {
        let _ = (app_id, obs);
    }
    /// A streaming micro-batch finished (event log).
    fn streaming_progress(&self, app_id: &str, obs: &StreamingProgressObs);
    /// The session settings SQL execution `execution_id` ran with that differ from the
    /// application's (event log `modifiedConfigs`). The model keeps none (advice reads them:
    /// `diagnose`, through an observer of its own); by default ignored.
    fn sql_settings(
        &self,
        _app_id: &str,
        _execution_id: u64,
        _settings: &std::collections::BTreeMap<String, String>,
    ) {
    }
    /// An executor's peak memory metrics over one stage attempt (event log
    /// `SparkListenerStageExecutorMetrics`, written with `spark.eventLog.logStageExecutorMetrics`):
    /// `JVMHeapMemory`, `ProcessTreeJVMRSSMemory`, ... The model keeps none (advice sizes memory
    /// from them: `diagnose`, through an observer of its own); by default ignored.
    fn stage_executor_peaks(&self, _app_id: &str, _obs: &StagePeaksObs) {}
    /// The rows a completed stage attempt read and wrote (event log). The model keeps none
    /// (`diagnose --compare` compares them); by default ignored.
    fn stage_records(&self, _app_id: &str, _obs: &StageRecordsObs) {}
    /// Job `job_id`'s stages and each one's parent stages (event log `SparkListenerJobStart`'s
    /// `Stage Infos`, skipped stages included). The model keeps none (`diagnose`'s what-if
    /// simulation replays the stage graph); by default ignored.
    fn stage_parents(&self, _app_id: &str, _job_id: u64, _parents: &[(u64, Vec<u64>)]) {}
    /// A streaming query started (event log): its series exist from now, at zero.
    fn streaming_started(&self, app_id: &str, obs: &StreamingStartObs) {
        let _ = (app_id, obs);
    }
    /// The application's properties (`spark.task.cpus`), read once per application.
    fn set_app_props(&self, app_id: &str, obs: &AppPropsObs) {
        let _ = (app_id, obs);
    }
    /// REST `/storage/rdd`: every cached dataset of the application now (replaces the last
    /// list).
    fn set_rdds(&self, app_id: &str, rdds: &[RddObs]) {
        let _ = (app_id, rdds);
    }
    /// Event log: a stage computes a persisted RDD; its blocks are tracked from now.
    fn rdd_persisted(&self, app_id: &str, obs: &RddInfoObs) {
        let _ = (app_id, obs);
    }
    /// Event log: a block of a persisted RDD changed on one executor.
    fn block_updated(&self, app_id: &str, obs: &BlockObs) {
        let _ = (app_id, obs);
    }
    /// Event log: an RDD was unpersisted.
    fn rdd_unpersisted(&self, app_id: &str, rdd_id: u64) {
        let _ = (app_id, rdd_id);
    }
    /// This source has told everything it has of `app_id` for now: a REST poll of it is
    /// complete, or its event log is read to its end (`delivery.rs`). Until then the model
    /// does not summarise it.
    fn app_delivered(&self, app_id: &str) {
        let _ = app_id;
    }
    /// This source has finished its start-up read: a REST target's first poll, or every event
    /// log present at start read to its last complete event (`delivery.rs`).
    fn startup_done(&self) {}
    /// Calls `f` with an observer whose calls all land together: the model's takes its lock
    /// once for all of them, so readers on several threads do not meet at the lock for every
    /// event (an event-log reader reports a batch of lines at a time). Another observer passes
    /// itself.
    fn batch(&self, f: &mut dyn FnMut(&dyn Observer));
    /// [`Self::batch`] if it can start at once: `false`, and `f` not called, while another
    /// thread holds the model's lock, so a reader can go on parsing and try again later rather
    /// than sleep at the lock. Another observer passes itself.
    fn try_batch(&self, f: &mut dyn FnMut(&dyn Observer)) -> bool {
        self.batch(f);
        true
    }
}

impl Model {
    /// The model as the observer of one source's observations (the one way in).
    pub fn observer(self: &Arc<Self>, source: Source) -> ModelObserver {
        ModelObserver {
            model: self.clone(),
            source,
        }
    }
}

/// The model as one source's observer (see [`Model::observer`]).
#[derive(Debug, Clone)]
pub struct ModelObserver {
    pub(super) model: Arc<Model>,
    pub(super) source: Source,
}

impl ModelObserver {
    /// The model's application filter, for a collector to skip early what the model would drop.
    pub fn filter(&self) -> &crate::filter::AppFilter {
        self.model.filter()
    }

    /// `f` on the state under the model's lock, taken once.
    fn locked(&self, f: impl FnOnce(&Locked<'_>)) {
        self.model
            .write(|s, telemetry, now| f(&self.holding(s, telemetry, now)))
    }

    /// This source's observer over the state it holds the lock of.
    fn holding<'a>(
        &self,
        state: &'a mut State,
        telemetry: &'a Telemetry,
        now: EpochMs,
    ) -> Locked<'a> {
        Locked {
            state: Mutex::new(state),
            telemetry,
            now,
            source: self.source,
        }
    }
}

/// One source's observer while it holds the model's lock ([`Observer::batch`]): each call
/// writes the state at once. The calls of [`ModelObserver`] take the lock and make one.
struct Locked<'a> {
    /// Taken by one call at a time: only the thread holding the model's lock has this.
    state: Mutex<&'a mut State>,
    telemetry: &'a Telemetry,
    now: EpochMs,
    source: Source,
}

impl Locked<'_> {
    fn write(&self, f: impl FnOnce(&mut State, &Telemetry, EpochMs)) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s, self.telemetry, self.now)
    }

    /// A write of `app_id`'s detail, skipped once the model no longer takes it (excluded, or
    /// summarised: see `summary.rs`).
    fn detail(&self, app_id: &str, f: impl FnOnce(&mut State, &Telemetry, EpochMs)) {
        let src = self.source;
        self.write(|s, t, now| {
            if s.takes(app_id, true) {
                f(s, t, now);
                s.observed(app_id, src, now);
            }
        })
    }

    /// [`Self::detail`] for the per-task calls, the hot path, which do not open a delivery
    /// themselves: every delivery that carries tasks also carries the application, a job or a
    /// stage (REST polls the application first; a log's tasks come between its application's
    /// start and end), and a delivery stays open until the source closes it. Only exclusion is
    /// checked here: each per-task rule reads the application through `State::live`, which
    /// gives nothing once its detail is gone (summarised), so a task costs one lookup of its
    /// application, not two.
    fn task_detail(&self, app_id: &str, f: impl FnOnce(&mut State, &Telemetry, EpochMs)) {
        self.write(|s, t, now| {
            if s.takes(app_id, false) {
                f(s, t, now)
            }
        })
    }
}

impl Observer for Locked<'_> {
    fn upsert_app(&self, obs: &AppObs) {
        let rest = self.source.feed() == Feed::Status;
        self.write(|s, t, now| {
            if s.takes(&obs.app_id, false) {
                s.upsert_app(obs, now);
                s.observed(&obs.app_id, self.source, now);
                // The application's clock (`cost.rs`): REST lists it running now.
                s.app_ran_until(&obs.app_id, obs.start_ms);
                if rest && obs.end_ms.is_none() {
                    s.app_ran_until(&obs.app_id, Some(now));
                }
                s.review(&obs.app_id, t, now);
            }
        })
    }
    fn app_gone(&self, app_id: &str, at_ms: EpochMs) {
        self.write(|s, t, now| {
            if s.takes(app_id, false) {
                s.app_gone(app_id, at_ms, now);
                s.review(app_id, t, now);
            }
        })
    }
    fn upsert_job(&self, app_id: &str, obs: &JobObs) {
        let src = self.source;
        self.detail(app_id, |s, t, now| {
            s.upsert_job(src, app_id, obs, t, now);
            s.app_ran_until(app_id, obs.submission_ms.max(obs.completion_ms));
        })
    }
    fn upsert_stage(&self, app_id: &str, obs: &StageObs) {
        let from_log = self.source.feed() == Feed::Log;
        self.detail(app_id, |s, t, now| {
            s.upsert_stage(app_id, obs, t, now, false);
            s.app_ran_until(app_id, obs.submission_ms.max(obs.completion_ms));
            // The log's own submission and completion bound its task durations (`tasks.rs`).
            if from_log {
                s.log_stage(app_id, obs);
            }
        })
    }
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, sum: TaskSummaryObs) {
        self.detail(app_id, |s, _, _| {
            s.set_task_summary(app_id, stage_id, attempt, sum)
        })
    }
    fn task_start(&self, app_id: &str, obs: &TaskStartObs) {
        self.task_detail(app_id, |s, _, _| s.task_start(app_id, obs))
    }
    fn task_end(&self, app_id: &str, obs: &TaskEndObs) {
        self.task_detail(app_id, |s, t, _| s.task_end(app_id, obs, t))
    }
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs) {
        self.detail(app_id, |s, _, now| {
            let before = s.live_executor_clock(app_id, &obs.executor_id);
            s.upsert_executor(app_id, obs, now);
            s.executor_seen(app_id, obs, before);
        })
    }
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs) {
        self.detail(app_id, |s, t, _| {
            s.upsert_sql(app_id, obs, t);
            s.app_ran_until(app_id, obs.submission_ms);
        })
    }
    fn sql_plan(&self, app_id: &str, obs: &SqlPlanObs) {
        self.detail(app_id, |s, _, _| s.sql_plan(app_id, obs))
    }
    fn streaming_progress(&self, app_id: &str, obs: &StreamingProgressObs) {
        self.detail(app_id, |s, t, _| s.streaming_progress(app_id, obs, t))
    }
    fn streaming_started(&self, app_id: &str, obs: &StreamingStartObs) {
        self.detail(app_id, |s, t, _| s.streaming_started(app_id, obs, t))
    }
    fn set_app_props(&self, app_id: &str, obs: &AppPropsObs) {
        self.detail(app_id, |s, _, _| s.set_app_props(app_id, obs))
    }
    fn set_rdds(&self, app_id: &str, rdds: &[RddObs]) {
        self.detail(app_id, |s, t, _| s.set_rdds(app_id, rdds, t))
    }
    fn rdd_persisted(&self, app_id: &str, obs: &RddInfoObs) {
        self.detail(app_id, |s, t, _| s.rdd_persisted(app_id, obs, t))
    }
    fn block_updated(&self, app_id: &str, obs: &BlockObs) {
        self.task_detail(app_id, |s, t, _| s.block_updated(app_id, obs, t))
    }
    fn rdd_unpersisted(&self, app_id: &str, rdd_id: u64) {
        self.detail(app_id, |s, _, _| s.rdd_unpersisted(app_id, rdd_id))
    }
    fn app_delivered(&self, app_id: &str) {
        let src = self.source;
        self.write(|s, t, now| {
            if let Some(a) = s.apps.get_mut(app_id) {
                a.summary.delivery.delivered(src);
                let sources = s.sources.clone();
                a.summary.delivery.review(&sources);
                s.review(app_id, t, now);
            }
        })
    }
    fn startup_done(&self) {
        let src = self.source;
        self.write(|s, t, _| {
            s.sources.started(src);
            t.set_startup_pending(!s.sources.complete());
        })
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn Observer)) {
        f(self)
    }
}

/// Each call takes the model's lock for itself.
impl Observer for ModelObserver {
    fn upsert_app(&self, obs: &AppObs) {
        self.locked(|o| o.upsert_app(obs))
    }
    fn app_gone(&self, app_id: &str, at_ms: EpochMs) {
        self.locked(|o| o.app_gone(app_id, at_ms))
    }
    fn upsert_job(&self, app_id: &str, obs: &JobObs) {
        self.locked(|o| o.upsert_job(app_id, obs))
    }
    fn upsert_stage(&self, app_id: &str, obs: &StageObs) {
        self.locked(|o| o.upsert_stage(app_id, obs))
    }
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, sum: TaskSummaryObs) {
        self.locked(|o| o.set_task_summary(app_id, stage_id, attempt, sum))
    }
    fn task_start(&self, app_id: &str, obs: &TaskStartObs) {
        self.locked(|o| o.task_start(app_id, obs))
    }
    fn task_end(&self, app_id: &str, obs: &TaskEndObs) {
        self.locked(|o| o.task_end(app_id, obs))
    }
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs) {
        self.locked(|o| o.upsert_executor(app_id, obs))
    }
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs) {
        self.locked(|o| o.upsert_sql(app_id, obs))
    }
    fn sql_plan(&self, app_id: &str, obs: &SqlPlanObs) {
        self.locked(|o| o.sql_plan(app_id, obs))
    }
    fn streaming_progress(&self, app_id: &str, obs: &StreamingProgressObs) {
        self.locked(|o| o.streaming_progress(app_id, obs))
    }
    fn streaming_started(&self, app_id: &str, obs: &StreamingStartObs) {
        self.locked(|o| o.streaming_started(app_id, obs))
    }
    fn set_app_props(&self, app_id: &str, obs: &AppPropsObs) {
        self.locked(|o| o.set_app_props(app_id, obs))
    }
    fn set_rdds(&self, app_id: &str, rdds: &[RddObs]) {
        self.locked(|o| o.set_rdds(app_id, rdds))
    }
    fn rdd_persisted(&self, app_id: &str, obs: &RddInfoObs) {
        self.locked(|o| o.rdd_persisted(app_id, obs))
    }
    fn block_updated(&self, app_id: &str, obs: &BlockObs) {
        self.locked(|o| o.block_updated(app_id, obs))
    }
    fn rdd_unpersisted(&self, app_id: &str, rdd_id: u64) {
        self.locked(|o| o.rdd_unpersisted(app_id, rdd_id))
    }
    fn app_delivered(&self, app_id: &str) {
        self.locked(|o| o.app_delivered(app_id))
    }
    fn startup_done(&self) {
        self.locked(|o| o.startup_done())
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn Observer)) {
        self.locked(|o| f(o))
    }
    fn try_batch(&self, f: &mut dyn FnMut(&dyn Observer)) -> bool {
        self.model
            .try_write(|s, telemetry, now| f(&self.holding(s, telemetry, now)))
            .is_some()
    }
}
