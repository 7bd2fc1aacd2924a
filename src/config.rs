//! Configuration: defaults, then a file (`--config.file`, YAML or TOML), then environment
//! variables (`SPARK_EXPORTER_<SECTION>__<KEY>`), then flags, merged with the `config` crate.
//!
//! Every field is validated separately, so one run of `check-config` names every wrong field at
//! once instead of stopping at the first.
//!
//! Durations are parsed here too (`humantime::parse_duration`, with this module's messages), not
//! by serde; `humantime-serde` only writes them back out for `check-config`.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

#[path = "config_diagnose.rs"]
pub mod diagnose;
use diagnose::scalar_string;
pub use diagnose::{DiagnoseConfig, Thresholds};

/// Default listen address for `/metrics`.
pub const DEFAULT_LISTEN_ADDRESS: &str = "0.0.0.0:9809";
/// Default metrics path.
pub const DEFAULT_TELEMETRY_PATH: &str = "/metrics";
/// Default Spark UI URL: the driver in the same pod.
pub const DEFAULT_SPARK_URL: &str = "http://localhost:4040";
/// Default REST poll interval.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default cap on applications followed per History Server target.
pub const DEFAULT_APP_LIMIT: usize = 1000;
/// Default event-log poll interval (back-off at EOF).
pub const DEFAULT_EVENTLOG_POLL: Duration = Duration::from_secs(1);
/// Default cap on one event-log line; longer lines are skipped and counted.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Default time a finished application stays exported.
pub const DEFAULT_APP_RETENTION: Duration = Duration::from_secs(3600);
/// Default time a finished stage keeps its per-stage series.
pub const DEFAULT_STAGE_RETENTION: Duration = Duration::from_secs(300);
/// Default cap on finished stage attempts per application that keep their per-stage series.
pub const DEFAULT_MAX_FINISHED_STAGES: usize = 20;
/// Default longest-to-median task duration ratio at which a finished stage counts as skewed
/// (the shipped `SparkStageTaskSkew` alert's threshold).
pub const DEFAULT_STAGE_SKEW_RATIO: f64 = 5.0;
/// Default shortest longest task for a finished stage to count as skewed: skew in a stage of
/// millisecond tasks (a micro-batch) is noise, not a straggler.
pub const DEFAULT_STAGE_SKEW_MIN_DURATION: Duration = Duration::from_secs(10);
/// Default time an ended application keeps its detail (stages, executors, SQL, streaming)
/// before [`SummaryLevel`] applies.
pub const DEFAULT_SUMMARY_AFTER: Duration = Duration::from_secs(300);
/// Default time a dead executor keeps its series.
pub const DEFAULT_DEAD_EXECUTOR_RETENTION: Duration = Duration::from_secs(1800);
/// Default cap on a label value's length, in characters.
pub const DEFAULT_MAX_VALUE_LENGTH: usize = 120;
/// Default cap on distinct values per label per application.
pub const DEFAULT_MAX_VALUES_PER_LABEL: usize = 200;
/// Default longest drain, from SIGTERM (or the application's end) to exit: inside Kubernetes'
/// default `terminationGracePeriodSeconds` of 30 s, with room for the last reads.
pub const DEFAULT_GRACE_PERIOD: Duration = Duration::from_secs(25);
/// Default number of scrapes of the final state that end a drain.
pub const DEFAULT_DRAIN_SCRAPES: usize = 1;
/// Default time a REST target that answered before must stay unreachable before the
/// application counts as ended (`lifecycle.exit_when_app_ends`).
pub const DEFAULT_REST_UNREACHABLE_AFTER: Duration = Duration::from_secs(60);
/// Default buckets for job, stage, SQL and batch durations (seconds to hours).
/// From 1 s to 4 h in steps where batch jobs fall (1-2-5 to a minute, then every few minutes to
/// an hour, then 1.5, 2, 3 and 4 h), so a quantile over long jobs moves in small steps; below 1 s
/// three more for stages and streaming batches, which share these buckets and are often
/// sub-second.
pub const DEFAULT_DURATION_BUCKETS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1200.0,
    1800.0, 2700.0, 3600.0, 5400.0, 7200.0, 10800.0, 14400.0,
];
/// Default buckets for task durations (milliseconds to an hour).
pub const DEFAULT_TASK_DURATION_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];

/// Default label rewrite rules, applied in order: UUIDs, dates/times, long numbers, long hex ids
/// (8+ hex digits), other numbers.
pub fn default_rewrite_rules() -> Vec<RewriteRule> {
    [
        (
            r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            "{uuid}",
        ),
        (
            r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?",
            "{date}",
        ),
        (r"\b\d{8,}\b", "{n}"),
        (r"\b(?:0x)?[0-9a-fA-F]{8,}\b", "{hex}"),
        (r"\d+", "{n}"),
    ]
    .iter()
    .map(|(p, r)| RewriteRule {
        pattern: p.to_string(),
        replacement: r.to_string(),
    })
    .collect()
}

/// A regex rewrite applied to every job group, description and SQL description.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RewriteRule {
    /// Regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// Replacement; `$1` refers to capture groups.
    pub replacement: String,
}

/// Output format of log lines.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `key=value` text.
    Logfmt,
    /// One JSON object per line.
    Json,
}

