//! Finding event logs in `spark.eventLog.dir` folders, in both of Spark's layouts
//! (`EventLogFileWriters.scala`):
//!
//! - single file: `<app>[_<attempt>][.<codec>][.inprogress]`, renamed without `.inprogress`
//!   when the application ends;
//! - rolling (`spark.eventLog.rolling.enabled`, the default since Spark 4.0): a folder
//!   `eventlog_v2_<app>[_<attempt>]/` with parts `events_<N>_<app>[_<attempt>][.<codec>]` written
//!   in `N` order and `appstatus_<app>[_<attempt>][.inprogress]`, whose `.inprogress` suffix
//!   disappears when the application ends. The History Server's compactor may replace parts
//!   `1..=N` with `events_<N>_....compact`.
//!
//! Files are known by identity ([`FileId`]: the inode on a local disk, the key without
//! `.inprogress` on an object store), so a rename is seen as the same file. Names starting with
//! `.` (Hadoop `.crc` side files, hidden files) are ignored. Every listing goes through an
//! [`Fs`], a local folder or an object store.

use std::io;
use std::path::{Path, PathBuf};

use super::codec::Codec;
pub use super::fs::FileId;
use super::fs::{Entry, Fs};

const INPROGRESS: &str = ".inprogress";
const ROLLING_DIR: &str = "eventlog_v2_";
const PART: &str = "events_";
const STATUS: &str = "appstatus_";
const COMPACT: &str = ".compact";

/// Discovery failures.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// A folder could not be listed (missing, no permission).
    #[error("cannot list {path}: {source}")]
    List {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// What a single-file log's name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogName {
    /// `<app>[_<attempt>]` as Spark wrote it (sanitised app id).
    pub name: String,
    /// Codec from the extension.
    pub codec: Codec,
    /// The writer has not finished (`.inprogress`).
    pub in_progress: bool,
}

/// Parse `<app>[_<attempt>][.<codec>][.inprogress]`.
pub fn parse_single_name(file_name: &str) -> Option<LogName> {
    if file_name.starts_with('.') || file_name.starts_with(ROLLING_DIR) {
        return None;
    }
    let (rest, in_progress) = match file_name.strip_suffix(INPROGRESS) {
        Some(r) => (r, true),
        None => (file_name, false),
    };
    let (name, codec) = match rest
        .rsplit_once('.')
        .and_then(|(n, ext)| Some((n, Codec::from_extension(ext)?)))
    {
        Some((n, c)) => (n, c),
        None => (rest, Codec::Plain),
    };
    // Spark sanitises the name (`Utils.sanitizeDirName` turns `.` into `_`), so a remaining dot
    // means another kind of file (`counts.json`, `notes.txt`).
    if name.is_empty() || name.contains('.') {
        return None;
    }
    Some(LogName {
        name: name.to_string(),
        codec,
        in_progress,
    })
}

/// One part of a rolling log: `events_<N>_<name>[.<codec>][.compact]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartName {
    /// `N`.
    pub index: u64,
    /// Codec from the extension.
    pub codec: Codec,
    /// A compacted part (replaces parts `1..=N`).
    pub compact: bool,
}

