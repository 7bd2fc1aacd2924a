//! Where event logs are read from, behind one interface: a local folder ([`LocalFs`]), or a
//! bucket of an object store (`super::objfs::ObjectFs`). Discovery lists through it and the
//! tailer reads through it, so every layout and codec is read the same way from both.
//!
//! Paths are kept as [`PathBuf`]s in both cases: a local path, or the key of an object inside its
//! store (`spark-events/eventlog_v2_local-1/events_1_local-1.zstd`). [`Fs::display`] gives the
//! form for logs and messages (a path, or a URL).

use std::fmt::Debug;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file's identity: (device, inode) on a local disk; a hash of the key on an object store
/// (without `.inprogress`, so the final name of a log continues its in-progress one).
pub type FileId = (u64, u64);

/// One entry of a folder listing.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The last path component.
    pub name: String,
    /// The full path (or key).
    pub path: PathBuf,
    /// A folder (a common prefix on an object store).
    pub is_dir: bool,
    /// Size in bytes (0 for folders).
    pub len: u64,
    /// Identity.
    pub id: FileId,
    /// Last modified (epoch ms), when the store says (an object store's folder has no time).
    pub modified_ms: Option<i64>,
}

/// Why a file cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Not there (renamed or deleted since it was listed).
    #[error("not found")]
    NotFound,
    /// The path now names another file than the one followed.
    #[error("replaced by another file")]
    Replaced,
    /// Any other failure.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads one file from a position on.
pub trait Reader: Send + Debug {
    /// The file's current size (an object store asks the store).
    fn size(&mut self) -> io::Result<u64>;
    /// Read at the current position; 0 at the end.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Move to `offset`.
    fn seek(&mut self, offset: u64) -> io::Result<()>;
    /// The size a listing just gave: a reader that would have to ask for it may take this
    /// instead (see [`Fs::listed_size_is_current`]).
    fn known_size(&mut self, size: u64) {
        let _ = size;
    }
}

/// A place event logs are listed and read from.
pub trait Fs: Send + Sync + Debug {
    /// The entries directly inside `dir` (hidden names, starting with `.`, left out).
    fn list(&self, dir: &Path) -> io::Result<Vec<Entry>>;
    /// What `path` is.
    fn stat(&self, path: &Path) -> io::Result<Entry>;
    /// Open `path`, expected to be the file `id`, positioned at `offset`.
    fn open(&self, path: &Path, id: FileId, offset: u64) -> Result<Box<dyn Reader>, OpenError>;
    /// `path` as it should appear in logs and messages.
    fn display(&self, path: &Path) -> String;
    /// The object store's name for the `store` label (`s3://bucket`); `None` on a local disk.
    fn store(&self) -> Option<&str> {
        None
    }
    /// A size from a listing is as good as asking again (asking costs a request): the tailer then
    /// reads up to the listed size without asking. False on a local disk, where asking is free
    /// and more current.
    fn listed_size_is_current(&self) -> bool {
        false
    }
}

/// The local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFs;

fn entry(name: String, path: PathBuf, m: &fs::Metadata) -> Entry {
    Entry {
        name,
        path,
        is_dir: m.is_dir(),
        len: if m.is_file() { m.len() } else { 0 },
        id: (m.dev(), m.ino()),
        modified_ms: m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok()),
    }
}

impl Fs for LocalFs {
    fn list(&self, dir: &Path) -> io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir)? {
            let e = e?;
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            // Follow symlinks; an entry that vanished meanwhile is simply not there.
            let Ok(m) = fs::metadata(e.path()) else {
                continue;
            };
            if m.is_dir() || m.is_file() {
                out.push(entry(name, e.path(), &m));
            }
        }
        Ok(out)
    }

    fn stat(&self, path: &Path) -> io::Result<Entry> {
        let m = fs::metadata(path)?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        Ok(entry(name, path.to_path_buf(), &m))
    }

    fn open(&self, path: &Path, id: FileId, offset: u64) -> Result<Box<dyn Reader>, OpenError> {
        let mut f = File::open(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => OpenError::NotFound,
            _ => OpenError::Io(e),
        })?;
        let m = f.metadata()?;
        if (m.dev(), m.ino()) != id {
            return Err(OpenError::Replaced);
        }
        f.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(LocalReader(f)))
    }

    fn display(&self, path: &Path) -> String {
        path.display().to_string()
    }
}

/// An open local file.
#[derive(Debug)]
struct LocalReader(File);

impl Reader for LocalReader {
    fn size(&mut self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(offset)).map(drop)
    }
}

/// A folder to watch, or a path to read once: where it is and how to reach it.
#[derive(Debug, Clone)]
pub struct Root {
    /// The file system or store.
    pub fs: std::sync::Arc<dyn Fs>,
    /// The folder or file inside it.
    pub path: PathBuf,
    /// Levels of sub-folders listed under it (`event_log.depth`; 0: the folder only).
    pub depth: u32,
}

impl Root {
    /// A local folder or file.
    pub fn local(path: impl Into<PathBuf>) -> Root {
        Root {
            fs: std::sync::Arc::new(LocalFs),
            path: path.into(),
            depth: 0,
        }
    }

    /// The same root, its sub-folders listed `depth` levels down.
    pub fn with_depth(mut self, depth: u32) -> Root {
        self.depth = depth;
        self
    }

    /// As logs show it.
    pub fn display(&self) -> String {
        self.fs.display(&self.path)
    }
}
