//! The effective OTLP settings: our `otlp` config section first, then the standard
//! `OTEL_EXPORTER_OTLP_*` variables, then defaults; and the resource (who is sending).
//!
//! Everything reads the environment through a `Fn(&str) -> Option<String>`, so tests never touch
//! the process environment. Empty variables count as unset, as the OpenTelemetry spec says.

use std::path::PathBuf;
use std::time::Duration;

use super::otlp::{OtlpConfig, OtlpProtocol, Temporality};

/// Export interval when neither `otlp.interval` nor `OTEL_METRIC_EXPORT_INTERVAL` is set.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// Per-export timeout when neither `otlp.timeout` nor `OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT` is
/// set (the spec's 10 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// `service.name` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` says otherwise.
pub const DEFAULT_SERVICE_NAME: &str = "spark-exporter";
/// Path appended to a base endpoint for OTLP/HTTP.
pub const HTTP_METRICS_PATH: &str = "/v1/metrics";

/// Downward-API variables read for the resource, first match wins: `(attribute, variables)`.
pub const K8S_ENV: &[(&str, &[&str])] = &[
    ("k8s.pod.name", &["K8S_POD_NAME", "POD_NAME"]),
    (
        "k8s.namespace.name",
        &["K8S_NAMESPACE_NAME", "POD_NAMESPACE"],
    ),
    ("k8s.node.name", &["K8S_NODE_NAME", "NODE_NAME"]),
    ("k8s.pod.uid", &["K8S_POD_UID", "POD_UID"]),
];

/// Settings after merging config, environment and defaults.
#[derive(Clone, PartialEq)]
pub struct Resolved {
    /// Full URL: for HTTP it ends in `/v1/metrics`; for gRPC it is the server address.
    pub endpoint: String,
    /// Wire protocol.
    pub protocol: OtlpProtocol,
    /// Request headers, config over environment (names lower-case).
    pub headers: Vec<(String, String)>,
    /// Per-export timeout.
    pub timeout: Duration,
    /// Time between exports.
    pub interval: Duration,
    /// Temporality of counters and histograms.
    pub temporality: Temporality,
    /// PEM bundle of extra CAs to trust, and where it came from.
    pub ca: Option<(PathBuf, Vec<u8>)>,
    /// Who is sending (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the pod).
    pub resource: Resource,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values are secrets (auth tokens): print names only.
        f.debug_struct("Resolved")
            .field("endpoint", &self.endpoint)
            .field("protocol", &self.protocol)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("interval", &self.interval)
            .field("temporality", &self.temporality)
            .field("ca", &self.ca.as_ref().map(|(p, _)| p))
            .field("resource", &self.resource)
            .finish()
    }
}

/// The variable for `name` in its metrics-specific form, else its generic form.
fn otlp_var(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<(String, String)> {
    let specific = format!("OTEL_EXPORTER_OTLP_METRICS_{name}");
    let generic = format!("OTEL_EXPORTER_OTLP_{name}");
    for var in [specific, generic] {
        if let Some(v) = env(&var).filter(|v| !v.trim().is_empty()) {
            return Some((var, v.trim().to_string()));
        }
    }
    None
}

/// The process environment, empty values treated as unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Request headers: the variable's, then config's (which replace the variable's of the same
/// name), names lower-cased.
fn headers(
    cfg: &OtlpConfig,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = vec![];
    if let Some((var, v)) = otlp_var(env, "HEADERS") {
        match parse_pairs(&v) {
            Ok(p) => {
                headers = p
                    .into_iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v))
                    .collect()
            }
            Err(e) => errors.push(format!("{var}: {e}")),
        }
    }
    for (k, v) in &cfg.headers {
        let k = k.to_ascii_lowercase();
        headers.retain(|(h, _)| *h != k);
        headers.push((k, v.clone()));
    }
    for (k, v) in &headers {
        if http::HeaderName::from_bytes(k.as_bytes()).is_err()
            || http::HeaderValue::from_str(v).is_err()
        {
            errors.push(format!(
                "header {k:?}: not a valid HTTP header name or value"
            ));
        }
    }
    headers
}

