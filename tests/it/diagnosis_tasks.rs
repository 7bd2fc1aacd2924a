//! Tasks and stages for a diagnosis (issue 18), checked against Spark's own output: per job
//! group, the `spark_stage_skew_ratio` histogram's observations, task counts by locality, and
//! the sums of scheduler delay, deserialization time, shuffle fetch wait and peak execution
//! memory.
//!
//! The truth comes from Spark, read independently of the exporter: the event log parsed here
//! with serde_json (task ends' durations, locality and metrics; the stage completions), and for
//! `tests/data/diagnosis-4.1.1` (a real PySpark 4.1.1 `local-cluster` run, made by
//! `scripts/diagnosis-fixture.sh`) Spark's REST answers recorded from the live driver: every
//! stage attempt's `taskSummary?quantiles=0.5,1.0` (`raw.json`), the task lists of
//! `stages?details=true` (each task's `duration`, `taskLocality`, `schedulerDelay`) and the
//! stage totals of `stages.json`. The exporter reads the event log (`dump`), and the REST
//! answers replayed by a fake Spark server (the real poller into the real model).

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use spark_exporter::model::skew::SKEW_BOUNDS;
use support::command::exporter_command;
use support::exposition::{parse_exposition, Sample};
use support::rest::{AppData, FakeSpark};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `(app_id, job_group)`.
type Key = (String, String);

/// What Spark says, per application and job group.
#[derive(Debug, Default)]
struct Truth {
    /// Skew ratios of complete stage attempts, by `(app, group)`; per stage, for the
    /// cross-checks.
    ratios: BTreeMap<Key, Vec<f64>>,
    stage_ratios: BTreeMap<(String, u64, u64), Option<f64>>,
    /// Tasks by `(app, group, locality)`.
    locality: BTreeMap<(String, String, String), u64>,
    /// Sums by `(app, group)`: ms, ms, bytes, ms.
    deserialize_ms: BTreeMap<Key, u64>,
    fetch_wait_ms: BTreeMap<Key, u64>,
    peak_bytes: BTreeMap<Key, u64>,
    scheduler_delay_ms: BTreeMap<Key, u64>,
}

/// Longest / median with `taskSummary`'s quantiles: sorted, index `min(floor(q n), n - 1)`.
fn ratio_of(mut d: Vec<u64>) -> Option<f64> {
    d.sort_unstable();
    let n = d.len();
    if n == 0 {
        return None;
    }
    let median = d[((0.5 * n as f64) as usize).min(n - 1)];
    let max = d[((1.0 * n as f64) as usize).min(n - 1)];
    (median > 0).then(|| max as f64 / median as f64)
}

/// Every event of the event logs under `dir` (rolling `eventlog_v2_*` folders of zstd parts, or
/// single files), by application in part order.
fn events(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = vec![];
    for e in std::fs::read_dir(dir).expect("event-log dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(support::eventlog::rolling_parts(&p));
        } else {
            files.push(p);
        }
    }
    support::eventlog::read_events(&files)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Spark's numbers from its event logs under `dir`, parsed here: groups of stages from the job
