//! The push loop: a ticker renders the model every interval into a [`Snapshot`] and leaves it
//! in a one-slot `watch` channel (a newer snapshot replaces an unsent one, so memory stays
//! bounded however long the collector is away); a sender exports the latest snapshot, retrying
//! transient failures with capped exponential backoff (or after the collector's `Retry-After` /
//! `RetryInfo`, when longer). A permanent failure (the collector refused the request for good)
//! is not retried: the next tick's snapshot is sent instead. Neither holds the model lock across
//! an await (`collect()` returns owned data), and `/metrics` never waits on either.
//!
//! On shutdown the sender drops any attempt in flight and one last snapshot is exported within
//! [`FINAL_EXPORT_TIMEOUT`].

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use tokio::sync::watch;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::convert::{Baseline, Snapshot};
use super::transport::{Export, ExportError};
use crate::config::otlp_env::Resource;
use crate::config::Temporality;
use crate::telemetry::Telemetry;

/// Bound on the last export after the shutdown signal.
pub const FINAL_EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// First retry delay (or the interval, if shorter).
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// A run of failures logs a warning on the first and then every this many.
const WARN_EVERY: u64 = 10;

/// What the loop needs besides the exporter.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Time between snapshots.
    pub interval: Duration,
    /// Bound on one export attempt.
    pub timeout: Duration,
    /// Cumulative or delta counters and histograms.
    pub temporality: Temporality,
    /// Attached to every export.
    pub resource: Resource,
    /// For log lines.
    pub endpoint: String,
    /// Where attempts and failures are counted.
    pub telemetry: Arc<Telemetry>,
    /// Where each export's outcome is said (the status page's outputs).
    pub handle: crate::sinks::SinkHandle,
}

/// Exports snapshots and keeps what deltas need.
struct Pusher<E> {
    exporter: E,
    opts: PushOptions,
    scope: InstrumentationScope,
    /// Start of every cumulative series (when the exporter started).
    start: SystemTime,
    /// Last accepted snapshot, for delta temporality.
    baseline: Option<Baseline>,
    /// Failures in a row.
    failing: u64,
}

impl<E: Export> Pusher<E> {
    async fn export(&mut self, snap: &Snapshot) -> Result<(), ExportError> {
        let delta = (self.opts.temporality == Temporality::Delta)
            .then(|| self.baseline.clone().unwrap_or_default());
        let req = ExportMetricsServiceRequest {
            resource_metrics: vec![snap.resource_metrics(
                &self.opts.resource,
                &self.scope,
                self.start,
                delta.as_ref(),
            )],
        };
        self.opts.telemetry.otlp_export();
        // The transports have their own timeout; this one also covers a stuck TLS handshake.
        let res = match tokio::time::timeout(self.opts.timeout, self.exporter.export(req)).await {
            Ok(r) => r,
            Err(_) => Err(ExportError::transient(format!(
                "timed out after {}",
                humantime::format_duration(self.opts.timeout)
            ))),
        };
        let now = crate::clock::system_now_ms();
        match &res {
            Ok(()) => self.opts.handle.delivered(now),
            Err(e) => self.opts.handle.failed(now, &e.to_string()),
        }
        match &res {
            Ok(()) => {
                if self.failing > 0 {
                    tracing::info!(
                        endpoint = %self.opts.endpoint,
                        failed_attempts = self.failing,
                        "OTLP export resumed."
                    );
                }
                self.failing = 0;
                if delta.is_some() {
                    self.baseline = Some(Baseline::of(snap));
                }
            }
            Err(e) if !e.retryable => {
                // Always a warning: the collector refuses this data (auth, payload, endpoint),
                // which a retry would not change.
                self.opts.telemetry.otlp_export_failed();
                tracing::warn!(endpoint = %self.opts.endpoint, error = %e, "OTLP export failed and \
                    is not retryable; the next interval's snapshot is sent instead.");
                self.failing += 1;
            }
            Err(e) => {
                self.opts.telemetry.otlp_export_failed();
                if self.failing.is_multiple_of(WARN_EVERY) {
                    tracing::warn!(
                        endpoint = %self.opts.endpoint,
                        error = %e,
                        failures_in_a_row = self.failing + 1,
                        "OTLP export failed; retrying with backoff."
                    );
                } else {
                    tracing::debug!(endpoint = %self.opts.endpoint, error = %e, "OTLP export \
                        failed.");
                }
                self.failing += 1;
            }
        }
        res
    }
}

