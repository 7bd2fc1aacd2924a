//! Command-line flags, named after Prometheus exporter conventions (`--web.listen-address`), and
//! their translation into configuration overrides (flags beat env vars, files and defaults).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{OverrideValue, Overrides};

/// Exit code for invalid configuration or flags (EX_USAGE).
pub const EXIT_CONFIG: i32 = 64;

/// Prometheus and OTLP exporter for Apache Spark applications.
#[derive(Debug, Parser)]
#[command(name = "spark-exporter", version, about)]
pub struct Cli {
    /// What to do (default: run the exporter).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Configuration file (YAML or TOML).
    #[arg(long = "config.file", global = true)]
    pub config_file: Option<PathBuf>,
    /// Address to serve /metrics on [default: 0.0.0.0:9809].
    #[arg(long = "web.listen-address", global = true)]
    pub listen_address: Option<String>,
    /// Path of the exposition [default: /metrics].
    #[arg(long = "web.telemetry-path", global = true)]
    pub telemetry_path: Option<String>,
    /// How far behind the model a scrape may be; 0 = always current [default: 1s].
    #[arg(long = "web.max-staleness", global = true)]
    pub web_max_staleness: Option<String>,
    /// OpenMetrics output carries `_created` for every counter and histogram [default: off].
    #[arg(long = "web.openmetrics-created", global = true)]
    pub web_openmetrics_created: bool,
    /// `spark_connect_jobs_total` carries the Spark Connect user [default: off].
    #[arg(long = "labels.connect-user", global = true)]
    pub labels_connect_user: bool,
    /// TLS and basic-auth file (Prometheus exporter-toolkit format).
    #[arg(long = "web.config.file", global = true)]
    pub web_config_file: Option<String>,
    /// Log level: error, warn, info, debug, trace [default: info].
    #[arg(long = "log.level", global = true)]
    pub log_level: Option<String>,
    /// Log format: logfmt or json [default: logfmt].
    #[arg(long = "log.format", global = true)]
    pub log_format: Option<String>,
    /// Spark UI or History Server base URL; repeatable [default: http://localhost:4040].
    /// Pass an empty value (`--spark.url=`) to disable REST polling.
    #[arg(long = "spark.url", global = true)]
    pub spark_url: Vec<String>,
    /// Time between REST polls [default: 5s].
    #[arg(long = "spark.poll-interval", global = true)]
    pub spark_poll_interval: Option<String>,
    /// Per-request timeout [default: 5s].
    #[arg(long = "spark.timeout", global = true)]
    pub spark_timeout: Option<String>,
    /// Only follow applications whose name matches this regex (History Servers).
    #[arg(long = "spark.app-name-filter", global = true)]
    pub spark_app_name_filter: Option<String>,
    /// Most applications followed per REST target [default: 20].
    #[arg(long = "spark.app-limit", global = true)]
    pub spark_app_limit: Option<String>,
    /// Event-log folder (`spark.eventLog.dir`) to tail; repeatable.
    #[arg(long = "event-log.dir", global = true)]
    pub event_log_dir: Vec<String>,
    /// OTLP collector endpoint; enables OTLP push (also OTEL_EXPORTER_OTLP_ENDPOINT).
    #[arg(long = "otlp.endpoint", global = true)]
    pub otlp_endpoint: Option<String>,
    /// OTLP protocol: grpc or http/protobuf [default: grpc].
    #[arg(long = "otlp.protocol", global = true)]
    pub otlp_protocol: Option<String>,
    /// Time between OTLP exports [default: 30s].
    #[arg(long = "otlp.interval", global = true)]
    pub otlp_interval: Option<String>,
    /// Event-log back-off and discovery interval [default: 1s].
    #[arg(long = "event-log.poll-interval", global = true)]
    pub event_log_poll_interval: Option<String>,
    /// How often folders are listed for new logs and parts [default: the poll interval].
    #[arg(long = "event-log.discovery-interval", global = true)]
    pub event_log_discovery_interval: Option<String>,
    /// Logs read in parallel [default: one thread per core, at most 16].
    #[arg(long = "event-log.threads", global = true)]
    pub event_log_threads: Option<String>,
    /// This exporter's shard, 0..shard.count [default: the StatefulSet pod's ordinal].
    #[arg(long = "shard.index", global = true)]
    pub shard_index: Option<String>,
    /// How many exporters share the applications [default: 1].
    #[arg(long = "shard.count", global = true)]
    pub shard_count: Option<String>,
    /// How long an ended application stays exported [default: 1h].
    #[arg(long = "model.app-retention", global = true)]
    pub app_retention: Option<String>,
    /// What an ended application keeps after model.summary-after: full, groups or app
    /// [default: groups].
    #[arg(long = "model.summary-level", global = true)]
    pub summary_level: Option<String>,
    /// How long after its end an application keeps its full detail [default: 5m].
    #[arg(long = "model.summary-after", global = true)]
    pub summary_after: Option<String>,
    /// Keep only applications whose name matches this regex (every source).
    #[arg(long = "model.app-name-filter", global = true)]
    pub app_name_filter: Option<String>,
    /// Keep only applications that started within this long [default: no limit].
    #[arg(long = "model.max-app-age", global = true)]
    pub max_app_age: Option<String>,
    /// Series per run (app_id) or per application name across runs (app_name) [default: app_id].
    #[arg(long = "model.aggregate-by", global = true)]
    pub aggregate_by: Option<String>,
    /// Finished stage attempts per application that keep per-stage series (failed, skewed,
    /// longest; 0: active stages only) [default: 20].
    #[arg(long = "model.max-finished-stages", global = true)]
    pub max_finished_stages: Option<String>,
    /// Exit by itself once the application has ended and the drain is done (a classic sidecar).
    #[arg(long = "lifecycle.exit-when-app-ends", global = true)]
    pub exit_when_app_ends: bool,
    /// Longest drain after SIGTERM or the application's end [default: 25s].
    #[arg(long = "lifecycle.grace-period", global = true)]
    pub grace_period: Option<String>,
    /// Scrapes of the final state that end a drain early [default: 1].
    #[arg(long = "lifecycle.drain-scrapes", global = true)]
    pub drain_scrapes: Option<String>,
    /// How long REST must be unreachable, after a success, for the application to count as
    /// ended [default: 60s].
    #[arg(long = "lifecycle.rest-unreachable-after", global = true)]
    pub rest_unreachable_after: Option<String>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the exporter (the default).
    Run,
    /// Print the effective configuration, or list every invalid field and exit 64.
    CheckConfig,
    /// Poll once / read event logs to the end, print the exposition and exit
    /// (non-zero if a target failed).
    Dump {
        /// Event-log files or folders to read to the end: paths, file://, s3://, s3a://, gs://,
        /// az://, abfs:// or abfss:// URLs; repeatable.
        #[arg(long = "event-log", num_args = 1..)]
        event_log: Vec<String>,
        /// Print OpenMetrics instead of the classic text format.
        #[arg(long)]
        openmetrics: bool,
    },
    /// Diagnose one application the way the Spark UI teaches (bottleneck stages, skew, spill,
    /// GC, lost executors, joins and plan changes, cached data, locality and scheduler delay,
    /// streaming batches against their trigger, idle cores), most costly finding first. Reads
    /// `--event-log` paths, else the `--spark.url` driver or History Server. Exit 0 with a
    /// report, 1 when the application cannot be read or found, 3 when a finding of a
    /// `--fail-on` kind was made, 64 for bad flags or configuration.
    Diagnose {
        /// Event-log files or folders (paths, file://, s3://, s3a://, gs://, az://, abfs://,
        /// abfss://); repeatable. Without it, `--spark.url` is read.
        #[arg(long = "event-log", num_args = 1..)]
        event_log: Vec<String>,
        /// The application to diagnose (required for a History Server or several logs'
        /// worth of applications if only one is wanted).
        #[arg(long = "app-id")]
        app_id: Option<String>,
        /// Output: text or json (the versioned schema in schemas/) [default: text].
        #[arg(long, default_value = "text")]
        format: String,
        /// A History Server that serves these event logs: findings link to its pages.
        #[arg(long = "ui-url")]
        ui_url: Option<String>,
        /// Exit 3 when any finding is of one of these kinds (comma-separated, e.g.
        /// `join_strategy,plan_change`): a CI gate.
        #[arg(long = "fail-on", value_delimiter = ',')]
        fail_on: Vec<String>,
    },
}

