//! The `web` section and the `log` section: its keys.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::key::{Key, Uses};
use crate::config::parse;
use crate::config::web::LogFormat;

/// The `web` and `log` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("web.listen_address", |s, v| {
        s.web.listen_address = v.parse::<SocketAddr>().map_err(|e| e.to_string())?;
        Ok(())
    })
    .flag("web.listen-address")
    .uses(Uses::RUN)
    .doc("Address of the HTTP server."),
    Key::one("web.telemetry_path", |s, v| {
        if !(v.starts_with('/') && v.len() > 1) {
            return Err("must start with '/' and not be '/' alone".into());
        }
        s.web.telemetry_path = v.to_string();
        Ok(())
    })
    .flag("web.telemetry-path")
    .uses(Uses::RUN)
    .doc("Path of the exposition."),
    Key::one("web.config_file", |s, v| {
        let p = PathBuf::from(v);
        s.web.config_file = if v.is_empty() {
            None
        } else if p.is_file() {
            Some(p)
        } else {
            return Err(format!("{v} is not a readable file"));
        };
        Ok(())
    })
    .flag("web.config.file")
    .brief(
        "TLS, mutual TLS, basic auth, headers and rate limit (Prometheus exporter-toolkit format).",
    )
    .uses(Uses::RUN)
    .doc(
        "TLS, mutual TLS, basic auth, headers and a rate limit, in the Prometheus \
         exporter-toolkit v0.17.1 format (see [Access control](#access-control)).",
    ),
    Key::one("web.openmetrics_created", |s, v| {
        s.web.openmetrics_created = parse::boolean(v)?;
        Ok(())
    })
    .switch("web.openmetrics-created")
    .brief("OpenMetrics output carries a _created sample for every counter and histogram.")
    .uses(Uses::SERVE)
    .doc(
        "OpenMetrics output carries a `_created` sample for every counter and histogram (see \
         [Metrics](metrics.md)); needs Prometheus' created-timestamp ingestion to be worth it.",
    ),
    Key::one("web.max_staleness", |s, v| {
        let d = parse::duration(v)?;
        if d > Duration::from_secs(60) {
            return Err("must be at most 60s".into());
        }
        s.web.max_staleness = d;
        Ok(())
    })
    .flag("web.max-staleness")
    .brief("How far behind the model a scrape may be (0s: always current, at most 60s).")
    .uses(Uses::RUN)
    .doc(
        "How far behind the model a scrape may be: scrapes share one rendering of the \
         exposition up to this old (see [Commands](#commands)). `0s`: every scrape sees every \
         change made before it arrived, at the cost of waiting for a render while the model \
         changes. At most `60s`.",
    ),
    Key::one("log.level", |s, v| {
        match v.to_ascii_lowercase().as_str() {
            l @ ("error" | "warn" | "info" | "debug" | "trace") => s.log.level = l.to_string(),
            _ => return Err("must be one of error, warn, info, debug, trace".into()),
        }
        Ok(())
    })
    .choices(&["error", "warn", "info", "debug", "trace"])
    .flag("log.level")
    .doc("`error`, `warn`, `info`, `debug`, `trace`."),
    Key::one("log.format", |s, v| {
        s.log.format = match v.to_ascii_lowercase().as_str() {
            "logfmt" | "text" => LogFormat::Logfmt,
            "json" => LogFormat::Json,
            _ => return Err("must be logfmt or json".into()),
        };
        Ok(())
    })
    .choices(&["logfmt", "json"])
    .flag("log.format")
    .doc("`logfmt` or `json` (logs go to stderr)."),
];
