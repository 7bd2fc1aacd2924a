//! Test helpers for the OTLP suites: a real OTLP receiver (gRPC `MetricsService` from the
//! official opentelemetry-proto definitions, and OTLP/HTTP decoding `ExportMetricsServiceRequest`
//! protobuf), optionally over TLS, that can be stopped, restarted, made to hang or to reject;
//! the exporter binary as a child process; and a comparison of OTLP points with the Prometheus
//! exposition, driven by the tables in `docs/otlp.md`. The receiver's TLS certificate and its CA
//! are the `.pem` files beside this one.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyV;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumV;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

use super::exposition::parse_exposition;
use super::files::free_port;
use super::proc::Guard;
use super::EXPORTER;

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder of the receiver's certificate (`server.pem`, `server.key`) and its CA (`ca.pem`).
pub fn certs() -> PathBuf {
    root().join("tests/support/otlp")
}

/// The static event-log fixture the exporter reads in every suite.
pub fn fixture() -> PathBuf {
    root().join("tests/data/spark-4.1.1-basic/eventlog")
}

// ---------------------------------------------------------------------------------------------
// Receiver

/// Wire protocol of a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// OTLP/gRPC.
    Grpc,
    /// OTLP/HTTP with protobuf bodies.
    Http,
}

impl Proto {
    /// The exporter's `--otlp.protocol` value.
    pub fn flag(self) -> &'static str {
        match self {
            Proto::Grpc => "grpc",
            Proto::Http => "http/protobuf",
        }
    }
}

/// How the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Accept and record.
    Accept,
    /// Never answer (a slow collector).
    Hang,
    /// gRPC `UNAVAILABLE` / HTTP 503.
    Reject,
}

/// One request that reached the receiver.
#[derive(Debug, Clone)]
pub struct Received {
    /// When it arrived.
    pub at: Instant,
    /// Request path (HTTP) or gRPC method path.
    pub path: String,
    /// Request headers / gRPC metadata (ASCII values).
    pub headers: BTreeMap<String, String>,
    /// The decoded export.
    pub req: ExportMetricsServiceRequest,
}

type Log = Arc<Mutex<Vec<Received>>>;

/// A real OTLP receiver on 127.0.0.1.
pub struct Receiver {
    /// Port, kept across restarts.
    pub port: u16,
    proto: Proto,
    tls: Option<TlsAcceptor>,
    log: Log,
    mode: Arc<Mutex<Mode>>,
    task: Option<JoinHandle<()>>,
}

#[derive(Clone)]
struct Grpc {
    log: Log,
    mode: Arc<Mutex<Mode>>,
}

#[tonic::async_trait]
impl MetricsService for Grpc {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let mode = *self.mode.lock().unwrap();
        match mode {
            Mode::Hang => std::future::pending().await,
            Mode::Reject => Err(tonic::Status::unavailable("receiver rejects for the test")),
            Mode::Accept => {
                let headers = request
                    .metadata()
                    .clone()
                    .into_headers()
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
                    .collect();
                self.log.lock().unwrap().push(Received {
                    at: Instant::now(),
                    path: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export".into(),
                    headers,
                    req: request.into_inner(),
                });
                Ok(tonic::Response::new(ExportMetricsServiceResponse {
                    partial_success: None,
                }))
            }
        }
    }
}

async fn http_export(
    req: hyper::Request<Incoming>,
    log: Log,
    mode: Arc<Mutex<Mode>>,
) -> Result<hyper::Response<Full<Bytes>>, hyper::Error> {
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let ct = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = req.into_body().collect().await?.to_bytes();
    let reply = |status: u16, body: Bytes| {
        hyper::Response::builder()
            .status(status)
            .header("content-type", "application/x-protobuf")
            .body(Full::new(body))
            .expect("response")
    };
    let mode = *mode.lock().unwrap();
    match mode {
        Mode::Hang => std::future::pending().await,
        Mode::Reject => Ok(reply(503, Bytes::from_static(b"unavailable"))),
        Mode::Accept => {
            if ct != "application/x-protobuf" {
                return Ok(reply(415, Bytes::new()));
            }
            match ExportMetricsServiceRequest::decode(body) {
                Ok(r) => {
                    log.lock().unwrap().push(Received {
                        at: Instant::now(),
                        path,
                        headers,
                        req: r,
                    });
                    let resp = ExportMetricsServiceResponse {
                        partial_success: None,
                    };
                    Ok(reply(200, resp.encode_to_vec().into()))
                }
                Err(_) => Ok(reply(400, Bytes::new())),
            }
        }
    }
}