impl Cli {
    /// The flags that were given, as configuration overrides.
    pub fn overrides(&self) -> Overrides {
        let mut v: Vec<(String, OverrideValue)> = vec![];
        let mut one = |k: &str, x: &Option<String>| {
            if let Some(x) = x {
                v.push((k.into(), OverrideValue::One(x.clone())));
            }
        };
        one("web.listen_address", &self.listen_address);
        one("web.telemetry_path", &self.telemetry_path);
        one("web.config_file", &self.web_config_file);
        one("web.max_staleness", &self.web_max_staleness);
        one("log.level", &self.log_level);
        one("log.format", &self.log_format);
        one("spark.poll_interval", &self.spark_poll_interval);
        one("spark.timeout", &self.spark_timeout);
        one("spark.app_name_filter", &self.spark_app_name_filter);
        one("spark.app_limit", &self.spark_app_limit);
        one("event_log.poll_interval", &self.event_log_poll_interval);
        one("event_log.threads", &self.event_log_threads);
        one(
            "event_log.discovery_interval",
            &self.event_log_discovery_interval,
        );
        one("otlp.endpoint", &self.otlp_endpoint);
        one("otlp.protocol", &self.otlp_protocol);
        one("otlp.interval", &self.otlp_interval);
        one("shard.index", &self.shard_index);
        one("shard.count", &self.shard_count);
        one("model.app_retention", &self.app_retention);
        one("model.summary_level", &self.summary_level);
        one("model.summary_after", &self.summary_after);
        one("model.app_name_filter", &self.app_name_filter);
        one("model.max_app_age", &self.max_app_age);
        one("model.aggregate_by", &self.aggregate_by);
        one("model.max_finished_stages", &self.max_finished_stages);
        one("lifecycle.grace_period", &self.grace_period);
        one("lifecycle.drain_scrapes", &self.drain_scrapes);
        one(
            "lifecycle.rest_unreachable_after",
            &self.rest_unreachable_after,
        );
        if self.labels_connect_user {
            v.push((
                "labels.connect_user".into(),
                OverrideValue::One("true".into()),
            ));
        }
        if self.web_openmetrics_created {
            v.push((
                "web.openmetrics_created".into(),
                OverrideValue::One("true".into()),
            ));
        }
        if self.exit_when_app_ends {
            v.push((
                "lifecycle.exit_when_app_ends".into(),
                OverrideValue::One("true".into()),
            ));
        }
        let urls: Vec<String> = self
            .spark_url
            .iter()
            .filter(|u| !u.is_empty())
            .cloned()
            .collect();
        if !self.spark_url.is_empty() {
            v.push(("spark.urls".into(), OverrideValue::Many(urls)));
        }
        if !self.event_log_dir.is_empty() {
            v.push((
                "event_log.dirs".into(),
                OverrideValue::Many(self.event_log_dir.clone()),
            ));
        }
        Overrides {
            config_file: self.config_file.clone(),
            values: v,
        }
    }
}
