//! End-to-end tests of the REST poller against a fake Spark server: recorded Spark 4.1.1 JSON,
//! generated histories, new and evicted ids, and the cost of an idle poll.

use crate::support;

use std::sync::Arc;

use serde_json::json;
use spark_exporter::sources::rest::tracker::PROBE_CAP;
use spark_exporter::sources::rest::TargetPoller;
use support::rest::*;

#[tokio::test]
async fn replaying_recorded_snapshots_tracks_every_change_incrementally() {
    let server = FakeSpark::start(vec![AppData::snapshot(0)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    let mut log = vec![];
    for n in 0..10 {
        let snap = AppData::snapshot(n);
        server.set_apps(vec![snap.clone()]);
        let stats = p
            .poll()
            .await
            .unwrap_or_else(|e| panic!("snapshot {n}: {e}"));
        assert_eq!(stats.apps, 1);
        assert_matches_truth(&rec, &snap, &format!("snapshot {n}"));
        log.extend(server.take_log());
    }
    let app = rec.with(|c| c.apps[APP_ID].clone());
    assert_eq!(app.name.as_deref(), Some("acceptance-basic"));
    assert_eq!(app.end_ms, None);

    // Every stage that ran got a task summary, re-read once it ended (the fake's values change
    // with progress, so a summary taken while the stage ran would not match).
    let last = AppData::snapshot(9);
    rec.with(|c| {
        for s in last.stages.iter().filter(|s| s["status"] != "SKIPPED") {
            let id = s["stageId"].as_u64().unwrap();
            let got = c.summaries.get(&(APP_ID.to_string(), id, 0)).copied();
            let m = summary_median(id, s["numCompleteTasks"].as_u64().unwrap());
            assert_eq!(
                got.map(|s| (s.median_ms, s.max_ms)),
                Some((m, 3.0 * m)),
                "stage {id}"
            );
        }
        assert!(
            !c.summaries.keys().any(|k| k.1 == 16),
            "skipped stages have no summary"
        );
    });

    // Full lists only on the first poll; never task lists; stage requests all say details=false.
    let base = format!("/api/v1/applications/{APP_ID}");
    let count = |p: &str| log.iter().filter(|l| *l == p).count();
    assert_eq!(count(&format!("{base}/jobs")), 1, "{log:#?}");
    assert_eq!(count(&format!("{base}/stages?details=false")), 1);
    // `/environment` once per application, even when the server has none (404).
    assert_eq!(count(&format!("{base}/environment")), 1);
    assert_eq!(count(&format!("{base}/storage/rdd")), 10);
    assert_eq!(
        count(&format!(
            "{base}/sql?details=false&planDescription=false&offset=0&length=2147483647"
        )),
        1
    );
    assert!(!log
        .iter()
        .any(|l| l.contains("taskList") || l.contains("/tasks")));
    for l in log
        .iter()
        .filter(|l| l.contains("/stages") && !l.contains("taskSummary"))
    {
        assert!(l.contains("details=false"), "{l}");
    }
}

/// Bytes of the `k`th poll, from telemetry (`spark_exporter_rest_bytes_total`).
async fn poll_bytes(p: &mut TargetPoller<Recorder>, rec: &Recorder, target: &str) -> u64 {
    let before = rec
        .telemetry
        .snapshot()
        .rest_bytes
        .get(target)
        .copied()
        .unwrap_or(0);
    let stats = p.poll().await.unwrap();
    let after = rec.telemetry.snapshot().rest_bytes[target];
    assert_eq!(
        after - before,
        stats.bytes,
        "telemetry and poll stats agree"
    );
    after - before
}

#[tokio::test]
async fn idle_poll_cost_does_not_grow_with_history() {
    let mut results = vec![];
    for finished in [10u64, 1000] {
        let app = AppData::generated("app-gen", finished);
        let server = FakeSpark::start(vec![app.clone()]).await;
        let rec = Arc::new(Recorder::default());
        let mut p = poller(&server, &rec);
        let first = poll_bytes(&mut p, &rec, &server.url).await;
        assert_matches_truth(&rec, &app, "first poll");
        server.take_log();
        let idle = poll_bytes(&mut p, &rec, &server.url).await;
        let idle_log = server.take_log();
        let idle2 = poll_bytes(&mut p, &rec, &server.url).await;
        eprintln!(
            "finished={finished}: first poll {first} B, idle polls {idle} B / {idle2} B, {} \
                requests",
            idle_log.len()
        );
        assert_eq!(idle, idle2, "idle polls are stable");
        results.push((first, idle, idle_log));
    }
    let (first_small, idle_small, log_small) = &results[0];
    let (first_big, idle_big, log_big) = &results[1];
    // The first read scales with history (so this measure would catch an O(history) poll)...
    assert!(
        *first_big > 50 * first_small / 2,
        "{first_small} -> {first_big}"
    );
    assert!(*first_big > 20 * idle_big);
    // ...the idle poll does not: same requests; bytes differ only by the digits of the ids.
    assert_eq!(
        log_small.len(),
        log_big.len(),
        "{log_small:#?}\n{log_big:#?}"
    );
    assert!(
        idle_big.abs_diff(*idle_small) <= 64,
        "{idle_small} vs {idle_big}"
    );
    // Exactly these: the listings, one request per unfinished entity, two probes per kind, and
    // the cached datasets (`/storage/rdd`: small, read at every poll of a running application;
    // `/environment` was read once, at the first poll).
    let b = "/api/v1/applications/app-gen";
    let q = "details=false&planDescription=false";
    let want = [
        "/api/v1/applications?status=running".to_string(),
        "/api/v1/applications?status=completed&limit=500&minEndDate=…".to_string(),
        format!("{b}/jobs?status=running"),
        format!("{b}/jobs/1001"),
        format!("{b}/jobs/1002"),
        format!("{b}/stages?status=active&status=pending&details=false"),
        format!("{b}/stages/2002?details=false"),
        format!("{b}/stages/2003?details=false"),
        format!("{b}/stages/2001/0/taskSummary?quantiles=0.5,1.0"),
        format!("{b}/sql/1000?{q}"),
        format!("{b}/sql/1001?{q}"),
        format!("{b}/sql/1002?{q}"),
        format!("{b}/allexecutors"),
        format!("{b}/storage/rdd"),
    ];
    // The listing asks for what ended within `model.app_retention`: a date that moves.
    let log_big: Vec<String> = log_big
        .iter()
        .map(|l| match l.split_once("&minEndDate=") {
            Some((head, _)) => format!("{head}&minEndDate=…"),
            None => l.clone(),
        })
        .collect();
    assert_eq!(log_big, want);
}

#[tokio::test]
async fn a_growing_history_is_read_incrementally() {
    let server = FakeSpark::start(vec![AppData::generated("grow", 3)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    server.take_log();
    // Each step: the running job succeeds (its pending stage is skipped, its active stage
    // completes) and new jobs appear, finished or running.
    for n in [4, 5, 9, 10] {
        let app = AppData::generated("grow", n);
        server.set_apps(vec![app.clone()]);
        p.poll().await.unwrap();
        assert_matches_truth(&rec, &app, &format!("{n} jobs"));
        let log = server.take_log();
        assert!(!log
            .iter()
            .any(|l| l.ends_with("/jobs") || l.contains("/stages?details")));
    }
    rec.with(|c| {
        let st = |id: u64| c.stages[&("grow".to_string(), id, 0)].status.label();
        assert_eq!((st(6), st(7)), ("skipped", "complete"));
        assert_eq!((st(20), st(21)), ("pending", "active"));
        let summary = |id: u64| {
            c.summaries
                .get(&("grow".to_string(), id, 0))
                .map(|s| s.median_ms)
        };
        let final_tasks = AppData::generated("grow", 10)
            .stages
            .iter()
            .find(|s| s["stageId"] == 7)
            .unwrap()["numCompleteTasks"]
            .as_u64()
            .unwrap();
        assert_eq!(
            summary(7),
            Some(summary_median(7, final_tasks)),
            "re-read once it ended"
        );
        assert_eq!(summary(21), Some(summary_median(21, 1)));
        assert_eq!(summary(6), None);
    });
    // Idle again: only the active stage's summary is read.
    p.poll().await.unwrap();
    let summaries: Vec<String> = server
        .take_log()
        .into_iter()
        .filter(|l| l.contains("taskSummary"))
        .collect();
    assert_eq!(
        summaries,
        ["/api/v1/applications/grow/stages/21/0/taskSummary?quantiles=0.5,1.0"]
    );
}

#[tokio::test]
async fn entities_spark_evicted_stop_being_polled() {
    let server = FakeSpark::start(vec![AppData::generated("ev", 3)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    // The running job, its stages and the running SQL execution vanish (404 from now on).
    server.with_apps(|a| {
        a[0].jobs.retain(|j| j["jobId"] != 3);
        a[0].stages
            .retain(|s| s["stageId"] != 6 && s["stageId"] != 7);
        a[0].sql.retain(|e| e["id"] != 3);
    });
    p.poll().await.unwrap();
    server.take_log();
    p.poll().await.unwrap();
    let log = server.take_log();
    for gone in [
        "/jobs/3",
        "/stages/6?",
        "/stages/7?",
        "/stages/7/",
        "/sql/3?",
    ] {
        assert!(
            !log.iter().any(|l| l.contains(gone)),
            "{gone} still polled: {log:#?}"
        );
    }
}

#[tokio::test]
async fn a_burst_of_new_jobs_falls_back_to_one_full_list() {
    let server = FakeSpark::start(vec![AppData::generated("burst", 3)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    server.take_log();
    let big = AppData::generated("burst", 3 + 2 * PROBE_CAP as u64);
    server.set_apps(vec![big.clone()]);
    p.poll().await.unwrap();
    assert_matches_truth(&rec, &big, "after burst");
    let log = server.take_log();
    let probes = log.iter().filter(|l| l.contains("/jobs/")).count();
    assert!(probes <= PROBE_CAP + 1, "{probes} probes");
    assert!(
        log.iter().any(|l| l.ends_with("/burst/jobs")),
        "full job list re-read"
    );
    // Back to incremental afterwards.
    p.poll().await.unwrap();
    assert!(!server.take_log().iter().any(|l| l.ends_with("/burst/jobs")));
}

#[tokio::test]
async fn ids_published_out_of_order_or_never_are_still_found() {
    let mut app = AppData::generated("ooo", 2);
    let all_sql = app.sql.clone(); // ids 0..=2
    let template = all_sql[0].clone();
    app.sql.truncate(2);
    let server = FakeSpark::start(vec![app.clone()]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    let with = |ids: &[u64]| {
        let mut a = app.clone();
        a.sql = ids
            .iter()
            .map(|i| {
                let mut e = template.clone();
                e["id"] = json!(i);
                e
            })
            .collect();
        a
    };
    let has = |id: u64| rec.with(|c| c.sql.contains_key(&("ooo".to_string(), id)));
    // 3 is published before 2: found past the gap, 2 stays a hole and is found later.
    server.set_apps(vec![with(&[0, 1, 3])]);
    p.poll().await.unwrap();
    assert!(has(3) && !has(2));
    server.set_apps(vec![with(&[0, 1, 2, 3])]);
    p.poll().await.unwrap();
    assert!(has(2));
    // 4 is never published; 5 and 6 still are found.
    server.set_apps(vec![with(&[0, 1, 2, 3, 5, 6])]);
    p.poll().await.unwrap();
    assert!(has(5) && has(6));
    // The hole is given up after a few polls: idle polls go back to two probes.
    for _ in 0..4 {
        p.poll().await.unwrap();
    }
    server.take_log();
    p.poll().await.unwrap();
    let probes: Vec<String> = server
        .take_log()
        .into_iter()
        .filter(|l| l.contains("/sql/"))
        .collect();
    assert!(!probes.iter().any(|l| l.contains("/sql/4?")), "{probes:?}");
}

#[tokio::test]
async fn poll_once_feeds_the_real_model() {
    let server = FakeSpark::start(vec![AppData::snapshot(9)]).await;
    let s = Arc::new(settings(&[&server.url]));
    let telemetry = Arc::new(spark_exporter::telemetry::Telemetry::default());
    let model = spark_exporter::model::Model::new(&s, telemetry.clone());
    let observer = Arc::new(model.observer(spark_exporter::sources::source("rest")));
    spark_exporter::sources::rest::poll_once(s, observer, telemetry.clone())
        .await
        .unwrap();
    assert_eq!(telemetry.snapshot().up.get(&server.url), Some(&true));
    assert!(model.view(|v| v.app(APP_ID).is_some()));
}

#[tokio::test]
async fn a_backlog_of_task_summaries_is_spread_over_polls() {
    // 100 finished stages, all "recent" (a retention longer than the fixture's age).
    let server = FakeSpark::start(vec![AppData::generated("sum", 100)]).await;
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    s.model.stage_retention = std::time::Duration::from_secs(100 * 365 * 86_400);
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    let mut per_poll = vec![];
    for _ in 0..5 {
        p.poll().await.unwrap();
        let log = server.take_log();
        per_poll.push(log.iter().filter(|l| l.contains("taskSummary")).count());
    }
    // 32 ended stages per poll plus the active one, until the backlog is gone.
    assert_eq!(per_poll, [33, 33, 33, 5, 1]);
    let n = rec.with(|c| c.summaries.len());
    assert_eq!(n, 101, "every stage that ran, and the active one");
}

#[tokio::test]
async fn a_completed_application_is_done_only_once_its_summaries_are_read() {
    // As a History Server lists it: completed, 100 finished stages all "recent".
    let mut app = AppData::generated("done", 100);
    app.complete(2_000_000_000_000, 7);
    let server = FakeSpark::start(vec![app]).await;
    let rec = Arc::new(Recorder::default());
    let mut s = settings(&[&server.url]);
    s.model.stage_retention = std::time::Duration::from_secs(100 * 365 * 86_400);
    let mut p = TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap();
    let mut per_poll = vec![];
    for _ in 0..5 {
        p.poll().await.unwrap();
        let log = server.take_log();
        per_poll.push(log.iter().filter(|l| l.contains("taskSummary")).count());
    }
    // The backlog is worked off before the application counts as read: then nothing more.
    assert_eq!(per_poll, [33, 33, 33, 5, 0]);
    assert_eq!(rec.with(|c| c.summaries.len()), 101);
}

#[tokio::test]
async fn a_whole_read_takes_every_task_summary_whatever_stage_retention_says() {
    use spark_exporter::sources::rest::Mode;
    // 100 finished stages that ended long before the default `model.stage_retention`.
    let server = FakeSpark::start(vec![AppData::generated("old", 100)]).await;
    let s = settings(&[&server.url]);
    let summaries = |mode: Mode| {
        let (server, s) = (&server, &s);
        async move {
            let rec = Arc::new(Recorder::default());
            let p = TargetPoller::new(&server.url, s, rec.clone(), rec.telemetry.clone()).unwrap();
            p.mode(mode).poll().await.unwrap();
            server.take_log();
            rec.with(|c| c.summaries.len())
        }
    };
    assert_eq!(
        summaries(Mode::Once).await,
        1,
        "as followed: the active stage only"
    );
    let whole = Mode::Whole { only_app: None };
    assert_eq!(
        summaries(whole).await,
        101,
        "every stage that ran, in one read"
    );
}
