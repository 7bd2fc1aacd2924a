//! `spark-exporter diagnose`: the Spark UI's top-down reading of an application as a command.
//!
//! The same collectors as the exporter fill one model (`read`): the event-log reader (files,
//! folders, object storage) or one one-shot REST read of a live driver or History Server. Then
//! the procedure ([`rules`]) reads it through the model's view and ranks the findings by the time
//! they explain; [`text`] prints them for a human, `--format json` as a [`report::Report`]
//! (versioned, with a committed JSON Schema).
//!
//! The procedure, the report and its text are the crate `spark-exporter-diagnose` (re-exported
//! here under their old paths); this module gathers the application it reads:
//! - [`report`]: the report's types and schema version.
//! - [`rules`]: the procedure's steps and each finding's cost formula.
//! - [`links`]: Spark UI links of stages and SQL executions.
//! - [`text`]: the human rendering.
//! - [`review`] (this crate's): `--review`, many applications one at a time, folded into the
//!   crate's [`spark_exporter_diagnose::review::Ranking`].

pub use spark_exporter_diagnose::{advice, app_html, compare, links, report, rules, text, whatif};

pub mod compared;
pub mod live;
pub mod review;
pub mod runconf;
pub mod unzip;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::Settings;
use crate::model::details::StageDetail;
use crate::model::view::AppView;
use crate::model::Model;
use crate::sources::eventlog::config::EventLogConfig;
use crate::sources::rest::api::ApplicationInfo;
use crate::sources::rest::client::{Client, ClientError};
use crate::sources::rest::config::SparkConfig;
use crate::sources::rest::PollError;
use crate::sources::rest::Rest;
use crate::sources::Collector;
use crate::telemetry::Telemetry;

use links::Ui;
use report::{Report, SourceInfo, SCHEMA_VERSION};

/// What to diagnose.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Event-log files, folders or object-store URLs; when empty, `spark_url` is read.
    pub event_logs: Vec<String>,
    /// The live driver or History Server (REST), when no event log is given.
    pub spark_url: Option<String>,
    /// The application; required for a REST target with more than one.
    pub app_id: Option<String>,
    /// A History Server whose pages the findings of event logs link to.
    pub ui_url: Option<String>,
    /// `--target-duration`, seconds: the what-if's cheapest executor count within it.
    pub target_seconds: Option<f64>,
}

/// Why a diagnosis could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DiagnoseError {
    /// The application is not there.
    #[error("no application {id:?} in {inputs}{}", known_list(.known))]
    NotFound {
        /// The id asked for.
        id: String,
        /// Where it was looked for.
        inputs: String,
        /// The applications that are there (at most 20).
        known: Vec<String>,
    },
    /// Nothing to diagnose.
    #[error("no application found in {0}")]
    Empty(String),
    /// A REST target with several applications and no `--app-id`.
    #[error("{url} serves {n} applications; pick one with --app-id:{}", known_list(.ids))]
    Ambiguous {
        /// The target.
        url: String,
        /// How many it lists.
        n: usize,
        /// The newest ids (at most 20).
        ids: Vec<String>,
    },
    /// The REST target failed.
    #[error("{0}")]
    Rest(#[from] ClientError),
    /// The event logs could not be read.
    #[error("reading the event logs failed: {0}")]
    EventLog(String),
    /// A one-shot read stopped.
    #[error("reading failed: {0}")]
    Read(String),
}

fn known_list(ids: &[String]) -> String {
    if ids.is_empty() {
        String::new()
    } else {
        format!("; found: {}", ids.join(", "))
    }
}

/// Most application ids an error lists.
const MAX_LISTED: usize = 20;

/// The details of every stage attempt of `app`: as it is now if the model still holds it (a
/// killed speculative task may end after its stage), else as it settled, in `(stage_id,
/// attempt)` order.
fn stages_of(app: &AppView<'_>, settled: &BTreeMap<String, Vec<StageDetail>>) -> Vec<StageDetail> {
    let key = crate::model::app_key(app.id(), app.attempt().map(|a| &**a));
    let mut v = app.stage_details();
    let held: std::collections::HashSet<(u64, u32)> =
        v.iter().map(|s| (s.stage_id, s.attempt)).collect();
    v.extend(
        settled
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|s| !held.contains(&(s.stage_id, s.attempt)))
            .cloned(),
    );
    v.sort_by_key(|s| (s.stage_id, s.attempt));
    v
}

/// Read the inputs of `req` and diagnose the application(s): with event logs, every application
/// they hold (or `req.app_id`); with REST, the one application of a live driver (or
/// `req.app_id`).
pub async fn diagnose(settings: &Settings, req: &Request) -> Result<Report, DiagnoseError> {
    diagnose_counted(settings, req, Arc::new(Telemetry::default())).await
}

