//! Event-log discovery, tailing, codecs and parsing.
//!
//! - [`discovery`]: finds single-file and rolling (`eventlog_v2_*`) logs in the configured
//!   folders and names their codec, application and status.
//! - [`codec`] and [`block`]: incremental decoders for zstd, lz4-java, snappy-java, ning LZF and
//!   plain text, as Spark's `CompressionCodec` writes them; `codec_error`: what they report.
//! - [`tailer`]: follows one file by identity (device, inode): offsets, undecoded bytes, partial
//!   lines, truncation.
//! - [`parser`], `json` and `scan`: one JSON line to one [`parser::Event`], reading only the
//!   events and fields the exporter uses (task ends with a structural scanner, the rest with
//!   serde).
//!   `sqlplan`: SQL plans (deep trees, read with the scanner into the graph Spark's SQL tab
//!   draws) and driver accumulator updates.
//! - [`apply`]: completes events with what the log said before and feeds the model
//!   (a source of [`crate::model::Feed::Log`]).
//! - `engine`: the set of followed logs, polled in turn; `pool`: one engine per core, read
//!   in parallel.
//! - [`fs`]: where logs are listed and read from: a local folder, or (`objfs`) a bucket of S3,
//!   GCS or Azure Blob, behind one interface.
//! - [`plugin`]: the source's registry entry and its collector ([`EventLogs`]);
//!   [`positions`]: its part of the checkpoint (the read positions).
//!
//! **Restarts.** The model's updates are keyed by Spark's ids and the event-log counters are sums
//! over the task ends read, so reading the same logs again rebuilds the same state: without a
//! checkpoint every log is read again from its beginning at start. With one (`checkpoint.path`),
//! the logs it recorded as done ([`positions`]: finished, read to their end) are not read again
//! while unchanged; logs still being written are read again from their start. Finished logs are
//! read once and then only their size is watched.

#[cfg(feature = "internals")]
pub mod apply;
#[cfg(not(feature = "internals"))]
pub(crate) mod apply;
#[cfg(feature = "internals")]
pub mod block;
#[cfg(not(feature = "internals"))]
pub(crate) mod block;
#[cfg(feature = "internals")]
pub mod codec;
#[cfg(not(feature = "internals"))]
pub(crate) mod codec;
mod codec_error;
pub mod config;
#[cfg(feature = "internals")]
pub mod discovery;
#[cfg(not(feature = "internals"))]
pub(crate) mod discovery;
mod engine;
#[cfg(feature = "internals")]
pub mod fs;
#[cfg(not(feature = "internals"))]
pub(crate) mod fs;
mod json;
mod objfs;
#[cfg(feature = "internals")]
pub mod parser;
#[cfg(not(feature = "internals"))]
pub(crate) mod parser;
pub mod plugin;
mod pool;
pub mod positions;
mod scan;
mod scratch;
mod sqlplan;
#[cfg(feature = "internals")]
pub mod tailer;
#[cfg(not(feature = "internals"))]
pub(crate) mod tailer;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::filter::AppFilter;
use crate::model::Observer;
use crate::telemetry::Telemetry;
use config::EventLogConfig;

pub use apply::{LogAppState, Out};
pub use engine::Engine;
pub use parser::{parse_line, Event, ParseError};
pub use pool::Pool;
pub use tailer::ResumeAt;

/// What a one-shot read of event-log locations looks at, for a message that found nothing:
/// ` (read: event-log files and eventlog_v2_* folders, 3 levels of sub-folders deep; ...)`.
pub fn what_is_read(depth: u32) -> String {
    format!(
        " (read: event-log files and eventlog_v2_* folders, {depth} levels of sub-folders deep; \
         --event-log.depth changes it)"
    )
}

/// Errors of the event-log entry points.
#[derive(Debug, thiserror::Error)]
pub enum EventLogError {
    /// A path given to [`ingest_paths`] cannot be read.
    #[error(transparent)]
    Discovery(#[from] discovery::DiscoveryError),
    /// An object store cannot be set up.
    #[error(transparent)]
    Store(#[from] crate::objstore::StoreError),
    /// A file named to [`ingest_paths`] holds no Spark event.
    #[error(
        "not a Spark event log (no event in it; an event log is JSON lines like {{\"Event\":\"SparkListenerLogStart\",...}}, \
         possibly compressed): {}",
        .0.join(", ")
    )]
    NotEventLog(Vec<String>),
}

/// The roots of `locations` (paths or object-store URLs), blocking on `rt` for object stores.
/// A location whose store cannot be set up is logged and left out.
pub fn roots(
    locations: &[crate::location::Location],
    rt: &tokio::runtime::Handle,
    telemetry: &Arc<Telemetry>,
    poll_interval: std::time::Duration,
) -> Vec<fs::Root> {
    locations
        .iter()
        .filter_map(
            |l| match objfs::root(l, Some(rt), telemetry, poll_interval) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(location = %l, error = %e, "Cannot read event logs from this \
                    location.");
                    None
                }
            },
        )
        .collect()
}

