//! One event-log line (one JSON object) to one [`Event`].
//!
//! Most bytes of a log are task events and SQL plans the exporter does not need, so the event
//! name is read first from the line's prefix (Spark always writes `{"Event":"<name>",...` first)
//! and only the wanted events are handed to serde, which reads the few fields named in
//! `super::json` and skips the rest.

use std::borrow::Cow;

use crate::model::{
    AppObs, AppPropsObs, BlockObs, EpochMs, ExecutorObs, JobObs, JobStatus, Locality, RddInfoObs,
    ResourceProfileObs, SourceProgressObs, StageObs, StagePeaksObs, StageRecordsObs, StageStatus,
    StateOperatorObs, StreamingProgressObs, StreamingStartObs, TaskEndObs, TaskOutcome,
    TaskStartObs, TaskTotals,
};

use super::json;
use super::scan::{self, boolean, count, int, members, ScanError};
use super::scratch::Scratch;
use super::sqlplan::{self, LogPlan};

/// Prefix of every line Spark writes.
const PREFIX: &[u8] = br#"{"Event":""#;

const SQL_START: &str = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart";
const CONNECT_OP_STARTED: &str =
    "org.apache.spark.sql.connect.service.SparkListenerConnectOperationStarted";
const CONNECT_OP_CLOSED: &str =
    "org.apache.spark.sql.connect.service.SparkListenerConnectOperationClosed";
const SQL_END: &str = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd";
const SQL_AQE_UPDATE: &str =
    "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate";
const SQL_DRIVER_ACCUMS: &str = "org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates";
const QUERY_PROGRESS: &str =
    "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent";
const QUERY_STARTED: &str =
    "org.apache.spark.sql.streaming.StreamingQueryListener$QueryStartedEvent";

/// What one line said, as model observations.
#[derive(Debug, Clone)]
pub enum Event {
    /// `SparkListenerLogStart`: the Spark version that wrote the log.
    LogStart {
        /// Spark version.
        spark_version: String,
    },
    /// `SparkListenerApplicationStart`. `app.app_id` is empty when the event had no `App ID`.
    AppStart {
        /// The application.
        app: AppObs,
        /// `App Attempt ID`, on cluster managers with attempts.
        attempt_id: Option<String>,
    },
    /// `SparkListenerApplicationEnd`.
    AppEnd {
        /// End time.
        end_ms: EpochMs,
        /// The driver's exit code (Spark 4.0+).
        exit_code: Option<i32>,
    },
    /// `SparkListenerJobStart` (status `Running`).
    JobStart {
        /// The job.
        job: JobObs,
        /// Each of its stages' parent stages (`Stage Infos`' `Parent IDs`), for `diagnose`'s
        /// what-if simulation; the model keeps none.
        parents: Vec<(u64, Vec<u64>)>,
    },
    /// `SparkListenerJobEnd`.
    JobEnd {
        /// Job id.
        job_id: u64,
        /// Completion time.
        completion_ms: Option<EpochMs>,
        /// `JobSucceeded` (else `JobFailed`).
        succeeded: bool,
    },
    /// `SparkListenerStageSubmitted` (status `Active`), with the persisted RDDs it computes.
    StageSubmitted(StageObs, Vec<RddInfoObs>),
    /// `SparkListenerStageCompleted` (status `Complete`, or `Failed` with a failure reason), and
    /// the rows it read and wrote.
    StageCompleted(StageObs, StageRecordsObs),
    /// `SparkListenerTaskStart`.
    TaskStart(TaskStartObs),
    /// `SparkListenerTaskEnd`.
    TaskEnd(TaskEndObs),
    /// `SparkListenerExecutorAdded` (`active: Some(true)`) or `...Removed` (`Some(false)`).
    Executor(ExecutorObs),
    /// `SparkListenerSQLExecutionStart`.
    SqlStart {
        /// Execution id.
        execution_id: u64,
        /// Description.
        description: Option<String>,
        /// Start time.
        time_ms: Option<EpochMs>,
        /// Job tags (Spark 4.x).
        tags: Vec<String>,
        /// Its plan (`None` when the line has none, or it could not be read).
        plan: Option<Box<LogPlan>>,
        /// The session settings it ran with that differ from the application's
        /// (`modifiedConfigs`, Spark 3.2+; empty when none or older).
        settings: std::collections::BTreeMap<String, String>,
    },
    /// `SparkListenerSQLAdaptiveExecutionUpdate`: adaptive execution changed the plan.
    SqlPlanUpdate {
        /// Execution id.
        execution_id: u64,
        /// The new plan.
        plan: Box<LogPlan>,
    },
    /// `SparkListenerDriverAccumUpdates`: values of an execution's driver-side metrics
    /// (adaptive execution's among them), `(accumulator id, value)`.
    SqlDriverAccums {
        /// Execution id.
        execution_id: u64,
        /// The values, in Spark's order (an accumulator may repeat).
        updates: Vec<(u64, u64)>,
    },
    /// `SparkListenerConnectOperationStarted`: a Spark Connect operation, whose jobs carry its
    /// job tag.
    ConnectOperation {
        /// The operation's job tag.
        job_tag: String,
        /// What its statement says to a person (its SQL text, or its first relation).
        statement: Option<String>,
        /// The session's tags as the user wrote them.
        session_tags: Vec<String>,
    },
    /// `SparkListenerConnectOperationClosed`: its jobs have all started.
    ConnectOperationClosed {
        /// The operation's job tag.
        job_tag: String,
    },
    /// `SparkListenerSQLExecutionEnd`; `error` is set (Spark 3.4+) when the execution failed.
    SqlEnd {
        /// Execution id.
        execution_id: u64,
        /// End time.
        time_ms: Option<EpochMs>,
        /// Error message of a failed execution.
        error: Option<String>,
    },
    /// `QueryProgressEvent`.
    StreamingProgress(StreamingProgressObs),
    /// `QueryStartedEvent`.
    StreamingStarted(StreamingStartObs),
    /// `SparkListenerEnvironmentUpdate`: the application's properties;
    /// `SparkListenerResourceProfileAdded`: a resource profile.
    AppProps(AppPropsObs),
    /// `SparkListenerBlockUpdated` of an RDD block (`rdd_<rdd>_<partition>`).
    BlockUpdated(BlockObs),
    /// `SparkListenerStageExecutorMetrics`: an executor's peaks over a stage attempt.
    StagePeaks(StagePeaksObs),
    /// `SparkListenerUnpersistRDD`.
    RddUnpersisted {
        /// RDD id.
        rdd_id: u64,
    },
}