/// `/metrics` server.
#[derive(Debug, Clone, Serialize)]
pub struct WebConfig {
    /// Address to listen on.
    pub listen_address: SocketAddr,
    /// Path that serves the exposition.
    pub telemetry_path: String,
    /// TLS and basic-auth settings in the Prometheus exporter-toolkit format.
    pub config_file: Option<PathBuf>,
    /// How far behind the model a scrape's body may be (a shared rendering this old is served
    /// without waiting). Zero: every scrape sees every change made before it arrived.
    #[serde(with = "humantime_serde")]
    pub max_staleness: Duration,
    /// OpenMetrics output carries a `_created` sample for every counter and histogram. Without
    /// Prometheus' created-timestamp ingestion each is stored as one more series.
    pub openmetrics_created: bool,
}

/// Logging.
#[derive(Debug, Clone, Serialize)]
pub struct LogConfig {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    /// `logfmt` or `json`.
    pub format: LogFormat,
}

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
    pub app_name_filter: Option<String>,
    /// Most applications followed per target (History Servers list many).
    pub app_limit: usize,
    /// Credentials and TLS for UIs behind an auth filter or HTTPS.
    pub auth: SparkAuthConfig,
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

/// Event-log tailing.
#[derive(Debug, Clone, Serialize)]
pub struct EventLogConfig {
    /// `spark.eventLog.dir` folders to watch: paths, `file://`, or object-store URLs (`s3://`,
    /// `s3a://`, `gs://`, `az://`, `abfs://`, `abfss://`). Empty disables the tailer.
    pub dirs: Vec<String>,
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
}

/// Retention of entities in the model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelConfig {
    /// How long a finished application stays exported.
    #[serde(with = "humantime_serde")]
    pub app_retention: Duration,
    /// How long a finished stage keeps its `stage_id` series (only the stages
    /// `max_finished_stages` lets through) and its task totals apart from its job group's.
    #[serde(with = "humantime_serde")]
    pub stage_retention: Duration,
    /// At most this many finished stage attempts per application keep per-stage series within
    /// `stage_retention`: failed ones, then skewed ones, then the application's longest. `0`:
    /// per-stage series for active stages only. Bounds a streaming application's exposition.
    pub max_finished_stages: usize,
    /// A finished stage whose longest task ran at least this many times its median task (and at
    /// least `stage_skew_min_duration`) counts as skewed, so it keeps its series.
    pub stage_skew_ratio: f64,
    /// The shortest longest task of a skewed stage: shorter stragglers cost nothing.
    #[serde(with = "humantime_serde")]
    pub stage_skew_min_duration: Duration,
    /// How long a dead executor keeps its `executor_id` series.
    #[serde(with = "humantime_serde")]
    pub dead_executor_retention: Duration,
    /// What an ended application keeps once `summary_after` has passed since its end.
    pub summary_level: SummaryLevel,
    /// How long after its end (Spark's time) an application keeps its full detail.
    #[serde(with = "humantime_serde")]
    pub summary_after: Duration,
    /// Only applications whose name matches this regex are kept (every source).
    pub app_name_filter: Option<String>,
    /// Only applications that started within this long are kept; `None`: no limit.
    #[serde(with = "humantime_serde")]
    pub max_app_age: Option<Duration>,
    /// Series per application run (`app_id`), or per application name across runs.
    pub aggregate_by: AggregateBy,
}

/// What an ended application keeps once its detail has been kept for `model.summary_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryLevel {
    /// Everything, until `model.app_retention`.
    Full,
    /// Application and job-group series; no stage, executor, SQL or streaming series.
    Groups,
    /// Application series only.
    App,
}

/// What the application series are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AggregateBy {
    /// One set of series per application run, labelled `app_id` and `app_name`.
    AppId,
    /// One set per application name, across runs: an application counts into its name's
    /// series when it ends (only applications that end after the exporter started).
    AppName,
}

/// Label cardinality control.
#[derive(Debug, Clone, Serialize)]
pub struct LabelsConfig {
    /// Longest label value, in characters; longer ones are cut and end in `…`.
    pub max_value_length: usize,
    /// Distinct values per label per application; more go to `__other__`.
    pub max_values_per_label: usize,
    /// Rewrite rules, applied in order.
    pub rewrite_rules: Vec<RewriteRule>,
    /// Where `job_group` comes from, first match wins (see `model/attribution.rs`).
    pub job_group_from: Vec<GroupSource>,
    /// Picks the user tag that names a group when there are several (a capture group picks a
    /// part); none: any user tag, the first in sorted order.
    pub tag_pattern: Option<String>,
    /// `spark_connect_jobs_total` carries the Spark Connect user (`user` label; empty when
    /// off).
    pub connect_user: bool,
}

/// A source of the `job_group` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupSource {
    /// `setJobGroup`.
    JobGroup,
    /// A user's job tag (3.5+, Spark Connect's `addTag`).
    Tag,
    /// The call site Spark records as the job's name.
    CallSite,
}

/// Histogram buckets, in seconds.
#[derive(Debug, Clone, Serialize)]
pub struct HistogramConfig {
    /// Job, stage, SQL and streaming-batch durations.
    pub duration_buckets: Vec<f64>,
    /// Task durations.
    pub task_duration_buckets: Vec<f64>,
}