async fn serve_conn<I>(io: I, proto: Proto, log: Log, mode: Arc<Mutex<Mode>>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let builder = auto::Builder::new(TokioExecutor::new());
    let io = TokioIo::new(io);
    let _ = match proto {
        Proto::Grpc => {
            let svc = MetricsServiceServer::new(Grpc { log, mode });
            builder
                .serve_connection(io, hyper_util::service::TowerToHyperService::new(svc))
                .await
        }
        Proto::Http => {
            let svc =
                hyper::service::service_fn(move |req| http_export(req, log.clone(), mode.clone()));
            builder.serve_connection(io, svc).await
        }
    };
}

/// A TLS acceptor with the test server certificate (signed by `ca.pem`, see [`certs`]).
pub fn tls_acceptor() -> TlsAcceptor {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let dir = certs();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.pem"))
        .expect("server.pem")
        .collect::<Result<_, _>>()
        .expect("server.pem");
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("server.key");
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("certificate");
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(cfg))
}

impl Receiver {
    /// Start on a free port.
    pub async fn start(proto: Proto, tls: bool) -> Receiver {
        let mut r = Receiver {
            port: 0,
            proto,
            tls: tls.then(tls_acceptor),
            log: Arc::default(),
            mode: Arc::new(Mutex::new(Mode::Accept)),
            task: None,
        };
        r.listen().await;
        r
    }