impl Event {
    /// The event's own timestamp, when it has one (for the lag self-metric).
    pub fn time_ms(&self) -> Option<EpochMs> {
        match self {
            Event::AppStart { app, .. } => app.start_ms,
            Event::AppEnd { end_ms, .. } => Some(*end_ms),
            Event::JobStart { job, .. } => job.submission_ms,
            Event::JobEnd { completion_ms, .. } => *completion_ms,
            Event::StageSubmitted(s, _) => s.submission_ms,
            Event::StageCompleted(s, _) => s.completion_ms,
            Event::TaskEnd(t) => Some(t.finish_ms),
            Event::Executor(e) => e.remove_ms.or(e.add_ms),
            Event::SqlStart { time_ms, .. } | Event::SqlEnd { time_ms, .. } => *time_ms,
            Event::LogStart { .. }
            | Event::ConnectOperation { .. }
            | Event::ConnectOperationClosed { .. }
            | Event::StreamingProgress(_)
            | Event::StreamingStarted(_)
            | Event::AppProps(_)
            | Event::BlockUpdated(_)
            | Event::RddUnpersisted { .. }
            | Event::StagePeaks(_)
            | Event::SqlPlanUpdate { .. }
            | Event::SqlDriverAccums { .. }
            | Event::TaskStart(_) => None,
        }
    }
}

/// Why a line was skipped.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The line is not a JSON object with an `"Event"` string.
    #[error("not an event: {0}")]
    NotAnEvent(String),
    /// A wanted event whose JSON is malformed or lacks a required field.
    #[error("bad {event} event: {source}")]
    Json {
        /// Event name.
        event: &'static str,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A task-end line (read by the fast scanner) is malformed or lacks a required field.
    #[error("bad {event} event: {source}")]
    Scan {
        /// Event name.
        event: &'static str,
        /// What the scanner said.
        source: ScanError,
    },
    /// An event name that is neither Spark's nor known.
    #[error("unknown event {0:?}")]
    UnknownEvent(String),
}

impl ParseError {
    /// The `kind` label of `spark_exporter_eventlog_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            ParseError::NotAnEvent(_) | ParseError::Json { .. } | ParseError::Scan { .. } => {
                "parse"
            }
            ParseError::UnknownEvent(_) => "unknown_event",
        }
    }
}

/// The event name, from the prefix when Spark's usual layout is used, else by parsing the line.
pub fn event_name(line: &[u8]) -> Result<Cow<'_, str>, ParseError> {
    if let Some(rest) = line.strip_prefix(PREFIX) {
        if let Some(end) = memchr::memchr2(b'"', b'\\', rest) {
            if rest[end] == b'"' {
                if let Ok(name) = std::str::from_utf8(&rest[..end]) {
                    return Ok(Cow::Borrowed(name));
                }
            }
        }
    }
    serde_json::from_slice::<json::Head>(line)
        .map(|h| h.event)
        .map_err(|e| ParseError::NotAnEvent(e.to_string()))
}