/// [`diagnose`], counting what it reads (bytes, events, requests, errors) in `telemetry`.
///
/// The settings are taken as they are: the model is a diagnosis' ([`Model::for_diagnosis`]:
/// every application keeps its detail, every stage attempt's detail is kept as it settled,
/// whatever the model let go since), and a REST read is whole (every task summary, however old:
/// [`crate::sources::rest::Mode::Whole`]).
pub async fn diagnose_counted(
    settings: &Settings,
    req: &Request,
    telemetry: Arc<Telemetry>,
) -> Result<Report, DiagnoseError> {
    profiled(settings, req, telemetry).await.map(|(r, _)| r)
}

/// [`diagnose_counted`], with each application's profile for a comparison (in the report's
/// order).
pub async fn profiled(
    settings: &Settings,
    req: &Request,
    telemetry: Arc<Telemetry>,
) -> Result<(Report, Vec<compare::Profile>), DiagnoseError> {
    let settings = Arc::new(settings.clone());
    let model = Model::for_diagnosis(&settings, telemetry.clone());
    let recorded = Arc::new(runconf::Recorded::new(&settings));
    let (source, inputs, ui) = if req.event_logs.is_empty() {
        let url = req
            .spark_url
            .clone()
            .ok_or_else(|| DiagnoseError::Empty("no --event-log or --spark.url".into()))?;
        read_rest(&settings, &telemetry, &model, &url, req.app_id.as_deref()).await?;
        rest_properties(&settings, &telemetry, &model, &url, &recorded).await;
        ("rest", vec![url.clone()], Ui::Target(url))
    } else {
        let paths = narrow(&req.event_logs, req.app_id.as_deref());
        read_logs(&settings, &telemetry, &model, &recorded, &paths).await?;
        let ui = req.ui_url.clone().map_or(Ui::None, Ui::History);
        ("event_log", req.event_logs.clone(), ui)
    };
    let settled = settled(&model);
    let cfg = &settings.diagnose;
    let one = |a: &AppView<'_>| {
        let (report, _, profile) = diagnosed(a, &settled, cfg, &ui, &recorded, req.target_seconds);
        (report, profile)
    };
    let applications: Vec<(Report1, compare::Profile)> = model.view(|v| {
        let ids: Vec<String> = v.apps().map(|a| a.id().to_string()).collect();
        match &req.app_id {
            Some(id) => match v.app(id) {
                Some(a) => Ok(vec![one(&a)]),
                None => Err(DiagnoseError::NotFound {
                    id: id.clone(),
                    inputs: inputs.join(", "),
                    known: ids.into_iter().take(MAX_LISTED).collect(),
                }),
            },
            None if ids.is_empty() => Err(DiagnoseError::Empty(if source == "event_log" {
                inputs.join(", ")
                    + &crate::sources::eventlog::what_is_read(EventLogConfig::of(&settings).depth)
            } else {
                inputs.join(", ")
            })),
            None => Ok(v.apps().map(|a| one(&a)).collect()),
        }
    })?;
    let (applications, profiles) = applications.into_iter().unzip();
    let report = Report {
        schema_version: SCHEMA_VERSION,
        generator: format!("spark-exporter {}", env!("CARGO_PKG_VERSION")),
        source: SourceInfo {
            kind: source.into(),
            inputs,
            read_errors: telemetry.snapshot().eventlog_errors.values().sum(),
        },
        applications,
    };
    Ok((report, profiles))
}

/// One application diagnosed: its report (with the what-if and the advice), its stage
/// attempts, and its profile for a comparison (the recorded shape taken out).
fn diagnosed(
    a: &AppView<'_>,
    settled: &BTreeMap<String, Vec<StageDetail>>,
    cfg: &crate::config::DiagnoseConfig,
    ui: &Ui,
    recorded: &runconf::Recorded,
    target_seconds: Option<f64>,
) -> (Report1, Vec<StageDetail>, compare::Profile) {
    let stages = stages_of(a, settled);
    let report = rules::diagnose_app(a, &stages, cfg, &ui.links(a.ended()));
    let report = advised(report, recorded, a.finding_rate(), target_seconds);
    let shape = recorded.take_shape(&report.app_id);
    let profile = compare::Profile::of(&report, &stages, &shape, &recorded.of(&report.app_id));
    (report, stages, profile)
}

