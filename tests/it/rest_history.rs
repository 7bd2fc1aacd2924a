//! End-to-end tests of application discovery: driver restarts, History Server listings (name
//! filter, limit, completed applications read once), application attempts.

use crate::support;

use std::sync::Arc;

use serde_json::json;
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::sources::rest::TargetPoller;
use support::rest::*;

#[tokio::test]
async fn a_restarted_driver_reports_the_old_application_gone() {
    let server = FakeSpark::start(vec![AppData::snapshot(3)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    let mut next = AppData::snapshot(0);
    next.info["id"] = json!("local-2");
    server.set_apps(vec![next.clone()]);
    p.poll().await.unwrap();
    rec.with(|c| {
        assert_eq!(c.gone, vec![APP_ID.to_string()]);
        assert!(c.apps.contains_key("local-2"));
    });
    assert_matches_truth(&rec, &next, "new app");
    // A completed application that drops out of the listing is not "gone": it ended.
    let end = spark_exporter::clock::system_now_ms() - 1_000;
    next.complete(end, end + 1);
    server.set_apps(vec![next]);
    p.poll().await.unwrap();
    server.set_apps(vec![]);
    p.poll().await.unwrap();
    rec.with(|c| assert_eq!(c.gone, vec![APP_ID.to_string()]));
}

#[tokio::test]
async fn history_server_filters_limits_and_reads_completed_apps_once() {
    let mk = |id: &str, name: &str, start: i64, end: Option<i64>| {
        let mut a = AppData::generated(id, 2);
        a.info["name"] = json!(name);
        a.info["attempts"][0]["startTimeEpoch"] = json!(start);
        if let Some(e) = end {
            a.complete(e, e + 1);
        }
        a
    };
    let apps = vec![
        mk("etl-old", "etl nightly", 1_000, Some(2_000)),
        mk("etl-new", "etl nightly", 3_000, Some(4_000)),
        mk("etl-live", "etl hourly", 5_000, None),
        mk("adhoc", "notebook", 6_000, None),
    ];
    let server = FakeSpark::start(apps).await;
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    SparkConfig::of_mut(&mut s).app_name_filter = spark_exporter::config::Pattern::new("^etl").ok();
    SparkConfig::of_mut(&mut s).app_limit = 2;
    // These applications ended in 1970: within a retention that long.
    s.model.app_retention = std::time::Duration::from_secs(100 * 365 * 86_400);
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    assert_eq!(p.poll().await.unwrap().apps, 2);
    rec.with(|c| {
        // Running first, then the newest completed; the notebook does not match the filter.
        assert_eq!(c.apps.keys().collect::<Vec<_>>(), ["etl-live", "etl-new"]);
        assert_eq!(c.apps["etl-new"].end_ms, Some(4_000));
        assert_eq!(c.jobs.keys().filter(|k| k.0 == "etl-new").count(), 3);
    });
    let touched = |log: &[String], app: &str| {
        log.iter()
            .filter(|l| l.contains(&format!("/applications/{app}/")))
            .count()
    };
    let log = server.take_log();
    assert!(log.contains(&"/api/v1/applications?status=running".to_string()));
    assert!(log
        .iter()
        .any(|l| l.starts_with("/api/v1/applications?status=completed&limit=500")));
    assert!(touched(&log, "etl-new") > 0);
    assert_eq!(touched(&log, "adhoc") + touched(&log, "etl-old"), 0);

    // Idle: the completed application is not read again, the running one is.
    p.poll().await.unwrap();
    let log = server.take_log();
    assert_eq!(touched(&log, "etl-new"), 0, "{log:#?}");
    assert!(touched(&log, "etl-live") > 0);

    // The History Server re-read its log: read it again, in full.
    server.with_apps(|a| a[1].complete(4_000, 9_999));
    p.poll().await.unwrap();
    let log = server.take_log();
    assert!(
        log.contains(&"/api/v1/applications/etl-new/jobs".to_string()),
        "{log:#?}"
    );
    p.poll().await.unwrap();
    assert_eq!(touched(&server.take_log(), "etl-new"), 0);
}

#[tokio::test]
async fn application_attempts_are_part_of_the_path() {
    let mut app = AppData::snapshot(9);
    app.info["attempts"][0]["attemptId"] = json!("2");
    let server = FakeSpark::start(vec![app]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    // The fake serves no attempt paths, so the poll fails, but asked the right URLs.
    assert_eq!(p.poll().await.unwrap_err().kind(), "http_status");
    let log = server.take_log();
    assert!(
        log.contains(&format!("/api/v1/applications/{APP_ID}/2/jobs")),
        "{log:#?}"
    );
}

#[tokio::test]
async fn the_app_limit_prefers_running_then_newest() {
    let mk = |id: &str, start: i64, end: Option<i64>| {
        let mut a = AppData::generated(id, 0);
        a.info["attempts"][0]["startTimeEpoch"] = json!(start);
        if let Some(e) = end {
            a.complete(e, e);
        }
        a
    };
    let apps = vec![
        mk("c-old", 1, Some(5)),
        mk("r-old", 2, None),
        mk("c-new", 3, Some(10)),
        mk("r-new", 4, None),
    ];
    let server = FakeSpark::start(apps).await;
    for (limit, want) in [(1, vec!["r-new"]), (3, vec!["c-new", "r-new", "r-old"])] {
        let rec = Arc::new(Recorder::default());
        let mut s = settings(&[&server.url]);
        SparkConfig::of_mut(&mut s).app_limit = limit;
        s.model.app_retention = std::time::Duration::from_secs(100 * 365 * 86_400);
        let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
        p.poll().await.unwrap();
        rec.with(|c| assert_eq!(c.apps.keys().collect::<Vec<_>>(), want, "limit {limit}"));
    }
}

/// A History Server listing more completed applications than one page: every one that ended
/// within `model.app_retention` is followed, read a page at a time by end date; older ones are
/// not listed; what `spark.app_limit` leaves out is counted.
#[tokio::test]
async fn every_application_within_the_retention_is_followed_page_by_page() {
    let now = spark_exporter::clock::system_now_ms();
    let n = spark_exporter::sources::rest::poller::LIST_PAGE * 2 + 37;
    let mut apps: Vec<AppData> = (0..n)
        .map(|i| {
            let mut a = AppData::generated(&format!("app-{i:05}"), 0);
            let end = now - 60_000 - i as i64 * 1000;
            a.info["attempts"][0]["startTimeEpoch"] = json!(end - 5_000);
            a.complete(end, end);
            a
        })
        .collect();
    // Ended two hours ago: outside the default retention (one hour).
    let mut old = AppData::generated("app-old", 0);
    old.complete(now - 7_200_000, now - 7_200_000);
    apps.push(old);
    let server = FakeSpark::start(apps).await;
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    SparkConfig::of_mut(&mut s).app_limit = n;
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    assert_eq!(p.poll().await.unwrap().apps, n);
    rec.with(|c| {
        assert_eq!(c.apps.len(), n);
        assert!(!c.apps.contains_key("app-old"));
    });
    let log = server.take_log();
    let pages = log
        .iter()
        .filter(|l| l.starts_with("/api/v1/applications?status=completed"))
        .count();
    assert_eq!(pages, 3, "{:#?}", &log[..4.min(log.len())]);
    assert!(log.iter().any(|l| l.contains("&maxEndDate=")));
    assert_eq!(rec.telemetry.snapshot().rest_apps_skipped[&server.url], 0);

    // A limit below the listing: the newest are followed, the rest counted.
    let rec = Arc::new(Recorder::default());
    SparkConfig::of_mut(&mut s).app_limit = 100;
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    assert_eq!(p.poll().await.unwrap().apps, 100);
    rec.with(|c| assert!(c.apps.contains_key("app-00000") && !c.apps.contains_key("app-00100")));
    assert_eq!(
        rec.telemetry.snapshot().rest_apps_skipped[&server.url],
        (n - 100) as u64
    );
}

/// Checkpoints: a completed application read in full before a restart is not read again by the
/// restarted poller while the listing gives the same `lastUpdated` (it is still delivered to
/// the model); one whose `lastUpdated` changed, and every running one, is read.
#[tokio::test]
async fn a_restarted_poller_does_not_read_done_applications_again() {
    let mk = |id: &str, end: Option<i64>| {
        let mut a = AppData::generated(id, 2);
        if let Some(e) = end {
            a.complete(e, e + 1);
        }
        a
    };
    let server = FakeSpark::start(vec![
        mk("done-1", Some(2_000)),
        mk("done-2", Some(3_000)),
        mk("live", None),
    ])
    .await;
    let mut s = settings(&[&server.url]);
    s.model.app_retention = std::time::Duration::from_secs(100 * 365 * 86_400);
    s.checkpoint.path = Some("unused".into());
    let touched = |log: &[String], app: &str| {
        log.iter()
            .filter(|l| l.contains(&format!("/applications/{app}/")))
            .count()
    };
    use spark_exporter::sources::rest::positions::RestPart;
    use spark_exporter::sources::Part;
    let part = Arc::new(RestPart::default());
    let rec = Arc::new(Recorder::default());
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone())
        .unwrap()
        .part(part.clone());
    p.poll().await.unwrap();
    let written = part.to_json();
    let of_target = |v: &serde_json::Value| -> std::collections::BTreeMap<String, i64> {
        serde_json::from_value(v[&server.url].clone()).unwrap()
    };
    assert_eq!(
        of_target(&written),
        [("done-1".to_string(), 2_001), ("done-2".to_string(), 3_001)].into()
    );
    server.take_log();

    // The restart: positions loaded from the checkpoint, a new poller. The History Server
    // re-read done-2's log meanwhile.
    server.with_apps(|a| a[1].complete(3_000, 3_500));
    let loaded = Arc::new(RestPart::from_loaded(Some(written)));
    let rec2 = Arc::new(Recorder::default());
    let mut p2 = TargetPoller::new(&server.url, &s, rec2.clone(), rec2.telemetry.clone())
        .unwrap()
        .part(loaded.clone());
    p2.poll().await.unwrap();
    let log = server.take_log();
    assert_eq!(touched(&log, "done-1"), 0, "{log:#?}");
    assert!(touched(&log, "done-2") > 0);
    assert!(touched(&log, "live") > 0);
    rec2.with(|c| assert!(c.apps.contains_key("done-1")));
    assert_eq!(
        of_target(&loaded.to_json()),
        [("done-1".to_string(), 2_001), ("done-2".to_string(), 3_500)].into()
    );
}
