//! Applying parsed events to the model, per application log.
//!
//! Some events only make sense with what came before: a job end carries no job group or stage
//! ids, a stage completion no properties, a SQL end no start time. [`AppState`] keeps the open
//! jobs, stages and SQL executions of one log (dropped when they end) and completes the
//! observations. It also settles the application id: Spark's `App ID` from
//! `SparkListenerApplicationStart` when the log has one (the name of the file is sanitised and
//! may carry an attempt suffix), else the id the name implies. Events seen before the id is known
//! wait, up to [`MAX_WAITING`] of them.

use std::collections::HashMap;
use std::fmt::Display;

use crate::model::{AppObs, JobObs, JobStatus, Model, Source, SqlObs, SqlStatus};

use super::parser::{parse_line, Event, ParseError};
use super::tailer::LineSink;

/// Events kept while waiting for `SparkListenerApplicationStart`.
pub const MAX_WAITING: usize = 1024;

/// Per-error-kind log lines per log file before further ones go to `debug`.
const WARN_LIMIT: u64 = 10;

/// The state of one application's log.
#[derive(Debug)]
pub struct AppState {
    name_id: String,
    app_id: Option<String>,
    spark_version: Option<String>,
    waiting: Vec<Event>,
    jobs: HashMap<u64, JobObs>,
    stages: HashMap<(u64, u32), (Option<String>, Option<String>)>,
    sql: HashMap<u64, SqlObs>,
}

impl AppState {
    /// State for a log whose name implies the application id `name_id`.
    pub fn new(name_id: String) -> AppState {
        AppState {
            name_id,
            app_id: None,
            spark_version: None,
            waiting: Vec::new(),
            jobs: HashMap::new(),
            stages: HashMap::new(),
            sql: HashMap::new(),
        }
    }

    /// The application id events are recorded under (the name-implied one until settled).
    pub fn app_id(&self) -> &str {
        self.app_id.as_deref().unwrap_or(&self.name_id)
    }

    /// Settle on the name-implied id and apply the events that waited (end of a log that never
    /// had an application start).
    pub fn settle(&mut self, model: &Model) {
        if self.app_id.is_none() {
            self.app_id = Some(self.name_id.clone());
            self.upsert_app(model, AppObs::default());
            for ev in std::mem::take(&mut self.waiting) {
                self.apply(ev, model);
            }
        }
    }

    fn upsert_app(&self, model: &Model, mut obs: AppObs) {
        obs.app_id = self.app_id().to_string();
        obs.spark_version = obs.spark_version.or_else(|| self.spark_version.clone());
        model.upsert_app(Source::EventLog, &obs);
    }