/// Capped exponential backoff with jitter (within ±20 %, never below the first delay nor above
/// the cap), so many exporters restarted together do not retry in step: the delays of the
/// `exponential-backoff` crate, started again after every success.
#[derive(Debug)]
struct Backoff {
    policy: exponential_backoff::Backoff,
    delays: exponential_backoff::IntoIter,
    cap: Duration,
}

impl Backoff {
    fn new(interval: Duration) -> Backoff {
        let first = FIRST_BACKOFF.min(interval);
        let cap = interval.max(first);
        // Attempts without end: the loop retries until the collector is back or shutdown.
        let mut policy = exponential_backoff::Backoff::new(u32::MAX, first, cap);
        policy.set_factor(2);
        policy.set_jitter(0.2);
        Backoff {
            delays: policy.clone().into_iter(),
            policy,
            cap,
        }
    }

    fn reset(&mut self) {
        self.delays = self.policy.clone().into_iter();
    }

    fn next_delay(&mut self) -> Duration {
        // `None` only after u32::MAX attempts: the cap from then on.
        self.delays.next().flatten().unwrap_or(self.cap)
    }

    /// The wait before the next attempt after `e`: the backoff, or the collector's own delay
    /// (capped like the backoff) when that is longer.
    fn after(&mut self, e: &ExportError) -> Duration {
        let d = self.next_delay();
        e.retry_after.map_or(d, |r| d.max(r.min(self.cap)))
    }
}

/// Export every snapshot the ticker leaves, until shutdown; returns the pusher for the last
/// export.
async fn send_loop<E: Export>(
    mut p: Pusher<E>,
    mut rx: watch::Receiver<Option<Arc<Snapshot>>>,
    shutdown: CancellationToken,
) -> Pusher<E> {
    let mut backoff = Backoff::new(p.opts.interval);
    loop {
        let changed = tokio::select! {
            biased;
            _ = shutdown.cancelled() => false,
            r = rx.changed() => r.is_ok(),
        };
        if !changed {
            return p;
        }
        // Retry until one export succeeds; each attempt takes the newest snapshot, so a
        // collector that comes back gets current values, not a backlog.
        loop {
            let Some(snap) = rx.borrow_and_update().clone() else {
                break;
            };
            let res = tokio::select! {
                biased;
                _ = shutdown.cancelled() => None,
                r = p.export(&snap) => Some(r),
            };
            match res {
                None => return p,
                Some(Ok(())) => {
                    backoff.reset();
                    break;
                }
                // Refused for good: wait for the next tick's snapshot.
                Some(Err(e)) if !e.retryable => break,
                Some(Err(e)) => {
                    let wait = backoff.after(&e);
                    let stop = tokio::select! {
                        biased;
                        _ = shutdown.cancelled() => true,
                        _ = tokio::time::sleep(wait) => false,
                    };
                    if stop {
                        return p;
                    }
                }
            }
        }
    }
}