/// The exporter's end: the drain after SIGTERM, and whether it ends by itself when the
/// application ends (a classic sidecar container, which nothing else stops).
#[derive(Debug, Clone, Serialize)]
pub struct LifecycleConfig {
    /// Exit 0 once the followed application has ended (its `ApplicationEnd` is in the log, REST
    /// reports it completed, or REST has been unreachable for `rest_unreachable_after` after a
    /// success) and the drain is done. For a classic sidecar container.
    pub exit_when_app_ends: bool,
    /// The longest a drain lasts, from SIGTERM (or the application's end) to exit. Keep it below
    /// the pod's `terminationGracePeriodSeconds`.
    #[serde(with = "humantime_serde")]
    pub grace_period: Duration,
    /// Scrapes of `/metrics` rendered from the final state that end the drain early (the final
    /// OTLP export, once sent, ends it too). 2 for an HA pair of Prometheus servers.
    pub drain_scrapes: usize,
    /// How long a REST target that answered before must be unreachable before its application
    /// counts as ended (with `exit_when_app_ends`).
    #[serde(with = "humantime_serde")]
    pub rest_unreachable_after: Duration,
}

/// OTLP wire protocol.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// OTLP over gRPC (default port 4317).
    #[serde(rename = "grpc")]
    Grpc,
    /// OTLP over HTTP with protobuf bodies (default port 4318).
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// Aggregation temporality of exported sums and histograms.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Temporality {
    /// Totals since the start (what Prometheus users expect).
    Cumulative,
    /// Changes since the previous export.
    Delta,
}

/// OTLP push. Unset fields fall back to the standard `OTEL_EXPORTER_OTLP_*` variables.
#[derive(Debug, Clone, Serialize)]
pub struct OtlpConfig {
    /// Collector endpoint, e.g. `http://otel-collector:4317`. Unset (and no
    /// `OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT`) disables OTLP.
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf`.
    pub protocol: Option<OtlpProtocol>,
    /// Extra request headers (auth tokens), `{name: value}`. Values are never printed.
    #[serde(serialize_with = "redact_values")]
    pub headers: BTreeMap<String, String>,
    /// Per-export timeout.
    #[serde(with = "humantime_serde::option")]
    pub timeout: Option<Duration>,
    /// Time between exports.
    #[serde(with = "humantime_serde::option")]
    pub interval: Option<Duration>,
    /// `cumulative` (default) or `delta`.
    pub temporality: Temporality,
    /// PEM bundle of CAs to trust for the collector's TLS certificate.
    pub ca_file: Option<PathBuf>,
}

/// The whole effective configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// `/metrics` server.
    pub web: WebConfig,
    /// Logging.
    pub log: LogConfig,
    /// REST collector.
    pub spark: SparkConfig,
    /// Event-log tailer.
    pub event_log: EventLogConfig,
    /// Retention.
    pub model: ModelConfig,
    /// Labels.
    pub labels: LabelsConfig,
    /// Histogram buckets.
    pub histograms: HistogramConfig,
    /// OTLP push.
    pub otlp: OtlpConfig,
    /// Drain and end.
    pub lifecycle: LifecycleConfig,
    /// This exporter's part of the applications (`shard.index`, `shard.count`).
    pub shard: crate::shard::Shard,
    /// Structured Streaming.
    pub streaming: StreamingConfig,
    /// What `spark-exporter diagnose` reports.
    pub diagnose: DiagnoseConfig,
}

/// Structured Streaming queries.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamingConfig {
    /// Trigger interval per query name (an unnamed query: its stand-in, `query-1a8d25d9`).
    /// No Spark event or endpoint carries it; a query not listed has it inferred from its
    /// batch start times (`spark_streaming_trigger_interval_seconds{source}`).
    #[serde(serialize_with = "durations_map")]
    pub trigger_intervals: BTreeMap<String, Duration>,
}

/// A map of durations, printed as humantime strings.
fn durations_map<S: serde::Serializer>(
    m: &BTreeMap<String, Duration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(k, &humantime::format_duration(*v).to_string())?;
    }
    map.end()
}

impl Settings {
    /// The part of the applications a source can select by application id alone, before
    /// reading anything: this exporter's shard, or every application when shards go by
    /// application name (`model.aggregate_by: app_name`; the model then drops other shards'
    /// names).
    pub fn shard_by_app_id(&self) -> crate::shard::Shard {
        match self.model.aggregate_by {
            AggregateBy::AppId => self.shard,
            AggregateBy::AppName => crate::shard::Shard::default(),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            web: WebConfig {
                listen_address: DEFAULT_LISTEN_ADDRESS.parse().expect("constant address"),
                telemetry_path: DEFAULT_TELEMETRY_PATH.into(),
                config_file: None,
                max_staleness: Duration::from_secs(1),
                openmetrics_created: false,
            },
            log: LogConfig {
                level: "info".into(),
                format: LogFormat::Logfmt,
            },
            spark: SparkConfig {
                urls: vec![DEFAULT_SPARK_URL.into()],
                poll_interval: DEFAULT_POLL_INTERVAL,
                timeout: DEFAULT_TIMEOUT,
                app_name_filter: None,
                app_limit: DEFAULT_APP_LIMIT,
                auth: SparkAuthConfig::default(),
            },
            event_log: EventLogConfig {
                dirs: vec![],
                poll_interval: DEFAULT_EVENTLOG_POLL,
                max_line_bytes: DEFAULT_MAX_LINE_BYTES,
                threads: default_eventlog_threads(),
                discovery_interval: None,
            },
            model: ModelConfig {
                app_retention: DEFAULT_APP_RETENTION,
                stage_retention: DEFAULT_STAGE_RETENTION,
                max_finished_stages: DEFAULT_MAX_FINISHED_STAGES,
                stage_skew_ratio: DEFAULT_STAGE_SKEW_RATIO,
                stage_skew_min_duration: DEFAULT_STAGE_SKEW_MIN_DURATION,
                dead_executor_retention: DEFAULT_DEAD_EXECUTOR_RETENTION,
                summary_level: SummaryLevel::Groups,
                summary_after: DEFAULT_SUMMARY_AFTER,
                app_name_filter: None,
                max_app_age: None,
                aggregate_by: AggregateBy::AppId,
            },
            labels: LabelsConfig {
                max_value_length: DEFAULT_MAX_VALUE_LENGTH,
                max_values_per_label: DEFAULT_MAX_VALUES_PER_LABEL,
                rewrite_rules: default_rewrite_rules(),
                job_group_from: vec![
                    GroupSource::JobGroup,
                    GroupSource::Tag,
                    GroupSource::CallSite,
                ],
                tag_pattern: None,
                connect_user: false,
            },
            histograms: HistogramConfig {
                duration_buckets: DEFAULT_DURATION_BUCKETS.to_vec(),
                task_duration_buckets: DEFAULT_TASK_DURATION_BUCKETS.to_vec(),
            },
            otlp: OtlpConfig {
                endpoint: None,
                protocol: None,
                headers: BTreeMap::new(),
                timeout: None,
                interval: None,
                temporality: Temporality::Cumulative,
                ca_file: None,
            },
            lifecycle: LifecycleConfig {
                exit_when_app_ends: false,
                grace_period: DEFAULT_GRACE_PERIOD,
                drain_scrapes: DEFAULT_DRAIN_SCRAPES,
                rest_unreachable_after: DEFAULT_REST_UNREACHABLE_AFTER,
            },
            shard: crate::shard::Shard::default(),
            streaming: StreamingConfig::default(),
            diagnose: DiagnoseConfig::default(),
        }
    }
}

/// Secrets (header values) print as `<redacted>`.
fn redact_values<S: serde::Serializer>(
    m: &BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for k in m.keys() {
        map.serialize_entry(k, "<redacted>")?;
    }
    map.end()
}

/// Configuration errors: every invalid field, found in one pass.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The sources could not be read or merged (missing file, syntax error).
    #[error("cannot load configuration: {0}")]
    Load(String),
    /// One or more fields are invalid.
    #[error("invalid configuration:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<String>),
}

/// Flag values that override everything else; `None` means "not given".
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config.file`.
    pub config_file: Option<PathBuf>,
    /// `(key, value)` pairs such as `("web.listen_address", "0.0.0.0:9000")`.
    pub values: Vec<(String, OverrideValue)>,
}

