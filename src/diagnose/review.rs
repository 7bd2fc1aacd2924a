//! `diagnose --review`: every application of event-log folders or object-store prefixes (the
//! listing `dump` uses), or every application a History Server lists, diagnosed one at a time
//! and folded into a [`Ranking`] of application names and job groups by what their findings
//! cost, per kind, with the worst runs.
//!
//! One application at a time: a fresh diagnosis model is filled with one log (or one REST
//! application), diagnosed, folded in and dropped before the next is read, so memory is bounded
//! by the largest application, not by the store. A log or application that cannot be read or
//! diagnosed (not an event log, unreadable, a failing request, even a panic) is logged, counted
//! and named in the review; it never stops it.

use std::sync::Arc;

use regex::Regex;

use super::links::Ui;
use super::{read_rest, reviewed_of, DiagnoseError};
use crate::config::Settings;
use crate::model::Model;
use crate::sources::eventlog::config::EventLogConfig;
use crate::sources::rest::api::ApplicationInfo;
use crate::sources::rest::client::Client;
use crate::sources::rest::config::SparkConfig;
use crate::telemetry::Telemetry;

pub use spark_exporter_diagnose::review::{
    render, render_html, Counts, Failure, GroupRow, KindCost, NameRow, Ranking, Review,
    ReviewSource, Reviewed, Run, StageSpan, TopFinding, MAX_FAILURES_LISTED, REVIEW_SCHEMA_VERSION,
};

/// What to review.
#[derive(Debug, Clone, Default)]
pub struct ReviewRequest {
    /// Event-log folders, object-store prefixes or logs; when empty, `spark_url` is read.
    pub event_logs: Vec<String>,
    /// A History Server (REST), when no event log is given.
    pub spark_url: Option<String>,
    /// Only applications that ended at or after this time (epoch ms), and those still running.
    pub since_ms: Option<i64>,
    /// Only applications whose name matches.
    pub app_name: Option<Regex>,
    /// Only findings of the job groups that match (application-wide findings have none).
    pub job_group: Option<Regex>,
    /// How many of the costliest runs to list.
    pub top: usize,
    /// A History Server whose pages the findings of event logs link to.
    pub ui_url: Option<String>,
    /// `--target-duration`, seconds: the what-if's cheapest executor count within it.
    pub target_seconds: Option<f64>,
}

/// The review being made: the ranking, the counts and the failures named.
struct Fold<'r> {
    req: &'r ReviewRequest,
    ranking: Ranking,
    /// Prices are configured: the review has money.
    priced: bool,
    counts: Counts,
    failures: Vec<Failure>,
}

impl Fold<'_> {
    /// Skip `input`, saying why.
    fn fail(&mut self, input: &str, error: String) {
        tracing::warn!(input = %input, error = %error, "Cannot review this input; skipped.");
        self.counts.failed += 1;
        if self.failures.len() < MAX_FAILURES_LISTED {
            self.failures.push(Failure {
                input: input.to_string(),
                error,
            });
        }
    }

    /// Fold in the applications one input gave, those the filters keep.
    fn apps(&mut self, input: &str, apps: Vec<Reviewed>, read_errors: u64) {
        self.counts.read_errors += read_errors;
        if apps.is_empty() {
            self.fail(input, "no application in it".into());
            return;
        }
        for mut one in apps {
            let a = &mut one.report;
            let early = matches!((self.req.since_ms, a.end_ms), (Some(s), Some(e)) if e < s);
            let other = self
                .req
                .app_name
                .as_ref()
                .is_some_and(|r| !r.is_match(&a.app_name));
            if early || other {
                self.counts.filtered += 1;
                continue;
            }
            if let Some(r) = &self.req.job_group {
                a.findings
                    .retain(|f| f.at.job_group.as_deref().is_some_and(|g| r.is_match(g)));
            }
            self.counts.reviewed += 1;
            if a.end_ms.is_none() {
                self.counts.running += 1;
            }
            if self.priced && one.rate.is_none() {
                self.counts.unpriced += 1;
            }
            self.ranking.fold(&one);
        }
    }
}

/// Review every application of `req`'s inputs. Fails only when no input could be listed at
/// all; every other failure is counted in the review.
pub async fn review(settings: &Settings, req: &ReviewRequest) -> Result<Review, DiagnoseError> {
    let settings = Arc::new(settings.clone());
    let priced = settings.cost.priced();
    let mut fold = Fold {
        req,
        ranking: Ranking::new(req.top, priced),
        priced,
        counts: Counts::default(),
        failures: vec![],
    };
    let (kind, inputs) = if req.event_logs.is_empty() {
        let url = req
            .spark_url
            .clone()
            .ok_or_else(|| DiagnoseError::Empty("no --event-log or --spark.url".into()))?;
        review_rest(&settings, &url, &mut fold).await?;
        ("rest", vec![url])
    } else {
        review_logs(&settings, &mut fold).await?;
        ("event_log", req.event_logs.clone())
    };
    let (names, groups, worst_runs) = fold.ranking.finish();
    Ok(Review {
        schema_version: REVIEW_SCHEMA_VERSION,
        document: "review".into(),
        generator: format!("spark-exporter {}", env!("CARGO_PKG_VERSION")),
        source: ReviewSource {
            kind: kind.into(),
            inputs,
            since_ms: req.since_ms,
            app_name: req.app_name.as_ref().map(|r| r.as_str().to_string()),
            job_group: req.job_group.as_ref().map(|r| r.as_str().to_string()),
        },
        counts: fold.counts,
        currency: priced.then(|| settings.cost.currency().to_string()),
        failures: fold.failures,
        names,
        groups,
        worst_runs,
    })
}

