//! Where checkpoints are kept: a local folder, or a prefix of an object store (S3, GCS, Azure
//! Blob, as `event_log.dirs` reads them, with the environment's credentials).
//!
//! A write is atomic either way. Locally: a temporary file beside the checkpoint, fsync, rename,
//! fsync of the folder, so a crash at any point leaves the old checkpoint or the new one. On an
//! object store: one PUT of the whole file, which a store makes visible whole or not at all.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::ObjectStore;
use spark_exporter_core::location::{parse_location, Place};

use crate::telemetry::Telemetry;

/// A folder or an object-store prefix holding checkpoints.
pub(super) enum Store {
    /// A local folder.
    Local(PathBuf),
    /// An object store.
    Object {
        store: Arc<dyn ObjectStore>,
        rt: tokio::runtime::Handle,
        /// The key prefix of the folder, without leading or trailing `/`.
        prefix: String,
        /// `scheme://bucket`, for display.
        base: String,
    },
}

/// Object-store requests of a checkpoint end within this (retries included).
const OBJECT_RETRY_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

impl Store {
    /// The store of the checkpoint `path` (a path, `file://` or an object-store URL), and the
    /// checkpoint's name in it. An object store needs the current Tokio runtime (call from a
    /// blocking thread of it).
    pub(super) fn of(path: &Path, telemetry: &Arc<Telemetry>) -> std::io::Result<(Store, String)> {
        let text = path.to_string_lossy();
        let loc = parse_location(&text).map_err(std::io::Error::other)?;
        match loc.place().clone() {
            Place::Local(p) => {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .ok_or_else(|| std::io::Error::other("the checkpoint path names no file"))?;
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                Ok((Store::Local(dir), name))
            }
            Place::Object { url, kind, prefix } => {
                let (folder, name) = match prefix.rsplit_once('/') {
                    Some((f, n)) => (f.to_string(), n.to_string()),
                    None => (String::new(), prefix.clone()),
                };
                if name.is_empty() {
                    return Err(std::io::Error::other("the checkpoint URL names no object"));
                }
                let rt = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
                let (store, base, _) =
                    crate::objstore::build_store(&url, kind, telemetry.clone(), OBJECT_RETRY_BOUND)
                        .map_err(std::io::Error::other)?;
                Ok((
                    Store::Object {
                        store,
                        rt,
                        prefix: folder,
                        base,
                    },
                    name,
                ))
            }
        }
    }

    fn key(prefix: &str, name: &str) -> object_store::path::Path {
        if prefix.is_empty() {
            object_store::path::Path::from(name)
        } else {
            object_store::path::Path::from(format!("{prefix}/{name}"))
        }
    }

    /// `name` as logs and errors show it.
    pub(super) fn shown(&self, name: &str) -> PathBuf {
        match self {
            Store::Local(dir) => dir.join(name),
            Store::Object { prefix, base, .. } => {
                PathBuf::from(format!("{base}/{}", Self::key(prefix, name)))
            }
        }
    }

    /// The checkpoint `name`, to read; `None` if there is none.
    pub(super) fn open(&self, name: &str) -> std::io::Result<Option<Box<dyn BufRead>>> {
        match self {
            Store::Local(dir) => match std::fs::File::open(dir.join(name)) {
                Ok(f) => Ok(Some(Box::new(std::io::BufReader::new(f)))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            },
            Store::Object {
                store, rt, prefix, ..
            } => {
                let key = Self::key(prefix, name);
                let got = rt.block_on(async { store.get(&key).await?.bytes().await });
                match got {
                    Ok(b) => Ok(Some(Box::new(std::io::Cursor::new(b)))),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(std::io::Error::other(e.to_string())),
                }
            }
        }
    }

    /// The names in the folder (or under the prefix).
    pub(super) fn list(&self) -> std::io::Result<Vec<String>> {
        match self {
            Store::Local(dir) => Ok(std::fs::read_dir(dir)?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()),
            Store::Object {
                store, rt, prefix, ..
            } => {
                let p =
                    (!prefix.is_empty()).then(|| object_store::path::Path::from(prefix.as_str()));
                let listed = rt
                    .block_on(store.list_with_delimiter(p.as_ref()))
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                Ok(listed
                    .objects
                    .into_iter()
                    .filter_map(|o| o.location.filename().map(str::to_string))
                    .collect())
            }
        }
    }

    /// Write the checkpoint `name` atomically with what `fill` writes; the bytes written.
    pub(super) fn write(
        &self,
        name: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<u64> {
        match self {
            Store::Local(dir) => {
                let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
                let written = (|| -> std::io::Result<u64> {
                    let f = std::fs::File::create(&tmp)?;
                    let mut w = std::io::BufWriter::new(f);
                    fill(&mut w)?;
                    let f = w.into_inner().map_err(|e| e.into_error())?;
                    f.sync_all()?;
                    let n = f.metadata()?.len();
                    drop(f);
                    std::fs::rename(&tmp, dir.join(name))?;
                    // The rename itself is durable once the folder is.
                    std::fs::File::open(dir)?.sync_all()?;
                    Ok(n)
                })();
                if written.is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
                written
            }
            Store::Object {
                store, rt, prefix, ..
            } => {
                let mut buf = Vec::new();
                fill(&mut buf)?;
                let n = buf.len() as u64;
                let key = Self::key(prefix, name);
                rt.block_on(store.put(&key, buf.into()))
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                Ok(n)
            }
        }
    }
}
