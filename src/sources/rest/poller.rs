//! The poll loop: one task per target, each on its own interval, so a slow or dead target never
//! delays the others. A poll lists the target's applications, picks the ones to follow, and
//! lets the per-application state (`app.rs`) read what changed in each.

use super::config::SparkConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::clock::system_now_ms as now_ms;
use crate::config::Settings;
use crate::filter::AppFilter;
use crate::model::obs::EpochMs;
use crate::model::Observer;
use crate::telemetry::Telemetry;

use super::api::{ApplicationAttemptInfo, ApplicationInfo};
use super::app::{PollCtx, PolledApp};
use super::client::{Client, ClientError};
use super::convert;

/// Completed applications per page of a History Server's listing.
pub const LIST_PAGE: usize = 500;
/// Most pages of one listing (a million applications ended within the retention window).
const MAX_LIST_PAGES: usize = 2_000;

/// Start of an application's newest attempt (epoch ms; 0 when unknown).
fn app_start(a: &ApplicationInfo) -> i64 {
    a.attempts.first().map_or(0, |t| t.start_time_epoch)
}

/// End of an application's newest attempt (epoch ms; 0 or less when not ended).
fn app_end(a: &ApplicationInfo) -> i64 {
    a.attempts.first().map_or(0, |t| t.end_time_epoch)
}

/// `ms` as the REST API's date parameters take it (`2026-12-01T20:11:35.000GMT`).
pub fn rest_date(ms: EpochMs) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = convert::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}GMT",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
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

/// How a poller reads its target: following it over time (the exporter), or once (`dump`,
/// `diagnose`), there being no next poll.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each poll reads what changed. Completed applications are listed within
    /// `model.app_retention`; on a first read, task summaries and SQL plans only of what ended
    /// within `model.stage_retention` (older per-stage series would already have expired), and
    /// backlogs a slice per poll.
    #[default]
    Follow,
    /// One read of what the exporter would export now (`dump`): every completed application and
    /// every SQL plan, backlogs whole; task summaries of the stages that ended within
    /// `model.stage_retention`, as when following.
    Once,
    /// One read of everything there is (`diagnose`): [`Mode::Once`], and every ended stage's
    /// task summary however long ago it ended, whatever the retention settings say.
    Whole {
        /// Read only this application, asked for by id (`/applications/{id}`), whatever the
        /// listing's limit; an unknown id fails the poll with HTTP 404 (`diagnose --app-id`).
        only_app: Option<String>,
    },
}

/// What a REST collector reads besides the settings: its targets (`spark.urls`, or the one a
/// diagnosis names), the applications it follows (the model's filter) and where each poll's
/// outcome goes (readiness, the end of an application whose driver went away).
#[derive(Debug, Clone)]
pub struct Targets {
    /// Base URLs of drivers or History Servers.
    pub urls: Vec<String>,
    /// The applications followed.
    pub filter: AppFilter,
    /// The framework's handle: each poll's outcome, the first round's end.
    pub handle: crate::sources::Handle,
    /// Where the done applications are resumed from and published to (checkpoints kept).
    pub part: Option<Arc<super::positions::RestPart>>,
}

impl Targets {
    /// Every target of `SparkConfig::of(&settings).urls`, the settings' own filter, and a handle nobody
    /// reads (tests, one-shot reads).
    pub fn of(settings: &Settings) -> Targets {
        Targets {
            urls: SparkConfig::of(settings).urls.clone(),
            filter: AppFilter::new(settings),
            handle: crate::sources::Handle::default(),
            part: None,
        }
    }
}

/// Polls one target and remembers, between polls, what it already knows of each application.
#[derive(Debug)]
pub struct TargetPoller<O: Observer> {
    client: Client,
    observer: Arc<O>,
    telemetry: Arc<Telemetry>,
    /// Each poll's outcome (readiness, the lifecycle).
    handle: crate::sources::Handle,
    apps: BTreeMap<String, PolledApp>,
    /// The applications followed (the model drops the others; not polling them saves
    /// requests).
    filter: AppFilter,
    app_limit: usize,
    summary_window_ms: i64,
    last_error: Option<&'static str>,
    /// Consecutive failed polls.
    failures_in_row: u32,
    /// When the last poll succeeded.
    last_ok_ms: EpochMs,
    /// Following the target, or reading it once.
    mode: Mode,
    /// `model.app_retention` (ms): completed applications that ended longer ago are not listed.
    app_retention_ms: i64,
    /// The skip count last logged ([`Self::report_skipped`]).
    skipped_logged: usize,
    /// A checkpoint's done applications of this target: `lastUpdated` by key. One listed
    /// completed with the same `lastUpdated` is not read again.
    resume: BTreeMap<String, i64>,
    /// Where this target's done applications are published (for the next checkpoint), if
    /// checkpoints are kept.
    part: Option<Arc<super::positions::RestPart>>,
}