/// What the what-if replays of each application in the event logs `paths`, with its Spark
/// properties (`None`: no environment event), by application id: the record `diagnose` keeps
/// beside the model, for timing [`whatif::predict`] on its own (the diagnose bench).
pub async fn recorded_runs(
    settings: &Settings,
    paths: &[String],
) -> Result<Vec<(String, whatif::RunRecord, Option<BTreeMap<String, String>>)>, DiagnoseError> {
    let settings = Arc::new(settings.clone());
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::for_diagnosis(&settings, telemetry.clone());
    let recorded = Arc::new(runconf::Recorded::new(&settings));
    read_logs(&settings, &telemetry, &model, &recorded, paths).await?;
    let ids: Vec<String> = model.view(|v| v.apps().map(|a| a.id().to_string()).collect());
    Ok(ids
        .into_iter()
        .map(|id| {
            let props = recorded.of(&id).app;
            let record = recorded.take_record(&id);
            (id, record, props)
        })
        .collect())
}

/// The stage attempts `model` let go of, by application key, once its pending stages are
/// applied (after a one-shot fill).
fn settled(model: &Arc<Model>) -> BTreeMap<String, Vec<StageDetail>> {
    model.flush_pending();
    let mut settled: BTreeMap<String, Vec<StageDetail>> = BTreeMap::new();
    for (key, d) in model.take_settled_stages() {
        settled.entry(key).or_default().push(d);
    }
    settled
}

/// Every application `model` holds (filled once, to its end), diagnosed (its pending stages
/// applied first), with what a review folds beside its report (the price of its findings' time
/// and its stage attempts) and its profile for a comparison.
fn reviewed_of(
    model: &Arc<Model>,
    settings: &Settings,
    ui: &Ui,
    recorded: &runconf::Recorded,
    target_seconds: Option<f64>,
) -> Vec<(spark_exporter_diagnose::review::Reviewed, compare::Profile)> {
    let settled = settled(model);
    let cfg = &settings.diagnose;
    model.view(|v| {
        v.apps()
            .map(|a| {
                let (report, stages, profile) =
                    diagnosed(&a, &settled, cfg, ui, recorded, target_seconds);
                let reviewed = spark_exporter_diagnose::review::Reviewed {
                    report,
                    rate: a.finding_rate(),
                    stages,
                };
                (reviewed, profile)
            })
            .collect()
    })
}

/// With an application id, a local folder is narrowed to its logs of that application (a file
/// or `eventlog_v2_` folder whose name holds the id, as Spark names them), so a whole
/// `spark.eventLog.dir` is not read for one application; a folder without such a log, and any
/// other path or URL, is read whole.
fn narrow(paths: &[String], app_id: Option<&str>) -> Vec<String> {
    let Some(id) = app_id.filter(|id| !id.is_empty()) else {
        return paths.to_vec();
    };
    let mut out = vec![];
    for p in paths {
        let dir = std::path::Path::new(p);
        let mine: Vec<String> = match std::fs::read_dir(dir) {
            Ok(rd) if !p.contains("://") => rd
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains(id))
                .map(|e| e.path().to_string_lossy().into_owned())
                .collect(),
            _ => vec![],
        };
        if mine.is_empty() {
            out.push(p.clone());
        } else {
            out.extend(mine);
        }
    }
    out
}

/// `report` with its run predicted on other executor counts ([`whatif::predict`], from what
/// the event log recorded; priced at `rate`) and the advice its run's configuration gives
/// ([`advice::advise`], which reads the prediction).
fn advised(
    mut report: Report1,
    recorded: &runconf::Recorded,
    rate: Option<spark_exporter_core::model::findings::Rate>,
    target_seconds: Option<f64>,
) -> Report1 {
    let currency = recorded.currency();
    let run = recorded.of(&report.app_id);
    let record = recorded.take_record(&report.app_id);
    let ran = record.stages.values().any(|s| !s.tasks.is_empty());
    let s = whatif::Settings {
        props: run.app.as_ref(),
        per_core_second: rate.map(|r| r.per_core_second).filter(|p| *p > 0.0),
        currency: currency.as_deref(),
        target_seconds,
    };
    match whatif::predict(&record, &s) {
        Ok(w) => report.what_if = Some(w),
        Err(e) if ran => report.notes.push(format!("what if: no prediction: {e}")),
        Err(_) => {}
    }
    spark_exporter_diagnose::advice::advise(&mut report, &run);
    report
}

/// One application's report.
type Report1 = report::AppReport;

