//! Event logs on object storage: S3 and S3-compatible stores (`s3://`, `s3a://`), Google Cloud
//! Storage (`gs://`) and Azure Blob / ADLS Gen2 (`az://`, `abfs://`, `abfss://`), through Apache
//! Arrow's `object_store` crate, as an [`Fs`].
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
use http::header::CONTENT_LENGTH;
use http::Method;
use object_store::aws::AmazonS3ConfigKey;
use object_store::azure::AzureConfigKey;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::gcp::GoogleConfigKey;
use object_store::path::Path as Key;
use object_store::{
    ClientConfigKey, ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig,
};
use tokio::runtime::Handle;
use url::Url;

use super::fs::{Entry, FileId, Fs, OpenError, Reader, Root};
use crate::telemetry::Telemetry;

/// Bytes one GET asks for: as much as one file may read in one step.
pub const GET_CHUNK: u64 = 8 * 1024 * 1024;
/// Retries of one request (object_store's default is 10, for up to 3 minutes).
const MAX_RETRIES: usize = 3;
/// The longest a request and its retries may take: below the event-log poll interval (the next
/// poll retries anyway), within these bounds, so a store that is down never holds the tailer for
/// object_store's default of 3 minutes.
const RETRY_TIMEOUT: (Duration, Duration) = (Duration::from_millis(500), Duration::from_secs(20));
/// Per-request timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Connection timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub use crate::location::{parse_location, Location, Place, StoreKind};

/// Why a store cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location is not valid.
    #[error("{0}")]
    Location(String),
    /// The store's builder refused its configuration (missing region, credentials, ...).
    #[error("{url}: {source}")]
    Build {
        /// The location.
        url: String,
        /// The cause.
        source: object_store::Error,
    },
}

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

