//! Cost and cached data on a real PySpark 4.1.1 `local-cluster[2,1,1024]` run
//! (`tests/data/diagnosis-4.1.1`, written by `scripts/diagnosis-fixture.sh`): three applications,
//! `diagnosis` (whose `cache` group caches a table with `cacheTable` and a DataFrame with
//! `persist()`, both still cached at the end), `diagnosis-idle` (one long task while the other
//! executor idles, then the driver alone) and its busy twin `diagnosis-busy` (both executors
//! busy); event logs with `spark.eventLog.logBlockUpdates.enabled`, and the REST answers the live
//! drivers served before they stopped. The driver of `local-cluster` runs no task (REST lists it
//! with 0 cores, the event log never adds it): only the two executors count.
//!
//! Each number is checked against Spark's own output, read here independently of the exporter:
//! - core-seconds allocated = Σ (removal, else the application's end, − add) × cores, from
//!   Spark's `allexecutors.json` and from the event log's executor events (both the same), for
//!   the exporter reading the event log and for the exporter polling the REST answers replayed;
//! - core-seconds used per job group = the stages' `executorRunTime` × `spark.task.cpus`
//!   (`stages.json`, `environment`);
//! - every cached dataset's fraction, memory and disk = `storage/rdd` in `raw.json`, from both
//!   sources;
//! - the application with an idle executor uses a much smaller share of its cores than its twin.
//!
//! `DIAGNOSIS_FIXTURE=DIR` runs the same checks on another run of the script.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use support::command::exporter_command;
use support::diagnosis::{app_end, app_id, apps, events, fixture, raw, replay, rest};
use support::exposition::{parse_exposition, Sample};

fn run_dump(source: &[&str]) -> Vec<Sample> {
    let mut args = vec!["dump", "--model.summary-level", "full"];
    args.extend_from_slice(source);
    let out = exporter_command(&args, Duration::from_secs(120));
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    parse_exposition(&out.stdout)
}

/// The exporter reading the event logs only.
fn dump_log() -> Vec<Sample> {
    let dir = fixture().join("eventlog");
    run_dump(&["--spark.url=", "--event-log", dir.to_str().expect("utf-8")])
}

/// The exporter polling the REST answers replayed, each application completed at its event
/// log's end (the answers were taken from the live drivers just before they stopped).
async fn dump_rest() -> Vec<Sample> {
    let server = replay().await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || run_dump(&["--spark.url", url.as_str()]))
        .await
        .expect("dump")
}

/// The one sample of `name` for application `app` with `with`.
fn one(got: &[Sample], name: &str, app: &str, with: &[(&str, &str)]) -> Option<f64> {
    let v: Vec<f64> = got
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == app)
        .filter(|s| with.iter().all(|(k, v)| s.label(k) == *v))
        .map(|s| s.value)
        .collect();
    assert!(v.len() <= 1, "{name} {app} {with:?}: {v:?}");
    v.first().copied()
}

/// Σ of `name` for application `app`, by the value of `label`.
fn by(got: &[Sample], name: &str, app: &str, label: &str) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for s in got
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == app)
    {
        *m.entry(s.label(label).to_string()).or_default() += s.value;
    }
    m
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// Core-milliseconds from Spark's `allexecutors.json`: executors with cores, from `addTime` to
/// `removeTime`, else to the application's `end`.
fn allocated_from_rest(app: &str, end: i64) -> i64 {
    let time = |v: &Value| {
        v.as_str().map(|s| {
            spark_exporter::sources::rest::convert::parse_time(s)
                .unwrap_or_else(|| panic!("time {s}"))
        })
    };
    rest(app, "allexecutors.json")
        .as_array()
        .expect("executors")
        .iter()
        .filter(|e| e["totalCores"].as_i64().unwrap_or(0) > 0)
        .map(|e| {
            let add = time(&e["addTime"]).expect("addTime");
            let until = time(&e["removeTime"]).unwrap_or(end).min(end);
            (until - add) * e["totalCores"].as_i64().unwrap()
        })
        .sum()
}