/// starts (the first job listing a stage), ratios from the successful task ends of each stage
/// attempt the log reports complete, locality and sums from every task end.
fn truth_from_log(dir: &Path) -> Truth {
    let mut t = Truth::default();
    let mut app = String::new();
    let mut stage_group: BTreeMap<(String, u64), String> = BTreeMap::new();
    let mut durations: BTreeMap<(String, u64, u64), Vec<u64>> = BTreeMap::new();
    for e in events(dir) {
        match e["Event"].as_str().unwrap_or("") {
            "SparkListenerApplicationStart" => {
                app = e["App ID"].as_str().expect("app id").to_string();
            }
            "SparkListenerJobStart" => {
                let g = e["Properties"]["spark.jobGroup.id"].as_str().unwrap_or("");
                for s in e["Stage IDs"].as_array().expect("stage ids") {
                    stage_group
                        .entry((app.clone(), u(s)))
                        .or_insert_with(|| g.to_string());
                }
            }
            "SparkListenerTaskEnd" => {
                let (sid, att) = (u(&e["Stage ID"]), u(&e["Stage Attempt ID"]));
                let info = &e["Task Info"];
                let g = stage_group[&(app.clone(), sid)].clone();
                let key = (app.clone(), g.clone());
                let loc = info["Locality"].as_str().unwrap_or("").to_string();
                *t.locality.entry((app.clone(), g, loc)).or_default() += 1;
                let launch = info["Launch Time"].as_i64().expect("launch");
                let finish = info["Finish Time"].as_i64().expect("finish");
                let ok = e["Task End Reason"]["Reason"] == "Success"
                    && info["Failed"] == false
                    && info["Killed"] == false;
                if ok {
                    durations
                        .entry((app.clone(), sid, att))
                        .or_default()
                        .push((finish - launch) as u64);
                }
                let m = &e["Task Metrics"];
                if m.is_object() {
                    let deser = u(&m["Executor Deserialize Time"]);
                    *t.deserialize_ms.entry(key.clone()).or_default() += deser;
                    *t.fetch_wait_ms.entry(key.clone()).or_default() +=
                        u(&m["Shuffle Read Metrics"]["Fetch Wait Time"]);
                    *t.peak_bytes.entry(key.clone()).or_default() += u(&m["Peak Execution Memory"]);
                    // AppStatusUtils.schedulerDelay.
                    let fetch_start = info["Getting Result Time"].as_i64().unwrap_or(0);
                    let getting = if fetch_start > 0 {
                        finish - fetch_start
                    } else {
                        0
                    };
                    let delay = (finish - launch)
                        - u(&m["Executor Run Time"]) as i64
                        - deser as i64
                        - u(&m["Result Serialization Time"]) as i64
                        - getting;
                    *t.scheduler_delay_ms.entry(key).or_default() += delay.max(0) as u64;
                }
            }
            "SparkListenerStageCompleted" => {
                let i = &e["Stage Info"];
                let (sid, att) = (u(&i["Stage ID"]), u(&i["Stage Attempt ID"]));
                if i.get("Failure Reason").is_some_and(|f| !f.is_null()) {
                    continue;
                }
                let d = durations
                    .remove(&(app.clone(), sid, att))
                    .unwrap_or_default();
                let r = ratio_of(d);
                let g = stage_group[&(app.clone(), sid)].clone();
                t.stage_ratios.insert((app.clone(), sid, att), r);
                let list = t.ratios.entry((app.clone(), g)).or_default();
                list.extend(r);
            }
            _ => {}
        }
    }
    t
}

/// The groups Spark's jobs named (`setJobGroup`): the ones compared.
fn named(k: &Key) -> bool {
    !k.1.is_empty()
}

/// `name`'s samples summed by `(app_id, job_group)` (over descriptions), and over the extra
/// label `by` when given.
fn by_group(
    got: &[Sample],
    name: &str,
    by: Option<&str>,
) -> BTreeMap<(String, String, String), f64> {
    let mut out = BTreeMap::new();
    for s in got.iter().filter(|s| s.name == name) {
        let k = (
            s.label("app_id").to_string(),
            s.label("job_group").to_string(),
            by.map(|b| s.label(b).to_string()).unwrap_or_default(),
        );
        *out.entry(k).or_default() += s.value;
    }
    out
}

/// The exporter's skew histogram of every named group equals `ratios`: count, sum, every bucket.
fn check_skew(got: &[Sample], ratios: &BTreeMap<Key, Vec<f64>>, what: &str) {
    let count = by_group(got, "spark_stage_skew_ratio_count", None);
    let sum = by_group(got, "spark_stage_skew_ratio_sum", None);
    let buckets = by_group(got, "spark_stage_skew_ratio_bucket", Some("le"));
    let mut checked = 0;
    for ((app, g), want) in ratios.iter().filter(|(k, _)| named(k)) {
        let k = (app.clone(), g.clone(), String::new());
        assert_eq!(
            count.get(&k).copied(),
            Some(want.len() as f64),
            "{what}: {app} {g} count"
        );
        let s: f64 = want.iter().sum();
        let gs = sum.get(&k).copied().unwrap_or(f64::NAN);
        assert!(
            (gs - s).abs() <= 1e-9 * s.max(1.0),
            "{what}: {app} {g} sum {gs} != {s}"
        );
        for le in SKEW_BOUNDS.iter().copied().chain([f64::INFINITY]) {
            let label = if le.is_infinite() {
                "+Inf".to_string()
            } else {
                format!("{le:?}")
            };
            let n = want.iter().filter(|r| **r <= le).count() as f64;
            let b = buckets.get(&(app.clone(), g.clone(), label.clone()));
            assert_eq!(b.copied(), Some(n), "{what}: {app} {g} le={label}");
        }
        checked += 1;
    }
    assert!(checked > 0, "{what}: no named group compared");
}

