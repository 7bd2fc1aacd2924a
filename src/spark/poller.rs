//! The poll loop: one task per target, each on its own interval, so a slow or dead target never
//! delays the others. A poll lists the target's applications, picks the ones to follow, and
//! lets the per-application state (`app.rs`) read what changed in each.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use regex::Regex;
use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::model::obs::{
    AppObs, EpochMs, ExecutorObs, JobObs, Source, SqlObs, StageObs, TaskSummaryObs,
};
use crate::model::Model;
use crate::telemetry::Telemetry;

use super::api::ApplicationInfo;
use super::app::{AppState, PollCtx};
use super::client::{Client, ClientError, DEFAULT_MAX_BODY_BYTES};
use super::convert;

/// With a name filter, the newest `app_limit × FILTER_LOOKAHEAD` completed applications are
/// listed and filtered here (the History Server cannot filter by name), keeping the listing
/// bounded however long the history is.
const FILTER_LOOKAHEAD: usize = 10;

/// Where observations go: the [`Model`] in production, a recorder in tests.
pub trait Sink: Send + Sync {
    /// Self-metrics.
    fn telemetry(&self) -> &Arc<Telemetry>;
    /// See [`Model::upsert_app`].
    fn upsert_app(&self, obs: &AppObs);
    /// See [`Model::app_gone`].
    fn app_gone(&self, app_id: &str, now_ms: EpochMs);
    /// See [`Model::upsert_job`].
    fn upsert_job(&self, app_id: &str, obs: &JobObs);
    /// See [`Model::upsert_stage`].
    fn upsert_stage(&self, app_id: &str, obs: &StageObs);
    /// See [`Model::set_task_summary`].
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, s: TaskSummaryObs);
    /// See [`Model::upsert_executor`].
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs);
    /// See [`Model::upsert_sql`].
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs);
}

impl Sink for Model {
    fn telemetry(&self) -> &Arc<Telemetry> {
        Model::telemetry(self)
    }
    fn upsert_app(&self, obs: &AppObs) {
        Model::upsert_app(self, Source::Rest, obs)
    }
    fn app_gone(&self, app_id: &str, now_ms: EpochMs) {
        Model::app_gone(self, app_id, now_ms)
    }
    fn upsert_job(&self, app_id: &str, obs: &JobObs) {
        Model::upsert_job(self, Source::Rest, app_id, obs)
    }
    fn upsert_stage(&self, app_id: &str, obs: &StageObs) {
        Model::upsert_stage(self, Source::Rest, app_id, obs)
    }
    fn set_task_summary(&self, app_id: &str, stage_id: u64, attempt: u32, s: TaskSummaryObs) {
        Model::set_task_summary(self, app_id, stage_id, attempt, s)
    }
    fn upsert_executor(&self, app_id: &str, obs: &ExecutorObs) {
        Model::upsert_executor(self, Source::Rest, app_id, obs)
    }
    fn upsert_sql(&self, app_id: &str, obs: &SqlObs) {
        Model::upsert_sql(self, Source::Rest, app_id, obs)
    }
}

/// `poll_once` failed for at least one target.
#[derive(Debug, thiserror::Error)]
#[error("{} REST target(s) failed: {}", .failures.len(),
    .failures.iter().map(|(t, e)| format!("{t}: {e}")).collect::<Vec<_>>().join("; "))]
pub struct PollError {
    /// Each failed target and its first error.
    pub failures: Vec<(String, ClientError)>,
}

/// What one successful poll of a target cost and found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollStats {
    /// Applications followed.
    pub apps: usize,
    /// Responses read.
    pub requests: u64,
    /// Response body bytes read.
    pub bytes: u64,
}

/// Polls one target and remembers, between polls, what it already knows of each application.
#[derive(Debug)]
pub struct TargetPoller<S: Sink> {
    client: Client,
    sink: Arc<S>,
    apps: BTreeMap<String, AppState>,
    name_filter: Option<Regex>,
    app_limit: usize,
    summary_window_ms: i64,
    last_error: Option<&'static str>,
    /// Consecutive failed polls.
    failures_in_row: u32,
    /// When the last poll succeeded.
    last_ok_ms: EpochMs,
}

/// After this many failed polls in a row, the target's unfinished applications are marked as
/// gone (ended at the last good poll), so a driver that died does not leave "running" jobs and
/// ever-stalling stages behind. If the same application answers again, it is followed again.
pub const GONE_AFTER_FAILED_POLLS: u32 = 3;

