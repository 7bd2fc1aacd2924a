//! The REST poller and SQL plans: an execution's plan graph
//! (`/sql/{id}?details=true&planDescription=false`) is fetched once, when the poller first sees
//! the execution ended, never for a running one, a slice of a backlog per poll; a plan Spark
//! cannot give is counted in `spark_exporter_scrape_errors_total` and skipped without failing
//! the poll. A first read of an application reads the plans of the executions that ended within
//! the task-summary window (`model.stage_retention`) only.

use crate::support;

use std::sync::Arc;

use std::time::Duration;

use serde_json::Value;
use spark_exporter::sources::rest::api::ExecutionPlan;
use spark_exporter::sources::rest::convert::sql_plan_obs;
use spark_exporter::sources::rest::TargetPoller;
use support::rest::*;

/// A poller whose first read takes every ended execution's plan (the generated applications
/// ended long ago).
fn poller_all(server: &FakeSpark, rec: &Arc<Recorder>) -> TargetPoller<Recorder> {
    let mut s = settings(&[&server.url]);
    s.model.stage_retention = Duration::from_secs(100 * 365 * 86_400);
    TargetPoller::new(&server.url, &s, rec.clone(), rec.telemetry.clone()).unwrap()
}

const PLAN_QUERY: &str = "?details=true&planDescription=false";

/// The execution ids whose plan was asked for, in order.
fn plan_requests(log: &[String]) -> Vec<u64> {
    log.iter()
        .filter_map(|l| l.strip_suffix(PLAN_QUERY))
        .filter_map(|l| l.rsplit_once("/sql/"))
        .filter_map(|(_, id)| id.parse().ok())
        .collect()
}

/// A real plan graph Spark 4.1.1 served (a skew join), as execution `id`'s.
fn recorded_plan(id: u64) -> Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sql-plans-4.1.1/rest/local-1796102515495/raw.json"
    );
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut v = raw["sql/2?details=true"].clone();
    v["id"] = id.into();
    v
}

#[tokio::test]
async fn plans_are_fetched_once_per_execution_first_seen_ended() {
    let server = FakeSpark::start(vec![AppData::snapshot(0)]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    let mut asked = vec![];
    for n in 0..10 {
        let snap = AppData::snapshot(n);
        server.set_apps(vec![snap.clone()]);
        p.poll()
            .await
            .unwrap_or_else(|e| panic!("snapshot {n}: {e}"));
        let now = plan_requests(&server.take_log());
        // Only executions ended in this snapshot, and each one once.
        for id in &now {
            let e = snap.sql.iter().find(|e| e["id"] == *id).unwrap();
            assert_ne!(
                e["status"], "RUNNING",
                "snapshot {n}: plan of a running {id}"
            );
            assert!(
                !asked.contains(id),
                "snapshot {n}: plan of {id} asked again"
            );
        }
        asked.extend(now);
    }
    // More polls of the final state ask for nothing more.
    for _ in 0..3 {
        p.poll().await.unwrap();
    }
    assert!(plan_requests(&server.take_log()).is_empty());
    let ended: Vec<u64> = AppData::snapshot(9)
        .sql
        .iter()
        .filter(|e| e["status"] != "RUNNING")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    asked.sort_unstable();
    assert_eq!(asked, ended);
}

#[tokio::test]
async fn a_backlog_is_fetched_a_slice_per_poll_and_plans_reach_the_model() {
    let mut app = AppData::generated("app-gen", 100);
    for id in 0..100 {
        app.raw
            .insert(format!("sql/{id}?details=true"), recorded_plan(id));
    }
    let server = FakeSpark::start(vec![app]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller_all(&server, &rec);
    let mut per_poll = vec![];
    for _ in 0..5 {
        p.poll().await.unwrap();
        per_poll.push(plan_requests(&server.take_log()).len());
    }
    assert_eq!(per_poll, [32, 32, 32, 4, 0], "oldest first, 32 a poll");
    let want = sql_plan_obs(&serde_json::from_value::<ExecutionPlan>(recorded_plan(7)).unwrap())
        .unwrap()
        .plan;
    rec.with(|c| {
        assert_eq!(c.plans.len(), 100);
        let (app, seven) = c.plans.iter().find(|(_, o)| o.execution_id == 7).unwrap();
        assert_eq!(app, "app-gen");
        assert_eq!(seven.plan, want);
        assert_eq!(want.joins[1], 1, "the recorded plan has one SortMergeJoin");
        assert_eq!((want.skew_joins, want.aqe), (1, [4, 1, 2]));
    });
}

#[tokio::test]
async fn a_plan_spark_cannot_give_is_counted_and_skipped() {
    for (fault, kind) in [
        (FaultKind::Status500, "http_status"),
        (FaultKind::Garbage, "decode"),
        (FaultKind::Html, "decode"),
        (FaultKind::CloseMidBody, "body"),
    ] {
        let server = FakeSpark::start(vec![AppData::generated("app-f", 3)]).await;
        server.set_fault(fault, "details=true");
        let rec = Arc::new(Recorder::default());
        let mut p = poller_all(&server, &rec);
        p.poll()
            .await
            .unwrap_or_else(|e| panic!("{fault:?} failed the poll: {e}"));
        assert_eq!(plan_requests(&server.take_log()), [0, 1, 2], "{fault:?}");
        let errors = rec.telemetry.snapshot().scrape_errors;
        assert_eq!(
            errors.get(&(server.url.clone(), kind.to_string())),
            Some(&3),
            "{fault:?}: {errors:?}"
        );
        assert!(rec.with(|c| c.plans.is_empty()));
        // Skipped for good: not asked again.
        server.clear_fault();
        p.poll().await.unwrap();
        assert!(plan_requests(&server.take_log()).is_empty(), "{fault:?}");
    }
}

#[tokio::test]
async fn a_first_read_takes_only_recent_plans_then_every_new_one() {
    // Ended long ago: no plan on the first read (as no task summary).
    let mut app = AppData::generated("app-old", 5);
    let server = FakeSpark::start(vec![app.clone()]).await;
    let rec = Arc::new(Recorder::default());
    let mut p = poller(&server, &rec);
    p.poll().await.unwrap();
    assert!(plan_requests(&server.take_log()).is_empty());
    // The running one (5) ends and a new one (6) appears ended: both read, once.
    app.sql[5]["status"] = "COMPLETED".into();
    let mut six = app.sql[5].clone();
    six["id"] = 6.into();
    app.sql.push(six);
    server.set_apps(vec![app]);
    p.poll().await.unwrap();
    assert_eq!(plan_requests(&server.take_log()), [5, 6]);
    p.poll().await.unwrap();
    assert!(plan_requests(&server.take_log()).is_empty());
}