/// The state of attempt `key` (Spark's `app_id`, `attempt`) in `apps`: the one kept since the
/// last poll, or, first seen, done if a checkpoint (`resume`) says it was read in full at the
/// `lastUpdated` listed now, else new.
fn state_for<'a>(
    (apps, resume): (
        &'a mut BTreeMap<String, PolledApp>,
        &mut BTreeMap<String, i64>,
    ),
    (app_id, key, attempt): (&str, &str, Option<&str>),
    completed: bool,
    last_updated: i64,
) -> &'a mut PolledApp {
    apps.entry(key.to_string())
        .or_insert_with(|| match resume.remove(key) {
            Some(at) if completed && at == last_updated => {
                PolledApp::resumed(app_id, key, attempt, at)
            }
            _ => PolledApp::new(app_id, key, attempt),
        })
}

/// After this many failed polls in a row, the target's unfinished applications are marked as
/// gone (ended at the last good poll), so a driver that died does not leave "running" jobs and
/// ever-stalling stages behind. If the same application answers again, it is followed again.
pub const GONE_AFTER_FAILED_POLLS: u32 = 3;

impl<O: Observer> TargetPoller<O> {
    /// A poller for `url` with the timeouts and limits of `settings`, following the
    /// applications of the settings' own filter, reporting to `observer` and counting its
    /// requests, bytes and errors in `telemetry`.
    pub fn new(
        url: &str,
        settings: &Settings,
        observer: Arc<O>,
        telemetry: Arc<Telemetry>,
    ) -> Result<Self, ClientError> {
        let own = super::RestSettings::from(settings);
        Self::with_filter(url, &own, AppFilter::new(settings), observer, telemetry)
    }

    /// [`Self::new`], following the applications of `filter` (the model's).
    pub fn with_filter(
        url: &str,
        settings: &super::RestSettings,
        filter: AppFilter,
        observer: Arc<O>,
        telemetry: Arc<Telemetry>,
    ) -> Result<Self, ClientError> {
        let sp = &settings.spark;
        let client = Client::for_spark(url, sp, telemetry.clone())?;
        Ok(TargetPoller {
            client,
            observer,
            telemetry,
            handle: crate::sources::Handle::default(),
            apps: BTreeMap::new(),
            // The model's filter, and this source's own for listings (`spark.app_name_filter`).
            filter: filter.listing(sp.app_name_filter.as_ref()),
            app_limit: sp.app_limit.max(1),
            summary_window_ms: i64::try_from(settings.stage_retention.as_millis())
                .unwrap_or(i64::MAX),
            last_error: None,
            failures_in_row: 0,
            last_ok_ms: now_ms(),
            mode: Mode::Follow,
            app_retention_ms: i64::try_from(settings.app_retention.as_millis()).unwrap_or(i64::MAX),
            skipped_logged: 0,
            resume: BTreeMap::new(),
            part: None,
        })
    }

    /// Resume from, and publish to, `part` (checkpoints): a completed application the loaded
    /// part holds as done at the `lastUpdated` listed now is not read again.
    pub fn part(mut self, part: Arc<super::positions::RestPart>) -> Self {
        self.resume = part.loaded(self.client.target());
        self.part = Some(part);
        self
    }

    /// Write each poll's outcome to the framework's `handle` (by default, one nobody reads).
    pub fn handle(mut self, handle: crate::sources::Handle) -> Self {
        self.handle = handle;
        self
    }

    /// Read the target as `mode` says (by default, [`Mode::Follow`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether this is a one-shot read.
    fn once(&self) -> bool {
        self.mode != Mode::Follow
    }

    /// The target (base URL) this poller reads.
    pub fn target(&self) -> &str {
        self.client.target()
    }

