//! `diagnose --compare BASELINE`: a run compared with its baseline, another run or the median of
//! the name's previous runs ([`spark_exporter_diagnose::compare`]).
//!
//! The run is what `diagnose` reads (`--event-log`, with `--app-id` when the logs hold several
//! applications). The baseline is:
//! - `previous`: the name's previous runs in the run's own `--event-log` locations;
//! - a log, a folder or an object-store prefix: the one run it holds, or, when it holds several,
//!   the name's previous runs there;
//! - anything else: an application id, looked for in the run's `--event-log` locations.
//!
//! Previous runs are read one at a time into a fresh model, as `--review` reads them, and only
//! their profiles are kept (the last `runs` by start).
//!
//! From a History Server (`--spark.url`, no `--event-log`), the runs are its applications: each
//! one's event logs are downloaded (`/api/v1/applications/{id}/logs`, a zip) into a temporary
//! folder, removed afterwards, and read as above; `previous` is the name's applications the
//! server lists that started before the run.

use std::sync::Arc;

use std::path::{Path, PathBuf};

use super::compare::{self, Comparison, Profile};
use super::{profiled, DiagnoseError, Request};
use crate::config::Settings;
use crate::sources::eventlog::config::EventLogConfig;
use crate::sources::eventlog::Listed;
use crate::sources::rest::api::ApplicationInfo;
use crate::sources::rest::client::Client;
use crate::sources::rest::config::SparkConfig;
use crate::telemetry::Telemetry;

/// What to compare.
#[derive(Debug, Clone, Default)]
pub struct CompareRequest {
    /// The run, as `diagnose` reads it (event logs only).
    pub run: Request,
    /// `previous`, a location, or an application id.
    pub baseline: String,
    /// The median is over at most this many previous runs, the latest.
    pub runs: usize,
    /// Compare runs of different applications.
    pub force: bool,
}

/// Why there is no comparison.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// Reading the run or the baseline failed.
    #[error("{0}")]
    Diagnose(#[from] DiagnoseError),
    /// The two runs are of different applications, or the run is not one application.
    #[error("{0}")]
    Refused(String),
    /// No baseline run was found.
    #[error("{0}")]
    NoBaseline(String),
}

