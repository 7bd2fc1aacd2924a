//! An [`Observer`] that records the poller's observations, and the check that they match the truth.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use spark_exporter::model::obs::*;
use spark_exporter::model::Observer;
use spark_exporter::sources::rest::api::{ExecutionData, ExecutorSummary, JobData, StageData};
use spark_exporter::sources::rest::convert::{executor_obs, job_obs, sql_obs, stage_obs};
use spark_exporter::sources::rest::TargetPoller;
use spark_exporter::telemetry::Telemetry;

use super::{settings, AppData, FakeSpark};

/// Everything the poller reported, the latest observation per key.
#[derive(Debug, Default)]
pub struct Calls {
    pub apps: BTreeMap<String, AppObs>,
    pub gone: Vec<String>,
    pub jobs: BTreeMap<(String, u64), JobObs>,
    pub stages: BTreeMap<(String, u64, u32), StageObs>,
    pub summaries: BTreeMap<(String, u64, u32), TaskSummaryObs>,
    pub executors: BTreeMap<(String, String), ExecutorObs>,
    pub sql: BTreeMap<(String, u64), SqlObs>,
    /// SQL plans, every one reported (a plan reported twice shows twice).
    pub plans: Vec<(String, SqlPlanObs)>,
    pub upserts: usize,
}

/// An [`Observer`] that records.
#[derive(Debug, Default)]
pub struct Recorder {
    pub telemetry: Arc<Telemetry>,
    pub calls: Mutex<Calls>,
}

impl Recorder {
    pub fn with<R>(&self, f: impl FnOnce(&Calls) -> R) -> R {
        f(&self.calls.lock().unwrap())
    }
    fn rec(&self, f: impl FnOnce(&mut Calls)) {
        let mut c = self.calls.lock().unwrap();
        c.upserts += 1;
        f(&mut c);
    }
}

/// The REST poller never reports these (event-log only); recorded as a count, so a test sees
/// one if it ever happens.
impl Observer for Recorder {
    fn batch(&self, f: &mut dyn FnMut(&dyn Observer)) {
        f(self)
    }
    fn task_start(&self, _: &str, _: &TaskStartObs) {
        self.rec(|_| {});
    }
    fn task_end(&self, _: &str, _: &TaskEndObs) {
        self.rec(|_| {});
    }
    fn streaming_progress(&self, _: &str, _: &StreamingProgressObs) {
        self.rec(|_| {});
    }
    fn upsert_app(&self, o: &AppObs) {
        self.rec(|c| drop(c.apps.insert(o.app_id.clone(), o.clone())));
    }
    fn app_gone(&self, app_id: &str, _now_ms: EpochMs) {
        self.rec(|c| c.gone.push(app_id.to_string()));
    }
    fn upsert_job(&self, app: &str, o: &JobObs) {
        self.rec(|c| drop(c.jobs.insert((app.into(), o.job_id), o.clone())));
    }
    fn upsert_stage(&self, app: &str, o: &StageObs) {
        self.rec(|c| {
            drop(
                c.stages
                    .insert((app.into(), o.stage_id, o.attempt), o.clone()),
            )
        });
    }
    fn set_task_summary(&self, app: &str, stage_id: u64, attempt: u32, s: TaskSummaryObs) {
        self.rec(|c| {
            c.summaries.insert((app.into(), stage_id, attempt), s);
        });
    }
    fn upsert_executor(&self, app: &str, o: &ExecutorObs) {
        self.rec(|c| {
            drop(
                c.executors
                    .insert((app.into(), o.executor_id.clone()), o.clone()),
            )
        });
    }
    fn upsert_sql(&self, app: &str, o: &SqlObs) {
        self.rec(|c| drop(c.sql.insert((app.into(), o.execution_id), o.clone())));
    }
    fn sql_plan(&self, app: &str, o: &SqlPlanObs) {
        self.rec(|c| c.plans.push((app.into(), o.clone())));
    }
}

pub fn poller(server: &FakeSpark, rec: &Arc<Recorder>) -> TargetPoller<Recorder> {
    TargetPoller::new(
        &server.url,
        &settings(&[&server.url]),
        rec.clone(),
        rec.telemetry.clone(),
    )
    .unwrap()
}

pub fn decode<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap()
}

/// Everything the poller has reported for `app` equals a fresh conversion of the server's full
/// lists: the incremental reads missed nothing and kept nothing stale.
pub fn assert_matches_truth(rec: &Recorder, app: &AppData, when: &str) {
    let id = app.id();
    rec.with(|c| {
        let n = |k: &str| match k {
            "jobs" => c.jobs.keys().filter(|k| k.0 == id).count(),
            "stages" => c.stages.keys().filter(|k| k.0 == id).count(),
            _ => c.sql.keys().filter(|k| k.0 == id).count(),
        };
        assert_eq!(n("jobs"), app.jobs.len(), "{when}: job count");
        assert_eq!(n("stages"), app.stages.len(), "{when}: stage count");
        assert_eq!(n("sql"), app.sql.len(), "{when}: sql count");
        for j in &app.jobs {
            let want = job_obs(&decode::<JobData>(j)).unwrap();
            let got = &c.jobs[&(id.clone(), want.job_id)];
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{when}: job {}",
                want.job_id
            );
        }
        for s in &app.stages {
            let want = stage_obs(&decode::<StageData>(s)).unwrap();
            let got = &c.stages[&(id.clone(), want.stage_id, want.attempt)];
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{when}: stage {}",
                want.stage_id
            );
        }
        for e in &app.sql {
            let want = sql_obs(&decode::<ExecutionData>(e)).unwrap();
            let got = &c.sql[&(id.clone(), want.execution_id)];
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{when}: sql {}",
                want.execution_id
            );
        }
        for e in &app.executors {
            let want = executor_obs(&decode::<ExecutorSummary>(e));
            let got = &c.executors[&(id.clone(), want.executor_id.clone())];
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{when}: executor");
        }
    });
}
