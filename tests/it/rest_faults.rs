//! The REST poller against misbehaving targets: every failure is counted by kind, marks the
//! target down, and the next poll recovers by itself; a slow target never holds up the others.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::sources::rest::{poll_once, run, TargetPoller, Targets};
use support::rest::*;
use tokio_util::sync::CancellationToken;

fn errors(rec: &Recorder, target: &str, kind: &str) -> u64 {
    let snap = rec.telemetry.snapshot();
    snap.scrape_errors
        .get(&(target.to_string(), kind.to_string()))
        .copied()
        .unwrap_or(0)
}

fn up(rec: &Recorder, target: &str) -> Option<bool> {
    rec.telemetry.snapshot().up.get(target).copied()
}

#[tokio::test]
async fn each_fault_is_counted_by_kind_and_the_next_poll_recovers() {
    let cases = [
        (FaultKind::Html, "/applications?status=running", "decode"),
        (FaultKind::Garbage, "/jobs", "decode"),
        (FaultKind::Status500, "/allexecutors", "http_status"),
        (FaultKind::CloseMidBody, "/stages", "body"),
        (FaultKind::Huge, "/sql", "body"),
        (FaultKind::Slow(Duration::from_secs(3)), "/jobs", "timeout"),
    ];
    for (fault, on, kind) in cases {
        let server = FakeSpark::start(vec![AppData::snapshot(9)]).await;
        let rec = Arc::new(Recorder::default());
        let mut s = settings(&[&server.url]);
        SparkConfig::of_mut(&mut s).timeout = Duration::from_millis(500);
        let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
        server.set_fault(fault, on);
        let started = Instant::now();
        let err = p.poll().await.expect_err(&format!("{fault:?} on {on}"));
        assert_eq!(err.kind(), kind, "{fault:?}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{fault:?}: per-request timeout"
        );
        assert_eq!(errors(&rec, &server.url, kind), 1, "{fault:?}");
        assert_eq!(up(&rec, &server.url), Some(false));
        assert!(
            rec.telemetry.snapshot().scrape_duration.is_empty(),
            "only good polls time"
        );

        server.clear_fault();
        p.poll()
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: no recovery: {e}"));
        assert_eq!(up(&rec, &server.url), Some(true));
        assert!(rec
            .telemetry
            .snapshot()
            .scrape_duration
            .contains_key(&server.url));
        assert_eq!(errors(&rec, &server.url, kind), 1);
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let port = support::files::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let rec = Arc::new(Recorder::default());
    let mut p =
        TargetPoller::new(&url, &settings(&[&url]), rec.clone(), rec.telemetry.clone()).unwrap();
    assert_eq!(p.poll().await.unwrap_err().kind(), "connect");
    assert_eq!(p.poll().await.unwrap_err().kind(), "connect");
    assert_eq!(errors(&rec, &url, "connect"), 2);
    assert_eq!(up(&rec, &url), Some(false));
}

#[tokio::test]
async fn a_timeout_ends_the_poll_instead_of_waiting_on_every_application() {
    let apps: Vec<AppData> = (0..4)
        .map(|i| AppData::generated(&format!("app-{i}"), 1))
        .collect();
    let server = FakeSpark::start(apps).await;
    server.set_fault(
        FaultKind::Slow(Duration::from_secs(5)),
        "/api/v1/applications/app-",
    );
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    SparkConfig::of_mut(&mut s).timeout = Duration::from_millis(300);
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    let started = Instant::now();
    assert_eq!(p.poll().await.unwrap_err().kind(), "timeout");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_failure_mid_poll_loses_no_change() {
    // Jobs 5..=12 and their stages appear between snapshots 3 and 4; break the stage probes
    // half-way through discovering them, then let the next poll finish the job.
    let server = FakeSpark::start(vec![AppData::snapshot(3)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = TargetPoller::new(
        &server.url,
        &settings(&[&server.url]),
        rec.clone(),
        rec.telemetry.clone(),
    )
    .unwrap();
    p.poll().await.unwrap();
    let snap = AppData::snapshot(4);
    server.set_apps(vec![snap.clone()]);
    server.set_fault(FaultKind::Status500, "/stages/9?");
    assert_eq!(p.poll().await.unwrap_err().kind(), "http_status");
    server.clear_fault();
    p.poll().await.unwrap();
    let want: Vec<u64> = snap
        .stages
        .iter()
        .map(|s| s["stageId"].as_u64().unwrap())
        .collect();
    rec.with(|c| {
        for id in &want {
            let got = c
                .stages
                .get(&(APP_ID.to_string(), *id, 0))
                .map(|s| s.status.label());
            let expect = snap.stages.iter().find(|s| s["stageId"] == *id).unwrap()["status"]
                .as_str()
                .unwrap()
                .to_ascii_lowercase();
            assert_eq!(got, Some(expect.as_str()), "stage {id}");
        }
    });
}

#[tokio::test]
async fn a_slow_target_does_not_delay_the_others_and_the_last_poll_is_bounded() {
    let fast = FakeSpark::start(vec![AppData::snapshot(9)]).await;
    let slow = FakeSpark::start(vec![AppData::snapshot(9)]).await;
    slow.set_fault(FaultKind::Slow(Duration::from_secs(30)), "/api/v1/");
    let mut s = settings(&[&fast.url, &slow.url]);
    SparkConfig::of_mut(&mut s).timeout = Duration::from_secs(2);
    let rec = Arc::new(Recorder::default());
    let finish = CancellationToken::new();
    let targets = Targets::of(&s);
    let task = tokio::spawn(run(
        (&s).into(),
        targets,
        rec.clone(),
        rec.telemetry.clone(),
        finish.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let snap = rec.telemetry.snapshot();
    let fast_requests = snap.rest_requests.get(&fast.url).copied().unwrap_or(0);
    let slow_requests = snap.rest_requests.get(&slow.url).copied().unwrap_or(0);
    // 100 ms interval: the fast target polled many times while the slow one hangs on request 1.
    assert!(
        fast_requests >= 5 * 8,
        "fast target made {fast_requests} requests"
    );
    assert_eq!(slow_requests, 0);
    assert_eq!(up(&rec, &fast.url), Some(true));
    // Finishing: one last poll of each target, the hanging one given up after spark.timeout.
    let stopping = Instant::now();
    finish.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    let took = stopping.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(3),
        "the last polls took {took:?}"
    );
    let snap = rec.telemetry.snapshot();
    assert!(
        snap.rest_requests.get(&fast.url).copied().unwrap_or(0) > fast_requests,
        "the fast target had its last poll"
    );
}

#[tokio::test]
async fn poll_once_names_the_failing_target_and_still_polls_the_good_one() {
    let good = FakeSpark::start(vec![AppData::snapshot(9)]).await;
    let bad = FakeSpark::start(vec![AppData::snapshot(9)]).await;
    bad.set_fault(FaultKind::Status500, "/api/v1/");
    let rec = Arc::new(Recorder::default());
    let s = Arc::new(settings(&[&good.url, &bad.url]));
    let err = poll_once(s, rec.clone(), rec.telemetry.clone())
        .await
        .unwrap_err();
    assert_eq!(err.failures.len(), 1);
    assert_eq!(err.failures[0].0, bad.url);
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    assert_eq!(up(&rec, &good.url), Some(true));
    assert_eq!(up(&rec, &bad.url), Some(false));
    rec.with(|c| assert_eq!(c.jobs.len(), 15));
}

#[tokio::test]
async fn a_driver_that_stays_unreachable_has_its_application_marked_gone_then_followed_again() {
    let server = FakeSpark::start(vec![AppData::snapshot(5)]).await;
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    SparkConfig::of_mut(&mut s).timeout = Duration::from_millis(500);
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    p.poll().await.expect("first poll");
    server.set_fault(FaultKind::Status500, "/applications");
    for i in 1..spark_exporter::sources::rest::poller::GONE_AFTER_FAILED_POLLS {
        p.poll().await.expect_err("fault");
        assert!(
            rec.with(|c| c.gone.is_empty()),
            "not gone after {i} failures"
        );
    }
    p.poll().await.expect_err("fault");
    let gone = rec.with(|c| c.gone.clone());
    assert_eq!(gone, vec![AppData::snapshot(5).id()], "marked gone once");
    // The same driver answers again: its application is read afresh.
    server.clear_fault();
    server.take_log();
    p.poll().await.expect("recovered");
    let log = server.take_log();
    assert!(
        log.iter().any(|l| l.ends_with("/jobs")),
        "full job list read again: {log:?}"
    );
    assert_eq!(rec.with(|c| c.gone.len()), 1);
}
