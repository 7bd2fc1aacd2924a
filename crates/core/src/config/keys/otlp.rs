//! The `otlp` section: its keys.

use std::path::PathBuf;

use crate::config::key::{Key, Uses};
use crate::config::otlp::{OtlpProtocol, Temporality};
use crate::config::parse::{self, Problems};

/// The `otlp` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("otlp.endpoint", |s, v| {
        s.otlp.endpoint = if v.is_empty() {
            None
        } else {
            parse::url(v)?;
            Some(v.trim_end_matches('/').to_string())
        };
        Ok(())
    })
    .flag("otlp.endpoint")
    .brief("OTLP collector URL; enables the push (also OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT).")
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`")
    .default("off")
    .doc(
        "Collector URL (`http://` or `https://`); enables OTLP push. For `http/protobuf`, \
         `/v1/metrics` is appended to a base URL (always for `OTEL_EXPORTER_OTLP_ENDPOINT`, \
         unless already there for `otlp.endpoint`; `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is \
         used as given).",
    ),
    Key::one("otlp.protocol", |s, v| {
        s.otlp.protocol = Some(match v {
            "grpc" => OtlpProtocol::Grpc,
            "http/protobuf" | "http" => OtlpProtocol::HttpProtobuf,
            _ => return Err("must be grpc or http/protobuf".into()),
        });
        Ok(())
    })
    .choices(&["grpc", "http/protobuf"])
    .flag("otlp.protocol")
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL`")
    .default("`grpc`")
    .doc("`grpc` or `http/protobuf` (`http/json` is not supported)."),
    Key::map("otlp.headers", |s, m| {
        s.otlp.headers = m;
        Ok::<(), Problems>(())
    })
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_[METRICS_]HEADERS`")
    .default("none")
    .doc(
        "Request headers, e.g. `authorization=Bearer%20TOKEN` (values percent-decoded in the \
         variable). Config headers replace variables' headers of the same name. Values never \
         appear in logs or `check-config`.",
    ),
    Key::one("otlp.timeout", |s, v| {
        s.otlp.timeout = Some(parse::positive(v)?);
        Ok(())
    })
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT` (ms)")
    .default("`10s`")
    .doc("Bound on one export attempt."),
    Key::one("otlp.interval", |s, v| {
        s.otlp.interval = Some(parse::positive(v)?);
        Ok(())
    })
    .flag("otlp.interval")
    .uses(Uses::RUN)
    .otel("`OTEL_METRIC_EXPORT_INTERVAL` (ms)")
    .default("`30s`")
    .doc("Time between exports."),
    Key::one("otlp.temporality", |s, v| {
        s.otlp.temporality = match v.to_ascii_lowercase().as_str() {
            "cumulative" => Temporality::Cumulative,
            "delta" => Temporality::Delta,
            _ => return Err("must be cumulative or delta".into()),
        };
        Ok(())
    })
    .choices(&["cumulative", "delta"])
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`")
    .doc(
        "`cumulative` or `delta` (`lowmemory` counts as `delta`). The variable applies unless \
         `otlp.temporality` is `delta`.",
    ),
    Key::one("otlp.ca_file", |s, v| {
        let p = PathBuf::from(v);
        if !p.is_file() {
            return Err(format!("{v} is not a readable file"));
        }
        s.otlp.ca_file = Some(p);
        Ok(())
    })
    .uses(Uses::RUN)
    .otel("`OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE`")
    .default("system-independent Mozilla roots")
    .doc("PEM bundle of extra CAs for an `https://` collector. TLS is rustls; no OpenSSL."),
];