/// The CA bundle (path and PEM) from config or the variable, when one is set.
fn ca_file(
    cfg: &OtlpConfig,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<String>,
) -> Option<(PathBuf, Vec<u8>)> {
    let ca_path = cfg
        .ca_file
        .clone()
        .or_else(|| otlp_var(env, "CERTIFICATE").map(|(_, v)| PathBuf::from(v)));
    match ca_path {
        None => None,
        Some(p) => match std::fs::read(&p) {
            Ok(pem) if String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") => {
                Some((p, pem))
            }
            Ok(_) => {
                errors.push(format!("CA file {}: no PEM certificate in it", p.display()));
                None
            }
            Err(e) => {
                errors.push(format!("CA file {}: {e}", p.display()));
                None
            }
        },
    }
}

/// Merge `cfg` with the environment. `Ok(None)` means OTLP is off (no endpoint anywhere).
/// Every problem is reported at once.
pub fn resolve(
    cfg: &OtlpConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Resolved>, Vec<String>> {
    let mut errors = vec![];
    let protocol = match cfg.protocol {
        Some(p) => p,
        None => match otlp_var(env, "PROTOCOL") {
            None => OtlpProtocol::Grpc,
            Some((_, v)) if v == "grpc" => OtlpProtocol::Grpc,
            Some((_, v)) if v == "http/protobuf" => OtlpProtocol::HttpProtobuf,
            Some((var, v)) => {
                errors.push(format!(
                    "{var}={v:?}: supported values are grpc and http/protobuf"
                ));
                OtlpProtocol::Grpc
            }
        },
    };
    // Config and the metrics-specific variable are used as given (plus /v1/metrics for a bare
    // HTTP base URL from config); the generic variable is a base URL, per the spec.
    let endpoint = if let Some(e) = cfg.endpoint.as_deref().filter(|e| !e.is_empty()) {
        Some(("otlp.endpoint".to_string(), with_path(e, protocol, false)))
    } else if let Some(e) = process(env, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
        Some(("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT".into(), e))
    } else {
        process(env, "OTEL_EXPORTER_OTLP_ENDPOINT").map(|e| {
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
                with_path(&e, protocol, true),
            )
        })
    };
    let Some((source, endpoint)) = endpoint else {
        return Ok(None);
    };
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
        || endpoint.parse::<http::Uri>().is_err()
    {
        errors.push(format!(
            "{source}: {endpoint:?} is not an http:// or https:// URL"
        ));
    }

    let headers = headers(cfg, env, &mut errors);

    let timeout = match cfg.timeout {
        Some(t) => t,
        None => millis(
            env,
            &mut errors,
            &[
                "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ],
        )
        .unwrap_or(DEFAULT_TIMEOUT),
    };
    let interval = match cfg.interval {
        Some(t) => t,
        None => {
            millis(env, &mut errors, &["OTEL_METRIC_EXPORT_INTERVAL"]).unwrap_or(DEFAULT_INTERVAL)
        }
    };
    // `otlp.temporality` defaults to cumulative, so only an explicit `delta` there can be told
    // apart from "unset"; the spec's preference variable applies otherwise.
    let temporality = match cfg.temporality {
        Temporality::Delta => Temporality::Delta,
        Temporality::Cumulative => {
            let var = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
            match process(env, var).map(|v| v.to_ascii_lowercase()).as_deref() {
                None | Some("cumulative") => Temporality::Cumulative,
                Some("delta") | Some("lowmemory") => Temporality::Delta,
                Some(v) => {
                    errors.push(format!(
                        "{var}={v:?}: must be cumulative, delta or lowmemory"
                    ));
                    Temporality::Cumulative
                }
            }
        }
    };
    let ca = ca_file(cfg, env, &mut errors);
    if ca.is_some() && endpoint.starts_with("http://") {
        tracing::warn!(endpoint = %endpoint, "A CA file is set but the OTLP endpoint is plain \
            http://; it is not used.");
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Some(Resolved {
        endpoint,
        protocol,
        headers,
        timeout,
        interval,
        temporality,
        ca,
        resource: resource(env),
    }))
}

fn process(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `http/protobuf` posts to `<base>/v1/metrics`. A base from `OTEL_EXPORTER_OTLP_ENDPOINT`
/// always gets it; one from config gets it unless it already ends with it.
fn with_path(endpoint: &str, protocol: OtlpProtocol, always: bool) -> String {
    let e = endpoint.trim_end_matches('/');
    match protocol {
        OtlpProtocol::Grpc => e.to_string(),
        OtlpProtocol::HttpProtobuf if !always && e.ends_with(HTTP_METRICS_PATH) => e.to_string(),
        OtlpProtocol::HttpProtobuf => format!("{e}{HTTP_METRICS_PATH}"),
    }
}

/// A duration in milliseconds from the first set variable of `vars`.
fn millis(
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Vec<String>,
    vars: &[&str],
) -> Option<Duration> {
    for var in vars {
        if let Some(v) = process(env, var) {
            return match v.parse::<u64>() {
                Ok(n) if n > 0 => Some(Duration::from_millis(n)),
                _ => {
                    errors.push(format!(
                        "{var}={v:?}: must be a positive number of milliseconds"
                    ));
                    None
                }
            };
        }
    }
    None
}

/// `k=v,k2=v2` with percent-encoded values (the W3C baggage form the spec uses for
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`).
pub fn parse_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = vec![];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("{part:?} is not key=value"));
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(format!("{part:?} has an empty key"));
        }
        out.push((k.to_string(), percent_decode(v.trim())?));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{s:?}: bad percent escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?}: not UTF-8 once decoded"))
}

/// This process's identity: `service.instance.id`, stable for the life of the process: the pod
/// name, else the host name, else `spark-exporter-<pid>`.
fn instance_id(env: &dyn Fn(&str) -> Option<String>) -> String {
    K8S_ENV[0]
        .1
        .iter()
        .find_map(|v| process(env, v))
        .or_else(|| process(env, "HOSTNAME"))
        .or_else(|| {
            ["/proc/sys/kernel/hostname", "/etc/hostname"]
                .iter()
                .find_map(|p| std::fs::read_to_string(p).ok())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| format!("spark-exporter-{}", std::process::id()))
}

/// The resource attached to every export, lowest precedence first: our defaults
/// (`service.name=spark-exporter`, `service.version`, `service.instance.id`, `k8s.*` from the
/// downward-API variables in [`K8S_ENV`]), then `OTEL_RESOURCE_ATTRIBUTES`, then
/// `OTEL_SERVICE_NAME`.
pub fn resource(env: &dyn Fn(&str) -> Option<String>) -> Resource {
    let mut attrs: Vec<(String, String)> = vec![
        ("service.name".into(), DEFAULT_SERVICE_NAME.into()),
        ("service.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("service.instance.id".into(), instance_id(env)),
    ];
    for (attr, vars) in K8S_ENV {
        if let Some(v) = vars.iter().find_map(|v| process(env, v)) {
            attrs.push(((*attr).into(), v));
        }
    }
    let mut set = |k: String, v: String| {
        attrs.retain(|(a, _)| *a != k);
        attrs.push((k, v));
    };
    if let Some(s) = process(env, "OTEL_RESOURCE_ATTRIBUTES") {
        match parse_pairs(&s) {
            Ok(pairs) => pairs.into_iter().for_each(|(k, v)| set(k, v)),
            Err(e) => {
                tracing::warn!(error = %e, "OTEL_RESOURCE_ATTRIBUTES is malformed; it is ignored.")
            }
        }
    }
    if let Some(name) = process(env, "OTEL_SERVICE_NAME") {
        set("service.name".into(), name);
    }
    Resource(attrs)
}

/// Who is sending: the OTLP resource's attributes (all strings), keys unique, in the order
/// [`resource`] settled them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource(Vec<(String, String)>);

impl Resource {
    /// The attributes, `(key, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| m.get(k).cloned()
    }

    fn cfg() -> OtlpConfig {
        crate::config::Settings::default().otlp
    }

    #[test]
    fn off_without_an_endpoint() {
        assert_eq!(resolve(&cfg(), &env(&[])).unwrap(), None);
        assert_eq!(
            resolve(&cfg(), &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])).unwrap(),
            None
        );
    }

    #[test]
    fn environment_alone_configures_everything() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20abc,x-tenant=t1",
            ),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "15000"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta"),
        ]);
        let r = resolve(&cfg(), &e).unwrap().unwrap();
        assert_eq!(r.endpoint, "https://collector:4318/v1/metrics");
        assert_eq!(r.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(
            r.headers,
            vec![
                ("authorization".to_string(), "Bearer abc".to_string()),
                ("x-tenant".to_string(), "t1".to_string())
            ]
        );
        assert_eq!(r.timeout, Duration::from_millis(2500));
        assert_eq!(r.interval, Duration::from_secs(15));
        assert_eq!(r.temporality, Temporality::Delta);
        assert!(
            !format!("{r:?}").contains("Bearer"),
            "secrets stay out of logs"
        );
    }

    #[test]
    fn metrics_specific_variables_beat_generic_ones_and_config_beats_both() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://specific:4318/custom",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=generic"),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "a=specific,b=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1000"),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2000"),
        ]);
        let r = resolve(&cfg(), &e).unwrap().unwrap();
        assert_eq!(r.endpoint, "http://specific:4318/custom", "used as given");
        assert_eq!(r.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(r.headers[0], ("a".into(), "specific".into()));
        assert_eq!(r.timeout, Duration::from_secs(2));

        let mut c = cfg();
        c.endpoint = Some("http://mine:4317".into());
        c.protocol = Some(OtlpProtocol::Grpc);
        c.headers.insert("A".into(), "config".into());
        c.timeout = Some(Duration::from_secs(7));
        c.interval = Some(Duration::from_secs(9));
        let r = resolve(&c, &e).unwrap().unwrap();
        assert_eq!(r.endpoint, "http://mine:4317");
        assert_eq!(r.protocol, OtlpProtocol::Grpc);
        assert_eq!(
            r.headers,
            vec![("b".into(), "2".into()), ("a".into(), "config".into())]
        );
        assert_eq!(r.timeout, Duration::from_secs(7));
        assert_eq!(r.interval, Duration::from_secs(9));
    }

    #[test]
    fn config_http_endpoint_gets_the_path_once() {
        let mut c = cfg();
        c.protocol = Some(OtlpProtocol::HttpProtobuf);
        for (given, want) in [
            ("http://c:4318", "http://c:4318/v1/metrics"),
            ("http://c:4318/v1/metrics", "http://c:4318/v1/metrics"),
            ("http://c/otlp", "http://c/otlp/v1/metrics"),
        ] {
            c.endpoint = Some(given.into());
            assert_eq!(resolve(&c, &env(&[])).unwrap().unwrap().endpoint, want);
        }
    }

    #[test]
    fn every_bad_variable_is_reported() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "5s"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "0"),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"),
        ]);
        let Err(errs) = resolve(&cfg(), &e) else {
            panic!("expected errors")
        };
        assert_eq!(errs.len(), 6, "{errs:#?}");
    }

    #[test]
    fn resource_precedence() {
        let e = env(&[
            ("POD_NAME", "driver-0"),
            ("POD_NAMESPACE", "spark"),
            ("K8S_NODE_NAME", "node-a"),
            ("NODE_NAME", "ignored"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment.name=prod,k8s.namespace.name=override%2C1"),
        ]);
        let r = resource(&e);
        let get = |k: &str| {
            r.iter()
                .find(|(kk, _)| kk.as_str() == k)
                .map(|(_, v)| v.to_string())
        };
        assert_eq!(get("service.name").as_deref(), Some("from-attrs"));
        assert_eq!(get("service.instance.id").as_deref(), Some("driver-0"));
        assert_eq!(get("k8s.pod.name").as_deref(), Some("driver-0"));
        assert_eq!(get("k8s.namespace.name").as_deref(), Some("override,1"));
        assert_eq!(get("k8s.node.name").as_deref(), Some("node-a"));
        assert_eq!(get("deployment.environment.name").as_deref(), Some("prod"));

        let mut pairs = vec![("OTEL_SERVICE_NAME", "svc")];
        pairs.push(("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs"));
        let r = resource(&env(&pairs));
        let name = r
            .iter()
            .find(|(k, _)| k.as_str() == "service.name")
            .map(|(_, v)| v.to_string());
        assert_eq!(name.as_deref(), Some("svc"));
        let r = resource(&env(&[]));
        let id = r
            .iter()
            .find(|(k, _)| k.as_str() == "service.instance.id")
            .map(|(_, v)| v.to_string())
            .unwrap();
        assert!(!id.is_empty());
        assert!(r
            .iter()
            .any(|(k, v)| k.as_str() == "service.name" && v.as_str() == DEFAULT_SERVICE_NAME));
    }
}