impl<S: Sink> TargetPoller<S> {
    /// A poller for `url` with the timeouts and limits of `settings`.
    pub fn new(url: &str, settings: &Settings, sink: Arc<S>) -> Result<Self, ClientError> {
        let sp = &settings.spark;
        let client = Client::with_auth(
            url,
            sp.timeout,
            DEFAULT_MAX_BODY_BYTES,
            sink.telemetry().clone(),
            &sp.auth,
        )?;
        // `config::validate` already rejected bad patterns; one that slips through is ignored.
        let name_filter = sp.app_name_filter.as_deref().and_then(|p| {
            Regex::new(p)
                .inspect_err(
                    |e| tracing::warn!(pattern = p, error = %e, "Ignoring app_name_filter"),
                )
                .ok()
        });
        Ok(TargetPoller {
            client,
            sink,
            apps: BTreeMap::new(),
            name_filter,
            app_limit: sp.app_limit.max(1),
            summary_window_ms: i64::try_from(settings.model.stage_retention.as_millis())
                .unwrap_or(i64::MAX),
            last_error: None,
            failures_in_row: 0,
            last_ok_ms: now_ms(),
        })
    }

    /// The target (base URL) this poller reads.
    pub fn target(&self) -> &str {
        self.client.target()
    }

    /// One poll, with telemetry: `spark_up`, scrape duration, error counters and a warning the
    /// first time a given kind of failure happens in a row.
    pub async fn poll(&mut self) -> Result<PollStats, ClientError> {
        let started = Instant::now();
        let (bytes0, requests0) = self.client.counters();
        let result = self.poll_inner().await;
        let (bytes1, requests1) = self.client.counters();
        let telemetry = self.sink.telemetry();
        let target = self.client.target();
        match result {
            Ok(apps) => {
                let stats = PollStats {
                    apps,
                    requests: requests1 - requests0,
                    bytes: bytes1 - bytes0,
                };
                let secs = started.elapsed().as_secs_f64();
                telemetry.set_up(target, true);
                telemetry.set_scrape_duration(target, secs);
                self.failures_in_row = 0;
                self.last_ok_ms = now_ms();
                if self.last_error.take().is_some() {
                    tracing::info!(target, "REST target recovered");
                }
                tracing::debug!(
                    target,
                    apps,
                    stats.requests,
                    stats.bytes,
                    secs,
                    "Polled REST target"
                );
                Ok(stats)
            }
            Err(e) => {
                let kind = e.kind();
                telemetry.set_up(target, false);
                telemetry.scrape_error(target, kind);
                if self.last_error.replace(kind) == Some(kind) {
                    tracing::debug!(target, kind, error = %e, "REST poll failed again");
                } else {
                    tracing::warn!(target, kind, error = %e, "REST poll failed; retrying next poll");
                }
                self.failures_in_row += 1;
                if self.failures_in_row == GONE_AFTER_FAILED_POLLS {
                    self.forget_unlisted(&BTreeSet::new(), self.last_ok_ms);
                }
                Err(e)
            }
        }
    }