    /// One poll, with telemetry (`spark_up`, scrape duration, error counters), its outcome in
    /// the health handle, and a warning the first time a given kind of failure happens in a
    /// row.
    pub async fn poll(&mut self) -> Result<PollStats, ClientError> {
        let started = Instant::now();
        let (bytes0, requests0) = self.client.counters();
        let result = self.poll_inner().await;
        let (bytes1, requests1) = self.client.counters();
        let telemetry = &self.telemetry;
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
                self.handle.answered(target, self.last_ok_ms);
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
                let at = now_ms();
                self.handle.failed(target, at, &e.to_string());
                telemetry.scrape_error(target, kind);
                if self.last_error.replace(kind) == Some(kind) {
                    tracing::debug!(target, kind, error = %e, "REST poll failed again");
                } else {
                    tracing::warn!(target, kind, error = %e, "REST poll failed; retrying next \
                        poll");
                }
                self.failures_in_row += 1;
                if self.failures_in_row == GONE_AFTER_FAILED_POLLS {
                    self.forget_unlisted(&BTreeSet::new(), self.last_ok_ms);
                }
                Err(e)
            }
        }
    }

    /// The running applications, and every completed one that ended within
    /// `model.app_retention` (any, for a one-shot read), newest first, apart: the History
    /// Server sorts by end time, so one list could hide running applications behind recently
    /// completed ones. The completed ones are read a page at a time by end date (`minEndDate`,
    /// then `maxEndDate` at the oldest end of the page before), so a History Server listing
    /// thousands never answers with one huge body. Each poll lists them again: about 500 bytes
    /// per application ended within the window. With [`Mode::Whole`]'s `only_app`, that one
    /// application.
    async fn list_apps(
        &self,
        now: EpochMs,
    ) -> Result<(Vec<ApplicationInfo>, Vec<ApplicationInfo>), ClientError> {
        let c = &self.client;
        if let Mode::Whole { only_app: Some(id) } = &self.mode {
            let path = format!("/api/v1/applications/{}", encode_segment(id));
            return Ok((vec![c.get(&path).await?], vec![]));
        }
        let running = c.get("/api/v1/applications?status=running").await?;
        // A one-shot read (`dump`, `diagnose`) asks for every completed application, however
        // long ago it ended.
        let min_end = if self.once() {
            0
        } else {
            now.saturating_sub(self.app_retention_ms).max(0)
        };
        let mut completed: Vec<ApplicationInfo> = vec![];
        let mut seen = BTreeSet::new();
        let mut max_end: Option<EpochMs> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut path = format!("/api/v1/applications?status=completed&limit={LIST_PAGE}");
            if min_end > 0 {
                path.push_str(&format!("&minEndDate={}", rest_date(min_end)));
            }
            if let Some(m) = max_end {
                path.push_str(&format!("&maxEndDate={}", rest_date(m)));
            }
            let page: Vec<ApplicationInfo> = c.get(&path).await?;
            let full = page.len() >= LIST_PAGE;
            let oldest = page.iter().map(app_end).filter(|e| *e > 0).min();
            let before = completed.len();
            for a in page {
                if seen.insert(a.id.clone()) {
                    completed.push(a);
                }
            }
            // The next page ends where this one did (inclusive: its last end again, deduplicated);
            // a page of one end time only steps back a millisecond.
            let next = match (oldest, max_end) {
                (Some(o), Some(m)) if o >= m => o - 1,
                (Some(o), _) => o,
                (None, _) => break,
            };
            if !full || completed.len() == before || next < min_end {
                break;
            }
            max_end = Some(next);
        }
        Ok((running, completed))
    }

    async fn poll_inner(&mut self) -> Result<usize, ClientError> {
        let now = now_ms();
        let once = self.once();
        let ctx = PollCtx {
            now_ms: now,
            // A whole read takes every ended stage's task summary, however long ago it ended.
            summary_window_ms: if matches!(self.mode, Mode::Whole { .. }) {
                i64::MAX
            } else {
                self.summary_window_ms
            },
            plans_since_ms: (!once).then(|| now.saturating_sub(self.summary_window_ms)),
            plans_per_poll: if once {
                usize::MAX
            } else {
                super::app::PLANS_PER_POLL
            },
            summaries_per_poll: if once {
                usize::MAX
            } else {
                super::app::SUMMARY_BACKLOG_PER_POLL
            },
        };
        let (mut running, mut completed) = self.list_apps(now).await?;

        running.sort_by_key(|a| std::cmp::Reverse(app_start(a)));
        completed.sort_by_key(|a| std::cmp::Reverse(app_end(a)));
        let mut seen = BTreeSet::new();
        let eligible: Vec<ApplicationInfo> = running
            .into_iter()
            .chain(completed)
            .filter(|a| {
                let name = a.name.as_deref().unwrap_or("");
                !a.id.is_empty() && self.filter.owns(&a.id, name) && seen.insert(a.id.clone())
            })
            .filter(|a| self.filter.lists_name(a.name.as_deref().unwrap_or("")))
            .collect();
        // `spark.app_limit` counts applications (each with all its attempts): a memory guard,
        // whose skips are counted and logged.
        let skipped = eligible.len().saturating_sub(self.app_limit);
        self.report_skipped(skipped);
        let chosen: Vec<ApplicationInfo> = eligible.into_iter().take(self.app_limit).collect();
        // Every attempt of each (YARN retries drivers), newest first as Spark lists them.
        let attempts: Vec<(ApplicationInfo, ApplicationAttemptInfo)> = chosen
            .iter()
            .flat_map(|info| {
                let mut list = info.attempts.clone();
                if list.is_empty() {
                    list.push(ApplicationAttemptInfo::default());
                }
                list.into_iter().map(move |a| (info.clone(), a))
            })
            .collect();
        let keys: BTreeSet<String> = attempts
            .iter()
            .map(|(info, a)| crate::model::app_key(&info.id, a.attempt_id.as_deref()))
            .collect();
        self.forget_unlisted(&keys, ctx.now_ms);
        self.apps.retain(|id, _| keys.contains(id));

        // Applications one after another: gentle on the server. A broken application (HTTP
        // error, bad JSON) does not stop the others; an unreachable server stops the poll.
        let mut first_error = None;
        for (info, attempt) in &attempts {
            let completed = attempt.completed;
            let last_updated = attempt.last_updated_epoch;
            let obs = convert::attempt_obs(info, Some(attempt));
            let key = obs.app_id.clone();
            let attempt_id = attempt.attempt_id.as_deref();
            self.observer.upsert_app(&obs);
            let state = state_for(
                (&mut self.apps, &mut self.resume),
                (&info.id, &key, attempt_id),
                completed,
                last_updated,
            );
            if state.is_stale(last_updated) {
                *state = PolledApp::new(&info.id, &key, attempt_id);
            }
            state.set_ended(completed || obs.end_ms.is_some());
            if state.is_done(completed, last_updated) {
                self.observer.app_delivered(&key);
                continue;
            }
            let observer: &dyn Observer = &*self.observer;
            match state
                .poll(&self.client, observer, ctx, completed, last_updated)
                .await
            {
                Ok(()) => observer.app_delivered(&key),
                Err(e) => {
                    if matches!(e, ClientError::Connect { .. } | ClientError::Timeout { .. }) {
                        return Err(e);
                    }
                    tracing::debug!(app_id = %key, error = %e, "Application poll failed");
                    first_error.get_or_insert(e);
                }
            }
        }
        self.publish_positions();
        match first_error {
            Some(e) => Err(e),
            None => Ok(chosen.len()),
        }
    }

    /// Publish the done applications for the next checkpoint, if checkpoints are kept.
    fn publish_positions(&self) {
        if let Some(p) = &self.part {
            let done = self
                .apps
                .iter()
                .filter_map(|(k, a)| a.done_at().map(|at| (k.clone(), at)))
                .collect();
            p.publish(self.client.target(), done);
        }
    }

    /// Count (gauge) and log, once until it changes, the applications `spark.app_limit` left
    /// out of the last listing.
    fn report_skipped(&mut self, skipped: usize) {
        let target = self.client.target();
        self.telemetry.set_rest_apps_skipped(target, skipped as u64);
        if skipped > 0 && self.skipped_logged != skipped {
            tracing::warn!(
                target,
                skipped,
                limit = self.app_limit,
                "REST target lists more applications than spark.app_limit; the oldest are not \
                    followed. Raise spark.app_limit to follow them."
            );
        }
        self.skipped_logged = skipped;
    }

    /// The last poll before the exporter ends, within `limit`. If the target does not answer
    /// in time, its unfinished applications are marked ended at the last good poll (not waiting
    /// for [`GONE_AFTER_FAILED_POLLS`]), so the final state says they ended.
    pub async fn last_poll(&mut self, limit: std::time::Duration) {
        let answered = matches!(tokio::time::timeout(limit, self.poll()).await, Ok(Ok(_)));
        if !answered {
            self.forget_unlisted(&BTreeSet::new(), self.last_ok_ms);
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
                    tracing::info!(target = self.client.target(), app_id = %id, "Application no \
                        longer listed");
                    self.observer.app_gone(&id, now);
                }
            }
        }
    }
}