/// Tell the framework how each folder was listed, and that a first round is done.
fn listed(handle: &crate::sources::Handle, dirs: &[fs::Root], engine: &Pool) {
    let now = crate::clock::system_now_ms();
    for d in dirs {
        let shown = d.display();
        match engine.failing_dirs().get(&shown) {
            None => handle.answered(&shown, now),
            Some(error) => handle.failed(&shown, now, error),
        }
    }
    handle.round_done();
}

/// Discovers and tails every log under `config.dirs` of the applications `filter`
/// follows until `finish` is cancelled, then makes a last pass (discovers new files, reads every
/// log to its end) and returns. Tells `health` once the first discovery pass is done.
///
/// Each step (listing when due, then reading every log up to a budget) runs on the blocking
/// pool; between steps that read nothing the task sleeps `poll_interval`. The last pass is not
/// bounded here: the drain that asked for it stops waiting at its grace period.
pub async fn run<O: Observer + 'static>(
    config: EventLogConfig,
    filter: AppFilter,
    handle: crate::sources::Handle,
    observer: Arc<O>,
    finish: CancellationToken,
) {
    let telemetry = handle.telemetry().clone();
    if config.dirs.is_empty() {
        return;
    }
    let dirs: Vec<fs::Root> = roots(
        &config.dirs,
        &tokio::runtime::Handle::current(),
        &telemetry,
        config.poll_interval,
    )
    .into_iter()
    .map(|r| r.with_depth(config.depth))
    .collect();
    let interval = config.poll_interval;
    let discovery = config.discovery_interval.unwrap_or(interval);
    let max_line = config.max_line_bytes;
    let threads = config.threads;
    let new_pool = || Pool::new(threads, max_line).with_filter(filter.clone());
    let mut engine = new_pool();
    // Logs a checkpoint says were done are not read again while unchanged (until the first
    // listing has matched them).
    engine.resume_from(Arc::new(positions::from_part(handle.loaded_part())));
    let mut resuming = true;
    let mut last_scan: Option<tokio::time::Instant> = None;
    // `Some(scanned)` once finishing: the last pass lists the folders once, then reads until
    // every log is at its end.
    let mut last_pass: Option<bool> = None;
    // Told once every log present at the first listing is read to its last complete event.
    let mut startup_told = false;
    tracing::info!(dirs = ?config.dirs, "Following event logs.");
    loop {
        if last_pass.is_none() && finish.is_cancelled() {
            tracing::info!("Reading every event log to its end.");
            last_pass = Some(false);
        }
        let scan_due =
            last_pass == Some(false) || last_scan.is_none_or(|t| t.elapsed() >= discovery);
        let (o, t, d) = (observer.clone(), telemetry.clone(), dirs.clone());
        let h = handle.clone();
        let stop_resuming = scan_due && std::mem::take(&mut resuming);
        let step = tokio::task::spawn_blocking(move || {
            let out = Out {
                observer: &*o,
                telemetry: &t,
            };
            if scan_due {
                engine.scan(&d, out);
            }
            if stop_resuming {
                engine.resume_from(Arc::default());
            }
            let n = engine.poll(out);
            engine.report(out);
            if h.keeps_parts() && (scan_due || n > 0) {
                h.publish_part(Arc::new(positions::LogPart(Arc::new(engine.done_logs()))));
            }
            (engine, n)
        });
        let read = match step.await {
            Ok((e, n)) => {
                engine = e;
                n
            }
            Err(e) => {
                // The engine was lost with the panicking step: start over. Re-reading is safe
                // (see the module documentation), only slower.
                tracing::error!(error = %e, "Event-log step failed; reading every log again.");
                telemetry.eventlog_error("internal");
                engine = new_pool();
                last_pass = last_pass.map(|_| false);
                continue;
            }
        };
        if scan_due {
            last_scan = Some(tokio::time::Instant::now());
            listed(&handle, &dirs, &engine);
        }
        if !startup_told && read == 0 {
            startup_told = true;
            tracing::info!("Every event log present at start is read.");
            observer.startup_done();
        }
        if let Some(scanned) = &mut last_pass {
            *scanned = true;
            if read == 0 {
                break;
            }
            continue;
        }
        if read > 0 {
            tokio::task::yield_now().await;
            continue;
        }
        tokio::select! {
            _ = finish.cancelled() => {}
            _ = tokio::time::sleep(interval) => {}
        }
    }
    tracing::info!("Event-log tailer stopped.");
}

