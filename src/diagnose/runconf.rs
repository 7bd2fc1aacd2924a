//! What a run was configured with, for advice ([`RunConf`]): recorded beside the model while
//! `diagnose` reads an application, by an observer that passes every observation on to the
//! model's and keeps, per application, its Spark properties, each SQL execution's session
//! settings, and which execution each stage and job group ran. The long-running model keeps
//! none of it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use spark_exporter_diagnose::advice::{Peaks, RunConf};
use spark_exporter_diagnose::compare::Shape;
use spark_exporter_diagnose::whatif::RunRecord;

use crate::config::Settings;
use crate::model::attribution::Attribution;
use crate::model::labels::Labeler;
use crate::model::*;

/// The run configurations recorded, by application id.
pub struct Recorded {
    currency: Option<String>,
    runs: Mutex<BTreeMap<String, RunConf>>,
    records: Mutex<BTreeMap<String, RunRecord>>,
    shapes: Mutex<BTreeMap<String, Shape>>,
    attribution: Attribution,
    labeler: Labeler,
}

impl Recorded {
    /// Nothing recorded yet; job groups are labelled as `settings` label them.
    pub fn new(settings: &Settings) -> Recorded {
        Recorded {
            currency: settings.cost.currency.clone(),
            runs: Mutex::default(),
            records: Mutex::default(),
            shapes: Mutex::default(),
            attribution: Attribution::new(&settings.labels),
            labeler: Labeler::new(&settings.labels),
        }
    }

    fn with(&self, app_id: &str, f: impl FnOnce(&mut RunConf)) {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        f(runs.entry(app_id.to_string()).or_default());
    }

    fn record(&self, app_id: &str, f: impl FnOnce(&mut RunRecord)) {
        let mut r = self.records.lock().unwrap_or_else(|e| e.into_inner());
        f(r.entry(app_id.to_string()).or_default());
    }

    fn shape(&self, app_id: &str, f: impl FnOnce(&mut Shape)) {
        let mut r = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        f(r.entry(app_id.to_string()).or_default());
    }

    /// What a comparison aligns of `app_id` (its jobs and SQL executions, raw), taken out.
    pub fn take_shape(&self, app_id: &str) -> Shape {
        let mut r = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        r.remove(app_id).unwrap_or_default()
    }

    /// What the what-if simulation replays of `app_id`, taken out (each is read once).
    pub fn take_record(&self, app_id: &str) -> RunRecord {
        let mut r = self.records.lock().unwrap_or_else(|e| e.into_inner());
        r.remove(app_id).unwrap_or_default()
    }

    /// The currency of prices (`cost.currency`), for the what-if's money.
    pub fn currency(&self) -> Option<String> {
        self.currency.clone()
    }

    /// The configuration of `app_id` as recorded (empty when nothing was).
    pub fn of(&self, app_id: &str) -> RunConf {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.get(app_id).cloned().unwrap_or_default()
    }

    /// Record the application's properties (REST `/environment`).
    pub fn properties(&self, app_id: &str, props: BTreeMap<String, String>) {
        self.with(app_id, |r| r.app = Some(props));
    }

    /// An executor's peaks over a stage attempt: into the stage's and the executor's (the
    /// driver's left out: advice sizes executors).
    fn peaks(&self, app_id: &str, obs: &StagePeaksObs) {
        if obs.executor_id == "driver" {
            return;
        }
        let p = Peaks::of(obs.metrics.iter().map(|(k, v)| (k.as_str(), *v)));
        self.with(app_id, |r| {
            let s = r.stage_peaks.entry(obs.stage_id).or_default();
            *s = s.max(p);
            let e = r.executor_peaks.entry(obs.executor_id.clone()).or_default();
            *e = e.max(p);
        });
    }

    /// What `obs` tells: its stages' execution, its group's executions; its raw group and
    /// description for a comparison.
    fn job(&self, app_id: &str, obs: &JobObs) {
        let raw = self.attribution.group(obs);
        self.shape(app_id, |s| {
            s.job(
                obs.job_id,
                raw.as_deref(),
                obs.description.as_deref(),
                obs.sql_execution_id,
                &obs.stage_ids,
            )
        });
        let Some(e) = obs.sql_execution_id else {
            return;
        };
        let group = self
            .attribution
            .group(obs)
            .map(|g| self.labeler.rewrite(&g))
            .unwrap_or_default();
        self.with(app_id, |r| {
            for s in &obs.stage_ids {
                r.stage_execution.entry(*s).or_insert(e);
            }
            r.group_executions.entry(group).or_default().insert(e);
        });
    }
}

/// An observer that records into [`Recorded`] and passes everything on to `inner`.
pub struct Recorder<'a> {
    /// Where observations go.
    pub inner: &'a dyn Observer,
    /// What is recorded.
    pub rec: &'a Recorded,
}

