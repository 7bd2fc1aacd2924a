//! Memory held and money on the real PySpark 4.1.1 `local-cluster[2,1,1024]` run
//! (`tests/data/diagnosis-4.1.1`): each number checked against what this test computes itself
//! from Spark's own records, read independently of the exporter:
//! - GiB-seconds of executor memory = Σ over executors with cores of (removal, else the
//!   application's end, − add) × the MiB of their resource profile
//!   (`SparkListenerResourceProfileAdded`: heap + `memoryOverhead`, else Spark's rule max(384,
//!   0.10 × heap), + `offHeap`) / 1024, from the event log's JSON; the exporter reading the event
//!   log and the exporter polling the REST answers replayed (`/environment`
//!   `resourceProfiles`, `/allexecutors` `resourceProfileId`) give it;
//! - `spark_app_cost_total` = core-seconds × `core_hour` / 3600 and GiB-seconds × `gib_hour` /
//!   3600, absent without prices; a `cost.property` value picks its entry;
//! - a price added from after an application's end changes none of its money;
//! - `spark_diagnosis_cost_total` = `spark_diagnosis_cost_seconds_total` × `spark.task.cpus` ×
//!   `core_hour` / 3600.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use support::command::exporter_command;
use support::diagnosis::{app_end, apps, events, fixture, replay};
use support::exposition::{parse_exposition, Sample};

const CORE_HOUR: f64 = 0.048;
const GIB_HOUR: f64 = 0.0061;

