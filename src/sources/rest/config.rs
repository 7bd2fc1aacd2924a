//! The `spark` section, the REST source's: its targets, pacing, filter and credentials, and
//! its keys (declared to the core's configuration by the source registry).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::config::key::Key;
use crate::config::parse::{self, redact_values, Pattern, Problems};
use crate::config::{Declared, SectionConfig, Settings};

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

impl SectionConfig for SparkConfig {
    const NAME: &'static str = "spark";
}

impl SparkConfig {
    /// The `spark` section of `s`.
    pub fn of(s: &Settings) -> std::borrow::Cow<'_, SparkConfig> {
        s.section()
    }

    /// The `spark` section of `s`, to change.
    pub fn of_mut(s: &mut Settings) -> &mut SparkConfig {
        s.section_mut()
    }
}

/// The `spark` section as the configuration reads it.
pub static SECTION: Declared = Declared::of::<SparkConfig>(KEYS).checked(check);

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
fn check(s: &Settings, errors: &mut Vec<String>) {
    let a = &SparkConfig::of(s).auth;
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

/// The `spark` keys.
const KEYS: &[Key] = &[
    Key::list("spark.urls", |s, v| {
        SparkConfig::of_mut(s).urls = parse::items(v, parse::url)?;
        Ok(())
    })
    .repeat("spark.url")
    .brief("Driver UI or History Server base URL; repeatable; --spark.url= disables REST polling.")
    .doc(
        "Driver UIs or History Servers. `--spark.url=` (empty) disables REST polling; \
         `diagnose` reads the one given.",
    ),
    Key::one("spark.poll_interval", |s, v| {
        SparkConfig::of_mut(s).poll_interval = parse::positive(v)?;
        Ok(())
    })
    .flag("spark.poll-interval")
    .doc("Time between polls."),
    Key::one("spark.timeout", |s, v| {
        SparkConfig::of_mut(s).timeout = parse::positive(v)?;
        Ok(())
    })
    .flag("spark.timeout")
    .doc("Per-request timeout."),
    Key::one("spark.app_name_filter", |s, v| {
        SparkConfig::of_mut(s).app_name_filter = parse::regex(v)?;
        Ok(())
    })
    .flag("spark.app-name-filter")
    .doc("Regex; only applications whose name matches are followed (History Servers)."),
    Key::one("spark.app_limit", |s, v| {
        SparkConfig::of_mut(s).app_limit = parse::count(v)?;
        Ok(())
    })
    .flag("spark.app-limit")
    .brief("Most applications followed per target (running first, then the most recently ended).")
    .doc(
        "Most applications followed per target (running first, then the most recently \
         ended): a memory guard. It counts applications, each with all its attempts. What it \
         leaves out is counted in `spark_exporter_rest_apps_skipped` and logged.",
    ),
    Key::one("spark.max_body_bytes", |s, v| {
        let n = parse::bytes(v)?;
        if n == 0 {
            return Err("must be above 0".into());
        }
        SparkConfig::of_mut(s).max_body_bytes = usize::try_from(n).unwrap_or(usize::MAX);
        Ok(())
    })
    .flag("spark.max-body-bytes")
    .brief("Largest REST response body read (bytes, or with KiB, MiB, GiB).")
    .doc(
        "Largest REST response body read (bytes, or `64MiB`): a larger one fails that request \
         (`spark_exporter_scrape_errors_total{kind=\"body\"}`), a memory guard against a target that is not \
         Spark. The exporter, `diagnose` and `diagnose --review` (whose History Server \
         listing counts too) read with it.",
    ),
    Key::one("spark.auth.username", |s, v| {
        SparkConfig::of_mut(s).auth.username = Some(v.to_string());
        Ok(())
    })
    .doc("Basic-auth user for UIs behind an auth filter."),
    Key::one("spark.auth.password", |s, v| {
        SparkConfig::of_mut(s).auth.password = Some(v.to_string());
        Ok(())
    })
    .doc(
        "Basic-auth password, from the environment (`SPARK_EXPORTER_SPARK__AUTH__PASSWORD`); \
         prefer `spark.auth.password_file`.",
    ),
    Key::one("spark.auth.password_file", |s, v| {
        SparkConfig::of_mut(s).auth.password_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("File holding the basic-auth password (a mounted secret)."),
    Key::one("spark.auth.bearer_token", |s, v| {
        SparkConfig::of_mut(s).auth.bearer_token = Some(v.to_string());
        Ok(())
    })
    .doc(
        "Bearer token, from the environment; prefer `spark.auth.bearer_token_file`. Exclusive \
         with basic auth.",
    ),
    Key::one("spark.auth.bearer_token_file", |s, v| {
        SparkConfig::of_mut(s).auth.bearer_token_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("File holding the bearer token (read at start). Exclusive with basic auth."),
    Key::map("spark.auth.headers", |s, m| {
        SparkConfig::of_mut(s).auth.headers = m;
        Ok::<(), Problems>(())
    })
    .doc(
        "Extra headers on every request (`{name: value}`, or `k=v,k2=v2` in the environment); \
         values are never printed.",
    ),
    Key::one("spark.auth.ca_file", |s, v| {
        SparkConfig::of_mut(s).auth.ca_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("PEM CA bundle for `https://` Spark URLs."),
];
