//! Event logs on object storage: S3 and S3-compatible stores (`s3://`, `s3a://`), Google Cloud
//! Storage (`gs://`) and Azure Blob / ADLS Gen2 (`az://`, `abfs://`, `abfss://`), through Apache
//! Arrow's `object_store` crate, as an [`Fs`]; the store itself (credentials, retries,
//! timeouts, counted requests) is built by `crate::objstore`, which the checkpoint store uses
//! too.
//!
//! - A folder is a key prefix: it is listed with a delimiter (`list_with_delimiter`, which pages
//!   through 1,000 keys a request).
//! - A file is read with ranged GETs from the offset read so far, up to [`GET_CHUNK`] bytes a
//!   request; its length comes from a HEAD before each read. An object that grew (an appendable
//!   blob, an NFS or HDFS mount behind the store) is read on from the offset; one that shrank is
//!   read again from the start by the tailer, which counts it.
//! - A file's identity is its key without `.inprogress`: S3A's rename of a finished single-file log
//!   (a copy to the final name and a delete) continues the same log.
//! - Credentials come from the environment, as each store's `from_env` builder reads it: see the
//!   `docs/internals.md` ("Event logs on object storage").
//!
//! `object_store` is asynchronous; the tailer is not (it runs on the blocking pool), so each call
//! blocks on the runtime's handle. It must not be called from an async task.

use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path as Key;
use object_store::{GetOptions, GetRange, ObjectStore};
use tokio::runtime::Handle;
use url::Url;

use super::fs::{Entry, FileId, Fs, OpenError, Reader, Root};
use crate::objstore::{build_store, io_err, Counted, StoreError};
use crate::telemetry::Telemetry;

/// Bytes one GET asks for: as much as one file may read in one step.
pub const GET_CHUNK: u64 = 8 * 1024 * 1024;
pub use crate::location::{parse_location, Location, Place, StoreKind};

/// The root to read `location` from: the local file system, or an object store reached with
/// the environment's credentials, blocking on `rt` (which an object store needs), its requests
/// counted in `telemetry`.
pub fn root(
    location: &Location,
    rt: Option<&Handle>,
    telemetry: &Arc<Telemetry>,
    poll_interval: Duration,
) -> Result<Root, StoreError> {
    match location.place().clone() {
        Place::Local(p) => Ok(Root::local(p)),
        Place::Object { url, kind, prefix } => {
            let rt = rt.ok_or_else(|| {
                StoreError::Location(format!("{url}: an object store needs a runtime"))
            })?;
            let fs = ObjectFs::new(&url, kind, rt.clone(), telemetry.clone(), poll_interval)?;
            Ok(Root {
                fs: Arc::new(fs),
                path: PathBuf::from(prefix),
                depth: 0,
            })
        }
    }
}

/// One bucket or container.
#[derive(Debug)]
pub struct ObjectFs {
    store: Arc<dyn ObjectStore>,
    rt: Handle,
    counted: Counted,
    /// `scheme://bucket` (or `abfss://container@account.dfs.core.windows.net`), for display.
    base: String,
}

impl ObjectFs {
    fn new(
        url: &Url,
        kind: StoreKind,
        rt: Handle,
        telemetry: Arc<Telemetry>,
        poll_interval: Duration,
    ) -> Result<ObjectFs, StoreError> {
        let (store, base, counted) = build_store(url, kind, telemetry, poll_interval)?;
        Ok(ObjectFs {
            store,
            rt,
            base,
            counted,
        })
    }

    fn key(path: &Path) -> Key {
        Key::from(path.to_string_lossy().trim_matches('/'))
    }
}

/// Identity of a key: stable across S3A's rename of `x.inprogress` to `x`.
fn key_id(key: &str) -> FileId {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.trim_end_matches(".inprogress").hash(&mut h);
    (u64::MAX, h.finish())
}

fn last(key: &Key) -> String {
    key.filename().unwrap_or_default().to_string()
}

impl Fs for ObjectFs {
    fn list(&self, dir: &Path) -> io::Result<Vec<Entry>> {
        let prefix = Self::key(dir);
        let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
        let l = self
            .rt
            .block_on(self.store.list_with_delimiter(prefix.as_ref()))
            .map_err(io_err)?;
        let mut out = Vec::with_capacity(l.common_prefixes.len() + l.objects.len());
        for p in l.common_prefixes {
            let name = last(&p);
            if !name.starts_with('.') {
                out.push(Entry {
                    name,
                    id: key_id(p.as_ref()),
                    path: PathBuf::from(p.as_ref()),
                    is_dir: true,
                    len: 0,
                    modified_ms: None,
                });
            }
        }
        for o in l.objects {
            let name = last(&o.location);
            if !name.starts_with('.') {
                out.push(Entry {
                    name,
                    id: key_id(o.location.as_ref()),
                    path: PathBuf::from(o.location.as_ref()),
                    is_dir: false,
                    len: o.size,
                    modified_ms: Some(o.last_modified.timestamp_millis()),
                });
            }
        }
        Ok(out)
    }