/// The store of `url` (its bucket or container), credentials from the environment, requests
/// counted in `telemetry`, retries bounded by `poll_interval`; with its display base
/// (`scheme://bucket`).
pub(crate) fn build_store(
    url: &Url,
    kind: StoreKind,
    telemetry: Arc<Telemetry>,
    poll_interval: Duration,
) -> Result<(Arc<dyn ObjectStore>, String, Counted), StoreError> {
    let mut base = format!("{}://", url.scheme());
    if !url.username().is_empty() {
        base.push_str(url.username());
        base.push('@');
    }
    base.push_str(url.host_str().unwrap_or_default());
    let counted = Counted {
        store: base.clone(),
        telemetry,
    };
    let retry = RetryConfig {
        max_retries: MAX_RETRIES,
        retry_timeout: poll_interval
            .mul_f64(0.8)
            .clamp(RETRY_TIMEOUT.0, RETRY_TIMEOUT.1),
        ..RetryConfig::default()
    };
    // Timeouts through config keys: `with_client_options` would replace the options the
    // environment set (`AWS_ALLOW_HTTP`, proxies, ...). The environment's own timeouts
    // (`AWS_TIMEOUT`, `AZURE_CONNECT_TIMEOUT`, ...) win over these defaults.
    let prefix = match kind {
        StoreKind::S3 => "AWS",
        StoreKind::Gcs => "GOOGLE",
        StoreKind::Azure => "AZURE",
    };
    let timeouts: Vec<(ClientConfigKey, String)> = [
        (ClientConfigKey::Timeout, "TIMEOUT", REQUEST_TIMEOUT),
        (
            ClientConfigKey::ConnectTimeout,
            "CONNECT_TIMEOUT",
            CONNECT_TIMEOUT,
        ),
    ]
    .into_iter()
    .filter(|(_, var, _)| std::env::var_os(format!("{prefix}_{var}")).is_none())
    .map(|(k, _, d)| (k, humantime::format_duration(d).to_string()))
    .collect();
    let u = url.as_str();
    let err = |source| StoreError::Build {
        url: u.to_string(),
        source,
    };
    // One builder per kind, each set up alike: from the environment, the URL, the retries, the
    // counting connector and the timeouts the environment does not set.
    macro_rules! built {
        ($builder:ty, $key:path) => {{
            let mut b = <$builder>::from_env()
                .with_url(u)
                .with_retry(retry.clone())
                .with_http_connector(counted.clone());
            for (k, v) in &timeouts {
                b = b.with_config($key(*k), v);
            }
            Arc::new(b.build().map_err(err)?) as Arc<dyn ObjectStore>
        }};
    }
    let store = match kind {
        StoreKind::S3 => built!(
            object_store::aws::AmazonS3Builder,
            AmazonS3ConfigKey::Client
        ),
        StoreKind::Gcs => built!(
            object_store::gcp::GoogleCloudStorageBuilder,
            GoogleConfigKey::Client
        ),
        StoreKind::Azure => built!(
            object_store::azure::MicrosoftAzureBuilder,
            AzureConfigKey::Client
        ),
    };
    Ok((store, base, counted))
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

/// As an I/O error with a one-line message (stores put XML bodies, newlines and all, in their
/// errors; a log line must stay one line).
fn io_err(e: object_store::Error) -> io::Error {
    let kind = match e {
        object_store::Error::NotFound { .. } => io::ErrorKind::NotFound,
        _ => io::ErrorKind::Other,
    };
    let text = e.to_string();
    let one_line: Vec<String> = text.split_whitespace().map(redact_query).collect();
    let one_line = one_line.join(" ");
    match credential_hint(&one_line) {
        Some(hint) => io::Error::new(kind, format!("{hint}; the store said: {one_line}")),
        None => io::Error::new(kind, one_line),
    }
}

/// When a store's error is that of finding no credentials (the last place looked being the
/// cloud's instance metadata service, which off that cloud refuses or is not there), say so,
/// and where they were looked for.
fn credential_hint(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let metadata = lower.contains("169.254.169.254")
        || lower.contains("metadata.google.internal")
        || lower.contains("169.254.170.2");
    if !metadata && !lower.contains("credential") {
        return None;
    }
    let (store, env) = if lower.contains(" s3 ") || lower.starts_with("generic s3") {
        (
            "S3",
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE with \
             AWS_ROLE_ARN (IRSA), AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI (ECS, EKS \
             Pod Identity), then the EC2 instance metadata service (169.254.169.254)",
        )
    } else if lower.contains("gcs") || lower.contains("google") {
        (
            "GCS",
            "GOOGLE_SERVICE_ACCOUNT (or GOOGLE_APPLICATION_CREDENTIALS) naming a key file, \
             application default credentials, then the GCE metadata server",
        )
    } else if lower.contains("azure") {
        (
            "Azure",
            "AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN, AZURE_CLIENT_ID with \
             AZURE_CLIENT_SECRET and AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE (workload \
             identity), then the instance metadata service (169.254.169.254)",
        )
    } else {
        return None;
    };
    Some(format!(
        "no {store} credentials found (looked in: {env}); set them in the exporter's environment"
    ))
}

/// A URL's query string (a SAS token's signature lives there) as `?<redacted>`.
fn redact_query(word: &str) -> String {
    match word.split_once('?') {
        Some((head, _)) if head.contains("://") => format!("{head}?<redacted>"),
        _ => word.to_string(),
    }
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

/// Counts every HTTP request object_store makes (retries too) and its outcome, by store and
/// operation, in the exporter's own metrics; the requests themselves go through reqwest as
/// object_store would send them.
#[derive(Debug, Clone)]
pub(crate) struct Counted {
    store: String,
    telemetry: Arc<Telemetry>,
}

impl HttpConnector for Counted {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountedService {
            inner,
            counted: self.clone(),
        }))
    }
}

#[derive(Debug)]
struct CountedService {
    inner: HttpClient,
    counted: Counted,
}

/// The operation a request performs: a listing (S3 `list-type`, Azure `comp=list`, GCS
/// `list-type` or a bucket-level GET), a HEAD, a GET, or anything else.
fn operation(req: &HttpRequest) -> &'static str {
    let query = req.uri().query().unwrap_or_default();
    match *req.method() {
        Method::HEAD => "head",
        Method::GET if query.contains("list-type") || query.contains("comp=list") => "list",
        Method::GET => "get",
        _ => "other",
    }
}

