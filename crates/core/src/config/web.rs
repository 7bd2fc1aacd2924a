//! The `web` section (the `/metrics` server) and the `log` section.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Default listen address for `/metrics`.
pub const DEFAULT_LISTEN_ADDRESS: &str = "0.0.0.0:9809";
/// Default metrics path.
pub const DEFAULT_TELEMETRY_PATH: &str = "/metrics";
/// Default age a shared rendering of the exposition may have.
pub const DEFAULT_MAX_STALENESS: Duration = Duration::from_secs(1);

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

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            listen_address: DEFAULT_LISTEN_ADDRESS.parse().expect("constant address"),
            telemetry_path: DEFAULT_TELEMETRY_PATH.into(),
            config_file: None,
            max_staleness: DEFAULT_MAX_STALENESS,
            openmetrics_created: false,
        }
    }
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

/// Logging.
#[derive(Debug, Clone, Serialize)]
pub struct LogConfig {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    /// `logfmt` or `json`.
    pub format: LogFormat,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "info".into(),
            format: LogFormat::Logfmt,
        }
    }
}
