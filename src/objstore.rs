//! Object-store access, below both the event-log reader (`sources::eventlog`, which lists and
//! reads logs through it) and the checkpoint store (`checkpoint`): a store of S3 (and
//! S3-compatible stores), Google Cloud Storage or Azure Blob built from its URL with the
//! environment's credentials, bounded retries and timeouts, every request counted by store and
//! operation (`spark_exporter_store_*`), and its errors as one-line I/O errors that name missing
//! credentials and never show a query string (a SAS token's signature).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use http::header::CONTENT_LENGTH;
use http::Method;
use object_store::aws::AmazonS3ConfigKey;
use object_store::azure::AzureConfigKey;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::gcp::GoogleConfigKey;
use object_store::{ClientConfigKey, ClientOptions, ObjectStore, RetryConfig};
use url::Url;

pub use crate::location::StoreKind;
use crate::telemetry::Telemetry;

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

/// The store of `url` (its bucket or container), credentials from the environment, requests
/// counted in `telemetry`, retries bounded by `poll_interval`; with its display base
/// (`scheme://bucket`).
pub fn build_store(
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

/// As an I/O error with a one-line message (stores put XML bodies, newlines and all, in their
/// errors; a log line must stay one line).
pub fn io_err(e: object_store::Error) -> io::Error {
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

/// Counts every HTTP request object_store makes (retries too) and its outcome, by store and
/// operation, in the exporter's own metrics; the requests themselves go through reqwest as
/// object_store would send them.
#[derive(Debug, Clone)]
pub struct Counted {
    /// `scheme://bucket`: the `store` label.
    pub store: String,
    /// Where requests and errors are counted.
    pub telemetry: Arc<Telemetry>,
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
#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

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
    #[test]
    fn errors_never_show_a_query_string() {
        let e = object_store::Error::Generic {
            store: "MicrosoftAzure",
            source: "Error performing GET https://a.blob.core.windows.net/c/k?sv=2022&sig=SECRET \
                in 3ms\n<Error>\n</Error>"
                .into(),
        };
        let text = io_err(e).to_string();
        assert!(!text.contains("SECRET") && !text.contains('\n'), "{text}");
        assert!(
            text.contains("https://a.blob.core.windows.net/c/k?<redacted>"),
            "{text}"
        );
    }
}