/// Parse one line (without its newline). `Ok(None)` for blank lines and for Spark events the
/// exporter does not use.
pub fn parse_line(line: &[u8]) -> Result<Option<Event>, ParseError> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Ok(None);
    }
    let name = event_name(line)?;
    macro_rules! read {
        ($ty:ty, $event:expr) => {
            serde_json::from_slice::<$ty>(line).map_err(|source| ParseError::Json {
                event: $event,
                source,
            })?
        };
    }
    // Large events whose serde type reads a few members: the line reduced to those members
    // first (`scan::pick`), which serde then reads without visiting the rest.
    let mut buf = picked_buf();
    let ev = match name.as_ref() {
        "SparkListenerTaskEnd" => task_end(line).map_err(|source| ParseError::Scan {
            event: "TaskEnd",
            source,
        })?,
        "SparkListenerTaskStart" => task_start(line).map_err(|source| ParseError::Scan {
            event: "TaskStart",
            source,
        })?,
        "SparkListenerStageSubmitted" => {
            let keep = if may_persist(line) {
                &json::STAGE_EVENT_KEEP
            } else {
                &json::STAGE_NO_RDDS_KEEP
            };
            stage(read_picked(line, keep, "StageSubmitted", &mut buf)?, true)
        }
        "SparkListenerStageCompleted" => stage(
            read_picked(line, &json::STAGE_NO_RDDS_KEEP, "StageCompleted", &mut buf)?,
            false,
        ),
        "SparkListenerJobStart" => job_start(read_picked(
            line,
            &json::JOB_START_KEEP,
            "JobStart",
            &mut buf,
        )?),
        "SparkListenerJobEnd" => job_end(line).map_err(|source| ParseError::Scan {
            event: "JobEnd",
            source,
        })?,
        "SparkListenerApplicationStart" => {
            let a = read!(json::AppStart, "ApplicationStart");
            Event::AppStart {
                app: AppObs {
                    app_id: a.app_id.map(Cow::into_owned).unwrap_or_default(),
                    name: a.name.map(Cow::into_owned),
                    spark_version: None,
                    user: a.user.map(Cow::into_owned),
                    start_ms: a.time,
                    end_ms: None,
                    exit_code: None,
                },
                attempt_id: a.attempt_id.map(Cow::into_owned),
            }
        }
        "SparkListenerApplicationEnd" => {
            let e = read!(json::AppEnd, "ApplicationEnd");
            Event::AppEnd {
                end_ms: e.time,
                exit_code: e.exit_code,
            }
        }
        "SparkListenerLogStart" => Event::LogStart {
            spark_version: read!(json::LogStart, "LogStart").version.into_owned(),
        },
        "SparkListenerExecutorAdded" | "SparkListenerExecutorRemoved" => {
            let added = name.as_ref() == "SparkListenerExecutorAdded";
            executor(read!(json::ExecutorEvent, "Executor"), added)
        }
        SQL_START | SQL_END | SQL_AQE_UPDATE | SQL_DRIVER_ACCUMS => return sql_event(&name, line),
        CONNECT_OP_STARTED | CONNECT_OP_CLOSED => connect_op(
            read!(json::ConnectOperation, "ConnectOperation"),
            name == CONNECT_OP_STARTED,
        ),
        QUERY_PROGRESS => progress(read!(json::ProgressEvent, "QueryProgressEvent")),
        QUERY_STARTED => {
            let q = read!(json::QueryStarted, "QueryStartedEvent");
            Event::StreamingStarted(StreamingStartObs {
                query_id: q.id.into_owned(),
                name: owned(q.name),
                run_id: owned(q.run_id),
            })
        }
        n if n.starts_with("SparkListener") || n.starts_with("org.apache.spark.") => {
            return cost_cache_event(n, line)
        }
        n => return Err(ParseError::UnknownEvent(n.to_string())),
    };
    Ok(Some(ev))
}

/// Whether a stage submission may name a persisted RDD: a persisted RDD's storage level says
/// `"Use Memory": true` or `"Use Disk": true` ([`json::StorageLevel::valid`]), so the line then
/// holds a `true` member value (`:` and `true`, blanks between). A line without one names none,
/// and its `RDD Info`, most of its bytes, is skipped instead of read.
fn may_persist(line: &[u8]) -> bool {
    memchr::memmem::find_iter(line, b"true")
        .any(|at| line[..at].trim_ascii_end().last() == Some(&b':'))
}

/// Largest buffer of [`read_picked`] kept for the next line: one a larger line grew is freed.
const MAX_PICKED: usize = 1 << 20;

thread_local! {
    /// Each reader thread's buffer for what [`read_picked`] keeps of a line ([`Scratch`]).
    static PICKED: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// This thread's [`PICKED`] buffer, empty.
fn picked_buf() -> Scratch {
    let mut buf = Scratch::take(&PICKED, MAX_PICKED);
    buf.clear();
    buf
}

/// `line` reduced into `buf` to what `keep` says ([`scan::pick`]), read by serde as `T`.
fn read_picked<'b, T: serde::Deserialize<'b>>(
    line: &[u8],
    keep: &scan::Keep,
    event: &'static str,
    buf: &'b mut Vec<u8>,
) -> Result<T, ParseError> {
    scan::pick(line, keep, buf).map_err(|source| ParseError::Scan { event, source })?;
    serde_json::from_slice(buf).map_err(|source| ParseError::Json { event, source })
}

/// A SQL execution's start (with its plan) or end, an adaptive plan update, or the driver's
/// accumulator updates. Plans are read with the scanner ([`sqlplan`]); a start whose plan cannot
/// be read still starts the execution.
fn sql_event(name: &str, line: &[u8]) -> Result<Option<Event>, ParseError> {
    let scan = |event: &'static str| move |source| ParseError::Scan { event, source };
    // The members `SqlEvent` reads, without the plan.
    let mut buf = picked_buf();
    Ok(Some(match name {
        SQL_START => {
            let s: json::SqlEvent =
                read_picked(line, &json::SQL_EVENT_KEEP, "SQLExecutionStart", &mut buf)?;
            Event::SqlStart {
                execution_id: s.execution_id,
                description: s.description.map(Cow::into_owned),
                time_ms: s.time,
                tags: s.job_tags.unwrap_or_default(),
                plan: sqlplan::plan_line(line)
                    .ok()
                    .and_then(|(_, p)| p)
                    .map(Box::new),
                settings: s
                    .modified_configs
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(k, v)| match v {
                        serde_json::Value::String(v) => Some((k, v)),
                        _ => None,
                    })
                    .collect(),
            }
        }
        SQL_END => {
            let s: json::SqlEvent =
                read_picked(line, &json::SQL_EVENT_KEEP, "SQLExecutionEnd", &mut buf)?;
            Event::SqlEnd {
                execution_id: s.execution_id,
                time_ms: s.time,
                error: s.error.filter(|e| !e.is_empty()).map(Cow::into_owned),
            }
        }
        SQL_AQE_UPDATE => {
            match sqlplan::plan_line(line).map_err(scan("SQLAdaptiveExecutionUpdate"))? {
                (execution_id, Some(plan)) => Event::SqlPlanUpdate {
                    execution_id,
                    plan: Box::new(plan),
                },
                (_, None) => return Ok(None),
            }
        }
        _ => {
            let (execution_id, updates) =
                sqlplan::accum_line(line).map_err(scan("DriverAccumUpdates"))?;
            Event::SqlDriverAccums {
                execution_id,
                updates,
            }
        }
    }))
}