#[async_trait::async_trait]
impl HttpService for CountedService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let op = operation(&req);
        let (store, t) = (&self.counted.store, &self.counted.telemetry);
        match self.inner.execute(req).await {
            Ok(resp) => {
                // A HEAD's Content-Length is the object's size, not bytes sent.
                let bytes = (op != "head")
                    .then(|| resp.headers().get(CONTENT_LENGTH))
                    .flatten()
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
                t.store_request(store, op, bytes);
                let status = resp.status();
                // A 404 of a HEAD or GET is a normal "not there"; of a listing, a missing bucket.
                let not_there = status.as_u16() == 404 && op != "list";
                if !(status.is_success() || not_there || status.is_redirection()) {
                    t.store_error(store, status.as_str());
                }
                Ok(resp)
            }
            Err(e) => {
                t.store_request(store, op, 0);
                let kind = match e.kind() {
                    HttpErrorKind::Connect => "connect",
                    HttpErrorKind::Timeout => "timeout",
                    HttpErrorKind::Request => "request",
                    HttpErrorKind::Interrupted => "interrupted",
                    HttpErrorKind::Decode => "decode",
                    _ => "other",
                };
                t.store_error(store, kind);
                Err(e)
            }
        }
    }
}

/// Reads one object with ranged GETs.
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

    /// The errors object_store gave when no credentials were set (S3 off AWS: the metadata
    /// service refused; Azure likewise) say so, with where they were looked for; others do
    /// not get the hint.
    #[test]
    fn a_missing_credential_is_named() {
        let s3 = "Generic S3 error: Error performing PUT http://169.254.169.254/latest/api/token \
                  in 11.4ms - Server returned non-2xx status code: 403 Forbidden";
        let h = credential_hint(s3).expect("a hint");
        assert!(h.starts_with("no S3 credentials found"), "{h}");
        assert!(
            h.contains("AWS_ACCESS_KEY_ID") && h.contains("169.254.169.254"),
            "{h}"
        );
        let az = "Generic MicrosoftAzure error: Error performing token request: \
                  http://169.254.169.254/metadata/identity/oauth2/token";
        assert!(credential_hint(az)
            .unwrap()
            .starts_with("no Azure credentials"));
        let gcs = "Generic GCS error: Error performing token request: \
                   http://metadata.google.internal/computeMetadata/v1";
        assert!(credential_hint(gcs)
            .unwrap()
            .starts_with("no GCS credentials"));
        assert_eq!(
            credential_hint("Generic S3 error: 403 Forbidden: AccessDenied on bucket b"),
            None
        );
        let e = io_err(object_store::Error::Generic {
            store: "S3",
            source: s3.into(),
        });
        assert!(e.to_string().contains("no S3 credentials found"), "{e}");
    }

    #[test]
    fn requests_are_counted_by_operation() {
        let req = |m: Method, uri: &str| {
            http::Request::builder()
                .method(m)
                .uri(uri)
                .body(object_store::client::HttpRequestBody::empty())
                .expect("request")
        };
        let cases = [
            (
                Method::GET,
                "http://s3/b?list-type=2&prefix=a%2F&delimiter=%2F",
                "list",
            ),
            (
                Method::GET,
                "http://azurite/c?restype=container&comp=list",
                "list",
            ),
            (Method::GET, "http://s3/b/a/events_1_x", "get"),
            (Method::HEAD, "http://s3/b/a/events_1_x", "head"),
            (Method::PUT, "http://s3/b/a", "other"),
        ];
        for (m, uri, op) in cases {
            assert_eq!(operation(&req(m, uri)), op, "{uri}");
        }
    }

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
    fn errors_never_show_a_query_string() {
        let e = object_store::Error::Generic {
            store: "MicrosoftAzure",
            source: "Error performing GET https://a.blob.core.windows.net/c/k?sv=2022&sig=SECRET in 3ms\n<Error>\n</Error>".into(),
        };
        let text = io_err(e).to_string();
        assert!(!text.contains("SECRET") && !text.contains('\n'), "{text}");
        assert!(
            text.contains("https://a.blob.core.windows.net/c/k?<redacted>"),
            "{text}"
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