/// Read the event logs to their end into `model` (on the blocking pool: object stores block
/// on the runtime), recording each run's configuration beside it. A bad line or block is
/// counted and skipped by the reader, as in the exporter; only a log that cannot be read at all
/// fails.
async fn read_logs(
    settings: &Arc<Settings>,
    telemetry: &Arc<Telemetry>,
    model: &Arc<Model>,
    recorded: &Arc<runconf::Recorded>,
    paths: &[String],
) -> Result<(), DiagnoseError> {
    let (s, t, m, rec, p) = (
        settings.clone(),
        telemetry.clone(),
        model.clone(),
        recorded.clone(),
        paths.to_vec(),
    );
    tokio::task::spawn_blocking(move || {
        let inner = m.observer(crate::sources::source("event_log"));
        let obs = runconf::Recorder {
            inner: &inner,
            rec: &rec,
        };
        crate::sources::eventlog::ingest_paths_with(
            &p,
            &EventLogConfig::of(&s),
            m.filter(),
            &obs,
            &t,
        )
    })
    .await
    .map_err(|e| DiagnoseError::EventLog(e.to_string()))?
    .map_err(|e| DiagnoseError::EventLog(e.to_string()))
}

/// The Spark properties of every application `model` read from REST target `url` (its
/// `/environment`), recorded for advice; one that cannot be read leaves advice assuming Spark's
/// defaults, said in each suggestion.
pub(crate) async fn rest_properties(
    settings: &Settings,
    telemetry: &Arc<Telemetry>,
    model: &Arc<Model>,
    url: &str,
    recorded: &runconf::Recorded,
) {
    #[derive(serde::Deserialize)]
    struct Env {
        #[serde(rename = "sparkProperties", default)]
        spark_properties: Vec<(String, String)>,
    }
    let Ok(c) = Client::for_spark(url, &SparkConfig::of(settings), telemetry.clone()) else {
        return;
    };
    let ids: Vec<String> = model.view(|v| v.apps().map(|a| a.id().to_string()).collect());
    for id in ids {
        match c
            .get::<Env>(&format!("/api/v1/applications/{id}/environment"))
            .await
        {
            Ok(env) => recorded.properties(&id, env.spark_properties.into_iter().collect()),
            Err(e) => {
                tracing::warn!(app_id = %id, error = %e, "No environment; advice assumes Spark's \
                    defaults.")
            }
        }
    }
}

/// Read application `app_id` of the REST target `url` once, whole; without an id, the target's
/// only application.
async fn read_rest(
    settings: &Arc<Settings>,
    telemetry: &Arc<Telemetry>,
    model: &Arc<Model>,
    url: &str,
    app_id: Option<&str>,
) -> Result<(), DiagnoseError> {
    let id = match app_id {
        Some(id) => id.to_string(),
        None => only_app(settings, telemetry, url).await?,
    };
    let handle = crate::sources::counting(crate::sources::rest::plugin::NAME, telemetry.clone());
    let rest = Rest::new(settings.as_ref().into(), handle)
        .targets(vec![url.to_string()])
        .whole(Some(id.clone()));
    match rest
        .fill_once(Arc::new(model.observer(rest.source())))
        .await
    {
        Ok(()) => Ok(()),
        Err(e) => match e.downcast::<PollError>() {
            Ok(mut e) => match e.failures.pop() {
                Some((_, ClientError::HttpStatus { status: 404, .. })) => {
                    let known = list(settings, telemetry, url)
                        .await
                        .map(|l| l.into_iter().take(MAX_LISTED).map(|a| a.id).collect())
                        .unwrap_or_default();
                    Err(DiagnoseError::NotFound {
                        id,
                        inputs: url.to_string(),
                        known,
                    })
                }
                Some((_, c)) => Err(DiagnoseError::Rest(c)),
                None => Ok(()),
            },
            Err(e) => Err(DiagnoseError::Read(e.to_string())),
        },
    }
}

async fn list(
    settings: &Settings,
    telemetry: &Arc<Telemetry>,
    url: &str,
) -> Result<Vec<ApplicationInfo>, ClientError> {
    let c = Client::for_spark(url, &SparkConfig::of(settings), telemetry.clone())?;
    c.get("/api/v1/applications?limit=1000").await
}

/// The id of the target's only application (a live driver serves one).
async fn only_app(
    settings: &Settings,
    telemetry: &Arc<Telemetry>,
    url: &str,
) -> Result<String, DiagnoseError> {
    let apps = list(settings, telemetry, url).await?;
    match apps.as_slice() {
        [] => Err(DiagnoseError::Empty(url.to_string())),
        [one] => Ok(one.id.clone()),
        many => Err(DiagnoseError::Ambiguous {
            url: url.to_string(),
            n: many.len(),
            ids: many.iter().take(MAX_LISTED).map(|a| a.id.clone()).collect(),
        }),
    }
}