/// `SparkListenerTaskStart`, read with the structural scanner: ids only.
fn task_start(line: &[u8]) -> Result<Event, ScanError> {
    let (mut stage_id, mut attempt) = (None, 0u32);
    let (mut task_id, mut executor_id) = (None, None);
    // `Task Info` is read where it stands (not skipped first to find its end).
    scan::members_at(line, |k, at| {
        if k == b"Task Info" {
            return scan::members_end_at(line, at, |k, v| {
                match k {
                    b"Task ID" => task_id = Some(count("Task ID", v)?),
                    b"Executor ID" => executor_id = Some(scan::string("Executor ID", v)?),
                    _ => {}
                }
                Ok(())
            });
        }
        let end = scan::skip_value(line, at)?;
        match k {
            b"Stage ID" => stage_id = Some(count("Stage ID", &line[at..end])?),
            b"Stage Attempt ID" => attempt = count("Stage Attempt ID", &line[at..end])? as u32,
            _ => {}
        }
        Ok(end)
    })?;
    Ok(Event::TaskStart(TaskStartObs {
        stage_id: stage_id.ok_or(ScanError::Missing("Stage ID"))?,
        attempt,
        task_id: task_id.ok_or(ScanError::Missing("Task ID"))?,
        executor_id: executor_id.ok_or(ScanError::Missing("Executor ID"))?,
    }))
}

/// `SparkListenerJobEnd`, read with the structural scanner: a failed job's `Exception` (its
/// message and stack trace, often kilobytes of escaped newlines) is jumped over by its brackets
/// rather than read string by string.
fn job_end(line: &[u8]) -> Result<Event, ScanError> {
    let (mut job_id, mut completion_ms, mut result) = (None, None, None);
    scan::members_at(line, |k, at| {
        if k == b"Job Result" {
            return scan::members_end_at(line, at, |k, v| {
                if k == b"Result" {
                    result = Some(scan::string("Result", v)?);
                }
                Ok(())
            });
        }
        let end = scan::skip_value(line, at)?;
        let v = &line[at..end];
        match k {
            b"Job ID" => job_id = Some(count("Job ID", v)?),
            b"Completion Time" if v != b"null" => completion_ms = Some(int("Completion Time", v)?),
            _ => {}
        }
        Ok(end)
    })?;
    Ok(Event::JobEnd {
        job_id: job_id.ok_or(ScanError::Missing("Job ID"))?,
        completion_ms,
        succeeded: result.ok_or(ScanError::Missing("Result"))? == "JobSucceeded",
    })
}

/// What a task-end line says, filled member by member.
#[derive(Default)]
struct TaskEndAcc {
    stage_id: Option<u64>,
    attempt: u32,
    reason: Option<Vec<u8>>,
    task_id: Option<u64>,
    executor_id: Option<String>,
    launch: i64,
    finish: i64,
    failed: bool,
    killed: bool,
    m: TaskTotals,
    /// `Task Info`.`Locality`.
    locality: Option<Locality>,
    /// `Task Info`.`Getting Result Time`: when the driver started fetching the result (epoch
    /// ms; 0 when it did not, the usual case).
    getting_result: i64,
    /// `Task Metrics`.`Result Serialization Time`, ms (for the scheduler delay).
    result_ser_ms: u64,
    /// The event had `Task Metrics` (the scheduler delay is computed only then, as Spark does).
    has_metrics: bool,
}