    async fn poll_inner(&mut self) -> Result<usize, ClientError> {
        let ctx = PollCtx {
            now_ms: now_ms(),
            summary_window_ms: self.summary_window_ms,
        };
        let lookahead = if self.name_filter.is_some() {
            self.app_limit.saturating_mul(FILTER_LOOKAHEAD)
        } else {
            self.app_limit
        };
        // Running and completed apart: the History Server sorts by end time, so one `limit`ed
        // list could hide running applications behind recently completed ones.
        let c = &self.client;
        let mut running: Vec<ApplicationInfo> =
            c.get("/api/v1/applications?status=running").await?;
        let path = format!("/api/v1/applications?status=completed&limit={lookahead}");
        let mut completed: Vec<ApplicationInfo> = c.get(&path).await?;

        let listed: BTreeSet<String> = running
            .iter()
            .chain(&completed)
            .map(|a| a.id.clone())
            .collect();
        self.forget_unlisted(&listed, ctx.now_ms);

        let start = |a: &ApplicationInfo| a.attempts.first().map_or(0, |t| t.start_time_epoch);
        let end = |a: &ApplicationInfo| a.attempts.first().map_or(0, |t| t.end_time_epoch);
        running.sort_by_key(|a| std::cmp::Reverse(start(a)));
        completed.sort_by_key(|a| std::cmp::Reverse(end(a)));
        let mut seen = BTreeSet::new();
        let chosen: Vec<ApplicationInfo> = running
            .into_iter()
            .chain(completed)
            .filter(|a| !a.id.is_empty() && seen.insert(a.id.clone()))
            .filter(|a| {
                let name = a.name.as_deref().unwrap_or("");
                self.name_filter.as_ref().is_none_or(|r| r.is_match(name))
            })
            .take(self.app_limit)
            .collect();
        let chosen_ids: BTreeSet<&str> = chosen.iter().map(|a| a.id.as_str()).collect();
        self.apps.retain(|id, _| chosen_ids.contains(id.as_str()));

        // Applications one after another: gentle on the server. A broken application (HTTP
        // error, bad JSON) does not stop the others; an unreachable server stops the poll.
        let mut first_error = None;
        for info in &chosen {
            let attempt = info.attempts.first().cloned().unwrap_or_default();
            let completed = attempt.completed;
            let last_updated = attempt.last_updated_epoch;
            let obs = convert::app_obs(info);
            self.sink.upsert_app(&obs);
            let state = self
                .apps
                .entry(info.id.clone())
                .or_insert_with(|| AppState::new(&info.id, attempt.attempt_id.as_deref()));
            if state.is_stale(last_updated) {
                *state = AppState::new(&info.id, attempt.attempt_id.as_deref());
            }
            state.set_ended(completed || obs.end_ms.is_some());
            if state.is_done(completed, last_updated) {
                continue;
            }
            let sink: &dyn Sink = &*self.sink;
            if let Err(e) = state
                .poll(&self.client, sink, ctx, completed, last_updated)
                .await
            {
                if matches!(e, ClientError::Connect { .. } | ClientError::Timeout { .. }) {
                    return Err(e);
                }
                tracing::debug!(app_id = %info.id, error = %e, "Application poll failed");
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(chosen.len()),
        }
    }

    /// Drop state of applications the target no longer lists; one that had not ended went away
    /// with its driver, so the model is told.
    fn forget_unlisted(&mut self, listed: &BTreeSet<String>, now: EpochMs) {
        let gone: Vec<String> = self
            .apps
            .keys()
            .filter(|id| !listed.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            if let Some(state) = self.apps.remove(&id) {
                if !state.ended() {
                    tracing::info!(target = self.client.target(), app_id = %id, "Application no longer listed");
                    self.sink.app_gone(&id, now);
                }
            }
        }
    }
}

fn now_ms() -> EpochMs {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Runs until `shutdown` is cancelled: polls every target every `settings.spark.poll_interval`.
pub async fn run(settings: Arc<Settings>, model: Arc<Model>, shutdown: CancellationToken) {
    run_with(settings, model, shutdown).await
}

/// [`run`] with any [`Sink`] (tests record observations instead of modelling them).
pub async fn run_with<S: Sink + 'static>(
    settings: Arc<Settings>,
    sink: Arc<S>,
    shutdown: CancellationToken,
) {
    let mut tasks = JoinSet::new();
    for url in &settings.spark.urls {
        let poller = match TargetPoller::new(url, &settings, sink.clone()) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(target = %url, error = %e, "Cannot poll REST target");
                continue;
            }
        };
        tasks.spawn(target_loop(
            poller,
            settings.spark.poll_interval,
            shutdown.clone(),
        ));
    }
    while tasks.join_next().await.is_some() {}
}

async fn target_loop<S: Sink>(
    mut poller: TargetPoller<S>,
    every: std::time::Duration,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(every);
    // A poll slower than the interval delays the next one instead of bursting to catch up.
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            // Errors are logged and counted inside; the next tick retries.
            _ = poller.poll() => {}
        }
    }
}

/// One poll of every target (the `dump` subcommand). Err if any target failed.
pub async fn poll_once(settings: Arc<Settings>, model: Arc<Model>) -> Result<(), PollError> {
    poll_once_with(settings, model).await
}

/// [`poll_once`] with any [`Sink`]. Targets are polled concurrently.
pub async fn poll_once_with<S: Sink + 'static>(
    settings: Arc<Settings>,
    sink: Arc<S>,
) -> Result<(), PollError> {
    let mut tasks = JoinSet::new();
    for url in settings.spark.urls.clone() {
        let settings = settings.clone();
        let sink = sink.clone();
        tasks.spawn(async move {
            let result = match TargetPoller::new(&url, &settings, sink) {
                Ok(mut p) => p.poll().await.map(|_| ()),
                Err(e) => Err(e),
            };
            (url, result)
        });
    }
    let mut failures = vec![];
    while let Some(joined) = tasks.join_next().await {
        if let Ok((url, Err(e))) = joined {
            failures.push((url, e));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(PollError { failures })
    }
}