/// A flag value.
#[derive(Debug, Clone)]
pub enum OverrideValue {
    /// A scalar.
    One(String),
    /// A repeatable flag.
    Many(Vec<String>),
}

/// Env-var prefix: `SPARK_EXPORTER_SPARK__POLL_INTERVAL=10s`.
pub const ENV_PREFIX: &str = "SPARK_EXPORTER";

const LIST_KEYS: &[&str] = &["spark.urls", "event_log.dirs"];

/// Load defaults, file, environment and flags, then validate every field.
pub fn load(over: &Overrides) -> Result<Settings, ConfigError> {
    let mut b = config::Config::builder();
    if let Some(path) = &over.config_file {
        if !path.exists() {
            return Err(ConfigError::Invalid(vec![format!(
                "config.file: {} does not exist",
                path.display()
            )]));
        }
        b = b.add_source(config::File::from(path.as_path()));
    }
    let mut env = config::Environment::with_prefix(ENV_PREFIX)
        .prefix_separator("_")
        .separator("__")
        .list_separator(",")
        .try_parsing(false);
    for k in LIST_KEYS {
        env = env.with_list_parse_key(k);
    }
    b = b.add_source(env);
    for (k, v) in &over.values {
        b = match v {
            OverrideValue::One(s) => b.set_override(k.as_str(), s.as_str()),
            OverrideValue::Many(l) => b.set_override(k.as_str(), l.clone()),
        }
        .map_err(|e| ConfigError::Load(e.to_string()))?;
    }
    let merged: Value = b
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|e| ConfigError::Load(e.to_string()))?;
    from_value(&merged)
}

/// Validate a merged tree (missing keys take defaults) and list every problem.
pub fn from_value(v: &Value) -> Result<Settings, ConfigError> {
    let d = Settings::default();
    let mut r = Reader {
        root: v,
        errors: vec![],
        known: BTreeSet::new(),
    };
    let s = Settings {
        web: read_web(&mut r, d.web),
        log: read_log(&mut r, d.log),
        spark: read_spark(&mut r, d.spark),
        event_log: read_event_log(&mut r, d.event_log),
        model: read_model(&mut r, d.model),
        labels: read_labels(&mut r, d.labels),
        histograms: read_histograms(&mut r, d.histograms),
        otlp: read_otlp(&mut r, d.otlp),
        lifecycle: read_lifecycle(&mut r, d.lifecycle),
        shard: read_shard(&mut r),
        streaming: read_streaming(&mut r),
        diagnose: read_diagnose(&mut r),
    };
    r.unknown_keys(v, "");
    check_auth(&s.spark.auth, &mut r.errors);
    if r.errors.is_empty() {
        Ok(s)
    } else {
        Err(ConfigError::Invalid(r.errors))
    }
}