/// Post-mortem: read the given files or folders to the end into the model (the
/// `dump --event-log PATH...` subcommand).
///
/// A path (or object-store URL) may be a single-file log, a rolling `eventlog_v2_*` folder, or
/// a folder holding logs. Damaged input is counted and skipped as when tailing; only an
/// unreadable path is an error. Object stores block on the current runtime: call this from a
/// blocking thread of it (not from an async task); local paths need no runtime.
///
/// The logs read are those of the settings' [`AppFilter`]; [`ingest_paths_with`] takes the
/// filter of the model being filled.
pub fn ingest_paths<P: AsRef<std::ffi::OsStr>>(
    paths: &[P],
    settings: &Settings,
    observer: &dyn Observer,
    telemetry: &Arc<Telemetry>,
) -> Result<(), EventLogError> {
    let filter = AppFilter::new(settings);
    ingest_paths_with(
        paths,
        &EventLogConfig::of(settings),
        &filter,
        observer,
        telemetry,
    )
}

/// [`ingest_paths`], reading only the logs of the applications `filter` follows.
pub fn ingest_paths_with<P: AsRef<std::ffi::OsStr>>(
    paths: &[P],
    config: &EventLogConfig,
    filter: &AppFilter,
    observer: &dyn Observer,
    telemetry: &Arc<Telemetry>,
) -> Result<(), EventLogError> {
    let out = Out {
        observer,
        telemetry,
    };
    let mut engine = Pool::new(config.threads, config.max_line_bytes).with_filter(filter.clone());
    // The single files named (not found in a folder): one that is no event log is an error.
    let mut named = vec![];
    for path in paths {
        let listed = list_logs(&path.as_ref().to_string_lossy(), config, telemetry)?;
        for found in listed.logs {
            if let (true, discovery::Found::Single { path, .. }) = (listed.named, &found) {
                named.push(listed.root.fs.display(path));
            }
            engine.add(found, &listed.root, out);
        }
    }
    while engine.poll(out) > 0 {}
    engine.settle_all(out);
    engine.report(out);
    observer.startup_done();
    let not_logs: Vec<String> = engine
        .not_event_logs()
        .into_iter()
        .filter(|p| named.contains(p))
        .collect();
    if !not_logs.is_empty() {
        return Err(EventLogError::NotEventLog(not_logs));
    }
    Ok(())
}

/// One location's event logs, as a review lists them: where they are read from, and each log.
#[derive(Debug)]
pub struct Listed {
    /// The file system or store, and the location in it.
    pub root: fs::Root,
    /// The logs found: the location itself when it is a log, else those under it down to
    /// `event_log.depth` levels.
    pub logs: Vec<discovery::Found>,
    /// The location is itself a log (named, not found in a folder).
    pub named: bool,
}

/// List the logs of `location` (a log, a folder or an object-store prefix) without reading
/// them, as [`ingest_paths`] and a review find them. Object stores block on the current
/// runtime: call this from a blocking thread of it.
pub fn list_logs(
    location: &str,
    config: &EventLogConfig,
    telemetry: &Arc<Telemetry>,
) -> Result<Listed, EventLogError> {
    let rt = tokio::runtime::Handle::try_current().ok();
    let parsed = objfs::parse_location(location).map_err(crate::objstore::StoreError::Location)?;
    let root = objfs::root(&parsed, rt.as_ref(), telemetry, config.poll_interval)?;
    let found = discovery::classify(&*root.fs, &root.path);
    if let Some(store) = root.fs.store() {
        telemetry.set_store_up(store, found.is_ok());
    }
    let (logs, named) = match found? {
        Some(one) => (vec![one], true),
        None => {
            let mut stray = vec![];
            let listed = discovery::scan_noting(&*root.fs, &root.path, config.depth, &mut stray)?;
            // Not counted as errors: a folder may hold notes and expectations beside its logs;
            // a file named like a log that holds no event is.
            for file in stray {
                tracing::warn!(file = %file, "Not an event log's name; skipped.");
            }
            (listed, false)
        }
    };
    Ok(Listed { root, logs, named })
}

/// How a listed log shows in messages: its path or URL.
pub fn shown(found: &discovery::Found, root: &fs::Root) -> String {
    match found {
        discovery::Found::Single { path, .. } | discovery::Found::Rolling { path, .. } => {
            root.fs.display(path)
        }
    }
}

/// Read one listed log to its end into `observer` (a review reads one application at a time).
/// Damaged lines and blocks are counted and skipped as by [`ingest_paths`]; a log that holds
/// no Spark event is an error. Blocks on the runtime for object stores, as [`list_logs`].
pub fn read_log(
    found: discovery::Found,
    root: &fs::Root,
    config: &EventLogConfig,
    observer: &dyn Observer,
    telemetry: &Arc<Telemetry>,
) -> Result<(), EventLogError> {
    let out = Out {
        observer,
        telemetry,
    };
    let mut engine = Pool::new(1, config.max_line_bytes);
    engine.add(found, root, out);
    while engine.poll(out) > 0 {}
    engine.settle_all(out);
    engine.report(out);
    observer.startup_done();
    let not_logs = engine.not_event_logs();
    if !not_logs.is_empty() {
        return Err(EventLogError::NotEventLog(not_logs));
    }
    Ok(())
}