/// Polls every target of `targets` every `settings.spark.poll_interval`, reporting to
/// `observer` (the model's REST observer; a recorder in tests), until `finish` is cancelled;
/// then polls each target once more, within `spark.timeout`, and returns. A target that does
/// not answer that last poll in time has its unfinished applications marked ended at its last
/// good poll: the exporter is going, and so, most likely, is the driver.
pub async fn run<O: Observer + 'static>(
    settings: super::RestSettings,
    targets: Targets,
    observer: Arc<O>,
    telemetry: Arc<Telemetry>,
    finish: CancellationToken,
) {
    let mut tasks = JoinSet::new();
    let pollers: Vec<TargetPoller<O>> = targets
        .urls
        .iter()
        .filter_map(|url| {
            let filter = targets.filter.clone();
            TargetPoller::with_filter(url, &settings, filter, observer.clone(), telemetry.clone())
                .map(|p| p.handle(targets.handle.clone()))
                .map(|p| match &targets.part {
                    Some(part) => p.part(part.clone()),
                    None => p,
                })
                .inspect_err(
                    |e| tracing::error!(target = %url, error = %e, "Cannot poll REST target"),
                )
                .ok()
        })
        .collect();
    // The start-up state is given once every target has made its first poll, answered or not.
    let first_polls = Arc::new(std::sync::atomic::AtomicUsize::new(pollers.len()));
    if pollers.is_empty() {
        observer.startup_done();
        targets.handle.round_done();
    }
    for poller in pollers {
        tasks.spawn(target_loop(
            poller,
            settings.spark.poll_interval,
            settings.spark.timeout,
            first_polls.clone(),
            finish.clone(),
        ));
    }
    while tasks.join_next().await.is_some() {}
}