/// Locality counts and the four sums of every named group in `got` equal `t`'s.
fn check_tasks(got: &[Sample], t: &Truth, what: &str, log: bool) {
    let loc = by_group(got, "spark_task_locality_total", Some("locality"));
    if !log {
        assert!(loc.is_empty(), "{what}: no locality without event logs");
    }
    let log_locality = t.locality.iter().filter(|_| log);
    for ((app, g, l), n) in log_locality.filter(|((_, g, _), _)| !g.is_empty()) {
        let k = (app.clone(), g.clone(), l.clone());
        assert_eq!(
            loc.get(&k).copied(),
            Some(*n as f64),
            "{what}: {app} {g} {l}"
        );
    }
    let sums: [(&str, &BTreeMap<Key, u64>, f64); 4] = [
        (
            "spark_task_deserialize_time_seconds_total",
            &t.deserialize_ms,
            1000.0,
        ),
        (
            "spark_task_shuffle_fetch_wait_seconds_total",
            &t.fetch_wait_ms,
            1000.0,
        ),
        (
            "spark_task_peak_execution_memory_bytes_total",
            &t.peak_bytes,
            1.0,
        ),
        (
            "spark_task_scheduler_delay_seconds_total",
            &t.scheduler_delay_ms,
            1000.0,
        ),
    ];
    for (name, want, scale) in sums {
        if !log && name.contains("scheduler_delay") {
            // Event logs only: no series over REST alone.
            assert!(by_group(got, name, None).is_empty(), "{what}: {name}");
            continue;
        }
        let have = by_group(got, name, None);
        for ((app, g), v) in want.iter().filter(|(k, _)| named(k)) {
            let k = (app.clone(), g.clone(), String::new());
            let h = have.get(&k).copied().unwrap_or(f64::NAN) * scale;
            assert!(
                (h - *v as f64).abs() < 1e-6,
                "{what}: {name} {app} {g}: {h} != {v}"
            );
        }
    }
}

fn dump_log(dir: &Path) -> Vec<Sample> {
    let d = dir.to_str().expect("utf-8");
    let args = [
        "dump",
        "--model.summary-level",
        "full",
        "--spark.url=",
        "--event-log",
        d,
    ];
    let out = exporter_command(&args, Duration::from_secs(120));
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    parse_exposition(&out.stdout)
}

#[test]
fn basic_event_log_skew_locality_and_sums_match_an_independent_parse() {
    let dir = root().join("tests/data/spark-4.1.1-basic/eventlog");
    let t = truth_from_log(&dir);
    let got = dump_log(&dir);
    check_skew(&got, &t.ratios, "basic event log");
    check_tasks(&got, &t, "basic event log", true);
    // The fixture's skewed aggregation is the one stage far above even.
    let skewed = t
        .ratios
        .iter()
        .find(|(k, _)| k.1 == "skewed_join")
        .expect("skewed_join");
    assert!(skewed.1.iter().any(|r| *r > 10.0), "{skewed:?}");
}

/// The diagnosis fixture (`scripts/diagnosis-fixture.sh`), or `DIAGNOSIS_FIXTURE=DIR`: another
/// run of the script (the end-to-end test passes its own).
fn diagnosis() -> PathBuf {
    let d = match std::env::var_os("DIAGNOSIS_FIXTURE") {
        Some(d) => PathBuf::from(d),
        None => root().join("tests/data/diagnosis-4.1.1"),
    };
    assert!(d.exists(), "{} missing", d.display());
    d
}

fn read(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .expect("json")
}

/// Spark's REST answers of every application of the diagnosis fixture: `rest/<app_id>/`.
fn rest_dirs() -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(diagnosis().join("rest"))
        .expect("rest dir")
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().to_string(), e.path()))
        .collect();
    v.sort();
    v
}