impl TaskEndAcc {
    /// A top-level member (`Task Info` and `Task Metrics` included, for the full scan).
    fn top(&mut self, k: &[u8], v: &[u8]) -> Result<(), ScanError> {
        match k {
            b"Stage ID" => self.stage_id = Some(count("Stage ID", v)?),
            b"Stage Attempt ID" => self.attempt = count("Stage Attempt ID", v)? as u32,
            b"Task End Reason" if v != b"null" => members(v, |k, v| {
                // Nearly every task succeeded: that reason is recognised as written, not
                // copied out (a task without a reason counts as succeeded too).
                if k == b"Reason" && v != br#""Success""# {
                    self.reason = Some(scan::string("Reason", v)?.into_bytes());
                }
                Ok(())
            })?,
            b"Task Info" => members(v, |k, v| self.info(k, v))?,
            b"Task Metrics" if v != b"null" => self.metrics(v)?,
            _ => {}
        }
        Ok(())
    }

    /// `Task Metrics`.
    fn metrics(&mut self, v: &[u8]) -> Result<(), ScanError> {
        self.has_metrics = true;
        task_metrics(v, &mut self.m, &mut self.result_ser_ms).map(|_| ())
    }

    /// A member of `Task Info`.
    fn info(&mut self, k: &[u8], v: &[u8]) -> Result<(), ScanError> {
        match k {
            b"Task ID" => self.task_id = Some(count("Task ID", v)?),
            b"Executor ID" => self.executor_id = Some(scan::string("Executor ID", v)?),
            b"Launch Time" => self.launch = int("Launch Time", v)?,
            b"Finish Time" => self.finish = int("Finish Time", v)?,
            b"Failed" => self.failed = boolean("Failed", v)?,
            b"Killed" => self.killed = boolean("Killed", v)?,
            b"Locality" => self.locality = Some(locality(v)),
            b"Getting Result Time" => self.getting_result = int("Getting Result Time", v)?,
            _ => {}
        }
        Ok(())
    }

    /// The fast path, for lines shaped as Spark writes them: members up to `Task Info`, then
    /// `Task Info` up to `Accumulables` (its last member, and most of the line), then a jump to
    /// `Task Metrics`, the line's last member. `Ok(false)` when the line is shaped otherwise;
    /// the caller then scans it in full.
    fn fast(&mut self, line: &[u8]) -> Result<bool, ScanError> {
        const KEY: &[u8] = b"\"Task Metrics\":";
        let Some(info_at) = scan::members_until(line, Some(b"Task Info"), |k, v| self.top(k, v))?
        else {
            return Ok(false);
        };
        let info = &line[info_at..];
        if scan::members_until(info, Some(b"Accumulables"), |k, v| self.info(k, v))?.is_none() {
            return Ok(false);
        }
        // A key is always followed by `:` right after its closing quote; inside a string value
        // the quotes would be escaped, so this finds only a member, and no member of
        // `Accumulables` or `Task Executor Metrics` has that name. The search runs forward (a
        // vector search: 4,200 instructions a line for the reverse one, which is not) from
        // `Task Info`; the value found must be the line's last, or the line is scanned in full.
        // One finder for every line (building it per line cost 1.5 % of a log's read).
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(KEY));
        let Some(p) = FINDER.find(&line[info_at..]).map(|p| info_at + p) else {
            return Ok(false);
        };
        // Its members are read as they are walked (not skipped first to see where the value
        // ends); what follows it must close the line (else the caller starts over).
        let v = line[p + KEY.len()..].trim_ascii_start();
        let end = match v.strip_prefix(b"null") {
            Some(_) => 4,
            None => {
                self.has_metrics = true;
                task_metrics(v, &mut self.m, &mut self.result_ser_ms)?
            }
        };
        Ok(scan::closes_line(&v[end..]))
    }
}

/// `SparkListenerTaskEnd`, read with the structural scanner: only `Task Info`'s ids, times and
/// locality, the end reason and the metrics of [`task_metrics`] are looked at; `Accumulables` and
/// executor metrics are
/// jumped over (see [`TaskEndAcc::fast`]) or, for lines shaped otherwise, skipped by their
/// brackets.
fn task_end(line: &[u8]) -> Result<Event, ScanError> {
    let mut a = TaskEndAcc::default();
    if !a.fast(line).unwrap_or(false) {
        a = TaskEndAcc::default();
        members(line, |k, v| a.top(k, v))?;
    }
    let reason = a.reason.as_deref();
    let outcome = if a.killed || reason == Some(b"TaskKilled") {
        TaskOutcome::Killed
    } else if a.failed || reason.is_some_and(|r| r != b"Success") {
        TaskOutcome::Failed
    } else {
        TaskOutcome::Succeeded
    };
    let finish_ms = a.finish.max(a.launch);
    let mut metrics = a.m;
    if a.has_metrics {
        metrics.scheduler_delay_ms =
            scheduler_delay(a.launch, finish_ms, a.getting_result, &a.m, a.result_ser_ms);
    }
    Ok(Event::TaskEnd(TaskEndObs {
        stage_id: a.stage_id.ok_or(ScanError::Missing("Stage ID"))?,
        attempt: a.attempt,
        task_id: a.task_id.ok_or(ScanError::Missing("Task ID"))?,
        executor_id: a.executor_id.ok_or(ScanError::Missing("Executor ID"))?,
        outcome,
        launch_ms: a.launch,
        finish_ms,
        metrics,
        locality: a.locality,
    }))
}