/// The `web` section.
fn read_web(r: &mut Reader<'_>, d: WebConfig) -> WebConfig {
    WebConfig {
        listen_address: r.parse("web.listen_address", d.listen_address, |s| {
            s.parse::<SocketAddr>().map_err(|e| e.to_string())
        }),
        telemetry_path: r.parse("web.telemetry_path", d.telemetry_path, |s| {
            if s.starts_with('/') && s.len() > 1 {
                Ok(s.to_string())
            } else {
                Err("must start with '/' and not be '/' alone".into())
            }
        }),
        config_file: r.parse("web.config_file", None, |s| {
            let p = PathBuf::from(s);
            if s.is_empty() {
                Ok(None)
            } else if p.is_file() {
                Ok(Some(p))
            } else {
                Err(format!("{s} is not a readable file"))
            }
        }),
        max_staleness: r.parse("web.max_staleness", d.max_staleness, |s| {
            let d = humantime::parse_duration(s)
                .map_err(|e| format!("{s:?} is not a duration ({e})"))?;
            if d > Duration::from_secs(60) {
                return Err("must be at most 60s".into());
            }
            Ok(d)
        }),
        openmetrics_created: r.parse("web.openmetrics_created", d.openmetrics_created, parse_bool),
    }
}

/// The `log` section.
fn read_log(r: &mut Reader<'_>, d: LogConfig) -> LogConfig {
    LogConfig {
        level: r.parse("log.level", d.level, |s| {
            match s.to_ascii_lowercase().as_str() {
                l @ ("error" | "warn" | "info" | "debug" | "trace") => Ok(l.to_string()),
                _ => Err("must be one of error, warn, info, debug, trace".into()),
            }
        }),
        format: r.parse("log.format", d.format, |s| {
            match s.to_ascii_lowercase().as_str() {
                "logfmt" | "text" => Ok(LogFormat::Logfmt),
                "json" => Ok(LogFormat::Json),
                _ => Err("must be logfmt or json".into()),
            }
        }),
    }
}

/// The `spark` section.
fn read_spark(r: &mut Reader<'_>, d: SparkConfig) -> SparkConfig {
    SparkConfig {
        urls: r.list("spark.urls", d.urls, parse_url),
        poll_interval: r.parse("spark.poll_interval", d.poll_interval, parse_positive),
        timeout: r.parse("spark.timeout", d.timeout, parse_positive),
        app_name_filter: r.parse("spark.app_name_filter", None, parse_regex),
        app_limit: r.parse("spark.app_limit", d.app_limit, parse_count),
        auth: SparkAuthConfig {
            username: r.parse("spark.auth.username", None, |s| Ok(Some(s.to_string()))),
            password: r.parse("spark.auth.password", None, |s| Ok(Some(s.to_string()))),
            password_file: r.parse("spark.auth.password_file", None, readable_file),
            bearer_token: r.parse("spark.auth.bearer_token", None, |s| Ok(Some(s.to_string()))),
            bearer_token_file: r.parse("spark.auth.bearer_token_file", None, readable_file),
            headers: r.map("spark.auth.headers"),
            ca_file: r.parse("spark.auth.ca_file", None, readable_file),
        },
    }
}

/// The `event_log` section.
fn read_event_log(r: &mut Reader<'_>, d: EventLogConfig) -> EventLogConfig {
    EventLogConfig {
        dirs: r.list("event_log.dirs", d.dirs, |s| {
            crate::eventlog::objfs::parse_location(s).map(|_| s.to_string())
        }),
        poll_interval: r.parse("event_log.poll_interval", d.poll_interval, parse_positive),
        max_line_bytes: r.parse("event_log.max_line_bytes", d.max_line_bytes, |s| {
            let n = parse_count(s)?;
            if n < 1024 {
                Err("must be at least 1024".into())
            } else {
                Ok(n)
            }
        }),
        discovery_interval: r.parse("event_log.discovery_interval", d.discovery_interval, |s| {
            parse_positive(s).map(Some)
        }),
        threads: r.parse("event_log.threads", d.threads, |s| {
            let n = parse_count(s)?;
            if n > 256 {
                Err("must be at most 256".into())
            } else {
                Ok(n)
            }
        }),
    }
}

/// Logs read in parallel by default: one per core, at most 16.
pub fn default_eventlog_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 16)
}

/// The `model` section.
fn read_model(r: &mut Reader<'_>, d: ModelConfig) -> ModelConfig {
    ModelConfig {
        app_retention: r.parse("model.app_retention", d.app_retention, parse_positive),
        stage_retention: r.parse("model.stage_retention", d.stage_retention, parse_positive),
        max_finished_stages: r.parse("model.max_finished_stages", d.max_finished_stages, |s| {
            let n = s
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?} is not a whole number"))?;
            if n > 10_000 {
                return Err("must be at most 10000".into());
            }
            Ok(n)
        }),
        stage_skew_ratio: r.parse("model.stage_skew_ratio", d.stage_skew_ratio, |s| {
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 1.0 => Ok(x),
                _ => Err(format!("{s:?} is not a number of at least 1")),
            }
        }),
        stage_skew_min_duration: r.parse(
            "model.stage_skew_min_duration",
            d.stage_skew_min_duration,
            parse_duration,
        ),
        dead_executor_retention: r.parse(
            "model.dead_executor_retention",
            d.dead_executor_retention,
            parse_positive,
        ),
        summary_level: r.parse("model.summary_level", d.summary_level, |s| {
            one_of(
                s,
                &[
                    ("full", SummaryLevel::Full),
                    ("groups", SummaryLevel::Groups),
                    ("app", SummaryLevel::App),
                ],
            )
        }),
        summary_after: r.parse("model.summary_after", d.summary_after, parse_duration),
        app_name_filter: r.parse("model.app_name_filter", None, parse_regex),
        max_app_age: r.parse("model.max_app_age", None, |s| {
            if s.is_empty() || s == "0" || s == "0s" {
                return Ok(None);
            }
            parse_positive(s).map(Some)
        }),
        aggregate_by: r.parse("model.aggregate_by", d.aggregate_by, |s| {
            one_of(
                s,
                &[
                    ("app_id", AggregateBy::AppId),
                    ("app_name", AggregateBy::AppName),
                ],
            )
        }),
    }
}