/// Every log of every location, one at a time.
async fn review_logs(settings: &Arc<Settings>, fold: &mut Fold<'_>) -> Result<(), DiagnoseError> {
    let ui = fold.req.ui_url.clone().map_or(Ui::None, Ui::History);
    let mut listed_any = false;
    let mut last_error = None;
    for location in &fold.req.event_logs {
        // Listing (and reading) blocks on the runtime for object stores: on the blocking pool.
        let (s, l) = (settings.clone(), location.clone());
        let listed = tokio::task::spawn_blocking(move || {
            crate::sources::eventlog::list_logs(
                &l,
                &EventLogConfig::of(&s),
                &Arc::new(Telemetry::default()),
            )
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
        let listed = match listed {
            Ok(l) => l,
            Err(e) => {
                fold.fail(location, format!("cannot list it: {e}"));
                last_error = Some(e);
                continue;
            }
        };
        listed_any = true;
        let root = Arc::new(listed.root);
        for found in listed.logs {
            fold.counts.listed += 1;
            let shown = crate::sources::eventlog::shown(&found, &root);
            // A log last written before `--since` holds no application that ended since.
            if let (Some(since), Some(m)) = (fold.req.since_ms, found.modified_ms()) {
                if m < since {
                    fold.counts.filtered += 1;
                    continue;
                }
            }
            let (s, r, ui) = (settings.clone(), root.clone(), ui.clone());
            let target = fold.req.target_seconds;
            let one = tokio::task::spawn_blocking(move || {
                let (apps, errors) = read_one(found, &r, &s, &ui, target)?;
                Ok::<_, String>((apps.into_iter().map(|(a, _)| a).collect(), errors))
            })
            .await;
            match one {
                Ok(Ok((apps, errors))) => fold.apps(&shown, apps, errors),
                Ok(Err(e)) => fold.fail(&shown, e),
                Err(e) => fold.fail(&shown, format!("diagnosing it failed: {e}")),
            }
        }
    }
    match last_error {
        Some(e) if !listed_any => Err(DiagnoseError::EventLog(e)),
        _ => Ok(()),
    }
}

/// One log read into a fresh diagnosis model and diagnosed: its applications, each with its
/// profile for a comparison, and the read errors counted (blocking: on the blocking pool).
pub(super) fn read_one(
    found: crate::sources::eventlog::discovery::Found,
    root: &crate::sources::eventlog::fs::Root,
    s: &Arc<Settings>,
    ui: &Ui,
    target: Option<f64>,
) -> Result<(Vec<(Reviewed, super::compare::Profile)>, u64), String> {
    let telemetry = Arc::new(Telemetry::default());
    let model = Model::for_diagnosis(s, telemetry.clone());
    let inner = model.observer(crate::sources::source("event_log"));
    let recorded = super::runconf::Recorded::new(s);
    let observer = super::runconf::Recorder {
        inner: &inner,
        rec: &recorded,
    };
    crate::sources::eventlog::read_log(found, root, &EventLogConfig::of(s), &observer, &telemetry)
        .map_err(|e| e.to_string())?;
    let apps = reviewed_of(&model, s, ui, &recorded, target);
    let errors: u64 = telemetry.snapshot().eventlog_errors.values().sum();
    Ok((apps, errors))
}

/// Every application the History Server at `url` lists (that the filters keep), one at a time.
async fn review_rest(
    settings: &Arc<Settings>,
    url: &str,
    fold: &mut Fold<'_>,
) -> Result<(), DiagnoseError> {
    let telemetry = Arc::new(Telemetry::default());
    let c = Client::for_spark(url, &SparkConfig::of(settings), telemetry.clone())?;
    let apps: Vec<ApplicationInfo> = c.get("/api/v1/applications").await?;
    for info in apps {
        fold.counts.listed += 1;
        let attempt = info.attempts.first();
        let ended = attempt.filter(|a| a.completed).map(|a| a.end_time_epoch);
        let name = info.name.clone().unwrap_or_default();
        // The listing gives the name and end: what the filters leave out is not read.
        let early = matches!((fold.req.since_ms, ended), (Some(s), Some(e)) if e < s);
        let other = fold
            .req
            .app_name
            .as_ref()
            .is_some_and(|r| !r.is_match(&name));
        if early || other {
            fold.counts.filtered += 1;
            continue;
        }
        let (s, u, id) = (settings.clone(), url.to_string(), info.id.clone());
        let target = fold.req.target_seconds;
        let one = tokio::spawn(async move {
            let telemetry = Arc::new(Telemetry::default());
            let model = Model::for_diagnosis(&s, telemetry.clone());
            read_rest(&s, &telemetry, &model, &u, Some(&id))
                .await
                .map_err(|e| e.to_string())?;
            let recorded = super::runconf::Recorded::new(&s);
            super::rest_properties(&s, &telemetry, &model, &u, &recorded).await;
            let apps = reviewed_of(&model, &s, &Ui::Target(u), &recorded, target);
            Ok::<_, String>(apps.into_iter().map(|(a, _)| a).collect::<Vec<_>>())
        })
        .await;
        match one {
            Ok(Ok(apps)) => fold.apps(&info.id, apps, 0),
            Ok(Err(e)) => fold.fail(&info.id, e),
            Err(e) => fold.fail(&info.id, format!("diagnosing it failed: {e}")),
        }
    }
    Ok(())
}