async fn target_loop<O: Observer>(
    mut poller: TargetPoller<O>,
    every: std::time::Duration,
    last_poll_limit: std::time::Duration,
    first_polls: Arc<std::sync::atomic::AtomicUsize>,
    finish: CancellationToken,
) {
    let mut first = true;
    let mut tick = tokio::time::interval(every);
    // A poll slower than the interval delays the next one instead of bursting to catch up.
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = finish.cancelled() => break,
            _ = tick.tick() => {}
        }
        tokio::select! {
            _ = finish.cancelled() => break,
            // Errors are logged and counted inside; the next tick retries.
            _ = poller.poll() => {}
        }
        first_poll_made(&mut first, &first_polls, &poller);
    }
    poller.last_poll(last_poll_limit).await;
    // Stopped before its first poll ended: the last poll gave the start-up state.
    first_poll_made(&mut first, &first_polls, &poller);
}

/// This target's first poll is made (once); the last of the targets' tells the model the REST
/// source's start-up state is given, and the framework its first round is done (readiness).
fn first_poll_made<O: Observer>(
    first: &mut bool,
    pending: &std::sync::atomic::AtomicUsize,
    poller: &TargetPoller<O>,
) {
    if std::mem::take(first) && pending.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
        poller.observer.startup_done();
        poller.handle.round_done();
    }
}

/// One read of every target of `SparkConfig::of(&settings).urls` ([`Mode::Once`]), concurrently, with the
/// settings' own filter. Err if any target failed.
pub async fn poll_once<O: Observer + 'static>(
    settings: Arc<Settings>,
    observer: Arc<O>,
    telemetry: Arc<Telemetry>,
) -> Result<(), PollError> {
    let targets = Targets::of(&settings);
    let own = super::RestSettings::from(&*settings);
    read_once(own, targets, Mode::Once, observer, telemetry).await
}

/// One read of every target of `targets` in `mode` ([`Mode::Once`] or [`Mode::Whole`]),
/// concurrently. Err if any target failed.
pub async fn read_once<O: Observer + 'static>(
    settings: super::RestSettings,
    targets: Targets,
    mode: Mode,
    observer: Arc<O>,
    telemetry: Arc<Telemetry>,
) -> Result<(), PollError> {
    let mut tasks = JoinSet::new();
    for url in targets.urls.clone() {
        let settings = settings.clone();
        let observer = observer.clone();
        let telemetry = telemetry.clone();
        let (filter, handle, mode) = (targets.filter.clone(), targets.handle.clone(), mode.clone());
        tasks.spawn(async move {
            let result =
                match TargetPoller::with_filter(&url, &settings, filter, observer, telemetry) {
                    Ok(p) => p.handle(handle).mode(mode).poll().await.map(|_| ()),
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
    observer.startup_done();
    targets.handle.round_done();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(PollError { failures })
    }
}

/// `s` as one URL path segment: application ids are `[A-Za-z0-9_-]`, anything else is
/// percent-encoded so a hostile id cannot change the path.
pub(crate) fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') && !s.starts_with('.') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