/// The value named `s` (case-insensitive) among `choices`, or "must be a, b or c".
fn one_of<T: Copy>(s: &str, choices: &[(&str, T)]) -> Result<T, String> {
    let s = s.to_ascii_lowercase();
    if let Some((_, v)) = choices.iter().find(|(name, _)| *name == s) {
        return Ok(*v);
    }
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    Err(match names.split_last() {
        Some((last, [])) => format!("must be {last}"),
        Some((last, rest)) => format!("must be {} or {last}", rest.join(", ")),
        None => "has no valid value".into(),
    })
}

/// An optional regex (empty: none).
fn parse_regex(s: &str) -> Result<Option<String>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    regex::Regex::new(s)
        .map(|_| Some(s.to_string()))
        .map_err(|e| format!("not a valid regex: {e}"))
}

/// The `labels` section.
fn read_labels(r: &mut Reader<'_>, d: LabelsConfig) -> LabelsConfig {
    LabelsConfig {
        max_value_length: r.parse("labels.max_value_length", d.max_value_length, parse_count),
        max_values_per_label: r.parse(
            "labels.max_values_per_label",
            d.max_values_per_label,
            parse_count,
        ),
        rewrite_rules: r.rules("labels.rewrite_rules", d.rewrite_rules),
        job_group_from: r.list("labels.job_group_from", d.job_group_from, |s| {
            one_of(
                s,
                &[
                    ("job_group", GroupSource::JobGroup),
                    ("tag", GroupSource::Tag),
                    ("call_site", GroupSource::CallSite),
                ],
            )
        }),
        tag_pattern: r.parse("labels.tag_pattern", None, parse_regex),
        connect_user: r.parse("labels.connect_user", d.connect_user, parse_bool),
    }
}

/// The `histograms` section.
fn read_histograms(r: &mut Reader<'_>, d: HistogramConfig) -> HistogramConfig {
    HistogramConfig {
        duration_buckets: r.buckets("histograms.duration_buckets", d.duration_buckets),
        task_duration_buckets: r
            .buckets("histograms.task_duration_buckets", d.task_duration_buckets),
    }
}

/// The `otlp` section.
fn read_otlp(r: &mut Reader<'_>, d: OtlpConfig) -> OtlpConfig {
    OtlpConfig {
        endpoint: r.parse("otlp.endpoint", None, |s| {
            if s.is_empty() {
                Ok(None)
            } else {
                parse_url(s).map(|_| Some(s.trim_end_matches('/').to_string()))
            }
        }),
        protocol: r.parse("otlp.protocol", None, |s| match s {
            "grpc" => Ok(Some(OtlpProtocol::Grpc)),
            "http/protobuf" | "http" => Ok(Some(OtlpProtocol::HttpProtobuf)),
            _ => Err("must be grpc or http/protobuf".into()),
        }),
        headers: r.map("otlp.headers"),
        timeout: r.parse("otlp.timeout", None, |s| parse_positive(s).map(Some)),
        interval: r.parse("otlp.interval", None, |s| parse_positive(s).map(Some)),
        temporality: r.parse("otlp.temporality", d.temporality, |s| {
            match s.to_ascii_lowercase().as_str() {
                "cumulative" => Ok(Temporality::Cumulative),
                "delta" => Ok(Temporality::Delta),
                _ => Err("must be cumulative or delta".into()),
            }
        }),
        ca_file: r.parse("otlp.ca_file", None, |s| {
            let p = PathBuf::from(s);
            if p.is_file() {
                Ok(Some(p))
            } else {
                Err(format!("{s} is not a readable file"))
            }
        }),
    }
}

/// The `shard` section. Without `shard.index`, a sharded exporter takes the ordinal of its
/// StatefulSet pod from `HOSTNAME` (`fleet-3` is shard 3).
fn read_shard(r: &mut Reader<'_>) -> crate::shard::Shard {
    let count = r.parse("shard.count", 1, parse_count);
    let index = r.parse("shard.index", None, |s| {
        s.trim()
            .parse::<usize>()
            .map(Some)
            .map_err(|_| format!("{s:?} is not a non-negative integer"))
    });
    let index = match index {
        Some(i) if i >= count => {
            r.errors.push(format!(
                "shard.index: {i} is not below shard.count ({count})"
            ));
            0
        }
        Some(i) => i,
        None if count <= 1 => 0,
        None => {
            let host = std::env::var("HOSTNAME").unwrap_or_default();
            match crate::shard::statefulset_ordinal(&host) {
                Some(i) if i < count => i,
                _ => {
                    r.errors.push(format!(
                        "shard.index: not set, and HOSTNAME ({host:?}) is no StatefulSet pod name \
                         with an ordinal below shard.count ({count})"
                    ));
                    0
                }
            }
        }
    };
    crate::shard::Shard { index, count }
}

/// The `streaming` section.
fn read_streaming(r: &mut Reader<'_>) -> StreamingConfig {
    let mut trigger_intervals = BTreeMap::new();
    for (name, v) in r.map("streaming.trigger_intervals") {
        match parse_positive(&v) {
            Ok(d) => {
                trigger_intervals.insert(name, d);
            }
            Err(e) => r
                .errors
                .push(format!("streaming.trigger_intervals.{name}: {e}")),
        }
    }
    StreamingConfig { trigger_intervals }
}