    fn stat(&self, path: &Path) -> io::Result<Entry> {
        let key = Self::key(path);
        let name = last(&key);
        if !key.as_ref().is_empty() {
            match self.rt.block_on(self.store.head(&key)) {
                Ok(m) => {
                    return Ok(Entry {
                        name,
                        id: key_id(key.as_ref()),
                        path: PathBuf::from(key.as_ref()),
                        is_dir: false,
                        len: m.size,
                        modified_ms: Some(m.last_modified.timestamp_millis()),
                    })
                }
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(io_err(e)),
            }
        }
        // Not an object: a folder if anything is listed under it (the bucket root always is).
        let listed = self
            .rt
            .block_on(self.store.list_with_delimiter(Some(&key)))
            .map_err(io_err)?;
        if key.as_ref().is_empty()
            || !listed.objects.is_empty()
            || !listed.common_prefixes.is_empty()
        {
            return Ok(Entry {
                name,
                id: key_id(key.as_ref()),
                path: PathBuf::from(key.as_ref()),
                is_dir: true,
                len: 0,
                modified_ms: None,
            });
        }
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no such object or prefix", self.display(path)),
        ))
    }

    fn open(&self, path: &Path, _id: FileId, offset: u64) -> Result<Box<dyn Reader>, OpenError> {
        Ok(Box::new(ObjectReader {
            store: self.store.clone(),
            rt: self.rt.clone(),
            key: Self::key(path),
            pos: offset,
            len: None,
            etag: None,
            buf: Bytes::new(),
            counted: self.counted.clone(),
        }))
    }

    fn display(&self, path: &Path) -> String {
        format!("{}/{}", self.base, path.to_string_lossy().trim_matches('/'))
    }

    fn store(&self) -> Option<&str> {
        Some(&self.base)
    }

    fn listed_size_is_current(&self) -> bool {
        true
    }
}

#[derive(Debug)]
struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    rt: Handle,
    key: Key,
    /// Offset of the next byte handed out.
    pos: u64,
    /// The length the last HEAD (or listing) gave.
    len: Option<u64>,
    /// The ETag of the last HEAD: GETs ask for exactly that version (`If-Match`).
    etag: Option<String>,
    /// Bytes fetched and not handed out yet (they start at `pos`).
    buf: Bytes,
    /// For the `read` kind of `spark_exporter_store_errors_total`.
    counted: Counted,
}

impl Reader for ObjectReader {
    fn size(&mut self) -> io::Result<u64> {
        let m = self
            .rt
            .block_on(self.store.head(&self.key))
            .map_err(io_err)?;
        self.len = Some(m.size);
        self.etag = m.e_tag;
        Ok(m.size)
    }

    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.buf.is_empty() {
            let len = match self.len {
                Some(l) => l,
                None => self.size()?,
            };
            if self.pos >= len {
                return Ok(0);
            }
            // Data to read: know which version it is in (a listing gave only the size).
            if self.etag.is_none() {
                self.size()?;
            }
            let end = self
                .len
                .unwrap_or(len)
                .min(self.pos.saturating_add(GET_CHUNK));
            if self.pos >= end {
                return Ok(0);
            }
            let opts = GetOptions {
                range: Some(GetRange::Bounded(self.pos..end)),
                if_match: self.etag.clone(),
                ..GetOptions::default()
            };
            let got = self
                .rt
                .block_on(async { self.store.get_opts(&self.key, opts).await?.bytes().await });
            match got {
                Ok(b) => self.buf = b,
                // Changed since the HEAD: stop here; the next poll asks again and goes on from
                // the offset (it grew) or reads it again (it shrank).
                Err(object_store::Error::Precondition { .. }) => {
                    self.len = None;
                    self.etag = None;
                    self.counted
                        .telemetry
                        .store_error(&self.counted.store, "changed");
                    return Ok(0);
                }
                Err(e) => {
                    // After the connector's own counting: a GET that failed for good, a body
                    // cut mid-transfer among them.
                    self.counted
                        .telemetry
                        .store_error(&self.counted.store, "read");
                    self.etag = None;
                    return Err(io_err(e));
                }
            }
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
        self.buf = self.buf.slice(n..);
        self.pos += n as u64;
        Ok(n)
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.pos = offset;
        self.buf = Bytes::new();
        Ok(())
    }

    fn known_size(&mut self, size: u64) {
        if self.len != Some(size) {
            self.etag = None;
        }
        self.len = Some(size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GCS (and Azure) without a server: the URL gives the bucket and prefix, the builder takes
    /// the configuration (credentials are looked up at the first request: a service account
    /// from the environment, gcloud's ADC file, then the metadata server), and every object is
    /// shown under its URL. Not run against a GCS server: none is available here.
    #[test]
    fn gcs_and_azure_stores_are_configured_from_their_urls() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let t = Arc::new(Telemetry::default());
        for (loc, shown) in [
            (
                "gs://my-bucket/spark/events/",
                "gs://my-bucket/spark/events/local-1",
            ),
            (
                "abfss://logs@acct.dfs.core.windows.net/spark",
                "abfss://logs@acct.dfs.core.windows.net/spark/local-1",
            ),
        ] {
            let l = parse_location(loc).expect(loc);
            let root = root(&l, Some(rt.handle()), &t, Duration::from_secs(1)).expect(loc);
            assert_eq!(
                root.fs.store().map(|s| s.split('/').count()),
                Some(3),
                "{loc}"
            );
            assert_eq!(root.fs.display(&root.path.join("local-1")), shown);
            assert!(root.fs.listed_size_is_current());
        }
        assert!(
            root(
                &parse_location("gs://b/p").unwrap(),
                None,
                &t,
                Duration::from_secs(1)
            )
            .is_err(),
            "an object store needs a runtime"
        );
    }
    #[test]
    fn a_renamed_in_progress_log_keeps_its_identity() {
        assert_eq!(
            key_id("events/local-1.zstd.inprogress"),
            key_id("events/local-1.zstd")
        );
        assert_ne!(key_id("events/local-1.zstd"), key_id("events/local-2.zstd"));
    }
}