/// The baseline's reading of `--compare`.
enum Source<'a> {
    Previous(Vec<String>),
    Location(&'a str),
    Id(&'a str),
}

fn generator() -> String {
    format!("spark-exporter {}", env!("CARGO_PKG_VERSION"))
}

/// Compare `req`'s run with its baseline.
pub async fn compared(
    settings: &Settings,
    req: &CompareRequest,
) -> Result<Comparison, CompareError> {
    if req.run.event_logs.is_empty() {
        return from_history(settings, req).await;
    }
    let run = one_run(settings, &req.run, "the run").await?;
    let b = req.baseline.as_str();
    let source = if b == "previous" {
        Source::Previous(req.run.event_logs.clone())
    } else if b.contains("://") || std::path::Path::new(b).exists() {
        Source::Location(b)
    } else {
        Source::Id(b)
    };
    let (base, baseline) = match source {
        Source::Previous(locations) => {
            let mut listed = vec![];
            for l in locations {
                let logs = list(settings, &l).await?;
                listed.push((l, logs));
            }
            median(settings, listed, &run, req.runs).await?
        }
        Source::Location(l) => {
            let listed = list(settings, l).await?;
            if listed.logs.len() == 1 {
                let r = Request {
                    event_logs: vec![l.to_string()],
                    ..Request::default()
                };
                single(one_run(settings, &r, "the baseline").await?, l)
            } else {
                median(settings, vec![(l.to_string(), listed)], &run, req.runs).await?
            }
        }
        Source::Id(id) => {
            let r = Request {
                event_logs: req.run.event_logs.clone(),
                app_id: Some(id.to_string()),
                ..Request::default()
            };
            let input = req.run.event_logs.join(", ");
            single(one_run(settings, &r, "the baseline").await?, &input)
        }
    };
    if base.app_name != run.app_name && !req.force {
        return Err(CompareError::Refused(format!(
            "the run {} is of application {:?}, the baseline {} of {:?}: runs of two \
             different applications are not compared (--force compares them anyway)",
            run.app_id, run.app_name, baseline.closest, base.app_name
        )));
    }
    Ok(compare::compare(&run, &base, baseline, &generator()))
}

/// The baseline of one run read at `input`.
fn single(p: Profile, input: &str) -> (Profile, compare::types::Baseline) {
    let b = compare::types::Baseline {
        kind: "run".into(),
        runs: vec![p.app_id.clone()],
        closest: p.app_id.clone(),
        input: input.into(),
    };
    (p, b)
}

/// The one application `req` reads (`what`: the run or the baseline, for the message).
async fn one_run(settings: &Settings, req: &Request, what: &str) -> Result<Profile, CompareError> {
    let (report, mut profiles) = profiled(settings, req, Arc::new(Telemetry::default())).await?;
    if profiles.len() != 1 {
        let ids: Vec<&str> = report
            .applications
            .iter()
            .map(|a| a.app_id.as_str())
            .take(20)
            .collect();
        return Err(CompareError::Refused(format!(
            "{what}: {} holds {} applications; pick one with {}: {}",
            req.event_logs.join(", "),
            profiles.len(),
            if what == "the run" {
                "--app-id"
            } else {
                "its id as --compare"
            },
            ids.join(", ")
        )));
    }
    Ok(profiles.remove(0))
}

/// The logs `location` holds (on the blocking pool: object stores block on the runtime).
async fn list(settings: &Settings, location: &str) -> Result<Listed, CompareError> {
    let (s, l) = (Arc::new(settings.clone()), location.to_string());
    let listed = tokio::task::spawn_blocking(move || {
        crate::sources::eventlog::list_logs(
            &l,
            &EventLogConfig::of(&s),
            &Arc::new(Telemetry::default()),
        )
    })
    .await
    .map_err(|e| DiagnoseError::EventLog(e.to_string()))?;
    listed.map_err(|e| CompareError::Diagnose(DiagnoseError::EventLog(format!("{location}: {e}"))))
}

/// The median over the previous runs of `run`'s name in the `listed` locations (at most `n`,
/// the latest that started before it).
async fn median(
    settings: &Settings,
    listed: Vec<(String, Listed)>,
    run: &Profile,
    n: usize,
) -> Result<(Profile, compare::types::Baseline), CompareError> {
    let settings = Arc::new(settings.clone());
    let locations: Vec<String> = listed.iter().map(|(l, _)| l.clone()).collect();
    let mut previous: Vec<Profile> = vec![];
    for (_, listed) in listed {
        let root = Arc::new(listed.root);
        for found in listed.logs {
            let shown = crate::sources::eventlog::shown(&found, &root);
            let (s, r) = (settings.clone(), root.clone());
            let one = tokio::task::spawn_blocking(move || {
                super::review::read_one(found, &r, &s, &super::links::Ui::None, None)
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r);
            match one {
                Ok((apps, _)) => previous.extend(apps.into_iter().map(|(_, p)| p).filter(|p| {
                    p.app_name == run.app_name
                        && p.app_id != run.app_id
                        && match (p.start_ms, run.start_ms) {
                            (Some(a), Some(b)) => a < b,
                            _ => true,
                        }
                })),
                Err(e) => {
                    tracing::warn!(input = %shown, error = %e, "Cannot read this log; skipped.")
                }
            }
        }
    }
    if previous.is_empty() {
        return Err(CompareError::NoBaseline(format!(
            "no previous run of {:?} (before {}) in {}",
            run.app_name,
            run.app_id,
            locations.join(", ")
        )));
    }
    previous.sort_by_key(|p| p.start_ms);
    let skip = previous.len().saturating_sub(n.max(1));
    let previous = previous.split_off(skip);
    let (base, closest) = compare::median_of(&previous);
    let b = compare::types::Baseline {
        kind: if previous.len() == 1 { "run" } else { "median" }.into(),
        runs: previous.iter().map(|p| p.app_id.clone()).collect(),
        closest: previous[closest].app_id.clone(),
        input: locations.join(", "),
    };
    Ok((base, b))
}

/// A temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// [`compared`] over a History Server's applications: the run (`--app-id`) and its baseline
/// downloaded as event logs.
async fn from_history(
    settings: &Settings,
    req: &CompareRequest,
) -> Result<Comparison, CompareError> {
    let url = req
        .run
        .spark_url
        .clone()
        .ok_or_else(|| DiagnoseError::Empty("no --event-log or --spark.url".into()))?;
    let id = req
        .run
        .app_id
        .clone()
        .ok_or_else(|| CompareError::Refused(format!("{url}: pick the run with --app-id")))?;
    let client = Client::for_spark(
        &url,
        &SparkConfig::of(settings),
        Arc::new(Telemetry::default()),
    )
    .map_err(DiagnoseError::Rest)?;
    let dir = Scratch(std::env::temp_dir().join(format!(
        "spark-exporter-compare-{}-{}",
        std::process::id(),
        crate::clock::system_now_ms()
    )));
    let run_dir = download(&client, &id, &dir.0.join("run")).await?;
    let mut local = req.clone();
    local.run.event_logs = vec![run_dir];
    local.run.spark_url = None;
    local.run.app_id = None;
    let b = req.baseline.as_str();
    if b == "previous" {
        let run = one_run(settings, &local.run, "the run").await?;
        let apps: Vec<ApplicationInfo> = client
            .get("/api/v1/applications?status=completed&limit=1000")
            .await
            .map_err(DiagnoseError::Rest)?;
        let mut earlier: Vec<(i64, String)> = apps
            .into_iter()
            .filter(|a| a.name.as_deref() == Some(run.app_name.as_str()) && a.id != run.app_id)
            .filter_map(|a| {
                let start = a.attempts.iter().map(|t| t.start_time_epoch).min()?;
                run.start_ms
                    .is_none_or(|r| start < r)
                    .then_some((start, a.id))
            })
            .collect();
        earlier.sort();
        let keep = earlier.split_off(earlier.len().saturating_sub(req.runs.max(1)));
        if keep.is_empty() {
            return Err(CompareError::NoBaseline(format!(
                "no previous run of {:?} (before {}) in {url}",
                run.app_name, run.app_id
            )));
        }
        let base = dir.0.join("previous");
        for (_, id) in &keep {
            download(&client, id, &base.join(id)).await?;
        }
        local.baseline = base.to_string_lossy().into_owned();
        if keep.len() == 1 {
            local.baseline = base.join(&keep[0].1).to_string_lossy().into_owned();
        }
    } else if !(b.contains("://") || Path::new(b).exists()) {
        local.baseline = download(&client, b, &dir.0.join("baseline")).await?;
    }
    let mut c = Box::pin(compared(settings, &local)).await?;
    // Name the server, not the temporary folder.
    c.baseline.input = if b.contains("://") || Path::new(b).exists() {
        b.to_string()
    } else {
        url
    };
    Ok(c)
}

/// The event logs of application `id`, downloaded from the History Server into `dir`.
async fn download(client: &Client, id: &str, dir: &Path) -> Result<String, CompareError> {
    let path = format!(
        "/api/v1/applications/{}/logs",
        crate::sources::rest::poller::encode_segment(id)
    );
    let zip = client.get_bytes(&path).await.map_err(DiagnoseError::Rest)?;
    let (d, z) = (dir.to_path_buf(), zip);
    let files = tokio::task::spawn_blocking(move || super::unzip::unzip(&z, &d))
        .await
        .map_err(|e| DiagnoseError::Read(e.to_string()))?
        .map_err(|e| DiagnoseError::Read(format!("the event logs of {id}: {e}")))?;
    if files.is_empty() {
        return Err(CompareError::NoBaseline(format!(
            "the History Server has no event log of {id}"
        )));
    }
    Ok(dir.to_string_lossy().into_owned())
}