/// The `diagnose` section (`config_diagnose.rs`).
fn read_diagnose(r: &mut Reader<'_>) -> DiagnoseConfig {
    let mut errors = vec![];
    let d = diagnose::read(&mut |k| r.get(k).cloned(), &mut errors);
    r.errors.extend(errors);
    d
}

/// The `lifecycle` section.
fn read_lifecycle(r: &mut Reader<'_>, d: LifecycleConfig) -> LifecycleConfig {
    LifecycleConfig {
        exit_when_app_ends: r.parse(
            "lifecycle.exit_when_app_ends",
            d.exit_when_app_ends,
            parse_bool,
        ),
        grace_period: r.parse("lifecycle.grace_period", d.grace_period, |s| {
            let d = parse_positive(s)?;
            if d > Duration::from_secs(3600) {
                return Err("must be at most 1h".into());
            }
            Ok(d)
        }),
        drain_scrapes: r.parse("lifecycle.drain_scrapes", d.drain_scrapes, |s| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?} is not a non-negative integer"))
        }),
        rest_unreachable_after: r.parse(
            "lifecycle.rest_unreachable_after",
            d.rest_unreachable_after,
            parse_positive,
        ),
    }
}

/// Combinations of `spark.auth` fields that exclude each other.
fn check_auth(a: &SparkAuthConfig, errors: &mut Vec<String>) {
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

fn parse_url(s: &str) -> Result<String, String> {
    let u = s.trim_end_matches('/');
    if !(u.starts_with("http://") || u.starts_with("https://")) || u.len() < 10 {
        return Err(format!("{s:?} is not an http(s) URL"));
    }
    Ok(u.trim_end_matches("/api/v1").to_string())
}

fn readable_file(s: &str) -> Result<Option<PathBuf>, String> {
    let p = PathBuf::from(s);
    match std::fs::File::open(&p) {
        Ok(_) if p.is_file() => Ok(Some(p)),
        Ok(_) => Err(format!("{s} is not a file")),
        Err(e) => Err(format!("{s}: {e}")),
    }
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("must be true or false".into()),
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{s:?} is not a duration ({e})"))
}

fn parse_positive(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{s:?} is not a duration ({e})"))?;
    if d.is_zero() {
        return Err("must be greater than zero".into());
    }
    Ok(d)
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be greater than zero".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a positive integer")),
    }
}

/// Walks the merged tree, collecting errors instead of stopping at the first.
struct Reader<'a> {
    root: &'a Value,
    errors: Vec<String>,
    known: BTreeSet<String>,
}

