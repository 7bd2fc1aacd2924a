//! The exporter's own metrics: `spark_up`, poll durations, error counters, event-log progress.
//! Sources write here; the Prometheus collector and OTLP exporter read it at export time. Nothing
//! decides from it: readiness and the lifecycle read the sources' [`crate::health`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Self-metrics shared by every task. Cheap to update; never blocks across `.await`.
#[derive(Debug)]
pub struct Telemetry {
    inner: Mutex<TelemetrySnapshot>,
    /// Bumped by every update (see [`Telemetry::generation`]).
    generation: AtomicU64,
}

/// A snapshot of every self-metric, taken at export time.
#[derive(Debug, Default, Clone)]
pub struct TelemetrySnapshot {
    /// When the exporter started (epoch ms): the `_created` time of its own counters.
    pub started_ms: i64,
    /// `spark_up{target}`.
    pub up: BTreeMap<String, bool>,
    /// `spark_exporter_scrape_duration_seconds{target}` (last poll).
    pub scrape_duration: BTreeMap<String, f64>,
    /// `spark_exporter_scrape_errors_total{target,kind}`.
    pub scrape_errors: BTreeMap<(String, String), u64>,
    /// `spark_exporter_label_overflow_total{label}`.
    pub label_overflow: BTreeMap<String, u64>,
    /// `spark_exporter_eventlog_bytes_total`.
    pub eventlog_bytes: u64,
    /// `spark_exporter_eventlog_events_total`.
    pub eventlog_events: u64,
    /// `spark_exporter_eventlog_errors_total{kind}`.
    pub eventlog_errors: BTreeMap<String, u64>,
    /// `spark_exporter_eventlog_files{state}`.
    pub eventlog_files: BTreeMap<String, u64>,
    /// Timestamp (ms) of the newest event read, for `spark_exporter_eventlog_lag_seconds`.
    pub eventlog_newest_event_ms: Option<i64>,
    /// `spark_exporter_rest_bytes_total{target}`: response bytes read from Spark.
    pub rest_bytes: BTreeMap<String, u64>,
    /// `spark_exporter_rest_requests_total{target}`.
    pub rest_requests: BTreeMap<String, u64>,
    /// `spark_exporter_http_errors_total{kind}`: connections to our own server refused or cut.
    pub http_errors: BTreeMap<String, u64>,
    /// `spark_exporter_checkpoint_writes_total{result}`: `ok` or `error`.
    pub checkpoint_writes: BTreeMap<String, u64>,
    /// `spark_exporter_checkpoint_loads_total{result}`: `loaded`, `none` or `refused`.
    pub checkpoint_loads: BTreeMap<String, u64>,
    /// `spark_exporter_otlp_exports_total`.
    pub otlp_exports: u64,
    /// `spark_exporter_otlp_export_failures_total`.
    pub otlp_export_failures: u64,
    /// `spark_exporter_store_requests_total{store,op}`: HTTP requests to object stores, retries
    /// included.
    pub store_requests: BTreeMap<(String, String), u64>,
    /// `spark_exporter_store_response_bytes_total{store}`.
    pub store_bytes: BTreeMap<String, u64>,
    /// `spark_exporter_store_errors_total{store,kind}`: failed requests (retried or not).
    pub store_errors: BTreeMap<(String, String), u64>,
    /// `spark_exporter_store_up{store}`: the last listing of the store succeeded.
    pub store_up: BTreeMap<String, bool>,
    /// `spark_exporter_rest_apps_skipped{target}`: applications the last listing held that
    /// `spark.app_limit` left out.
    pub rest_apps_skipped: BTreeMap<String, u64>,
    /// Some source the exporter runs has not finished its start-up read yet
    /// (`spark_exporter_startup_complete` is its negation; `model/delivery.rs`).
    pub startup_pending: bool,
    /// `spark_exporter_source_up{source, place}`: the source's last read of the place (a REST
    /// target, an event-log folder) succeeded. Every source has it (`src/sources`).
    pub source_up: BTreeMap<(String, String), bool>,
    /// `spark_exporter_source_ready{source}`: the source has finished its first round.
    pub source_ready: BTreeMap<String, bool>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry {
            inner: Mutex::new(TelemetrySnapshot {
                started_ms: crate::clock::system_now_ms(),
                ..TelemetrySnapshot::default()
            }),
            generation: AtomicU64::new(0),
        }
    }
}

