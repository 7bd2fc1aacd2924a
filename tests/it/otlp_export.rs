//! OTLP export end to end: the exporter binary reads the Spark 4.1.1 event-log fixture and pushes
//! to a real OTLP receiver (tests/support/otlp); every point must equal the Prometheus sample
//! scraped from
//! /metrics, both ways, over gRPC and HTTP/protobuf, plain and TLS. The receiver is stopped,
//! restarted, made to hang and to reject, and exports resume by themselves.
//!
//! The fixture is static, so values are stable once read; the families that move with the clock
//! (`spark_exporter_eventlog_lag_seconds`, and the OTLP self-metrics) are compared within a few
//! seconds only.

use crate::support;

use std::time::{Duration, Instant};

use support::otlp::{self, compare, points, resource, Exporter, Mode, Prom, Proto, Receiver};

/// Seconds the time-dependent gauges may differ between a scrape and an export.
const SLACK: Option<f64> = Some(10.0);

fn args(r: &Receiver, proto: Proto) -> Vec<String> {
    vec![
        "--otlp.endpoint".into(),
        r.endpoint(),
        "--otlp.protocol".into(),
        proto.flag().into(),
        "--otlp.interval".into(),
        "1s".into(),
    ]
}

/// Scrape, then take the first export that arrives after the scrape, and compare. The source is
/// static, so this retries only for the first exports that raced the event-log reader.
async fn assert_export_matches(exp: &Exporter, r: &Receiver) -> Prom {
    let mut last = vec![];
    for _ in 0..5 {
        let prom = exp.stable_scrape().await;
        let n = r.count();
        let got = r
            .wait_beyond(n, Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("no export within 10 s; log:\n{}", exp.log().join("\n")));
        last = compare(&prom, &points(&got.req), SLACK);
        if last.is_empty() {
            return prom;
        }
    }
    panic!("OTLP and /metrics differ:\n{}", last.join("\n"));
}

/// `spark_exporter_otlp_export_failures_total` once the self-metric is exposed; the failure log
/// lines otherwise.
async fn failures(exp: &Exporter) -> f64 {
    let prom = otlp::parse_prometheus(&exp.scrape().await.0);
    prom.value("spark_exporter_otlp_export_failures_total", &[])
        .unwrap_or_else(|| exp.log_count("OTLP export failed") as f64)
}