/// Core-milliseconds from the event log's `SparkListenerExecutorAdded` / `…Removed`.
fn allocated_from_log(events: &[Value]) -> i64 {
    let end = app_end(events);
    let mut added: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut removed: BTreeMap<String, i64> = BTreeMap::new();
    for e in events {
        let id = e["Executor ID"].as_str().unwrap_or("").to_string();
        match e["Event"].as_str() {
            Some("SparkListenerExecutorAdded") => {
                let cores = e["Executor Info"]["Total Cores"].as_i64().expect("cores");
                added.insert(id, (e["Timestamp"].as_i64().expect("time"), cores));
            }
            Some("SparkListenerExecutorRemoved") => {
                removed.insert(id, e["Timestamp"].as_i64().expect("time"));
            }
            _ => {}
        }
    }
    added
        .iter()
        .map(|(id, (add, cores))| (removed.get(id).copied().unwrap_or(end).min(end) - add) * cores)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_seconds_allocated_equal_spark_executor_lifetimes_from_both_sources() {
    let (log, rest_got) = (dump_log(), dump_rest().await);
    for app in &apps() {
        let ev = events(app);
        let end = app_end(&ev);
        let from_rest = allocated_from_rest(app, end);
        let from_log = allocated_from_log(&ev);
        assert_eq!(from_rest, from_log, "{app}: Spark's two records agree");
        assert!(from_rest > 0, "{app}");
        let want = from_rest as f64 / 1000.0;
        for (src, got) in [("event log", &log), ("REST", &rest_got)] {
            let v = one(got, "spark_executor_core_seconds_allocated_total", app, &[])
                .unwrap_or_else(|| panic!("{app} {src}: no allocation"));
            assert!(close(v, want), "{app} {src}: {v} != {want}");
        }
    }
}

/// `spark.task.cpus` of `app` as Spark's `/environment` says (1 when unset).
fn task_cpus(app: &str) -> f64 {
    raw(app, "environment")["sparkProperties"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p[0] == "spark.task.cpus")
        .and_then(|p| p[1].as_str()?.parse().ok())
        .unwrap_or(1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_seconds_used_per_group_equal_stage_run_time_times_task_cpus() {
    let (log, rest_got) = (dump_log(), dump_rest().await);
    for app in &apps() {
        // Spark's numbers: each stage's executorRunTime under its job's group.
        let mut group_of: BTreeMap<u64, String> = BTreeMap::new();
        for j in rest(app, "jobs.json").as_array().expect("jobs") {
            let g = j["jobGroup"].as_str().unwrap_or("").to_string();
            for s in j["stageIds"].as_array().into_iter().flatten() {
                group_of.insert(s.as_u64().expect("stage id"), g.clone());
            }
        }
        let cpus = task_cpus(app);
        let mut want: BTreeMap<String, f64> = BTreeMap::new();
        let mut total = 0.0;
        for s in rest(app, "stages.json").as_array().expect("stages") {
            let used = s["executorRunTime"].as_f64().unwrap_or(0.0) * cpus / 1000.0;
            total += used;
            let g = group_of.get(&s["stageId"].as_u64().expect("id")).cloned();
            if let Some(g) = g.filter(|g| !g.is_empty()) {
                *want.entry(g).or_default() += used;
            }
        }
        assert!(!want.is_empty(), "{app}: named groups ran");
        for (src, got) in [("event log", &log), ("REST", &rest_got)] {
            let have = by(got, "spark_task_core_seconds_used_total", app, "job_group");
            for (g, w) in &want {
                let h = have.get(g).copied().unwrap_or(-1.0);
                assert!(close(h, *w), "{app} {src} group {g}: {h} != {w}");
            }
            let sum: f64 = have.values().sum();
            assert!(close(sum, total), "{app} {src}: total {sum} != {total}");
            // Idle: allocated − used.
            let alloc = one(got, "spark_executor_core_seconds_allocated_total", app, &[]).unwrap();
            let idle = one(got, "spark_executor_idle_core_seconds", app, &[]).unwrap();
            assert!(
                close(idle, (alloc - sum).max(0.0)),
                "{app} {src}: idle {idle}"
            );
        }
    }
}

/// `(rdd_id, (name, fraction, memory, disk))` of every dataset Spark's `storage/rdd` lists.
fn storage(app: &str) -> BTreeMap<String, (String, f64, f64, f64)> {
    raw(app, "storage/rdd")
        .as_array()
        .expect("storage/rdd is recorded")
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_f64().unwrap_or(0.0);
            (
                r["id"].to_string(),
                (
                    r["name"].as_str().unwrap_or("").to_string(),
                    n("numCachedPartitions") / n("numPartitions"),
                    n("memoryUsed"),
                    n("diskUsed"),
                ),
            )
        })
        .collect()
}

/// The same from the event log read here: every RDD block's last state (memory when its level
/// uses memory, disk when it uses disk; a level with neither removes it), summed per RDD, for
/// the RDDs a stage computed as persisted and that were not unpersisted.
fn storage_from_log(events: &[Value]) -> BTreeMap<String, (f64, f64, f64)> {
    let mut persisted: BTreeMap<u64, f64> = BTreeMap::new();
    let mut blocks: BTreeMap<(u64, u64, String), (f64, f64)> = BTreeMap::new();
    let stored = |l: &Value| l["Use Memory"] == true || l["Use Disk"] == true;
    for e in events {
        match e["Event"].as_str() {
            Some("SparkListenerStageSubmitted") => {
                for r in e["Stage Info"]["RDD Info"].as_array().into_iter().flatten() {
                    if stored(&r["Storage Level"]) {
                        let id = r["RDD ID"].as_u64().expect("rdd id");
                        let parts = r["Number of Partitions"].as_f64().expect("partitions");
                        persisted.entry(id).or_insert(parts);
                    }
                }
            }
            Some("SparkListenerBlockUpdated") => {
                let i = &e["Block Updated Info"];
                let Some(rest) = i["Block ID"].as_str().and_then(|b| b.strip_prefix("rdd_")) else {
                    continue;
                };
                let (rdd, part) = rest.split_once('_').expect("rdd_<id>_<partition>");
                let key = (
                    rdd.parse().expect("rdd"),
                    part.parse().expect("partition"),
                    i["Block Manager ID"]["Executor ID"]
                        .as_str()
                        .expect("executor")
                        .to_string(),
                );
                if !persisted.contains_key(&key.0) {
                    continue;
                }
                let l = &i["Storage Level"];
                if stored(l) {
                    let m = if l["Use Memory"] == true {
                        i["Memory Size"].as_f64().unwrap()
                    } else {
                        0.0
                    };
                    let d = if l["Use Disk"] == true {
                        i["Disk Size"].as_f64().unwrap()
                    } else {
                        0.0
                    };
                    blocks.insert(key, (m, d));
                } else {
                    blocks.remove(&key);
                }
            }
            Some("SparkListenerUnpersistRDD") => {
                let id = e["RDD ID"].as_u64().expect("rdd id");
                persisted.remove(&id);
                blocks.retain(|k, _| k.0 != id);
            }
            _ => {}
        }
    }
    let mut out: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
    for (rdd, parts) in &persisted {
        let mine: Vec<_> = blocks.iter().filter(|(k, _)| k.0 == *rdd).collect();
        if mine.is_empty() {
            continue;
        }
        let cached: std::collections::BTreeSet<u64> = mine.iter().map(|(k, _)| k.1).collect();
        let m = mine.iter().map(|(_, v)| v.0).sum();
        let d = mine.iter().map(|(_, v)| v.1).sum();
        out.insert(rdd.to_string(), (cached.len() as f64 / parts, m, d));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_datasets_equal_spark_storage_from_both_sources() {
    let (log, rest_got) = (dump_log(), dump_rest().await);
    let main = app_id("diagnosis");
    let want = storage(&main);
    assert!(
        want.values()
            .any(|d| d.0 == "In-memory table cached_orders"),
        "the cached table is listed: {want:?}"
    );
    assert!(
        want.len() >= 2,
        "a table and a DataFrame are cached: {want:?}"
    );
    // Spark's two records of the same storage agree.
    let from_log = storage_from_log(&events(&main));
    let spark: BTreeMap<String, (f64, f64, f64)> = want
        .iter()
        .map(|(k, v)| (k.clone(), (v.1, v.2, v.3)))
        .collect();
    assert_eq!(
        from_log, spark,
        "the event log's blocks add up to storage/rdd"
    );
    for (src, got) in [("event log", &log), ("REST", &rest_got)] {
        for (id, (name, fraction, memory, disk)) in &want {
            let w = [("rdd_id", id.as_str())];
            let f = one(got, "spark_rdd_cached_fraction", &main, &w);
            let m = one(got, "spark_rdd_memory_bytes", &main, &w);
            let d = one(got, "spark_rdd_disk_bytes", &main, &w);
            assert_eq!(
                (f, m, d),
                (Some(*fraction), Some(*memory), Some(*disk)),
                "{src} rdd {id} ({name:?})"
            );
            // A short readable name: the first line, capped.
            let label = got
                .iter()
                .find(|s| s.name == "spark_rdd_memory_bytes" && s.label("rdd_id") == id)
                .map(|s| s.label("rdd_name").to_string())
                .unwrap_or_default();
            let first = name.lines().next().unwrap_or("").trim();
            assert!(
                !label.contains('\n') && label.chars().count() <= 128,
                "{src}: {label:?}"
            );
            assert!(
                first.starts_with(label.trim_end_matches('…')),
                "{src}: {label:?} is not the start of {first:?}"
            );
        }
        let n = got
            .iter()
            .filter(|s| s.name == "spark_rdd_memory_bytes" && s.label("app_id") == main)
            .count();
        assert_eq!(n, want.len(), "{src}: one series per cached dataset");
    }
}

#[test]
fn the_app_with_an_idle_executor_uses_a_much_smaller_share_of_its_cores() {
    let got = dump_log();
    let (idle, busy) = (app_id("diagnosis-idle"), app_id("diagnosis-busy"));
    let share = |app: &str| {
        let used: f64 = by(&got, "spark_task_core_seconds_used_total", app, "app_id")
            .values()
            .sum();
        let alloc = one(
            &got,
            "spark_executor_core_seconds_allocated_total",
            app,
            &[],
        )
        .unwrap();
        used / alloc
    };
    let (i, b) = (share(&idle), share(&busy));
    eprintln!("core utilisation: diagnosis-idle {i:.3}, diagnosis-busy {b:.3}");
    assert!(i > 0.0 && b <= 1.0, "{i} {b}");
    assert!(
        i < 0.6 * b,
        "diagnosis-idle {i:.3} vs diagnosis-busy {b:.3}"
    );
}

/// Without `spark.eventLog.logBlockUpdates.enabled` the log says which RDDs are persisted but
/// not what is cached: no dataset shows from it (docs/internals.md says so), while the cost is the
/// same.
#[test]
fn without_block_updates_the_event_log_shows_no_cached_data() {
    let main = app_id("diagnosis");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = String::new();
    for e in events(&main) {
        if e["Event"] != "SparkListenerBlockUpdated" {
            text.push_str(&e.to_string());
            text.push('\n');
        }
    }
    std::fs::write(dir.path().join(&main), text).expect("write the log");
    let got = run_dump(&[
        "--spark.url=",
        "--event-log",
        dir.path().to_str().expect("utf-8"),
    ]);
    assert!(
        !got.iter().any(|s| s.name.starts_with("spark_rdd_")),
        "no cached data without block updates"
    );
    let alloc = one(
        &got,
        "spark_executor_core_seconds_allocated_total",
        &main,
        &[],
    );
    let want = allocated_from_log(&events(&main)) as f64 / 1000.0;
    assert!(alloc.is_some_and(|a| close(a, want)), "{alloc:?} != {want}");
}