impl Reader<'_> {
    fn get(&mut self, key: &str) -> Option<&Value> {
        self.known.insert(key.to_string());
        let mut v = self.root;
        for part in key.split('.') {
            v = v.get(part)?;
        }
        if v.is_null() {
            None
        } else {
            Some(v)
        }
    }

    fn parse<T>(&mut self, key: &str, default: T, f: impl Fn(&str) -> Result<T, String>) -> T {
        let Some(v) = self.get(key).cloned() else {
            return default;
        };
        match scalar_string(&v) {
            Some(s) => match f(&s) {
                Ok(t) => t,
                Err(e) => {
                    self.errors.push(format!("{key}: {e}"));
                    default
                }
            },
            None => {
                self.errors.push(format!("{key}: expected a single value"));
                default
            }
        }
    }

    fn list<T>(
        &mut self,
        key: &str,
        default: Vec<T>,
        f: impl Fn(&str) -> Result<T, String>,
    ) -> Vec<T> {
        let Some(v) = self.get(key).cloned() else {
            return default;
        };
        let items: Vec<Value> = match v {
            Value::Array(a) => a,
            Value::String(s) if s.is_empty() => vec![],
            Value::String(s) => s
                .split(',')
                .map(|x| Value::String(x.trim().into()))
                .collect(),
            other => vec![other],
        };
        let mut out = vec![];
        for (i, item) in items.iter().enumerate() {
            match scalar_string(item)
                .ok_or_else(|| "expected a string".to_string())
                .and_then(|s| f(&s))
            {
                Ok(t) => out.push(t),
                Err(e) => self.errors.push(format!("{key}[{i}]: {e}")),
            }
        }
        out
    }

    fn buckets(&mut self, key: &str, default: Vec<f64>) -> Vec<f64> {
        let b = self.list(key, default.clone(), |s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| format!("{s:?} is not a positive number"))
        });
        if b.is_empty() {
            self.errors
                .push(format!("{key}: needs at least one bucket"));
            return default;
        }
        if b.windows(2).any(|w| w[0] >= w[1]) {
            self.errors
                .push(format!("{key}: buckets must be strictly increasing"));
            return default;
        }
        b
    }

    fn rules(&mut self, key: &str, default: Vec<RewriteRule>) -> Vec<RewriteRule> {
        let Some(v) = self.get(key).cloned() else {
            return default;
        };
        let Value::Array(items) = v else {
            self.errors.push(format!(
                "{key}: expected a list of {{pattern, replacement}}"
            ));
            return default;
        };
        let mut out = vec![];
        for (i, item) in items.iter().enumerate() {
            let pattern = item.get("pattern").and_then(scalar_string);
            let replacement = item
                .get("replacement")
                .and_then(scalar_string)
                .unwrap_or_default();
            match pattern {
                None => self.errors.push(format!("{key}[{i}].pattern: missing")),
                Some(p) => match regex::Regex::new(&p) {
                    Ok(_) => out.push(RewriteRule {
                        pattern: p,
                        replacement,
                    }),
                    Err(e) => self
                        .errors
                        .push(format!("{key}[{i}].pattern: not a valid regex: {e}")),
                },
            }
        }
        out
    }

    /// A string map: a table, or `k=v,k2=v2` (the `OTEL_EXPORTER_OTLP_HEADERS` syntax).
    fn map(&mut self, key: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(v) = self.get(key).cloned() else {
            return out;
        };
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match scalar_string(&v) {
                        Some(s) => {
                            out.insert(k, s);
                        }
                        None => self.errors.push(format!("{key}.{k}: expected a string")),
                    }
                }
            }
            Value::String(s) => {
                for part in s.split(',').filter(|p| !p.trim().is_empty()) {
                    match part.split_once('=') {
                        Some((k, v)) if !k.trim().is_empty() => {
                            out.insert(k.trim().to_string(), v.trim().to_string());
                        }
                        _ => self
                            .errors
                            .push(format!("{key}: {part:?} is not name=value")),
                    }
                }
            }
            _ => self
                .errors
                .push(format!("{key}: expected a map of name: value")),
        }
        out
    }

    /// Report keys nobody asked for (typos such as `spark.pol_interval`).
    fn unknown_keys(&mut self, v: &Value, prefix: &str) {
        if let Value::Object(m) = v {
            for (k, child) in m {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                if self.known.contains(&path) {
                    continue;
                }
                if self
                    .known
                    .iter()
                    .any(|kk| kk.starts_with(&format!("{path}.")))
                {
                    self.unknown_keys(child, &path);
                } else {
                    self.errors.push(format!("{path}: unknown field"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_valid() {
        let s = from_value(&json!({})).unwrap();
        assert_eq!(s.spark.urls, vec![DEFAULT_SPARK_URL.to_string()]);
        assert_eq!(s.web.telemetry_path, "/metrics");
    }

    #[test]
    fn streaming_trigger_intervals_are_durations_by_query_name() {
        let s =
            from_value(&json!({"streaming": {"trigger_intervals": {"orders": "30s"}}})).unwrap();
        let want = BTreeMap::from([("orders".to_string(), Duration::from_secs(30))]);
        assert_eq!(s.streaming.trigger_intervals, want);
        // The environment's `k=v,k2=v2` form.
        let s = from_value(&json!({"streaming": {"trigger_intervals": "a=1s, b=500ms"}})).unwrap();
        assert_eq!(
            s.streaming.trigger_intervals["b"],
            Duration::from_millis(500)
        );
        let v = json!({"streaming": {"trigger_intervals": {"a": "0s", "b": "soon"}, "x": 1}});
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        for k in [
            "streaming.trigger_intervals.a: must be greater than zero",
            "streaming.trigger_intervals.b: \"soon\" is not a duration",
            "streaming.x: unknown field",
        ] {
            assert!(all.contains(k), "{k} not in {all}");
        }
    }

    #[test]
    fn every_wrong_field_is_listed() {
        let v = json!({
            "web": {"listen_address": "nope", "telemetry_path": "metrics"},
            "spark": {"urls": ["ftp://x", "http://ok:4040"], "poll_interval": "0s", "timeout": "soon",
                      "app_name_filter": "(" , "pol_interval": "1s"},
            "labels": {"rewrite_rules": [{"pattern": "["}]},
            "histograms": {"duration_buckets": [3, 1]},
            "model": {"summary_level": "stages", "summary_after": "later", "app_name_filter": "[",
                      "max_app_age": "-1h", "aggregate_by": "app", "max_finished_stages": "-1",
                      "stage_skew_ratio": "0.5", "stage_skew_min_duration": "long"},
            "bogus": 1
        });
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        for k in [
            "web.listen_address",
            "web.telemetry_path",
            "spark.urls[0]",
            "spark.poll_interval",
            "spark.timeout",
            "spark.app_name_filter",
            "spark.pol_interval: unknown",
            "labels.rewrite_rules[0].pattern",
            "histograms.duration_buckets",
            "bogus: unknown",
            "model.summary_level",
            "model.summary_after",
            "model.app_name_filter",
            "model.max_app_age",
            "model.aggregate_by",
            "model.max_finished_stages",
            "model.stage_skew_ratio",
            "model.stage_skew_min_duration",
        ] {
            assert!(all.contains(k), "{k} missing from:\n{all}");
        }
        assert_eq!(errs.len(), 18, "{all}");
    }

    #[test]
    fn finished_stage_keys_default_and_take_zero() {
        let d = from_value(&json!({})).unwrap().model;
        assert_eq!(d.max_finished_stages, DEFAULT_MAX_FINISHED_STAGES);
        assert_eq!(d.stage_skew_ratio, DEFAULT_STAGE_SKEW_RATIO);
        assert_eq!(d.stage_skew_min_duration, DEFAULT_STAGE_SKEW_MIN_DURATION);
        // As the environment gives them: strings.
        let m = from_value(&json!({"model": {"max_finished_stages": "0",
            "stage_skew_ratio": "2.5", "stage_skew_min_duration": "0s"}}))
        .unwrap()
        .model;
        assert_eq!(m.max_finished_stages, 0, "0: active stages only");
        assert_eq!(m.stage_skew_ratio, 2.5);
        assert_eq!(m.stage_skew_min_duration, Duration::ZERO);
    }

    #[test]
    fn urls_are_normalised() {
        let s = from_value(&json!({"spark": {"urls": "http://a:4040/api/v1/, http://b:18080"}}))
            .unwrap();
        assert_eq!(s.spark.urls, vec!["http://a:4040", "http://b:18080"]);
    }
}
