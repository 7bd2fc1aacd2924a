//! The `event_log` section: its keys.

use crate::config::key::{Key, Uses};
use crate::config::parse;
use crate::location::parse_location;

/// The `event_log` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::list("event_log.dirs", |s, v| {
        s.event_log.dirs = parse::items(v, parse_location)?;
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
        s.event_log.poll_interval = parse::positive(v)?;
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
        s.event_log.max_line_bytes = n;
        Ok(())
    })
    .doc("Longer event lines are skipped and counted."),
    Key::one("event_log.discovery_interval", |s, v| {
        s.event_log.discovery_interval = Some(parse::positive(v)?);
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
        s.event_log.depth = n as u32;
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
        s.event_log.threads = n;
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