async fn export_restart_resume(proto: Proto, tls: bool) {
    let mut r = Receiver::start(proto, tls).await;
    let mut env = vec![];
    if tls {
        env.push((
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            otlp::certs().join("ca.pem").display().to_string(),
        ));
    }
    let exp = Exporter::start(&args(&r, proto), &env);
    let prom = assert_export_matches(&exp, &r).await;
    assert!(
        prom.0.len() > 300,
        "the fixture gives a few hundred series, got {}",
        prom.0.len()
    );

    // Every point is cumulative from one start time, stamped at export time.
    let got = r.received().pop().unwrap();
    let pts = points(&got.req);
    for p in &pts {
        match p.kind {
            "gauge" => assert_eq!(p.temporality, 0),
            _ => assert_eq!(p.temporality, 2, "{} cumulative", p.name),
        }
        assert!(
            p.time > 0 && (p.kind == "gauge" || p.start < p.time),
            "{p:?}"
        );
    }
    let res = resource(&got.req);
    assert_eq!(res["service.name"], "spark-exporter");
    assert!(!res["service.instance.id"].is_empty());
    // The application has ended, so none of its stages is active: no running-task point for a
    // finished stage over OTLP either (issue 17), and, with no task summaries in an event log,
    // no per-stage point at all. (Stage ids as ints, as the receiver has them: convert.rs.)
    let stage: Vec<_> = pts
        .iter()
        .filter(|p| p.attrs.contains_key("spark.stage.id"))
        .map(|p| p.name.clone())
        .collect();
    assert!(
        stage.is_empty(),
        "per-stage points of finished stages: {stage:?}"
    );
    assert!(
        pts.iter().any(|p| p.name == "spark.stage.result"),
        "stage counts stay"
    );

    // Collector down: /metrics stays fast, failures are counted, nothing is received.
    let before = failures(&exp).await;
    r.stop().await;
    let down_at = r.count();
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(4) {
        let (_, took) = exp.scrape().await;
        assert!(took < Duration::from_secs(1), "/metrics slowed to {took:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(r.count(), down_at);
    let after = failures(&exp).await;
    assert!(after > before, "failures {before} -> {after}");

    // Back: exports resume by themselves with current values.
    r.restart().await;
    assert!(
        r.wait_beyond(down_at, Duration::from_secs(10))
            .await
            .is_some(),
        "exports did not resume; log:\n{}",
        exp.log().join("\n")
    );
    assert!(
        exp.wait_log("OTLP export resumed", Duration::from_secs(5))
            .await
    );
    assert_export_matches(&exp, &r).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_export_equals_metrics_and_resumes_after_a_restart() {
    export_restart_resume(Proto::Grpc, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_export_equals_metrics_and_resumes_after_a_restart() {
    export_restart_resume(Proto::Http, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_over_tls_with_a_custom_ca() {
    export_restart_resume(Proto::Grpc, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_over_tls_with_a_custom_ca() {
    export_restart_resume(Proto::Http, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_without_the_ca_fails_and_is_counted() {
    let r = Receiver::start(Proto::Grpc, true).await;
    let exp = Exporter::start(&args(&r, Proto::Grpc), &[]);
    exp.stable_scrape().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(r.count(), 0, "an unknown CA must not be trusted");
    assert!(failures(&exp).await >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hanging_or_rejecting_collector_never_slows_metrics() {
    for proto in [Proto::Http, Proto::Grpc] {
        let r = Receiver::start(proto, false).await;
        r.set_mode(Mode::Hang);
        let exp = Exporter::start(
            &args(&r, proto),
            &[("OTEL_EXPORTER_OTLP_TIMEOUT", "500".into())],
        );
        exp.stable_scrape().await;
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            let (_, took) = exp.scrape().await;
            assert!(took < Duration::from_secs(1), "/metrics slowed to {took:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(failures(&exp).await >= 2.0, "timeouts are failures");
        r.set_mode(Mode::Reject);
        let before = failures(&exp).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            failures(&exp).await > before,
            "{proto:?}: 503/UNAVAILABLE are failures"
        );
        assert_eq!(r.count(), 0);
        r.set_mode(Mode::Accept);
        assert!(
            r.wait_beyond(0, Duration::from_secs(10)).await.is_some(),
            "{proto:?} did not resume"
        );
        assert_export_matches(&exp, &r).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_environment_variables_and_resource() {
    let r = Receiver::start(Proto::Http, false).await;
    let exp = Exporter::start(
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", r.endpoint()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".into()),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20from-env,X-Tenant=t1".into(),
            ),
            // Config beats the variable for the same header.
            (
                "SPARK_EXPORTER_OTLP__HEADERS",
                "x-tenant=from-config".into(),
            ),
            ("OTEL_METRIC_EXPORT_INTERVAL", "700".into()),
            ("OTEL_SERVICE_NAME", "spark-sidecar".into()),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment.name=test,k8s.node.name=from-attrs".into(),
            ),
            ("K8S_POD_NAME", "driver-abc".into()),
            ("POD_NAMESPACE", "spark-jobs".into()),
            ("NODE_NAME", "node-1".into()),
        ],
    );
    assert_export_matches(&exp, &r).await;
    let got = r.received().pop().unwrap();
    assert_eq!(got.path, "/v1/metrics");
    assert_eq!(got.headers["authorization"], "Bearer from-env");
    assert_eq!(got.headers["x-tenant"], "from-config");
    assert_eq!(got.headers["content-type"], "application/x-protobuf");
    let res = resource(&got.req);
    assert_eq!(res["service.name"], "spark-sidecar");
    assert_eq!(res["service.instance.id"], "driver-abc");
    assert_eq!(res["k8s.pod.name"], "driver-abc");
    assert_eq!(res["k8s.namespace.name"], "spark-jobs");
    assert_eq!(res["k8s.node.name"], "from-attrs");
    assert_eq!(res["deployment.environment.name"], "test");
    // The interval came from OTEL_METRIC_EXPORT_INTERVAL (700 ms): several exports in 3 s.
    let n = r.count();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(r.count() - n >= 3, "{} exports in 3 s", r.count() - n);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_endpoint_beats_the_environment() {
    let mine = Receiver::start(Proto::Grpc, false).await;
    let theirs = Receiver::start(Proto::Grpc, false).await;
    let exp = Exporter::start(
        &args(&mine, Proto::Grpc),
        &[
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", theirs.endpoint()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".into()),
        ],
    );
    assert_export_matches(&exp, &mine).await;
    assert_eq!(theirs.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_temporality_adds_up_to_the_cumulative_values() {
    use otlp::PV;
    use std::collections::BTreeMap;
    let r = Receiver::start(Proto::Grpc, false).await;
    let exp = Exporter::start(
        &args(&r, Proto::Grpc),
        &[("SPARK_EXPORTER_OTLP__TEMPORALITY", "delta".into())],
    );
    let prom = exp.stable_scrape().await;
    let n = r.count();
    r.wait_beyond(n + 2, Duration::from_secs(10))
        .await
        .expect("exports");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Sum the deltas of every export: they must add up to the cumulative values, and each
    // export must start where the previous one ended.
    let mut sums: BTreeMap<String, PV> = BTreeMap::new();
    let mut last_time: Option<u64> = None;
    let mut cumulative = vec![];
    for got in r.received() {
        let pts = points(&got.req);
        let counters: Vec<_> = pts
            .iter()
            .filter(|p| p.kind == "counter" || p.kind == "histogram")
            .collect();
        if let (Some(t), Some(p)) = (last_time, counters.first()) {
            assert_eq!(p.start, t, "delta windows are contiguous");
        }
        last_time = counters.first().map(|p| p.time).or(last_time);
        for p in &pts {
            if p.kind == "counter" || p.kind == "histogram" {
                assert_eq!(p.temporality, 1, "{} is delta", p.name);
                let k = format!("{}{:?}", p.name, p.attrs);
                let acc = sums.entry(k).or_insert(match &p.value {
                    PV::Hist(b, c, _, _) => PV::Hist(b.clone(), vec![0; c.len()], 0.0, 0),
                    PV::Int(_) => PV::Int(0),
                    PV::Double(_) => PV::Double(0.0),
                });
                match (acc, &p.value) {
                    (PV::Int(a), PV::Int(v)) => *a += v,
                    (PV::Double(a), PV::Double(v)) => *a += v,
                    (PV::Hist(_, ac, asum, acount), PV::Hist(_, c, s, n)) => {
                        ac.iter_mut().zip(c).for_each(|(a, b)| *a += b);
                        *asum += s;
                        *acount += n;
                    }
                    (a, v) => panic!("{} changed shape: {a:?} {v:?}", p.name),
                }
            } else {
                assert_ne!(p.temporality, 1, "{} stays cumulative", p.name);
            }
        }
        cumulative = pts;
    }
    // Rebuild the last export with the summed deltas and compare it with /metrics.
    for p in cumulative.iter_mut() {
        if let Some(v) = sums.get(&format!("{}{:?}", p.name, p.attrs)) {
            p.value = match (v, &p.value) {
                // Float sums of deltas are compared after rounding to the exposition's precision.
                (PV::Double(d), _) => PV::Double((d * 1e9).round() / 1e9),
                (PV::Hist(b, c, s, n), _) => {
                    PV::Hist(b.clone(), c.clone(), (s * 1e9).round() / 1e9, *n)
                }
                (v, _) => v.clone(),
            };
        }
    }
    let mut prom_rounded = prom.clone();
    for ((name, _), v) in prom_rounded.0.iter_mut() {
        if name.ends_with("_total") || name.ends_with("_sum") {
            *v = (*v * 1e9).round() / 1e9;
        }
    }
    let diff = compare(&prom_rounded, &cumulative, SLACK);
    assert!(
        diff.is_empty(),
        "sum of deltas != cumulative:\n{}",
        diff.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_sends_a_final_export_within_five_seconds() {
    let r = Receiver::start(Proto::Http, false).await;
    let mut exp = Exporter::start(
        &[
            "--otlp.endpoint".into(),
            r.endpoint(),
            "--otlp.protocol".into(),
            "http/protobuf".into(),
            "--otlp.interval".into(),
            "1h".into(),
        ],
        &[],
    );
    let prom = exp.stable_scrape().await;
    r.wait_beyond(0, Duration::from_secs(10))
        .await
        .expect("the first export at start-up");
    let n = r.count();
    let took = exp.terminate(Duration::from_secs(8)).expect("exited");
    assert!(took < Duration::from_secs(6), "shutdown took {took:?}");
    assert_eq!(r.count(), n + 1, "one final export");
    let last = r.received().pop().unwrap();
    let diff = compare(&prom, &points(&last.req), SLACK);
    assert!(diff.is_empty(), "{}", diff.join("\n"));
    assert_eq!(exp.log_count("Final OTLP export sent"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_the_collector_hanging_still_exits_in_time() {
    let r = Receiver::start(Proto::Grpc, false).await;
    r.set_mode(Mode::Hang);
    // Nobody scrapes and the final export cannot be sent: the grace period ends the drain.
    let mut a = args(&r, Proto::Grpc);
    a.push("--lifecycle.grace-period=6s".into());
    let mut exp = Exporter::start(&a, &[]);
    exp.stable_scrape().await;
    let took = exp.terminate(Duration::from_secs(12)).expect("exited");
    assert!(took < Duration::from_secs(8), "shutdown took {took:?}");
}
