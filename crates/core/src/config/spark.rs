//! The `spark` section: the REST collector's targets, pacing, filter and credentials.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::parse::{redact_values, Pattern};

/// Default Spark UI URL: the driver in the same pod.
pub const DEFAULT_SPARK_URL: &str = "http://localhost:4040";
/// Default REST poll interval.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default cap on a REST response body, in bytes. A full `/stages` list of a big application is
/// a few MiB; anything past this is a misconfigured target, not Spark.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// Default cap on applications followed per History Server target.
pub const DEFAULT_APP_LIMIT: usize = 1000;

/// REST targets: driver UIs or History Servers.
#[derive(Debug, Clone, Serialize)]
pub struct SparkConfig {
    /// Base URLs (without `/api/v1`). Empty disables the REST collector.
    pub urls: Vec<String>,
    /// Time between polls.
    #[serde(with = "humantime_serde")]
    pub poll_interval: Duration,
    /// Per-request timeout.
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
    /// Only applications whose name matches this regex are followed (History Servers).
    pub app_name_filter: Option<Pattern>,
    /// Most applications followed per target (History Servers list many).
    pub app_limit: usize,
    /// Largest response body read, in bytes; a larger one is an error of that request.
    pub max_body_bytes: usize,
    /// Credentials and TLS for UIs behind an auth filter or HTTPS.
    pub auth: SparkAuthConfig,
}

impl Default for SparkConfig {
    fn default() -> Self {
        SparkConfig {
            urls: vec![DEFAULT_SPARK_URL.into()],
            poll_interval: DEFAULT_POLL_INTERVAL,
            timeout: DEFAULT_TIMEOUT,
            app_name_filter: None,
            app_limit: DEFAULT_APP_LIMIT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            auth: SparkAuthConfig::default(),
        }
    }
}

/// How to authenticate to Spark UIs. Secrets come from files (mounted Kubernetes secrets) or
/// from the environment (`SPARK_EXPORTER_SPARK__AUTH__PASSWORD`), and are never printed or logged.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SparkAuthConfig {
    /// Basic-auth user name.
    pub username: Option<String>,
    /// Basic-auth password (prefer `password_file`).
    #[serde(serialize_with = "redact_opt")]
    pub password: Option<String>,
    /// File holding the basic-auth password.
    pub password_file: Option<PathBuf>,
    /// Bearer token (prefer `bearer_token_file`).
    #[serde(serialize_with = "redact_opt")]
    pub bearer_token: Option<String>,
    /// File holding the bearer token (re-read at start only).
    pub bearer_token_file: Option<PathBuf>,
    /// Extra headers sent with every request, `{name: value}` (values never printed).
    #[serde(serialize_with = "redact_values")]
    pub headers: BTreeMap<String, String>,
    /// PEM bundle of CAs to trust for `https://` Spark URLs.
    pub ca_file: Option<PathBuf>,
}

impl SparkAuthConfig {
    /// The basic-auth password from `password` or `password_file` (trailing newline removed).
    pub fn password(&self) -> std::io::Result<Option<String>> {
        secret(&self.password, &self.password_file)
    }
    /// The bearer token from `bearer_token` or `bearer_token_file`.
    pub fn bearer_token(&self) -> std::io::Result<Option<String>> {
        secret(&self.bearer_token, &self.bearer_token_file)
    }
}

fn secret(inline: &Option<String>, file: &Option<PathBuf>) -> std::io::Result<Option<String>> {
    if let Some(f) = file {
        return Ok(Some(
            std::fs::read_to_string(f)?
                .trim_end_matches(['\r', '\n'])
                .to_string(),
        ));
    }
    Ok(inline.clone())
}

fn redact_opt<S: serde::Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(_) => s.serialize_str("<redacted>"),
        None => s.serialize_none(),
    }
}

/// Combinations of `spark.auth` fields that exclude each other.
pub(super) fn check_auth(a: &SparkAuthConfig, errors: &mut Vec<String>) {
    if a.password.is_some() && a.password_file.is_some() {
        errors.push("spark.auth.password: set either password or password_file, not both".into());
    }
    if (a.password.is_some() || a.password_file.is_some()) && a.username.is_none() {
        errors.push("spark.auth.username: required with a password".into());
    }
    if a.bearer_token.is_some() && a.bearer_token_file.is_some() {
        errors.push(
            "spark.auth.bearer_token: set either bearer_token or bearer_token_file, not both"
                .into(),
        );
    }
    if (a.bearer_token.is_some() || a.bearer_token_file.is_some()) && a.username.is_some() {
        errors.push("spark.auth: basic auth and a bearer token are exclusive".into());
    }
}