/// Spark's numbers from its REST answers: groups from `jobs.json`, ratios from the recorded
/// final task summaries (`raw.json`) of complete stages, locality and scheduler delay from the
/// task lists (`stages__details-true.json`), the other sums from `stages.json`'s totals.
fn truth_from_rest() -> Truth {
    let mut t = Truth::default();
    for (app, dir) in rest_dirs() {
        let mut group: BTreeMap<u64, String> = BTreeMap::new();
        let mut jobs: Vec<Value> = read(&dir.join("jobs.json"))
            .as_array()
            .cloned()
            .unwrap_or_default();
        jobs.sort_by_key(|j| u(&j["jobId"]));
        for j in &jobs {
            for s in j["stageIds"].as_array().into_iter().flatten() {
                let g = j["jobGroup"].as_str().unwrap_or("").to_string();
                group.entry(u(s)).or_insert(g);
            }
        }
        let raw = read(&dir.join("raw.json"));
        for s in read(&dir.join("stages.json")).as_array().expect("stages") {
            let (sid, att) = (u(&s["stageId"]), u(&s["attemptId"]));
            let g = group.get(&sid).cloned().unwrap_or_default();
            let key = (app.clone(), g.clone());
            *t.deserialize_ms.entry(key.clone()).or_default() += u(&s["executorDeserializeTime"]);
            *t.fetch_wait_ms.entry(key.clone()).or_default() += u(&s["shuffleFetchWaitTime"]);
            *t.peak_bytes.entry(key.clone()).or_default() += u(&s["peakExecutionMemory"]);
            if s["status"] != "COMPLETE" {
                continue;
            }
            let sum = &raw[format!("stages/{sid}/{att}/taskSummary")];
            let d = &sum["duration"];
            assert_eq!(
                sum["quantiles"],
                serde_json::json!([0.5, 1.0]),
                "{app} stage {sid}.{att}"
            );
            let (median, max) = (d[0].as_f64().expect("median"), d[1].as_f64().expect("max"));
            let r = (median > 0.0).then(|| max / median);
            t.stage_ratios.insert((app.clone(), sid, att), r);
            t.ratios.entry(key).or_default().extend(r);
        }
        for s in read(&dir.join("stages__details-true.json"))
            .as_array()
            .expect("stages")
        {
            let g = group.get(&u(&s["stageId"])).cloned().unwrap_or_default();
            for task in s["tasks"].as_object().into_iter().flat_map(|m| m.values()) {
                let loc = task["taskLocality"].as_str().unwrap_or("").to_string();
                *t.locality.entry((app.clone(), g.clone(), loc)).or_default() += 1;
                *t.scheduler_delay_ms
                    .entry((app.clone(), g.clone()))
                    .or_default() += u(&task["schedulerDelay"]);
            }
        }
    }
    t
}

/// The ratios of the successful tasks' durations in the task lists, per stage attempt: what
/// the summary says, worked out from the tasks themselves.
fn ratios_from_task_lists() -> BTreeMap<(String, u64, u64), Option<f64>> {
    let mut out = BTreeMap::new();
    for (app, dir) in rest_dirs() {
        for s in read(&dir.join("stages__details-true.json"))
            .as_array()
            .expect("stages")
        {
            if s["status"] != "COMPLETE" {
                continue;
            }
            let d: Vec<u64> = s["tasks"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.values())
                .filter(|t| t["status"] == "SUCCESS")
                .map(|t| u(&t["duration"]))
                .collect();
            out.insert(
                (app.clone(), u(&s["stageId"]), u(&s["attemptId"])),
                ratio_of(d),
            );
        }
    }
    out
}

#[test]
fn diagnosis_spark_agrees_with_itself_on_every_stage_ratio() {
    // The same ratio three ways: Spark's taskSummary, its task lists, its event log.
    let rest = truth_from_rest();
    let lists = ratios_from_task_lists();
    let log = truth_from_log(&diagnosis().join("eventlog"));
    assert_eq!(rest.stage_ratios, lists, "taskSummary vs task lists");
    assert_eq!(
        rest.stage_ratios, log.stage_ratios,
        "taskSummary vs event log"
    );
    assert_eq!(rest.locality, log.locality, "task lists vs event log");
}