impl Telemetry {
    fn with<R>(&self, f: impl FnOnce(&mut TelemetrySnapshot) -> R) -> R {
        // A poisoned lock only means another thread panicked mid-update; the counters are still
        // usable, so take them rather than propagate the panic.
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let r = f(&mut g);
        self.generation.fetch_add(1, Ordering::Release);
        r
    }
    /// Number of updates so far; changes whenever any value may have changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
    /// Copy of every value.
    pub fn snapshot(&self) -> TelemetrySnapshot {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// Record whether the last poll of `target` succeeded (`spark_up`).
    pub fn set_up(&self, target: &str, up: bool) {
        self.with(|i| i.up.insert(target.to_string(), up));
    }
    /// Record how many applications the last listing of `target` left out
    /// (`spark.app_limit`).
    pub fn set_rest_apps_skipped(&self, target: &str, n: u64) {
        self.with(|i| i.rest_apps_skipped.insert(target.to_string(), n));
    }
    /// Record whether some source has not finished its start-up read yet.
    pub fn set_startup_pending(&self, pending: bool) {
        self.with(|i| i.startup_pending = pending);
    }
    /// Record how long the last poll of `target` took.
    pub fn set_scrape_duration(&self, target: &str, secs: f64) {
        self.with(|i| i.scrape_duration.insert(target.to_string(), secs));
    }
    /// Count a failed request to `target`; `kind` is a small fixed set
    /// (`connect`, `timeout`, `http_status`, `decode`, `body`).
    pub fn scrape_error(&self, target: &str, kind: &str) {
        self.with(|i| {
            *i.scrape_errors
                .entry((target.into(), kind.into()))
                .or_default() += 1
        });
    }
    /// Count a REST response of `bytes` bytes from `target`.
    pub fn rest_response(&self, target: &str, bytes: u64) {
        self.with(|i| {
            *i.rest_bytes.entry(target.into()).or_default() += bytes;
            *i.rest_requests.entry(target.into()).or_default() += 1;
        });
    }
    /// Count a label value folded into `__other__`.
    pub fn label_overflow(&self, label: &str) {
        self.with(|i| *i.label_overflow.entry(label.into()).or_default() += 1);
    }
    /// Count bytes (decompressed) and events read from event logs.
    pub fn eventlog_read(&self, bytes: u64, events: u64, newest_event_ms: Option<i64>) {
        self.with(|i| {
            i.eventlog_bytes += bytes;
            i.eventlog_events += events;
            if let Some(t) = newest_event_ms {
                i.eventlog_newest_event_ms =
                    Some(i.eventlog_newest_event_ms.map_or(t, |o| o.max(t)));
            }
        });
    }
    /// Count an event-log error of `kind` (`parse`, `codec`, `line_too_long`, `io`, ...).
    pub fn eventlog_error(&self, kind: &str) {
        self.with(|i| *i.eventlog_errors.entry(kind.into()).or_default() += 1);
    }
    /// Count a connection or request refused, or a server failure: `kind` is
    /// `connection_limit`, `rate_limit`, `tls_handshake`, `tls_reload` or `unauthorized`.
    pub fn http_error(&self, kind: &str) {
        self.with(|i| *i.http_errors.entry(kind.into()).or_default() += 1);
    }
    /// Count a checkpoint write: `ok` or `error`.
    pub fn checkpoint_write(&self, result: &str) {
        self.with(|i| *i.checkpoint_writes.entry(result.into()).or_default() += 1);
    }
    /// Count a checkpoint load at start: `loaded`, `none` (no file) or `refused`.
    pub fn checkpoint_load(&self, result: &str) {
        self.with(|i| *i.checkpoint_loads.entry(result.into()).or_default() += 1);
    }
    /// Count an OTLP export attempt.
    pub fn otlp_export(&self) {
        self.with(|i| i.otlp_exports += 1);
    }
    /// Count a failed OTLP export attempt.
    pub fn otlp_export_failed(&self) {
        self.with(|i| i.otlp_export_failures += 1);
    }
    /// Count one HTTP request to object store `store` (`op`: `list`, `head`, `get`, `other`)
    /// and the response's bytes.
    pub fn store_request(&self, store: &str, op: &str, bytes: u64) {
        self.with(|i| {
            *i.store_requests
                .entry((store.into(), op.into()))
                .or_default() += 1;
            *i.store_bytes.entry(store.into()).or_default() += bytes;
        });
    }
    /// Count a failed request to `store`: `kind` is the HTTP status (`503`) or `connect`,
    /// `timeout`, `request`, `interrupted`, `decode`, `other`.
    pub fn store_error(&self, store: &str, kind: &str) {
        self.with(|i| {
            *i.store_errors
                .entry((store.into(), kind.into()))
                .or_default() += 1
        });
    }
    /// Record whether `source`'s last read of `place` succeeded.
    pub fn set_source_up(&self, source: &str, place: &str, up: bool) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let key = (source.to_string(), place.to_string());
        if g.source_up.get(&key) == Some(&up) {
            return;
        }
        g.source_up.insert(key, up);
        self.generation.fetch_add(1, Ordering::Release);
    }
    /// Record whether `source` has finished its first round (set once, born at 0).
    pub fn set_source_ready(&self, source: &str, ready: bool) {
        self.with(|i| i.source_ready.insert(source.to_string(), ready));
    }
    /// Record whether the last listing of `store` succeeded.
    pub fn set_store_up(&self, store: &str, up: bool) {
        self.with(|i| i.store_up.insert(store.to_string(), up));
    }
    /// Set how many files are in each tailer state (`active`, `finished`, `error`).
    pub fn set_eventlog_files(&self, counts: BTreeMap<String, u64>) {
        // Every event-log step reports the counts; unchanged ones must not look like a change
        // (each change makes the next scrape render again).
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.eventlog_files == counts {
            return;
        }
        g.eventlog_files = counts;
        self.generation.fetch_add(1, Ordering::Release);
    }
}