    async fn listen(&mut self) {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], self.port)))
            .await
            .expect("bind receiver");
        self.port = listener.local_addr().unwrap().port();
        let (proto, tls, log, mode) = (
            self.proto,
            self.tls.clone(),
            self.log.clone(),
            self.mode.clone(),
        );
        self.task = Some(tokio::spawn(async move {
            // Connections live in this set: aborting the accept task drops them all, like a
            // collector process going away.
            let mut conns = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (tls, log, mode) = (tls.clone(), log.clone(), mode.clone());
                conns.spawn(async move {
                    match tls {
                        Some(acc) => {
                            if let Ok(s) = acc.accept(stream).await {
                                serve_conn(s, proto, log, mode).await;
                            }
                        }
                        None => serve_conn(stream, proto, log, mode).await,
                    }
                });
                while conns.try_join_next().is_some() {}
            }
        }));
    }

    /// The exporter's endpoint for this receiver.
    pub fn endpoint(&self) -> String {
        match self.tls {
            Some(_) => format!("https://localhost:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// Close the port and every connection.
    pub async fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
    }

    /// Listen again on the same port.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.listen().await;
    }

    /// Change how requests are answered.
    pub fn set_mode(&self, m: Mode) {
        *self.mode.lock().unwrap() = m;
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    /// Number of exports received.
    pub fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Wait until more than `n` exports arrived; the newest one.
    pub async fn wait_beyond(&self, n: usize, timeout: Duration) -> Option<Received> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Some(r) = self.log.lock().unwrap().get(n..).and_then(|s| s.last()) {
                return Some(r.clone());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The exporter binary

/// A running `spark-exporter` on the fixture, its stderr captured; killed on drop.
pub struct Exporter {
    guard: Guard,
    /// `/metrics` port.
    pub port: u16,
}

impl Exporter {
    /// Start on the fixture with extra flags and environment; no REST polling. The `OTEL_*`
    /// variables of the test process are removed so only `env` counts.
    pub fn start(args: &[String], env: &[(&str, String)]) -> Exporter {
        let port = free_port();
        let mut cmd = Command::new(EXPORTER);
        cmd.args([
            "--spark.url=".to_string(),
            "--event-log.dir".into(),
            fixture().display().to_string(),
            "--web.listen-address".into(),
            format!("127.0.0.1:{port}"),
            "--log.level".into(),
            "debug".into(),
            // The fixture ended long ago: keep its detail, whose points are compared.
            "--model.summary-level".into(),
            "full".into(),
        ])
        .args(args);
        clean_env(&mut cmd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Exporter {
            guard: Guard::capture("exporter", cmd, None),
            port,
        }
    }

    /// Log lines so far.
    pub fn log(&self) -> Vec<String> {
        self.guard.lines()
    }

    /// Log lines containing `needle`.
    pub fn log_count(&self, needle: &str) -> usize {
        self.guard.count_lines(needle)
    }

    /// Wait until a log line contains `needle`.
    pub async fn wait_log(&self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self.log_count(needle) > 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// Scrape `/metrics` (classic text) and how long it took.
    pub async fn scrape(&self) -> (String, Duration) {
        let t = Instant::now();
        let url = format!("http://127.0.0.1:{}/metrics", self.port);
        for _ in 0..200 {
            if let Ok(r) = reqwest::get(&url).await {
                if let Ok(body) = r.text().await {
                    return (body, t.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("/metrics did not answer; log:\n{}", self.log().join("\n"));
    }

    /// Scrape until two scrapes in a row agree (the event log is fully read).
    pub async fn stable_scrape(&self) -> Prom {
        let mut prev = parse_prometheus(&self.scrape().await.0);
        for _ in 0..60 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let cur = parse_prometheus(&self.scrape().await.0);
            if cur.stable_part() == prev.stable_part()
                && cur.value("spark_exporter_eventlog_events_total", &[]) > Some(0.0)
            {
                return cur;
            }
            prev = cur;
        }
        panic!("/metrics never settled");
    }

    /// SIGTERM, then wait for the exit; how long it took.
    pub fn terminate(&mut self, timeout: Duration) -> Option<Duration> {
        let t = Instant::now();
        self.guard.terminate(timeout).map(|_| t.elapsed())
    }
}

/// Remove the test process's `OTEL_*`, `SPARK_EXPORTER_*` and `K8S_*` variables from `cmd`, so
/// only what a test sets counts.
pub fn clean_env(cmd: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("SPARK_EXPORTER_") || k.starts_with("K8S_") {
            cmd.env_remove(k);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Prometheus exposition

/// A sample's identity: name and labels.
pub type SampleKey = (String, BTreeMap<String, String>);

/// Parsed classic text exposition: `(sample name, labels) -> value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prom(pub BTreeMap<SampleKey, f64>);

/// Families whose values move with the clock or with the export itself.
pub const TIME_DEPENDENT: &[&str] = &[
    "spark_exporter_eventlog_lag_seconds",
    "spark_stage_stalled_seconds",
    "spark_exporter_otlp_exports_total",
    "spark_exporter_otlp_export_failures_total",
    // The process's resources (`process_*`): CPU, memory and descriptors move between reads.
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
    "process_threads",
];

impl Prom {
    /// Value of a sample.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let l = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.0.get(&(name.to_string(), l)).copied()
    }

    /// Samples of families that do not move with time.
    pub fn stable_part(&self) -> Vec<(&SampleKey, &f64)> {
        self.0
            .iter()
            .filter(|((n, _), _)| !TIME_DEPENDENT.iter().any(|t| n.starts_with(t)))
            .collect()
    }
}

/// Parse the classic text format.
pub fn parse_prometheus(text: &str) -> Prom {
    Prom(
        parse_exposition(text)
            .into_iter()
            .map(|s| ((s.name, s.labels), s.value))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------------
// OTLP points

/// A point's value, flattened.
#[derive(Debug, Clone, PartialEq)]
pub enum PV {
    /// Int (`as_int`).
    Int(i64),
    /// Double.
    Double(f64),
    /// Histogram: bounds, per-bucket counts, sum, count.
    Hist(Vec<f64>, Vec<u64>, f64, u64),
}

/// One data point with its metric's metadata.
#[derive(Debug, Clone)]
pub struct Point {
    /// Metric name.
    pub name: String,
    /// Metric unit.
    pub unit: String,
    /// `gauge`, `counter` (monotonic sum), `updowncounter`, `histogram`.
    pub kind: &'static str,
    /// Aggregation temporality (1 delta, 2 cumulative, 0 for gauges).
    pub temporality: i32,
    /// Start and time, Unix nanoseconds.
    pub start: u64,
    /// Time.
    pub time: u64,
    /// Attributes as strings (ints printed), with their proto type (`s` or `i`).
    pub attrs: BTreeMap<String, (String, char)>,
    /// Value.
    pub value: PV,
}

fn any_str(v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> (String, char) {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyV::StringValue(s)) => (s.clone(), 's'),
        Some(AnyV::IntValue(i)) => (i.to_string(), 'i'),
        Some(AnyV::DoubleValue(d)) => (d.to_string(), 'd'),
        Some(AnyV::BoolValue(b)) => (b.to_string(), 'b'),
        other => (format!("{other:?}"), '?'),
    }
}

fn attrs(kv: &[KeyValue]) -> BTreeMap<String, (String, char)> {
    kv.iter()
        .map(|k| (k.key.clone(), any_str(&k.value)))
        .collect()
}

/// Resource attributes of an export.
pub fn resource(req: &ExportMetricsServiceRequest) -> BTreeMap<String, String> {
    req.resource_metrics
        .iter()
        .flat_map(|r| r.resource.iter().flat_map(|r| r.attributes.iter()))
        .map(|k| (k.key.clone(), any_str(&k.value).0))
        .collect()
}

/// Every data point of an export.
pub fn points(req: &ExportMetricsServiceRequest) -> Vec<Point> {
    let mut out = vec![];
    for rm in &req.resource_metrics {
        for sm in &rm.scope_metrics {
            for m in &sm.metrics {
                let mk = |kind, temporality, start, time, a: &[KeyValue], value| Point {
                    name: m.name.clone(),
                    unit: m.unit.clone(),
                    kind,
                    temporality,
                    start,
                    time,
                    attrs: attrs(a),
                    value,
                };
                let num = |v: &Option<NumV>| match v {
                    Some(NumV::AsInt(i)) => PV::Int(*i),
                    Some(NumV::AsDouble(d)) => PV::Double(*d),
                    None => PV::Double(f64::NAN),
                };
                match &m.data {
                    Some(Data::Gauge(g)) => {
                        for p in &g.data_points {
                            out.push(mk(
                                "gauge",
                                0,
                                p.start_time_unix_nano,
                                p.time_unix_nano,
                                &p.attributes,
                                num(&p.value),
                            ))
                        }
                    }
                    Some(Data::Sum(s)) => {
                        let kind = if s.is_monotonic {
                            "counter"
                        } else {
                            "updowncounter"
                        };
                        for p in &s.data_points {
                            out.push(mk(
                                kind,
                                s.aggregation_temporality,
                                p.start_time_unix_nano,
                                p.time_unix_nano,
                                &p.attributes,
                                num(&p.value),
                            ))
                        }
                    }
                    Some(Data::Histogram(h)) => {
                        for p in &h.data_points {
                            out.push(mk(
                                "histogram",
                                h.aggregation_temporality,
                                p.start_time_unix_nano,
                                p.time_unix_nano,
                                &p.attributes,
                                PV::Hist(
                                    p.explicit_bounds.clone(),
                                    p.bucket_counts.clone(),
                                    p.sum.unwrap_or(f64::NAN),
                                    p.count,
                                ),
                            ))
                        }
                    }
                    other => panic!("unexpected data in {}: {other:?}", m.name),
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The documented mapping

/// One row of the metrics table of `docs/otlp.md`.
#[derive(Debug, Clone)]
pub struct Row {
    /// OTLP name.
    pub otlp: String,
    /// Unit.
    pub unit: String,
    /// Instrument.
    pub kind: String,
    /// Seconds to whole milliseconds.
    pub millis: bool,
    /// Constant attributes.
    pub extra: Vec<(String, String)>,
    /// Labels this family names otherwise than the label table (`` `l` as `n` ``).
    pub renames: Vec<(String, String)>,
}

/// Both tables of `docs/otlp.md`: Prometheus name -> row, label -> attribute.
pub fn documented() -> (BTreeMap<String, Row>, BTreeMap<String, String>) {
    let doc = std::fs::read_to_string(root().join("docs/otlp.md")).expect("docs/otlp.md");
    let mut rows = BTreeMap::new();
    let mut renames = BTreeMap::new();
    let cell = |s: &str| s.trim().trim_matches('`').to_string();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let c: Vec<&str> = line.trim_matches('|').split('|').collect();
        match c.len() {
            5 => {
                let extra = c[4]
                    .split(',')
                    .filter_map(|n| n.trim().trim_matches('`').split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let own = c[4]
                    .split(',')
                    .filter_map(|n| n.split_once(" as "))
                    .map(|(l, n)| (cell(l), cell(n)))
                    .collect();
                rows.insert(
                    cell(c[0]),
                    Row {
                        otlp: cell(c[1]),
                        unit: cell(c[2]),
                        kind: cell(c[3]),
                        millis: c[4].contains("× 1000"),
                        extra,
                        renames: own,
                    },
                );
            }
            3 => {
                renames.insert(cell(c[0]), cell(c[1]));
            }
            _ => {}
        }
    }
    assert!(
        rows.len() > 40 && renames.len() > 5,
        "docs/otlp.md tables not found"
    );
    (rows, renames)
}

/// The key [`compare`] matches series and points by: name and attributes.
fn point_key(name: &str, attrs: &BTreeMap<String, String>) -> String {
    format!("{name}{attrs:?}")
}

/// The OTLP points by [`point_key`]; a duplicate is an error.
fn otlp_by_key<'a>(otlp: &'a [Point], errors: &mut Vec<String>) -> BTreeMap<String, &'a Point> {
    let mut by_key = BTreeMap::new();
    for p in otlp {
        let a = p
            .attrs
            .iter()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect();
        if by_key.insert(point_key(&p.name, &a), p).is_some() {
            errors.push(format!("duplicate OTLP point {} {:?}", p.name, p.attrs));
        }
    }
    by_key
}

/// The number an OTLP point holds for one Prometheus sample: the value itself (`part` `'v'`),
/// or a histogram's sum (`'s'`), count (`'c'`) or cumulative bucket (`'b'`, by `labels["le"]`).
fn otlp_value(
    value: &PV,
    part: char,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<f64, String> {
    Ok(match (value, part) {
        (PV::Int(i), 'v') => *i as f64,
        (PV::Double(d), 'v') => *d,
        (PV::Hist(bounds, counts, sum, count), part) => match part {
            's' => *sum,
            'c' => *count as f64,
            _ => {
                let le = labels["le"].as_str();
                let n = match le {
                    "+Inf" => counts.len(),
                    le => {
                        let le: f64 = le.parse().unwrap();
                        bounds
                            .iter()
                            .position(|b| *b == le)
                            .map_or(usize::MAX, |i| i + 1)
                    }
                };
                if n == usize::MAX {
                    return Err(format!("{name}{labels:?}: bound missing in {bounds:?}"));
                }
                counts[..n].iter().sum::<u64>() as f64
            }
        },
        (v, _) => return Err(format!("{name}: OTLP value {v:?} has the wrong shape")),
    })
}

/// Compare every Prometheus series with the OTLP export, both ways; return the differences.
/// Time-dependent families are compared within `slack` (or only for presence when `None`).
pub fn compare(prom: &Prom, otlp: &[Point], slack: Option<f64>) -> Vec<String> {
    let (rows, renames) = documented();
    let mut errors = vec![];
    let by_key = otlp_by_key(otlp, &mut errors);
    let mut seen = BTreeSet::new();
    for ((name, labels), value) in &prom.0 {
        let (base, part) = [("_bucket", 'b'), ("_sum", 's'), ("_count", 'c')]
            .iter()
            .find_map(|(suf, part)| {
                let b = name.strip_suffix(suf)?;
                rows.get(b)
                    .filter(|r| r.kind == "histogram")
                    .map(|_| (b, *part))
            })
            .unwrap_or((name.as_str(), 'v'));
        let Some(row) = rows.get(base) else {
            errors.push(format!("{name}: not in docs/otlp.md"));
            continue;
        };
        let mut attrs: BTreeMap<String, String> = labels
            .iter()
            .filter(|(k, _)| *k != "le")
            .map(|(k, v)| {
                let own = row.renames.iter().find(|(l, _)| l == k).map(|(_, n)| n);
                let name = own.or_else(|| renames.get(k)).cloned().unwrap_or(k.clone());
                (name, v.clone())
            })
            .collect();
        for (k, v) in &row.extra {
            attrs.insert(k.clone(), v.clone());
        }
        let k = point_key(&row.otlp, &attrs);
        seen.insert(k.clone());
        let Some(p) = by_key.get(&k) else {
            errors.push(format!("{name}{labels:?}: no OTLP point {k}"));
            continue;
        };
        if p.unit != row.unit || p.kind != row.kind {
            errors.push(format!(
                "{}: unit/kind {}/{} instead of {}/{}",
                p.name, p.unit, p.kind, row.unit, row.kind
            ));
        }
        if let Some(t) = TIME_DEPENDENT.iter().find(|t| name.starts_with(*t)) {
            if let (Some(s), PV::Double(d)) = (slack, &p.value) {
                if (d - value).abs() > s {
                    errors.push(format!("{t}: {d} vs {value} (more than {s} apart)"));
                }
            }
            continue;
        }
        let got = match otlp_value(&p.value, part, name, labels) {
            Ok(got) => got,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let want = if row.millis {
            (value * 1000.0).round()
        } else {
            *value
        };
        if got != want {
            errors.push(format!("{name}{labels:?}: OTLP {got} != Prometheus {want}"));
        }
    }
    for (k, p) in &by_key {
        if !seen.contains(k) {
            errors.push(format!(
                "OTLP point with no Prometheus series: {} {:?}",
                p.name, p.attrs
            ));
        }
    }
    errors
}
