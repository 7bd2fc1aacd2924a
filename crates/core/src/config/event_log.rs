//! The `event_log` section: the event-log collector's folders, pacing and limits.

use std::time::Duration;

use serde::Serialize;

use crate::location::Location;

/// Default event-log poll interval (back-off at EOF).
pub const DEFAULT_EVENTLOG_POLL: Duration = Duration::from_secs(1);
/// Default depth of sub-folders read under an event-log location (`<cluster>/<year>/<day>/`).
pub const DEFAULT_EVENTLOG_DEPTH: u32 = 3;
/// Default cap on one event-log line; longer lines are skipped and counted.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Event-log tailing.
#[derive(Debug, Clone, Serialize)]
pub struct EventLogConfig {
    /// `spark.eventLog.dir` folders to watch: paths, `file://`, or object-store URLs (`s3://`,
    /// `s3a://`, `gs://`, `az://`, `abfs://`, `abfss://`). Empty disables the tailer.
    pub dirs: Vec<Location>,
    /// Back-off when every file is at EOF, and the discovery interval.
    #[serde(with = "humantime_serde")]
    pub poll_interval: Duration,
    /// Longest line accepted; longer ones are skipped and counted.
    pub max_line_bytes: usize,
    /// Logs read in parallel: one reader per thread (default: one per core, at most 16).
    pub threads: usize,
    /// How often the folders are listed for new logs and new rolling parts (`None`: every
    /// `poll_interval`). On a bucket each listing is a request per 1,000 keys.
    #[serde(with = "humantime_serde::option")]
    pub discovery_interval: Option<Duration>,
    /// How many levels of sub-folders (not `eventlog_v2_*` logs, not hidden) are read under a
    /// location: 0 reads the folder itself only. Each sub-folder is one more listing per
    /// discovery pass.
    pub depth: u32,
}

impl Default for EventLogConfig {
    fn default() -> Self {
        EventLogConfig {
            dirs: vec![],
            poll_interval: DEFAULT_EVENTLOG_POLL,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            threads: default_eventlog_threads(),
            discovery_interval: None,
            depth: DEFAULT_EVENTLOG_DEPTH,
        }
    }
}

/// Logs read in parallel by default: one per core, at most 16.
pub fn default_eventlog_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 16)
}