impl Observer for Recorder<'_> {
    fn upsert_app(&self, obs: &AppObs) {
        self.rec.record(&obs.app_id, |r| {
            r.start_ms = obs.start_ms.or(r.start_ms);
            r.end_ms = obs.end_ms.or(r.end_ms);
        });
        self.inner.upsert_app(obs)
    }
    fn app_gone(&self, app_id: &str, at_ms: EpochMs) {
        self.inner.app_gone(app_id, at_ms)
    }
    fn upsert_job(&self, app_id: &str, obs: &JobObs) {
        self.rec.job(app_id, obs);
        self.rec.record(app_id, |r| {
            r.job(
                obs.job_id,
                obs.submission_ms,
                obs.completion_ms,
                &obs.stage_ids,
            )
        });
        self.inner.upsert_job(app_id, obs)
    }
    fn upsert_stage(&self, app_id: &str, obs: &StageObs) {
        self.rec.record(app_id, |r| {
            r.stage(
                obs.stage_id,
                obs.attempt,
                obs.submission_ms,
                obs.completion_ms,
            )
        });
        self.inner.upsert_stage(app_id, obs)
    }
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, sum: TaskSummaryObs) {
        self.inner.set_task_summary(app_id, stage_id, attempt, sum)
    }
    fn task_start(&self, app_id: &str, obs: &TaskStartObs) {
        self.inner.task_start(app_id, obs)
    }
    fn task_end(&self, app_id: &str, obs: &TaskEndObs) {
        self.rec.record(app_id, |r| {
            r.task(
                obs.stage_id,
                obs.attempt,
                &obs.executor_id,
                obs.launch_ms,
                obs.finish_ms,
            );
            r.cpu_ns = r.cpu_ns.saturating_add(obs.metrics.cpu_time_ns);
            r.run_ms = r.run_ms.saturating_add(obs.metrics.run_time_ms);
        });
        self.inner.task_end(app_id, obs)
    }
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs) {
        self.rec.record(app_id, |r| {
            let x = r.executor(&obs.executor_id);
            x.add_ms = obs.add_ms.or(x.add_ms);
            x.remove_ms = obs.remove_ms.or(x.remove_ms);
            x.cores = obs.total_cores.or(x.cores);
        });
        self.inner.upsert_executor(app_id, obs)
    }
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs) {
        self.rec.shape(app_id, |s| {
            s.sql(obs.execution_id, obs.description.as_deref())
        });
        self.inner.upsert_sql(app_id, obs)
    }
    fn sql_plan(&self, app_id: &str, obs: &SqlPlanObs) {
        self.rec
            .shape(app_id, |s| s.plan(obs.execution_id, obs.plan));
        let joins = obs.plan.joins;
        self.rec.with(app_id, |r| {
            r.shuffled_joins
                .insert(obs.execution_id, joins[1].saturating_add(joins[2]));
        });
        self.inner.sql_plan(app_id, obs)
    }
    fn streaming_progress(&self, app_id: &str, obs: &StreamingProgressObs) {
        self.rec.record(app_id, |r| r.streaming = true);
        self.inner.streaming_progress(app_id, obs)
    }
    fn sql_settings(&self, app_id: &str, execution_id: u64, settings: &BTreeMap<String, String>) {
        self.rec.with(app_id, |r| {
            r.sql.insert(execution_id, settings.clone());
        });
        self.inner.sql_settings(app_id, execution_id, settings)
    }
    fn stage_executor_peaks(&self, app_id: &str, obs: &StagePeaksObs) {
        self.rec.peaks(app_id, obs);
        self.inner.stage_executor_peaks(app_id, obs)
    }
    fn stage_records(&self, app_id: &str, obs: &StageRecordsObs) {
        let rows = [obs.input, obs.output, obs.shuffle_read, obs.shuffle_write];
        self.rec.shape(app_id, |s| {
            s.rows.insert((obs.stage_id, obs.attempt), rows);
        });
        self.inner.stage_records(app_id, obs)
    }
    fn stage_parents(&self, app_id: &str, job_id: u64, parents: &[(u64, Vec<u64>)]) {
        self.rec.record(app_id, |r| {
            for (s, p) in parents {
                r.parents.insert(*s, p.clone());
            }
        });
        self.inner.stage_parents(app_id, job_id, parents)
    }
    fn streaming_started(&self, app_id: &str, obs: &StreamingStartObs) {
        self.rec.record(app_id, |r| r.streaming = true);
        self.inner.streaming_started(app_id, obs)
    }
    fn set_app_props(&self, app_id: &str, obs: &AppPropsObs) {
        if let Some(p) = &obs.properties {
            self.rec.properties(app_id, p.clone());
        }
        self.inner.set_app_props(app_id, obs)
    }
    fn set_rdds(&self, app_id: &str, rdds: &[RddObs]) {
        self.inner.set_rdds(app_id, rdds)
    }
    fn rdd_persisted(&self, app_id: &str, obs: &RddInfoObs) {
        self.inner.rdd_persisted(app_id, obs)
    }
    fn block_updated(&self, app_id: &str, obs: &BlockObs) {
        self.inner.block_updated(app_id, obs)
    }
    fn rdd_unpersisted(&self, app_id: &str, rdd_id: u64) {
        self.inner.rdd_unpersisted(app_id, rdd_id)
    }
    fn app_delivered(&self, app_id: &str) {
        self.inner.app_delivered(app_id)
    }
    fn startup_done(&self) {
        self.inner.startup_done()
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn Observer)) {
        let rec = self.rec;
        self.inner
            .batch(&mut |locked| f(&Recorder { inner: locked, rec }))
    }
    fn try_batch(&self, f: &mut dyn FnMut(&dyn Observer)) -> bool {
        let rec = self.rec;
        self.inner
            .try_batch(&mut |locked| f(&Recorder { inner: locked, rec }))
    }
}
