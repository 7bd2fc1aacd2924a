//! The `event_log` section, the event-log source's: its folders, pacing and limits, and its
//! keys (declared to the core's configuration by the source registry).

use std::time::Duration;

use serde::Serialize;

use crate::config::key::{Key, Uses};
use crate::config::parse;
use crate::config::{Declared, SectionConfig, Settings};
use crate::location::{parse_location, Location};

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

impl SectionConfig for EventLogConfig {
    const NAME: &'static str = "event_log";
}

impl EventLogConfig {
    /// The `event_log` section of `s`.
    pub fn of(s: &Settings) -> std::borrow::Cow<'_, EventLogConfig> {
        s.section()
    }

    /// The `event_log` section of `s`, to change.
    pub fn of_mut(s: &mut Settings) -> &mut EventLogConfig {
        s.section_mut()
    }
}

/// The `event_log` section as the configuration reads it.
pub static SECTION: Declared = Declared::of::<EventLogConfig>(KEYS);

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

/// The `event_log` keys.
const KEYS: &[Key] = &[
    Key::list("event_log.dirs", |s, v| {
        EventLogConfig::of_mut(s).dirs = parse::items(v, parse_location)?;
        Ok(())
    })
    .repeat("event-log.dir")
    .brief(
        "spark.eventLog.dir folder to tail (path, file://, s3://, gs://, az://, abfs://); \
        repeatable.",
    )
    .uses(Uses::RUN)
    .doc(
        "`spark.eventLog.dir` folders to tail: paths, `file://`, `s3://`, `s3a://`, `gs://`, \
         `az://`, `abfs://`, `abfss://` (see [Event logs on object \
         storage](internals.md#event-logs-on-object-storage)). `dump` and `diagnose` read \
         `--event-log` instead.",
    ),
    Key::one("event_log.poll_interval", |s, v| {
        EventLogConfig::of_mut(s).poll_interval = parse::positive(v)?;
        Ok(())
    })
    .flag("event-log.poll-interval")
    .uses(Uses::RUN)
    .doc("Back-off at end of file and discovery interval."),
    Key::one("event_log.max_line_bytes", |s, v| {
        let n = parse::count(v)?;
        if n < 1024 {
            return Err("must be at least 1024".into());
        }
        EventLogConfig::of_mut(s).max_line_bytes = n;
        Ok(())
    })
    .doc("Longer event lines are skipped and counted."),
    Key::one("event_log.discovery_interval", |s, v| {
        EventLogConfig::of_mut(s).discovery_interval = Some(parse::positive(v)?);
        Ok(())
    })
    .flag("event-log.discovery-interval")
    .brief("How often folders are listed for new logs and rolling parts.")
    .uses(Uses::RUN)
    .default("the poll interval")
    .doc(
        "How often folders are listed for new logs and new rolling parts; on a bucket a \
         listing costs a request per 1,000 keys, so raise it for large buckets (a log's growth \
         is still read every poll).",
    ),
    Key::one("event_log.depth", |s, v| {
        let n = parse::count(v)?;
        if n > 16 {
            return Err("must be at most 16".into());
        }
        EventLogConfig::of_mut(s).depth = n as u32;
        Ok(())
    })
    .flag("event-log.depth")
    .brief("Levels of sub-folders read under an event-log location (0: the folder only).")
    .uses(Uses::ALL)
    .default("3")
    .doc(
        "Levels of sub-folders read under an event-log location or an `--event-log` folder, for \
         stores that keep one prefix per cluster or per day (`<cluster>/<yyyy>/<mm-dd>/`); 0 \
         reads the folder itself only. `eventlog_v2_*` folders are logs, not sub-folders, and \
         names starting with `.` or `_` are skipped. Each sub-folder costs one more listing per \
         discovery pass: on a bucket, one LIST request per 1,000 keys of each sub-folder.",
    ),
    Key::one("event_log.threads", |s, v| {
        let n = parse::count(v)?;
        if n > 256 {
            return Err("must be at most 256".into());
        }
        EventLogConfig::of_mut(s).threads = n;
        Ok(())
    })
    .flag("event-log.threads")
    .brief("Logs read in parallel (one reader thread each).")
    .default("one per core (at most 16)")
    .doc(
        "Logs read in parallel: each log belongs to one reader thread; a cold start over many \
         applications uses every core.",
    ),
];