/// A task's scheduler delay as the Spark UI computes it (`AppStatusUtils.schedulerDelay`): its
/// duration less executor run time, deserialization, result serialization and the time the
/// driver spent getting its result (finish minus `Getting Result Time`, when that is set), at
/// least 0.
fn scheduler_delay(
    launch: i64,
    finish: i64,
    fetch_start: i64,
    m: &TaskTotals,
    result_ser_ms: u64,
) -> u64 {
    let duration = finish.saturating_sub(launch);
    let getting_result = if fetch_start > 0 {
        finish.saturating_sub(fetch_start)
    } else {
        0
    };
    let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    duration
        .saturating_sub(ms(m.run_time_ms))
        .saturating_sub(ms(m.deserialize_ms))
        .saturating_sub(ms(result_ser_ms))
        .saturating_sub(getting_result)
        .max(0) as u64
}

/// A `Locality` value (a JSON string) without allocating: Spark's names, else `Other`.
fn locality(v: &[u8]) -> Locality {
    match v {
        [b'"', name @ .., b'"'] => Locality::from_spark(name),
        _ => Locality::Other,
    }
}

/// The members of `Task Metrics` the model sums; `result_ser_ms` gets `Result Serialization
/// Time` (only the scheduler delay needs it). Returns the index in `v` just past the object. The
/// nested metrics objects are read where they stand, in the one pass over the value.
fn task_metrics(v: &[u8], m: &mut TaskTotals, result_ser_ms: &mut u64) -> Result<usize, ScanError> {
    scan::members_at(v, |k, at| {
        match k {
            b"Input Metrics" => return one(v, at, b"Bytes Read", &mut m.input_bytes),
            b"Output Metrics" => return one(v, at, b"Bytes Written", &mut m.output_bytes),
            b"Shuffle Write Metrics" => {
                return one(v, at, b"Shuffle Bytes Written", &mut m.shuffle_write_bytes)
            }
            b"Shuffle Read Metrics" => return shuffle_read(v, at, m),
            _ => {}
        }
        let end = scan::skip_value(v, at)?;
        let x = &v[at..end];
        match k {
            b"Executor Run Time" => m.run_time_ms = count("Executor Run Time", x)?,
            b"Executor Deserialize Time" => {
                m.deserialize_ms = count("Executor Deserialize Time", x)?
            }
            b"Result Serialization Time" => *result_ser_ms = count("Result Serialization Time", x)?,
            b"Peak Execution Memory" => {
                m.peak_execution_memory_bytes = count("Peak Execution Memory", x)?
            }
            b"Executor CPU Time" => m.cpu_time_ns = count("Executor CPU Time", x)?,
            b"JVM GC Time" => m.gc_time_ms = count("JVM GC Time", x)?,
            b"Memory Bytes Spilled" => m.memory_spilled_bytes = count("Memory Bytes Spilled", x)?,
            b"Disk Bytes Spilled" => m.disk_spilled_bytes = count("Disk Bytes Spilled", x)?,
            _ => {}
        }
        Ok(end)
    })
}

/// `Shuffle Read Metrics`, the value at `b[at]`, in one pass: bytes read (remote + local) and
/// fetch wait time. Returns the index just past the value.
fn shuffle_read(b: &[u8], at: usize, m: &mut TaskTotals) -> Result<usize, ScanError> {
    if b[at..].starts_with(b"null") {
        return scan::skip_value(b, at);
    }
    let (mut remote, mut local) = (0u64, 0u64);
    let end = scan::members_end_at(b, at, |k, v| {
        match k {
            b"Remote Bytes Read" => remote = count("metric", v)?,
            b"Local Bytes Read" => local = count("metric", v)?,
            b"Fetch Wait Time" => m.fetch_wait_ms = count("Fetch Wait Time", v)?,
            _ => {}
        }
        Ok(())
    })?;
    m.shuffle_read_bytes = remote.saturating_add(local);
    Ok(end)
}

/// Read member `key` of the object at `b[at]` (a null object: unchanged). Returns the index
/// just past the value.
fn one(b: &[u8], at: usize, key: &'static [u8], out: &mut u64) -> Result<usize, ScanError> {
    if b[at..].starts_with(b"null") {
        return scan::skip_value(b, at);
    }
    scan::members_end_at(b, at, |k, v| {
        if k == key {
            *out = count("metric", v)?;
        }
        Ok(())
    })
}

fn owned(s: Option<Cow<'_, str>>) -> Option<String> {
    s.map(Cow::into_owned)
}

fn stage(s: json::StageEvent, submitted: bool) -> Event {
    let props = s.props.unwrap_or_default();
    let mut i = s.info;
    let mut records = StageRecordsObs {
        stage_id: i.stage_id,
        attempt: i.attempt,
        ..StageRecordsObs::default()
    };
    for a in i.accumulables.take().unwrap_or_default() {
        if let (Some(n), Some(v)) = (a.name, a.value.and_then(|v| v.as_u64())) {
            records.add(&n, v);
        }
    }
    let rdds = match (submitted, i.rdd_info.take()) {
        (true, Some(infos)) => persisted_rdds(infos),
        _ => Vec::new(),
    };
    let status = match (submitted, &i.failure) {
        (true, _) => StageStatus::Active,
        (false, Some(_)) => StageStatus::Failed,
        (false, None) => StageStatus::Complete,
    };
    let obs = StageObs {
        stage_id: i.stage_id,
        attempt: i.attempt,
        status,
        name: owned(i.name),
        job_group: owned(props.job_group),
        description: owned(props.description),
        num_tasks: i.num_tasks,
        active_tasks: None,
        submission_ms: i.submission,
        completion_ms: if submitted { None } else { i.completion },
        task_counts: None,
        totals: None,
    };
    if submitted {
        Event::StageSubmitted(obs, rdds)
    } else {
        Event::StageCompleted(obs, records)
    }
}