/// Run the ticker and the sender until `shutdown`, then export once more; true if that final
/// export was sent. `snapshot` renders the model (called on this task, never while an export is
/// awaited with a lock held).
pub async fn run_with<E, F>(
    exporter: E,
    opts: PushOptions,
    snapshot: F,
    shutdown: CancellationToken,
) -> bool
where
    E: Export,
    F: Fn() -> Snapshot,
{
    let pusher = Pusher {
        exporter,
        scope: InstrumentationScope {
            name: "spark-exporter".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        },
        start: SystemTime::now(),
        baseline: None,
        failing: 0,
        opts: opts.clone(),
    };
    let (tx, rx) = watch::channel(None);
    let sender = tokio::spawn(send_loop(pusher, rx, shutdown.clone()));
    let mut tick = tokio::time::interval(opts.interval);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {
                tx.send_replace(Some(Arc::new(snapshot())));
            }
        }
    }
    let mut p = match sender.await {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(error = %e, "The OTLP sender stopped unexpectedly; no final export.");
            return false;
        }
    };
    let snap = snapshot();
    p.opts.timeout = p.opts.timeout.min(FINAL_EXPORT_TIMEOUT);
    match tokio::time::timeout(FINAL_EXPORT_TIMEOUT, p.export(&snap)).await {
        Ok(Ok(())) => {
            tracing::info!(endpoint = %opts.endpoint, "Final OTLP export sent.");
            true
        }
        Ok(Err(_)) => false,
        Err(_) => {
            tracing::warn!(endpoint = %opts.endpoint, "Final OTLP export timed out.");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumValue;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Mutex;

    use crate::export::families::{Family, Kind, Sample, Value};

    /// A collector stand-in: records the value of `spark.job.result` per attempt, fails while
    /// `down` (with `error`, else a transient one), and can hang.
    #[derive(Clone, Default)]
    struct Fake {
        down: Arc<AtomicBool>,
        error: Arc<Mutex<Option<ExportError>>>,
        hang: Arc<AtomicBool>,
        got: Arc<Mutex<Vec<(tokio::time::Instant, bool, u64)>>>,
    }

    impl Export for Fake {
        async fn export(&self, req: ExportMetricsServiceRequest) -> Result<(), ExportError> {
            let v = match &req.resource_metrics[0].scope_metrics[0].metrics[0].data {
                Some(Data::Sum(s)) => match s.data_points[0].value {
                    Some(NumValue::AsInt(i)) => i as u64,
                    _ => 0,
                },
                _ => 0,
            };
            let down = self.down.load(Ordering::SeqCst);
            self.got
                .lock()
                .unwrap()
                .push((tokio::time::Instant::now(), !down, v));
            if self.hang.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            if down {
                Err(self
                    .error
                    .lock()
                    .unwrap()
                    .clone()
                    .unwrap_or_else(|| ExportError::transient("connection refused")))
            } else {
                Ok(())
            }
        }
    }

    fn opts(temporality: Temporality) -> PushOptions {
        PushOptions {
            interval: Duration::from_secs(10),
            timeout: Duration::from_secs(2),
            temporality,
            resource: Resource::default(),
            endpoint: "test".into(),
            telemetry: Arc::new(Telemetry::default()),
            handle: Default::default(),
        }
    }

    fn snapshot_of(counter: &Arc<AtomicU64>) -> impl Fn() -> Snapshot {
        let c = counter.clone();
        move || {
            let fam = Family {
                name: "spark_jobs",
                help: "h",
                kind: Kind::Counter,
                metric: crate::export::catalogue::lookup("spark_jobs").expect("catalogued"),
                samples: vec![Sample {
                    labels: [].into(),
                    value: Value::Int(c.load(Ordering::SeqCst)),
                    created_ms: 0,
                }],
            };
            Snapshot::new(&[fam], SystemTime::now())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retries_with_backoff_latest_snapshot_and_final_export() {
        let fake = Fake::default();
        let counter = Arc::new(AtomicU64::new(1));
        let stop = CancellationToken::new();
        fake.down.store(true, Ordering::SeqCst);
        let opts = opts(Temporality::Cumulative);
        let telemetry = opts.telemetry.clone();
        let task = tokio::spawn(run_with(
            fake.clone(),
            opts,
            snapshot_of(&counter),
            stop.clone(),
        ));
        // Down for 25 s: retries at ~1, 2, 4, 8 s, then at most every interval (10 s).
        tokio::time::sleep(Duration::from_secs(12)).await;
        counter.store(5, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(13)).await;
        fake.down.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(12)).await;
        counter.store(9, Ordering::SeqCst);
        stop.cancel();
        task.await.unwrap();

        let got = fake.got.lock().unwrap().clone();
        let t0 = got[0].0;
        let failed: Vec<_> = got.iter().filter(|g| !g.1).collect();
        assert!((5..=8).contains(&failed.len()), "{got:?}");
        for w in failed.windows(2) {
            let gap = w[1].0 - w[0].0;
            assert!(
                gap <= Duration::from_secs(12),
                "backoff capped at the interval: {gap:?}"
            );
        }
        let counted = telemetry.snapshot();
        assert_eq!(counted.otlp_export_failures, failed.len() as u64);
        assert_eq!(counted.otlp_exports, got.len() as u64);
        let ok: Vec<_> = got.iter().filter(|g| g.1).collect();
        assert!(
            ok[0].0 - t0 <= Duration::from_secs(37),
            "resumed by itself: {got:?}"
        );
        assert_eq!(ok[0].2, 5, "the newest snapshot is sent, not the first one");
        assert_eq!(ok.last().unwrap().2, 9, "a final export after shutdown");
    }

    #[tokio::test(start_paused = true)]
    async fn a_hanging_collector_is_bounded_by_the_timeout() {
        let fake = Fake::default();
        fake.hang.store(true, Ordering::SeqCst);
        let counter = Arc::new(AtomicU64::new(1));
        let stop = CancellationToken::new();
        let task = tokio::spawn(run_with(
            fake.clone(),
            opts(Temporality::Cumulative),
            snapshot_of(&counter),
            stop.clone(),
        ));
        tokio::time::sleep(Duration::from_secs(30)).await;
        let n = fake.got.lock().unwrap().len();
        assert!(n >= 5, "attempts go on despite hangs: {n}");
        let before = tokio::time::Instant::now();
        stop.cancel();
        task.await.unwrap();
        assert!(
            tokio::time::Instant::now() - before <= FINAL_EXPORT_TIMEOUT,
            "shutdown is bounded"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn delta_keeps_the_baseline_until_an_export_succeeds() {
        let fake = Fake::default();
        let counter = Arc::new(AtomicU64::new(3));
        let stop = CancellationToken::new();
        let task = tokio::spawn(run_with(
            fake.clone(),
            opts(Temporality::Delta),
            snapshot_of(&counter),
            stop.clone(),
        ));
        tokio::time::sleep(Duration::from_secs(1)).await; // first export: 3 (all of it)
        fake.down.store(true, Ordering::SeqCst);
        counter.store(7, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(15)).await; // failed attempts carry 4
        fake.down.store(false, Ordering::SeqCst);
        counter.store(10, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(15)).await; // accepted: 7 (3 → 10), then 0
        stop.cancel();
        task.await.unwrap();
        let got = fake.got.lock().unwrap().clone();
        let accepted: u64 = got.iter().filter(|g| g.1).map(|g| g.2).sum();
        assert_eq!(accepted, 10, "no change lost or counted twice: {got:?}");
        assert!(got.iter().any(|g| !g.1 && g.2 == 4));
    }

    /// Attempt times of a collector that always fails with `error`, over `secs` seconds.
    async fn attempts_failing_with(error: ExportError, secs: u64) -> Vec<Duration> {
        let fake = Fake::default();
        fake.down.store(true, Ordering::SeqCst);
        *fake.error.lock().unwrap() = Some(error);
        let stop = CancellationToken::new();
        let task = tokio::spawn(run_with(
            fake.clone(),
            opts(Temporality::Cumulative),
            snapshot_of(&Arc::new(AtomicU64::new(1))),
            stop.clone(),
        ));
        tokio::time::sleep(Duration::from_secs(secs)).await;
        stop.cancel();
        task.await.unwrap();
        let got = fake.got.lock().unwrap().clone();
        // Without the final export after shutdown.
        got[..got.len() - 1]
            .iter()
            .map(|g| g.0 - got[0].0)
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_permanent_failure_is_not_retried_before_the_next_interval() {
        let at = attempts_failing_with(
            ExportError {
                message: "HTTP status 401 Unauthorized".into(),
                retryable: false,
                retry_after: None,
            },
            35,
        )
        .await;
        let secs: Vec<u64> = at.iter().map(|d| d.as_secs()).collect();
        assert_eq!(secs, [0, 10, 20, 30], "one attempt per tick: {at:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_collectors_retry_delay_is_honoured_up_to_the_interval() {
        let at = attempts_failing_with(
            ExportError {
                message: "HTTP status 429 Too Many Requests".into(),
                retryable: true,
                retry_after: Some(Duration::from_secs(7)),
            },
            20,
        )
        .await;
        assert!(at.len() >= 3, "{at:?}");
        for w in at.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                gap >= Duration::from_secs(7) && gap <= Duration::from_secs(10),
                "Retry-After 7 s, over the backoff's 1, 2, 4 s: {at:?}"
            );
        }
        let at = attempts_failing_with(
            ExportError {
                message: "gRPC status ResourceExhausted".into(),
                retryable: true,
                retry_after: Some(Duration::from_secs(3600)),
            },
            25,
        )
        .await;
        assert!(at.len() >= 3, "an hour is capped at the interval: {at:?}");
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_the_cap() {
        let mut b = Backoff::new(Duration::from_secs(30));
        let d: Vec<f64> = (0..8).map(|_| b.next_delay().as_secs_f64()).collect();
        for (got, want) in d.iter().zip([1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]) {
            assert!(
                *got >= want * 0.8 - 1e-9 && *got <= (want * 1.2f64).min(30.0),
                "{d:?}"
            );
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(1200));
        let mut fast = Backoff::new(Duration::from_millis(200));
        assert!(fast.next_delay() <= Duration::from_millis(200));
    }
}