/// Parse a rolling part name.
pub fn parse_part_name(file_name: &str) -> Option<PartName> {
    let rest = file_name.strip_prefix(PART)?;
    let (rest, compact) = match rest.strip_suffix(COMPACT) {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (index, name) = rest.split_once('_')?;
    let index = index.parse().ok()?;
    let codec = name
        .rsplit_once('.')
        .and_then(|(_, ext)| Codec::from_extension(ext))
        .unwrap_or(Codec::Plain);
    Some(PartName {
        index,
        codec,
        compact,
    })
}

/// The application id a log name implies, when the log holds no `App ID`: the name without an
/// attempt suffix. YARN ids (`application_<ts>_<n>`) contain underscores themselves, so only a
/// fourth `_`-separated field is an attempt there; elsewhere a trailing `_<digits>` is.
pub fn app_id_from_name(name: &str) -> String {
    if name.starts_with("application_") {
        let parts: Vec<&str> = name.split('_').collect();
        return if parts.len() >= 4 {
            parts[..3].join("_")
        } else {
            name.to_string()
        };
    }
    match name.rsplit_once('_') {
        Some((app, attempt))
            if !app.is_empty()
                && !attempt.is_empty()
                && attempt.bytes().all(|b| b.is_ascii_digit()) =>
        {
            app.to_string()
        }
        _ => name.to_string(),
    }
}

/// An entry of an event-log folder.
#[derive(Debug, Clone)]
pub enum Found {
    /// A single-file log.
    Single {
        /// Current path.
        path: PathBuf,
        /// Identity.
        id: FileId,
        /// What its name says.
        name: LogName,
        /// Size at listing time.
        len: u64,
        /// Last modified (epoch ms), when known.
        modified_ms: Option<i64>,
    },
    /// A rolling log folder.
    Rolling {
        /// Current path.
        path: PathBuf,
        /// Identity of the folder.
        id: FileId,
        /// `<app>[_<attempt>]`.
        name: String,
        /// Last modified (epoch ms), when known (a local folder: its last part or status
        /// file created; none on an object store).
        modified_ms: Option<i64>,
    },
}

impl Found {
    /// The identity.
    pub fn id(&self) -> FileId {
        match self {
            Found::Single { id, .. } | Found::Rolling { id, .. } => *id,
        }
    }
    /// Last modified (epoch ms), when known.
    pub fn modified_ms(&self) -> Option<i64> {
        match self {
            Found::Single { modified_ms, .. } | Found::Rolling { modified_ms, .. } => *modified_ms,
        }
    }
}

fn list(fs: &dyn Fs, dir: &Path) -> Result<Vec<Entry>, DiscoveryError> {
    fs.list(dir).map_err(|source| DiscoveryError::List {
        path: PathBuf::from(fs.display(dir)),
        source,
    })
}

/// Every log directly inside `dir`.
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub fn scan(fs: &dyn Fs, dir: &Path) -> Result<Vec<Found>, DiscoveryError> {
    scan_to(fs, dir, 0)
}

/// Every log inside `dir` and its sub-folders down to `depth` levels (not rolling logs'
/// folders, which are logs, nor names starting with `.` or `_`). `dir` that cannot be listed is
/// an error; a sub-folder that cannot be (gone since it was listed, or refused) is logged and
/// left out.
pub fn scan_to(fs: &dyn Fs, dir: &Path, depth: u32) -> Result<Vec<Found>, DiscoveryError> {
    scan_noting(fs, dir, depth, &mut vec![])
}

/// [`scan_to`], noting in `stray` the files (as shown) whose names are no event log's (hidden
/// names and names starting with `_`, such as Hadoop's `_SUCCESS`, are not noted).
pub fn scan_noting(
    fs: &dyn Fs,
    dir: &Path,
    depth: u32,
    stray: &mut Vec<String>,
) -> Result<Vec<Found>, DiscoveryError> {
    let mut found = Vec::new();
    let mut below = vec![];
    for e in list(fs, dir)? {
        if e.is_dir {
            if let Some(app) = e.name.strip_prefix(ROLLING_DIR) {
                found.push(Found::Rolling {
                    name: app.to_string(),
                    path: e.path,
                    id: e.id,
                    modified_ms: e.modified_ms,
                });
            } else if depth > 0 && !e.name.starts_with(['.', '_']) {
                below.push(e.path);
            }
        } else if let Some(log) = parse_single_name(&e.name) {
            found.push(Found::Single {
                path: e.path,
                id: e.id,
                name: log,
                len: e.len,
                modified_ms: e.modified_ms,
            });
        } else if !e.name.starts_with(['.', '_']) {
            stray.push(fs.display(&e.path));
        }
    }
    for sub in below {
        match scan_noting(fs, &sub, depth - 1, stray) {
            Ok(more) => found.extend(more),
            Err(e) => tracing::warn!(error = %e, "Cannot list an event-log sub-folder; skipped."),
        }
    }
    Ok(found)
}

/// Classify one path given on the command line: a rolling folder, a single file, or `None` for
/// a folder to [`scan`].
pub fn classify(fs: &dyn Fs, path: &Path) -> Result<Option<Found>, DiscoveryError> {
    let e = fs.stat(path).map_err(|source| DiscoveryError::List {
        path: PathBuf::from(fs.display(path)),
        source,
    })?;
    if e.is_dir {
        return Ok(e.name.strip_prefix(ROLLING_DIR).map(|app| Found::Rolling {
            name: app.to_string(),
            path: e.path.clone(),
            id: e.id,
            modified_ms: e.modified_ms,
        }));
    }
    let name = parse_single_name(&e.name).unwrap_or(LogName {
        name: e.name.clone(),
        codec: Codec::Plain,
        in_progress: false,
    });
    Ok(Some(Found::Single {
        path: e.path,
        id: e.id,
        name,
        len: e.len,
        modified_ms: e.modified_ms,
    }))
}

/// One part file of a rolling log, as listed.
#[derive(Debug, Clone)]
pub struct Part {
    /// Current path.
    pub path: PathBuf,
    /// Identity.
    pub id: FileId,
    /// What its name says.
    pub name: PartName,
    /// Size at listing time.
    pub len: u64,
}

/// The content of a rolling log folder.
#[derive(Debug, Clone, Default)]
pub struct RollingListing {
    /// Parts, sorted by index (a compacted part sorts after a plain part of the same index).
    pub parts: Vec<Part>,
    /// `appstatus_` exists without `.inprogress`: the application has ended.
    pub finished: bool,
}

/// List a rolling log folder.
pub fn list_rolling(fs: &dyn Fs, dir: &Path) -> Result<RollingListing, DiscoveryError> {
    let mut l = RollingListing::default();
    for e in list(fs, dir)? {
        if let Some(status) = e.name.strip_prefix(STATUS) {
            l.finished |= !status.ends_with(INPROGRESS);
        } else if let Some(part) = parse_part_name(&e.name) {
            if !e.is_dir {
                l.parts.push(Part {
                    path: e.path,
                    id: e.id,
                    name: part,
                    len: e.len,
                });
            }
        }
    }
    l.parts.sort_by_key(|p| (p.name.index, p.name.compact));
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_names() {
        let n = parse_single_name("local-1796009905871.zstd.inprogress").unwrap();
        assert_eq!(
            (n.name.as_str(), n.codec, n.in_progress),
            ("local-1796009905871", Codec::Zstd, true)
        );
        let n = parse_single_name("app-20260101120000-0001_1.lz4").unwrap();
        assert_eq!(
            (n.name.as_str(), n.codec, n.in_progress),
            ("app-20260101120000-0001_1", Codec::Lz4, false)
        );
        let n = parse_single_name("local-1.inprogress").unwrap();
        assert_eq!((n.codec, n.in_progress), (Codec::Plain, true));
        assert_eq!(parse_single_name(".local-1.crc"), None);
        assert_eq!(parse_single_name("eventlog_v2_x"), None);
        assert_eq!(parse_single_name("counts.json"), None);
    }

    #[test]
    fn part_names() {
        let p = parse_part_name("events_12_local-1796009866750.snappy").unwrap();
        assert_eq!((p.index, p.codec, p.compact), (12, Codec::Snappy, false));
        let p = parse_part_name("events_3_application_1_2_1.compact").unwrap();
        assert_eq!((p.index, p.codec, p.compact), (3, Codec::Plain, true));
        let p = parse_part_name("events_3_spark-ab.lzf.compact").unwrap();
        assert_eq!((p.codec, p.compact), (Codec::Lzf, true));
        assert_eq!(parse_part_name("events_x_local-1"), None);
        assert_eq!(parse_part_name("appstatus_local-1"), None);
    }

    #[test]
    fn app_ids_from_names() {
        assert_eq!(
            app_id_from_name("local-1796009866750"),
            "local-1796009866750"
        );
        assert_eq!(
            app_id_from_name("app-20260101120000-0001_2"),
            "app-20260101120000-0001"
        );
        assert_eq!(
            app_id_from_name("application_1700000000000_0042"),
            "application_1700000000000_0042"
        );
        assert_eq!(
            app_id_from_name("application_1700000000000_0042_1"),
            "application_1700000000000_0042"
        );
        assert_eq!(app_id_from_name("spark-0a1b_driver"), "spark-0a1b_driver");
    }
}