fn connect_op(o: json::ConnectOperation, started: bool) -> Event {
    let job_tag = o.job_tag.into_owned();
    if !started {
        return Event::ConnectOperationClosed { job_tag };
    }
    Event::ConnectOperation {
        job_tag,
        statement: o
            .statement
            .as_deref()
            .and_then(crate::model::attribution::statement_summary),
        session_tags: o.session_tags.unwrap_or_default(),
    }
}

fn job_start(j: json::JobStart) -> Event {
    let props = j.props.unwrap_or_default();
    let infos = j.stage_infos.unwrap_or_default();
    // The job's name is its last stage's (what Spark's own status store does).
    let name = infos
        .iter()
        .max_by_key(|s| s.stage_id)
        .and_then(|s| s.name.as_deref())
        .map(str::to_string);
    let stage_ids = j
        .stage_ids
        .unwrap_or_else(|| infos.iter().map(|s| s.stage_id).collect());
    let tags: Vec<String> = props
        .tags
        .as_deref()
        .map(|t| {
            t.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    // A Spark Connect job runs in its client's session, whose `spark.app.name` is the client's.
    let client_app = props
        .app_name
        .filter(|_| tags.iter().any(|t: &String| t.starts_with("SparkConnect_")))
        .map(Cow::into_owned);
    let parents = infos
        .iter()
        .map(|s| (s.stage_id, s.parents.clone().unwrap_or_default()))
        .collect();
    Event::JobStart {
        parents,
        job: JobObs {
            job_id: j.job_id,
            job_group: owned(props.job_group),
            description: owned(props.description),
            status: JobStatus::Running,
            submission_ms: j.submission,
            completion_ms: None,
            stage_ids,
            sql_execution_id: props.sql_execution_id.and_then(|s| s.trim().parse().ok()),
            tags,
            name,
            client_app,
        },
    }
}

fn executor(e: json::ExecutorEvent, added: bool) -> Event {
    let cores = e.info.as_ref().and_then(|i| i.cores);
    Event::Executor(ExecutorObs {
        total_cores: cores,
        resource_profile_id: e.info.as_ref().and_then(|i| i.resource_profile_id),
        executor_id: e.executor_id.into_owned(),
        active: Some(added),
        remove_reason: if added { None } else { owned(e.reason) },
        add_ms: if added { e.time } else { None },
        remove_ms: if added { None } else { e.time },
        max_tasks: cores,
        ..ExecutorObs::default()
    })
}

fn progress(p: json::ProgressEvent) -> Event {
    let p = p.progress;
    let sources = p.sources.unwrap_or_default();
    // Spark 3.x/4.x serialise only the per-source values; the query totals are their sums.
    let sum = |f: fn(&json::SourceProgress) -> f64| sources.iter().map(f).sum::<f64>();
    let rows = p
        .num_input_rows
        .map(|c| c.0)
        .unwrap_or_else(|| sources.iter().map(|s| s.num_input_rows.0).sum());
    let durations = p.durations.unwrap_or_default();
    let event_time = p.event_time.unwrap_or_default();
    Event::StreamingProgress(StreamingProgressObs {
        query_id: p.id.into_owned(),
        name: owned(p.name),
        batch_id: p.batch_id,
        start_ms: p.timestamp.as_deref().and_then(instant_ms),
        num_input_rows: rows,
        input_rows_per_second: p
            .input_rate
            .0
            .unwrap_or_else(|| sum(|s| s.input_rate.0.unwrap_or(0.0))),
        processed_rows_per_second: p
            .processed_rate
            .0
            .unwrap_or_else(|| sum(|s| s.processed_rate.0.unwrap_or(0.0))),
        batch_duration_ms: durations.get("triggerExecution").map_or(0, |c| c.0),
        phases_ms: durations.into_iter().map(|(k, v)| (k, v.0)).collect(),
        // Spark reports the epoch as the watermark until one is set: no watermark yet.
        watermark_ms: event_time
            .watermark
            .as_deref()
            .and_then(instant_ms)
            .filter(|w| *w > 0),
        event_time_max_ms: event_time.max.as_deref().and_then(instant_ms),
        state_operators: p
            .state_operators
            .unwrap_or_default()
            .into_iter()
            .map(|o| StateOperatorObs {
                name: o.name.map(Cow::into_owned).unwrap_or_default(),
                rows_total: o.rows_total.0,
                memory_bytes: o.memory_bytes.0,
                dropped_by_watermark: o.dropped_by_watermark.0,
            })
            .collect(),
        sources: sources
            .into_iter()
            .map(|s| SourceProgressObs {
                description: s.description.map(Cow::into_owned).unwrap_or_default(),
                input_rows: s.num_input_rows.0,
                input_rows_per_second: s.input_rate.0,
                processed_rows_per_second: s.processed_rate.0,
            })
            .collect(),
    })
}

/// The events of the cost and cache metrics (application properties, RDD blocks, unpersists);
/// `Ok(None)` for Spark's other events, which the exporter does not use.
fn cost_cache_event(name: &str, line: &[u8]) -> Result<Option<Event>, ParseError> {
    fn read<'a, T: serde::Deserialize<'a>>(
        line: &'a [u8],
        event: &'static str,
    ) -> Result<T, ParseError> {
        serde_json::from_slice(line).map_err(|source| ParseError::Json { event, source })
    }
    Ok(match name {
        "SparkListenerBlockUpdated" => {
            // Most block updates are broadcast pieces: only RDD blocks are read.
            if memchr::memmem::find(line, br#""Block ID":"rdd_"#).is_none() {
                return Ok(None);
            }
            block_updated(read(line, "BlockUpdated")?)
        }
        "SparkListenerEnvironmentUpdate" => {
            let props = environment_props(line)?
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(k, v)| match v {
                    serde_json::Value::String(v) => Some((k, v)),
                    _ => None,
                })
                .collect();
            Some(Event::AppProps(AppPropsObs::from_properties(props)))
        }
        "SparkListenerResourceProfileAdded" => {
            let e: json::ResourceProfileAdded = read(line, "ResourceProfileAdded")?;
            let requests = e.executor.unwrap_or_default();
            Some(Event::AppProps(AppPropsObs::from_profile(
                ResourceProfileObs::from_requests(
                    e.id,
                    requests
                        .iter()
                        .filter_map(|(k, r)| Some((k.as_str(), r.amount?))),
                ),
            )))
        }
        "SparkListenerStageExecutorMetrics" => {
            let e: json::StageExecutorMetrics = read(line, "StageExecutorMetrics")?;
            Some(Event::StagePeaks(StagePeaksObs {
                stage_id: e.stage_id,
                attempt: e.attempt,
                executor_id: e.executor_id.into_owned(),
                metrics: e
                    .metrics
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, v.as_u64()?)))
                    .collect(),
            }))
        }
        "SparkListenerUnpersistRDD" => Some(Event::RddUnpersisted {
            rdd_id: read::<json::UnpersistRdd>(line, "UnpersistRDD")?.rdd_id,
        }),
        _ => None,
    })
}

