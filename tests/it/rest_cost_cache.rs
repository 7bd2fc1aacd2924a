//! The REST reads behind the cost and cache metrics, against the fake Spark server replaying the
//! recorded Spark 4.1.1 application: `/environment` is read once per application and its
//! `spark.task.cpus` scales the core-seconds used; `/storage/rdd` gives the cached datasets at
//! every poll, and a dataset it stops listing loses its series. Neither endpoint can fail a
//! poll: a 404 (a server without it), an error status or a bad body is logged and counted, and
//! every other metric is still read.

use crate::support;

use std::sync::Arc;

use serde_json::json;
use spark_exporter::export::families::{collect, Family};
use spark_exporter::model::{Model, ModelObserver};
use spark_exporter::sources::rest::TargetPoller;
use spark_exporter::telemetry::Telemetry;
use support::rest::*;

fn model_poller(server: &FakeSpark) -> (Arc<Model>, TargetPoller<ModelObserver>, Arc<Telemetry>) {
    let s = settings(&[&server.url]);
    let t = Arc::new(Telemetry::default());
    let m = Model::new(&s, t.clone());
    let p = TargetPoller::new(
        &server.url,
        &s,
        Arc::new(m.observer(spark_exporter::sources::source("rest"))),
        t.clone(),
    )
    .unwrap();
    (m, p, t)
}

/// Values of `name` whose labels include all of `want`.
fn vals(f: &[Family], name: &str, want: &[(&str, &str)]) -> Vec<f64> {
    f.iter()
        .filter(|x| x.name == name)
        .flat_map(|x| &x.samples)
        .filter(|s| want.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| s.value.as_f64())
        .collect()
}

fn storage(id: u64, cached: u64, memory: u64) -> serde_json::Value {
    json!([{
        "id": id,
        "name": "In-memory table orders",
        "numPartitions": 4,
        "numCachedPartitions": cached,
        "storageLevel": "Memory Deserialized 1x Replicated",
        "memoryUsed": memory,
        "diskUsed": 0
    }])
}

#[tokio::test]
async fn task_cpus_and_cached_datasets_are_read_from_rest() {
    let mut app = AppData::snapshot(9);
    app.raw.insert(
        "environment".into(),
        json!({"runtime": {}, "sparkProperties": [["spark.master", "local[2,2]"], ["spark.task.cpus", "2"]],
               "hadoopProperties": [], "systemProperties": [], "classpathEntries": []}),
    );
    app.raw.insert("storage/rdd".into(), storage(7, 3, 4096));
    let server = FakeSpark::start(vec![app.clone()]).await;
    let (m, mut p, _) = model_poller(&server);
    p.poll().await.unwrap();
    p.poll().await.unwrap();
    let log = server.take_log();
    let count = |p: &str| log.iter().filter(|l| l.ends_with(p)).count();
    assert_eq!((count("/environment"), count("/storage/rdd")), (1, 2));

    let f = collect(&m);
    let ds = [("rdd_id", "7"), ("rdd_name", "In-memory table orders")];
    assert_eq!(vals(&f, "spark_rdd_cached_fraction", &ds), [0.75]);
    assert_eq!(vals(&f, "spark_rdd_memory_bytes", &ds), [4096.0]);
    assert_eq!(vals(&f, "spark_rdd_disk_bytes", &ds), [0.0]);
    // Used core-seconds: Spark's executor run time of every stage × spark.task.cpus (2).
    let run_ms: u64 = app
        .stages
        .iter()
        .map(|s| s["executorRunTime"].as_u64().unwrap())
        .sum();
    let used: f64 = vals(&f, "spark_task_core_seconds_used", &[]).iter().sum();
    assert!(
        (used - 2.0 * run_ms as f64 / 1000.0).abs() < 1e-9,
        "{used} vs {run_ms} ms"
    );
    // Allocated: the local-mode driver, 2 cores, from its add time to now (still running).
    let alloc = vals(&f, "spark_executor_core_seconds_allocated", &[]);
    assert_eq!(alloc.len(), 1);
    assert!(alloc[0] > used, "{alloc:?} > {used}");

    // Unpersisted: Spark no longer lists it, its series go.
    server.with_apps(|a| {
        a[0].raw.insert("storage/rdd".into(), json!([]));
    });
    p.poll().await.unwrap();
    assert!(vals(&collect(&m), "spark_rdd_memory_bytes", &[]).is_empty());
}

#[tokio::test]
async fn bad_answers_of_the_optional_endpoints_never_fail_a_poll() {
    for (fault, kind) in [
        (FaultKind::Html, "decode"),
        (FaultKind::Garbage, "decode"),
        (FaultKind::Status500, "http_status"),
        (FaultKind::CloseMidBody, "body"),
    ] {
        for on in ["/environment", "/storage/rdd"] {
            let mut app = AppData::snapshot(9);
            app.raw.insert("storage/rdd".into(), storage(7, 4, 10));
            app.raw
                .insert("environment".into(), json!({"sparkProperties": []}));
            let server = FakeSpark::start(vec![app]).await;
            let (m, mut p, t) = model_poller(&server);
            server.set_fault(fault, on);
            for _ in 0..5 {
                p.poll()
                    .await
                    .unwrap_or_else(|e| panic!("{fault:?} on {on}: {e}"));
            }
            let snap = t.snapshot();
            assert_eq!(snap.up.get(&server.url), Some(&true), "{fault:?} on {on}");
            let errors = snap
                .scrape_errors
                .get(&(server.url.clone(), kind.to_string()))
                .copied();
            let log = server.take_log();
            let asked = log.iter().filter(|l| l.ends_with(on)).count() as u64;
            // `/environment` is given up after 3 tries; `/storage/rdd` is asked at every poll.
            let want = if on == "/environment" { 3 } else { 5 };
            assert_eq!((asked, errors), (want, Some(want)), "{fault:?} on {on}");
            // Everything else is still read.
            let f = collect(&m);
            assert!(!vals(&f, "spark_jobs", &[]).is_empty(), "{fault:?} on {on}");
            let cached = vals(&f, "spark_rdd_memory_bytes", &[]);
            assert_eq!(cached.is_empty(), on == "/storage/rdd", "{fault:?} on {on}");
        }
    }
}