    /// Apply one event.
    pub fn apply(&mut self, ev: Event, model: &Model) {
        match ev {
            Event::AppStart { mut app, .. } => {
                if self.app_id.is_none() {
                    let id = std::mem::take(&mut app.app_id);
                    self.app_id = Some(if id.is_empty() {
                        self.name_id.clone()
                    } else {
                        id
                    });
                }
                self.upsert_app(model, app);
                for ev in std::mem::take(&mut self.waiting) {
                    self.apply(ev, model);
                }
                return;
            }
            Event::LogStart { spark_version } => {
                self.spark_version = Some(spark_version);
                if self.app_id.is_some() {
                    self.upsert_app(model, AppObs::default());
                }
                return;
            }
            ev if self.app_id.is_none() => {
                self.waiting.push(ev);
                if self.waiting.len() >= MAX_WAITING {
                    self.settle(model);
                }
                return;
            }
            _ => {}
        }
        let app_id = self.app_id().to_string();
        let app = app_id.as_str();
        match ev {
            Event::AppStart { .. } | Event::LogStart { .. } => {}
            Event::AppEnd { end_ms } => self.upsert_app(
                model,
                AppObs {
                    end_ms: Some(end_ms),
                    ..AppObs::default()
                },
            ),
            Event::JobStart { job, .. } => {
                model.upsert_job(Source::EventLog, app, &job);
                self.jobs.insert(job.job_id, job);
            }
            Event::JobEnd {
                job_id,
                completion_ms,
                succeeded,
            } => {
                let mut job = self.jobs.remove(&job_id).unwrap_or(JobObs {
                    job_id,
                    job_group: None,
                    description: None,
                    status: JobStatus::Running,
                    submission_ms: None,
                    completion_ms: None,
                    stage_ids: Vec::new(),
                    sql_execution_id: None,
                });
                job.status = if succeeded {
                    JobStatus::Succeeded
                } else {
                    JobStatus::Failed
                };
                job.completion_ms = completion_ms;
                model.upsert_job(Source::EventLog, app, &job);
            }
            Event::StageSubmitted(s) => {
                model.upsert_stage(Source::EventLog, app, &s);
                self.stages
                    .insert((s.stage_id, s.attempt), (s.job_group, s.description));
            }
            Event::StageCompleted(mut s) => {
                if let Some((group, desc)) = self.stages.remove(&(s.stage_id, s.attempt)) {
                    s.job_group = s.job_group.or(group);
                    s.description = s.description.or(desc);
                }
                model.upsert_stage(Source::EventLog, app, &s);
            }
            Event::TaskStart(t) => model.task_start(app, &t),
            Event::TaskEnd(t) => model.task_end(app, &t),
            Event::Executor(e) => model.upsert_executor(Source::EventLog, app, &e),
            Event::SqlStart {
                execution_id,
                description,
                time_ms,
            } => {
                let s = SqlObs {
                    execution_id,
                    description,
                    status: SqlStatus::Running,
                    submission_ms: time_ms,
                    duration_ms: None,
                };
                model.upsert_sql(Source::EventLog, app, &s);
                self.sql.insert(execution_id, s);
            }
            Event::SqlEnd {
                execution_id,
                time_ms,
                error,
            } => {
                let mut s = self.sql.remove(&execution_id).unwrap_or(SqlObs {
                    execution_id,
                    description: None,
                    status: SqlStatus::Running,
                    submission_ms: None,
                    duration_ms: None,
                });
                s.status = if error.is_some() {
                    SqlStatus::Failed
                } else {
                    SqlStatus::Completed
                };
                s.duration_ms = match (s.submission_ms, time_ms) {
                    (Some(a), Some(b)) => Some(b.saturating_sub(a).max(0) as u64),
                    _ => None,
                };
                model.upsert_sql(Source::EventLog, app, &s);
            }
            Event::StreamingProgress(p) => model.streaming_progress(app, &p),
        }
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
    pub fn report(&mut self, model: &Model, file: &str, kind: &'static str, detail: &dyn Display) {
        model.telemetry().eventlog_error(kind);
        let n = self.counts.entry(kind).or_default();
        *n += 1;
        if *n <= WARN_LIMIT {
            tracing::warn!(file, kind, n = *n, %detail, "Skipped bad event-log input.");
        } else {
            tracing::debug!(file, kind, n = *n, %detail, "Skipped bad event-log input.");
        }
    }
}

/// The [`LineSink`] of one log: parse, apply, count.
pub struct Applier<'a> {
    /// The application.
    pub app: &'a mut AppState,
    /// The model.
    pub model: &'a Model,
    /// The file, for log lines.
    pub file: &'a str,
    /// Counters of this step.
    pub stats: &'a mut ReadStats,
    /// Warning budget.
    pub warnings: &'a mut Warnings,
}

impl LineSink for Applier<'_> {
    fn line(&mut self, line: &[u8]) {
        self.stats.bytes += line.len() as u64 + 1;
        match parse_line(line) {
            Ok(Some(ev)) => {
                self.stats.events += 1;
                if let Some(t) = ev.time_ms() {
                    self.stats.newest_ms = Some(self.stats.newest_ms.map_or(t, |n| n.max(t)));
                }
                self.app.apply(ev, self.model);
            }
            Ok(None) => {
                if !line.trim_ascii().is_empty() {
                    self.stats.events += 1;
                }
            }
            Err(e @ ParseError::UnknownEvent(_)) => {
                self.stats.events += 1;
                self.warnings.report(self.model, self.file, e.kind(), &e);
            }
            Err(e) => self.warnings.report(self.model, self.file, e.kind(), &e),
        }
    }

    fn error(&mut self, kind: &'static str, detail: &dyn Display) {
        self.warnings.report(self.model, self.file, kind, detail);
    }
}