/// The RDDs of a stage's `RDD Info` whose storage level uses memory or disk (Spark tracks
/// those in its Storage tab).
fn persisted_rdds(infos: Vec<json::RddInfo<'_>>) -> Vec<RddInfoObs> {
    infos
        .into_iter()
        .filter(|r| r.level.is_some_and(|l| l.valid()))
        .filter_map(|r| {
            Some(RddInfoObs {
                rdd_id: r.id?,
                name: owned(r.name).unwrap_or_default(),
                partitions: r.partitions.unwrap_or(0),
            })
        })
        .collect()
}

/// An RDD block's update (`rdd_<rdd>_<partition>`); `None` for other blocks. Sizes count only
/// where the level stores them, as in Spark's status store.
fn block_updated(b: json::BlockUpdated<'_>) -> Option<Event> {
    let i = b.info;
    let (rdd, part) = i.block_id.strip_prefix("rdd_")?.split_once('_')?;
    let level = i.level;
    Some(Event::BlockUpdated(BlockObs {
        rdd_id: rdd.parse().ok()?,
        partition: part.parse().ok()?,
        executor_id: i.manager.executor_id.into_owned(),
        memory_bytes: if level.use_memory { i.memory.0 } else { 0 },
        disk_bytes: if level.use_disk { i.disk.0 } else { 0 },
        stored: level.valid(),
    }))
}

/// An ISO-8601 instant as Spark's progress JSON writes it (`2026-12-01T01:03:37.000Z`), in
/// epoch milliseconds; `None` when it is not one.
fn instant_ms(s: &str) -> Option<EpochMs> {
    let t = humantime::parse_rfc3339_weak(s.trim()).ok()?;
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).ok(),
        Err(e) => i64::try_from(e.duration().as_millis()).ok().map(|m| -m),
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;

/// The `Spark Properties` of a `SparkListenerEnvironmentUpdate` line. The scanner finds the
/// member and serde reads only its value: the rest (the classpath, system and Hadoop
/// properties: most of the line's bytes, a sixth of a small application's log) is skipped by
/// its brackets and strings, not parsed. A line the scanner cannot walk is read whole by serde,
/// as before.
fn environment_props(
    line: &[u8],
) -> Result<Option<std::collections::BTreeMap<String, serde_json::Value>>, ParseError> {
    let json_error = |source| ParseError::Json {
        event: "EnvironmentUpdate",
        source,
    };
    let mut found = None;
    let walked = super::scan::members(line, |k, v| {
        if k == b"Spark Properties" {
            found = Some(v);
        }
        Ok(())
    });
    if walked.is_ok() {
        return match found {
            Some(v) => serde_json::from_slice(v).map_err(json_error),
            None => Ok(None),
        };
    }
    let e: json::EnvironmentUpdate = serde_json::from_slice(line).map_err(json_error)?;
    Ok(e.props)
}