/// The prices of these tests (JSON, as a flag takes them).
fn prices(extra: &str) -> String {
    format!(r#"--cost.prices=[{{"core_hour": {CORE_HOUR}, "gib_hour": {GIB_HOUR}}}{extra}]"#)
}

fn run_dump(args: &[&str]) -> Vec<Sample> {
    let mut all = vec!["dump", "--model.summary-level", "full"];
    all.extend_from_slice(args);
    let out = exporter_command(&all, Duration::from_secs(120));
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    parse_exposition(&out.stdout)
}

/// The exporter reading the event logs only, with `args`.
fn dump_log(args: &[&str]) -> Vec<Sample> {
    let dir = fixture().join("eventlog");
    let mut all = vec!["--spark.url=", "--event-log", dir.to_str().expect("utf-8")];
    all.extend_from_slice(args);
    run_dump(&all)
}

/// The exporter polling the REST answers replayed, with `args`.
async fn dump_rest(args: &[&str]) -> Vec<Sample> {
    let server = replay().await;
    let mut all: Vec<String> = vec!["--spark.url".into(), server.url.clone()];
    all.extend(args.iter().map(|a| a.to_string()));
    tokio::task::spawn_blocking(move || {
        run_dump(&all.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("dump")
}

/// The samples of `name` for application `app` with `with`.
fn all(got: &[Sample], name: &str, app: &str, with: &[(&str, &str)]) -> Vec<f64> {
    got.iter()
        .filter(|s| s.name == name && s.label("app_id") == app)
        .filter(|s| with.iter().all(|(k, v)| s.label(k) == *v))
        .map(|s| s.value)
        .collect()
}

/// The one sample of `name` for application `app` with `with`.
fn one(got: &[Sample], name: &str, app: &str, with: &[(&str, &str)]) -> f64 {
    let v = all(got, name, app, with);
    assert_eq!(v.len(), 1, "{name} {app} {with:?}: {v:?}");
    v[0]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-9)
}

/// MiB an executor of each resource profile holds, from the log's
/// `SparkListenerResourceProfileAdded` and `spark.executor.*` properties, by Spark's rule.
fn profile_mib(events: &[Value]) -> BTreeMap<i64, i64> {
    let env = events
        .iter()
        .find(|e| e["Event"] == "SparkListenerEnvironmentUpdate")
        .expect("environment");
    let master = env["Spark Properties"]["spark.master"]
        .as_str()
        .unwrap_or("");
    assert!(
        master.starts_with("local-cluster"),
        "{master}: executors of their own"
    );
    for k in [
        "spark.executor.memoryOverheadFactor",
        "spark.executor.minMemoryOverhead",
    ] {
        assert!(
            env["Spark Properties"][k].is_null(),
            "{k} is Spark's default here"
        );
    }
    let mut out = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["Event"] == "SparkListenerResourceProfileAdded")
    {
        let r = &e["Executor Resource Requests"];
        let amount = |k: &str| r[k]["Amount"].as_i64();
        let heap = amount("memory").expect("heap");
        let overhead = amount("memoryOverhead").unwrap_or(((heap as f64 * 0.10) as i64).max(384));
        let id = e["Resource Profile Id"].as_i64().expect("id");
        out.insert(id, heap + overhead + amount("offHeap").unwrap_or(0));
    }
    out
}

/// (core-ms, MiB-ms) from the event log's executor events and profiles.
fn held_from_log(events: &[Value]) -> (i64, i64) {
    let end = app_end(events);
    let mib = profile_mib(events);
    let mut added: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    let mut removed: BTreeMap<String, i64> = BTreeMap::new();
    for e in events {
        let id = e["Executor ID"].as_str().unwrap_or("").to_string();
        match e["Event"].as_str() {
            Some("SparkListenerExecutorAdded") => {
                let info = &e["Executor Info"];
                let cores = info["Total Cores"].as_i64().expect("cores");
                let profile = info["Resource Profile Id"].as_i64().expect("profile");
                let time = e["Timestamp"].as_i64().expect("time");
                added.insert(id, (time, cores, mib[&profile]));
            }
            Some("SparkListenerExecutorRemoved") => {
                removed.insert(id, e["Timestamp"].as_i64().expect("time"));
            }
            _ => {}
        }
    }
    let (mut core_ms, mut mib_ms) = (0, 0);
    for (id, (add, cores, mib)) in &added {
        let ms = removed.get(id).copied().unwrap_or(end).min(end) - add;
        core_ms += ms * cores;
        mib_ms += ms * mib;
    }
    (core_ms, mib_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_gib_seconds_equal_the_logs_profiles_times_lifetimes_from_both_sources() {
    let (log, rest) = (dump_log(&[]), dump_rest(&[]).await);
    for app in &apps() {
        let ev = events(app);
        assert_eq!(profile_mib(&ev), BTreeMap::from([(0, 512 + 384)]), "{app}");
        let (core_ms, mib_ms) = held_from_log(&ev);
        assert!(mib_ms > 0, "{app}");
        let want = mib_ms as f64 / 1024.0 / 1000.0;
        for (src, got) in [("event log", &log), ("REST", &rest)] {
            let v = one(
                got,
                "spark_executor_memory_gib_seconds_allocated_total",
                app,
                &[],
            );
            assert!(close(v, want), "{app} {src}: {v} != {want}");
            let c = one(got, "spark_executor_core_seconds_allocated_total", app, &[]);
            assert!(close(c, core_ms as f64 / 1000.0), "{app} {src}: {c}");
            // No prices: no money.
            for f in ["spark_app_cost_total", "spark_diagnosis_cost_total"] {
                assert!(
                    all(got, f, app, &[]).is_empty(),
                    "{app} {src}: {f} without prices"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn money_is_core_and_gib_seconds_times_the_prices_from_both_sources() {
    let p = prices("");
    let args = ["--cost.currency", "EUR", p.as_str()];
    let (log, rest) = (dump_log(&args), dump_rest(&args).await);
    let mut findings = BTreeMap::new();
    for app in &apps() {
        for (src, got) in [("event log", &log), ("REST", &rest)] {
            let cores = one(got, "spark_executor_core_seconds_allocated_total", app, &[]);
            let gib = one(
                got,
                "spark_executor_memory_gib_seconds_allocated_total",
                app,
                &[],
            );
            let eur = [("currency", "EUR")];
            let money = |r: &str| one(got, "spark_app_cost_total", app, &[eur[0], ("resource", r)]);
            let (c, m) = (money("cores"), money("memory"));
            assert!(close(c, cores * CORE_HOUR / 3600.0), "{app} {src}: {c}");
            assert!(close(m, gib * GIB_HOUR / 3600.0), "{app} {src}: {m}");
            // Every final finding's money: its seconds × spark.task.cpus (1 here) × the
            // core-hour price.
            let secs: Vec<&Sample> = got
                .iter()
                .filter(|s| s.name == "spark_diagnosis_cost_seconds_total")
                .filter(|s| s.label("app_id") == app)
                .collect();
            *findings.entry(src).or_insert(0) += secs.len();
            for s in secs {
                let with = [
                    ("kind", s.label("kind")),
                    ("job_group", s.label("job_group")),
                    ("job_description", s.label("job_description")),
                    ("currency", "EUR"),
                ];
                let v = one(got, "spark_diagnosis_cost_total", app, &with);
                assert!(
                    close(v, s.value * CORE_HOUR / 3600.0),
                    "{app} {src} {with:?}: {v}"
                );
            }
        }
    }
    assert!(
        findings.values().all(|n| *n > 0),
        "findings from both: {findings:?}"
    );
}

#[test]
fn a_price_added_after_the_end_changes_nothing_and_a_property_value_picks_its_price() {
    let base = prices("");
    let before = dump_log(&["--cost.currency", "EUR", base.as_str()]);
    // A new price from after every application's end, ten times lower: nothing counted falls.
    let last_end = apps().iter().map(|a| app_end(&events(a))).max().unwrap();
    let since = humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + Duration::from_millis(last_end as u64 + 1_000),
    );
    let later = prices(&format!(
        r#", {{"core_hour": 0.0048, "gib_hour": 0.00061, "since": "{since}"}}"#
    ));
    let after = dump_log(&["--cost.currency", "EUR", later.as_str()]);
    // Per application, cores set a property value to pick.
    let by_master =
        prices(r#", {"core_hour": 4.8, "gib_hour": 0.61, "value": "local-cluster[2,1,1024]"}"#);
    let picked = dump_log(&[
        "--cost.currency",
        "EUR",
        "--cost.property",
        "spark.master",
        by_master.as_str(),
    ]);
    for app in &apps() {
        for r in ["cores", "memory"] {
            let with = [("currency", "EUR"), ("resource", r)];
            let (b, a) = (
                one(&before, "spark_app_cost_total", app, &with),
                one(&after, "spark_app_cost_total", app, &with),
            );
            assert!(b > 0.0 && b == a, "{app} {r}: {b} then {a}");
            let p = one(&picked, "spark_app_cost_total", app, &with);
            assert!(
                close(p, b * 100.0),
                "{app} {r}: the value's price, 100 times: {p} {b}"
            );
        }
    }
}