#[test]
fn diagnosis_event_log_matches_spark() {
    let rest = truth_from_rest();
    let got = dump_log(&diagnosis().join("eventlog"));
    check_skew(&got, &rest.ratios, "event log vs REST truth");
    check_tasks(&got, &rest, "event log vs REST truth", true);
    check_skewed_against_balanced(&got);
}

/// Which sources feed the model, in order.
#[derive(Clone, Copy, PartialEq)]
enum Sources {
    Rest,
    RestThenLog,
    LogThenRest,
}

/// The exporter polling Spark's recorded REST answers (a fake server) into the real model until
/// every ended stage's summary is read, with the event log read into the same model before or
/// after when `sources` says so; the exposition it renders then.
async fn replay(sources: Sources) -> Vec<Sample> {
    let apps: Vec<AppData> = rest_dirs()
        .iter()
        .map(|(_, d)| AppData::from_dir(d.to_str().expect("utf-8")))
        .collect();
    let server = FakeSpark::start(apps).await;
    let mut s = support::rest::settings(&[&server.url]);
    // The recording is older than any retention: take every ended stage's summary.
    s.model.stage_retention = Duration::from_secs(100 * 365 * 86_400);
    // The logs say the applications ended long ago: keep their detail, as `dump` is told to.
    s.model.summary_level = spark_exporter::config::SummaryLevel::Full;
    let s = Arc::new(s);
    let telemetry = Arc::new(spark_exporter::telemetry::Telemetry::default());
    let model = spark_exporter::model::Model::new(&s, telemetry.clone());
    let read_log = || {
        let (s, m, t) = (s.clone(), model.clone(), telemetry.clone());
        let dir = diagnosis().join("eventlog");
        move || {
            let observer = m.observer(spark_exporter::sources::source("event_log"));
            spark_exporter::sources::eventlog::ingest_paths(&[dir], &s, &observer, &t)
                .expect("read logs")
        }
    };
    if sources == Sources::LogThenRest {
        tokio::task::spawn_blocking(read_log()).await.expect("log");
    }
    let observer = Arc::new(model.observer(spark_exporter::sources::source("rest")));
    let mut p = spark_exporter::sources::rest::TargetPoller::new(
        &server.url,
        &s,
        observer,
        telemetry.clone(),
    )
    .expect("poller");
    for n in 0.. {
        p.poll().await.expect("poll");
        let summaries = server
            .take_log()
            .iter()
            .filter(|l| l.contains("taskSummary"))
            .count();
        if n > 0 && summaries == 0 {
            break;
        }
        assert!(n < 50, "summaries never all read");
    }
    if sources == Sources::RestThenLog {
        tokio::task::spawn_blocking(read_log()).await.expect("log");
    }
    let registry = spark_exporter::sinks::prometheus::registry(model);
    let text = spark_exporter::sinks::prometheus::render(&registry, false).expect("render");
    parse_exposition(&text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnosis_rest_replay_matches_spark() {
    let got = replay(Sources::Rest).await;
    let rest = truth_from_rest();
    check_skew(&got, &rest.ratios, "REST replay");
    check_tasks(&got, &rest, "REST replay", false);
    check_skewed_against_balanced(&got);
}

/// Both sources into one model, in either order: every stage attempt and task counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnosis_both_sources_count_each_stage_and_task_once() {
    let rest = truth_from_rest();
    for (sources, what) in [
        (Sources::RestThenLog, "REST then event log"),
        (Sources::LogThenRest, "event log then REST"),
    ] {
        let got = replay(sources).await;
        check_skew(&got, &rest.ratios, what);
        check_tasks(&got, &rest, what, true);
    }
}

/// The `skewed` group's stages reach a ratio far above any of `balanced`'s.
fn check_skewed_against_balanced(got: &[Sample]) {
    let worst = |g: &str| -> f64 {
        // The smallest bucket bound that holds all of the group's observations.
        let b = by_group(got, "spark_stage_skew_ratio_bucket", Some("le"));
        let count = by_group(got, "spark_stage_skew_ratio_count", None);
        let n: f64 = count.iter().filter(|(k, _)| k.1 == g).map(|(_, v)| v).sum();
        assert!(n > 0.0, "group {g} has observations");
        SKEW_BOUNDS
            .iter()
            .copied()
            .find(|le| {
                b.iter()
                    .filter(|(k, _)| k.1 == g && k.2 == format!("{le:?}"))
                    .map(|(_, v)| v)
                    .sum::<f64>()
                    == n
            })
            .unwrap_or(f64::INFINITY)
    };
    let (skewed, balanced) = (worst("skewed"), worst("balanced"));
    assert!(
        balanced <= 2.0 && skewed >= 5.0,
        "skewed stages up to le={skewed}, balanced up to le={balanced}"
    );
}

/// Every committed real run with Spark's REST stage list: (its event log, its `stages.json`).
fn logs_with_rest_stages() -> Vec<(PathBuf, PathBuf)> {
    let data = root().join("tests/data");
    let mut v = vec![];
    for fixture in ["diagnosis-4.1.1", "tpch-4.1.1"] {
        let Ok(rd) = std::fs::read_dir(data.join(fixture).join("rest")) else {
            continue;
        };
        for e in rd.flatten() {
            let app = e.file_name().to_string_lossy().to_string();
            let log = data
                .join(fixture)
                .join("eventlog")
                .join(format!("eventlog_v2_{app}"));
            v.push((log, e.path().join("stages.json")));
        }
    }
    let basic = data.join("spark-4.1.1-basic");
    v.push((
        basic.join("eventlog/eventlog_v2_local-1795981136444"),
        basic.join("rest-snapshots/0009/stages.json"),
    ));
    for e in std::fs::read_dir(data.join("versions")).unwrap().flatten() {
        let log = std::fs::read_dir(e.path())
            .unwrap()
            .flatten()
            .map(|f| f.path())
            .find(|p| p.extension().is_some_and(|x| x == "zstd"))
            .expect("a version's log");
        v.push((log, e.path().join("rest/stages.json")));
    }
    v.sort();
    v
}

/// Peak execution memory per stage attempt (issue 49: "Peak execution memory 0 B" on GC
/// findings): the exporter's figure from the event log is Spark's REST `peakExecutionMemory`
/// (the sum over the attempt's tasks) for every stage attempt of every committed run with a REST
/// stage list, and `diagnose` gives the figure only where Spark's is not 0.
#[test]
fn every_stage_s_peak_execution_memory_is_spark_s() {
    use spark_exporter::config::Settings;
    use spark_exporter::model::Model;
    use spark_exporter::telemetry::Telemetry;
    let mut compared = 0;
    let mut nonzero = 0;
    for (log, stages) in logs_with_rest_stages() {
        let settings = Settings::default();
        let model = Model::for_diagnosis(&settings, Arc::new(Telemetry::default()));
        let observer = model.observer(spark_exporter::sources::source("event_log"));
        spark_exporter::sources::eventlog::ingest_paths(
            std::slice::from_ref(&log),
            &settings,
            &observer,
            model.telemetry(),
        )
        .expect("read the log");
        model.flush_pending();
        let mut ours: BTreeMap<(u64, u64), u64> = model
            .take_settled_stages()
            .into_iter()
            .map(|(_, d)| {
                let key = (d.stage_id, u64::from(d.attempt));
                (key, d.totals.peak_execution_memory_bytes)
            })
            .collect();
        model.view(|v| {
            for a in v.apps() {
                for d in a.stage_details() {
                    let key = (d.stage_id, u64::from(d.attempt));
                    ours.insert(key, d.totals.peak_execution_memory_bytes);
                }
            }
        });
        for s in read(&stages).as_array().expect("a list") {
            if s["status"] == "SKIPPED" || s["status"] == "PENDING" {
                continue;
            }
            let key = (
                s["stageId"].as_u64().unwrap(),
                s["attemptId"].as_u64().unwrap(),
            );
            let spark = s["peakExecutionMemory"]
                .as_u64()
                .expect("peakExecutionMemory");
            assert_eq!(
                ours.get(&key).copied(),
                Some(spark),
                "{}: stage {key:?}",
                log.display()
            );
            compared += 1;
            nonzero += usize::from(spark > 0);
        }
    }
    assert!(
        compared > 200 && nonzero > 20,
        "{compared} stages, {nonzero} with a peak"
    );
}
