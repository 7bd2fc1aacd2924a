//! Structured Streaming, on a real PySpark 4.1.1 run (tests/data/streaming-4.1.1, made by
//! scripts/streaming-fixture.sh): four queries on rate sources with 1 s triggers:
//! `windowed_counts` (watermark and a windowed count: one state operator), an unnamed stateless
//! one, `slow_sink` (a foreachBatch slower than its trigger) and `healthy_sink` (its twin).
//!
//! What the exporter says is compared with what Spark wrote, read here on its own (the event
//! log's JSON, parsed with serde_json, not the exporter's parser), and with Spark's own REST
//! answers taken from the live driver once the queries had stopped:
//! - every micro-batch job, stage, task and SQL execution counts under its query's name (the
//!   name from `QueryStartedEvent`, matched by the `sql.streaming.queryId` job property, or over
//!   REST by the job group, the query's `runId`), and no label anywhere holds a UUID or a
//!   newline;
//! - every progress family equals the last or summed values of the log's
//!   `QueryProgressEvent`s, for the query with a watermark and state and for those without.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use support::command::exporter_command;
use support::exposition::{parse_exposition, value, Sample};
use support::rest::{AppData, FakeSpark};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/streaming-4.1.1")
}

/// Every event of the fixture's log, in order (a rolling log: its parts in order, zstd).
fn events() -> Vec<Value> {
    let dir = fixture().join("eventlog");
    let app_dir = std::fs::read_dir(&dir)
        .expect("eventlog folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("an eventlog_v2_ folder");
    support::eventlog::rolling_events(&app_dir)
}

const STARTED: &str = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryStartedEvent";
const PROGRESS: &str = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent";
const SQL_START: &str = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart";

/// The label docs/internals.md promises for a query: its name, or `query-` and the first 8 hex
/// digits
/// of its id.
fn query_label(name: Option<&str>, id: &str) -> String {
    match name {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("query-{}", &id.replace('-', "")[..8]),
    }
}

/// Queries by id and by run id: their labels.
struct Queries {
    by_id: BTreeMap<String, String>,
    by_run: BTreeMap<String, String>,
}

fn queries(ev: &[Value]) -> Queries {
    let mut q = Queries {
        by_id: BTreeMap::new(),
        by_run: BTreeMap::new(),
    };
    for e in ev.iter().filter(|e| e["Event"] == STARTED) {
        let id = e["id"].as_str().expect("id");
        let label = query_label(e["name"].as_str(), id);
        q.by_id.insert(id.to_string(), label.clone());
        q.by_run
            .insert(e["runId"].as_str().expect("runId").to_string(), label);
    }
    assert_eq!(q.by_id.len(), 4, "the workload runs four queries");
    q
}

fn dump(args: &[&str]) -> Vec<Sample> {
    let mut all = vec!["dump", "--model.summary-level", "full"];
    all.extend_from_slice(args);
    let out = exporter_command(&all, Duration::from_secs(60));
    assert!(out.status.success(), "dump failed: {}", out.stderr);
    parse_exposition(&out.stdout)
}

fn dump_log(extra: &[&str]) -> Vec<Sample> {
    let dir = fixture().join("eventlog");
    let mut args = vec!["--spark.url=", "--event-log", dir.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    dump(&args)
}

/// Sum of `name` samples by the value of `label`, over samples matching `with`.
fn by_label(
    got: &[Sample],
    name: &str,
    label: &str,
    with: &[(&str, &str)],
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for s in got
        .iter()
        .filter(|s| s.name == name && with.iter().all(|(k, v)| s.label(k) == *v))
    {
        *m.entry(s.label(label).to_string()).or_default() += s.value;
    }
    m.retain(|_, v| *v > 0.0);
    m
}

fn is_uuid_like(v: &str) -> bool {
    // 8-4-4-4-12 hex digits anywhere in the value.
    let b = v.as_bytes();
    (0..b.len().saturating_sub(35)).any(|i| {
        b[i..i + 36].iter().enumerate().all(|(j, c)| match j {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
    })
}

fn assert_clean_labels(got: &[Sample], what: &str) {
    for s in got {
        for (k, v) in &s.labels {
            assert!(
                !is_uuid_like(v) && !v.contains('\n') && !v.contains('\r'),
                "{what}: {}: {k}={v:?} holds a UUID or a newline",
                s.name
            );
        }
    }
}

#[test]
fn micro_batch_jobs_stages_tasks_and_sql_count_under_the_query_name() {
    let ev = events();
    let q = queries(&ev);
    // Spark's own attribution: a job's `sql.streaming.queryId` property names its query.
    let mut job_query: BTreeMap<u64, String> = BTreeMap::new();
    let mut stage_query: BTreeMap<u64, String> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["Event"] == "SparkListenerJobStart") {
        let qid = e["Properties"]["sql.streaming.queryId"]
            .as_str()
            .expect("every job of the workload belongs to a query");
        let label = q.by_id[qid].clone();
        for s in e["Stage IDs"].as_array().expect("stage ids") {
            stage_query.insert(s.as_u64().expect("id"), label.clone());
        }
        job_query.insert(e["Job ID"].as_u64().expect("job id"), label);
    }
    let mut want_jobs: BTreeMap<String, f64> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["Event"] == "SparkListenerJobEnd") {
        assert_eq!(e["Job Result"]["Result"], "JobSucceeded");
        *want_jobs
            .entry(job_query[&e["Job ID"].as_u64().expect("id")].clone())
            .or_default() += 1.0;
    }
    let mut want_stages: BTreeMap<String, f64> = BTreeMap::new();
    for e in ev
        .iter()
        .filter(|e| e["Event"] == "SparkListenerStageCompleted")
    {
        let id = e["Stage Info"]["Stage ID"].as_u64().expect("id");
        *want_stages.entry(stage_query[&id].clone()).or_default() += 1.0;
    }
    let mut want_tasks: BTreeMap<String, f64> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["Event"] == "SparkListenerTaskEnd") {
        assert_eq!(e["Task End Reason"]["Reason"], "Success");
        let id = e["Stage ID"].as_u64().expect("id");
        *want_tasks.entry(stage_query[&id].clone()).or_default() += 1.0;
    }
    // SQL executions: Spark's description names the query id (`id = <uuid>`).
    let mut want_sql: BTreeMap<String, f64> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["Event"] == SQL_START) {
        let d = e["description"].as_str().unwrap_or("");
        let (_, label) = q
            .by_id
            .iter()
            .find(|(id, _)| d.contains(&format!("\nid = {id}\n")))
            .unwrap_or_else(|| panic!("SQL execution of no query: {d:?}"));
        *want_sql.entry(label.clone()).or_default() += 1.0;
    }
    let names: BTreeSet<&String> = q.by_id.values().collect();
    assert_eq!(want_jobs.keys().collect::<BTreeSet<_>>(), names);

    let got = dump_log(&[]);
    assert_clean_labels(&got, "event log");
    assert_eq!(
        by_label(&got, "spark_jobs_total", "job_group", &[]),
        want_jobs
    );
    assert_eq!(
        by_label(&got, "spark_jobs_total", "job_description", &[]),
        want_jobs,
        "a micro-batch's description is its query's name"
    );
    assert_eq!(
        by_label(
            &got,
            "spark_stages_total",
            "job_group",
            &[("status", "complete")]
        ),
        want_stages
    );
    assert_eq!(
        by_label(
            &got,
            "spark_tasks_total",
            "job_group",
            &[("status", "succeeded")]
        ),
        want_tasks
    );
    assert_eq!(
        by_label(
            &got,
            "spark_sql_executions_total",
            "description",
            &[("status", "completed")]
        ),
        want_sql
    );
    for want in ["windowed_counts", "slow_sink", "healthy_sink"] {
        assert!(want_jobs.contains_key(want), "{want} in {want_jobs:?}");
    }
    assert!(
        want_jobs.keys().any(|k| k.starts_with("query-")),
        "the unnamed query's stand-in: {want_jobs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_rest_the_same_jobs_count_under_the_same_names() {
    let q = queries(&events());
    let data = AppData::from_dir(fixture().join("rest").to_str().expect("utf-8"));
    // Spark's REST numbers: jobs and completed tasks by job group (the query's run id).
    let mut want_jobs: BTreeMap<String, f64> = BTreeMap::new();
    let mut want_tasks: BTreeMap<String, f64> = BTreeMap::new();
    for j in &data.jobs {
        let run = j["jobGroup"]
            .as_str()
            .expect("a micro-batch job has its run id as group");
        let label = q.by_run[run].clone();
        assert_eq!(j["status"], "SUCCEEDED");
        *want_jobs.entry(label.clone()).or_default() += 1.0;
        *want_tasks.entry(label).or_default() += j["numCompletedTasks"].as_f64().unwrap_or(0.0);
    }
    let server = FakeSpark::start(vec![data]).await;
    let url = server.url.clone();
    let got = tokio::task::spawn_blocking(move || dump(&["--spark.url", url.as_str()]))
        .await
        .expect("dump");
    assert_clean_labels(&got, "REST");
    assert_eq!(
        by_label(&got, "spark_jobs_total", "job_group", &[]),
        want_jobs
    );
    assert_eq!(
        by_label(
            &got,
            "spark_tasks_total",
            "job_group",
            &[("status", "succeeded")]
        ),
        want_tasks
    );
    assert!(
        by_label(&got, "spark_sql_executions_total", "description", &[])
            .keys()
            .all(|d| q.by_id.values().any(|n| n == d)),
        "every SQL execution counts under a query name"
    );
}

/// Milliseconds since the epoch of an ISO-8601 instant as Spark writes it.
fn instant_ms(s: &str) -> i64 {
    let t = humantime::parse_rfc3339_weak(s).expect("instant");
    t.duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_millis() as i64
}

fn close(a: Option<f64>, b: f64, what: &str) {
    let a = a.unwrap_or_else(|| panic!("{what}: no series (want {b})"));
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: got {a}, want {b}"
    );
}

/// One query's progress events and the exporter's samples.
struct Case<'a> {
    query: &'a str,
    ps: &'a [&'a Value],
    got: &'a [Sample],
}

impl Case<'_> {
    /// The sample of `name` for this query and `extra` labels.
    fn get(&self, name: &str, extra: &[(&str, &str)]) -> Option<f64> {
        let mut w: Vec<(&str, &str)> = vec![("query", self.query)];
        w.extend_from_slice(extra);
        value(self.got, name, &w)
    }
    fn last(&self) -> &Value {
        self.ps.last().expect("a progress")
    }
    fn what(&self, s: &str) -> String {
        format!("{} {s}", self.query)
    }
}

fn sources(p: &Value) -> Vec<Value> {
    p["sources"].as_array().cloned().unwrap_or_default()
}

/// A query's total of a per-source field (Spark 3.x/4.x write only the per-source values).
fn src_sum(p: &Value, k: &str) -> f64 {
    sources(p)
        .iter()
        .map(|s| s[k].as_f64().unwrap_or(0.0))
        .sum()
}

/// Batches, rows and the two rates.
fn check_totals(c: &Case) {
    let ids: BTreeSet<u64> =
        c.ps.iter()
            .map(|p| p["batchId"].as_u64().expect("id"))
            .collect();
    assert_eq!(ids.len(), c.ps.len(), "{}: one progress per batch", c.query);
    close(
        c.get("spark_streaming_batches_total", &[]),
        c.ps.len() as f64,
        &c.what("batches"),
    );
    let rows: f64 = c.ps.iter().map(|p| src_sum(p, "numInputRows")).sum();
    close(
        c.get("spark_streaming_input_rows_total", &[]),
        rows,
        &c.what("input rows"),
    );
    close(
        c.get("spark_streaming_input_rows_per_second", &[]),
        src_sum(c.last(), "inputRowsPerSecond"),
        &c.what("input rate"),
    );
    close(
        c.get("spark_streaming_processed_rows_per_second", &[]),
        src_sum(c.last(), "processedRowsPerSecond"),
        &c.what("processed rate"),
    );
}

/// Every durationMs key, summed, one series each.
fn check_phases(c: &Case) {
    let mut phases: BTreeMap<String, f64> = BTreeMap::new();
    for p in c.ps {
        for (k, v) in p["durationMs"].as_object().expect("durationMs") {
            *phases.entry(k.clone()).or_default() += v.as_f64().expect("ms") / 1000.0;
        }
    }
    assert!(phases.contains_key("commitOffsets") && phases.contains_key("addBatch"));
    for (phase, secs) in &phases {
        let got = c.get(
            "spark_streaming_batch_phase_seconds_total",
            &[("phase", phase)],
        );
        close(got, *secs, &c.what(phase));
    }
    let n = c
        .got
        .iter()
        .filter(|s| {
            s.name == "spark_streaming_batch_phase_seconds_total" && s.label("query") == c.query
        })
        .count();
    assert_eq!(n, phases.len(), "{}: one series per phase", c.query);
    close(
        c.get("spark_streaming_batch_duration_seconds_sum", &[]),
        phases["triggerExecution"],
        &c.what("batch duration sum"),
    );
}

/// Per source: rows summed, rates of the last batch.
fn check_sources(c: &Case) {
    let srcs = sources(c.last());
    assert_eq!(srcs.len(), 1);
    let rows = c
        .got
        .iter()
        .find(|s| {
            s.name == "spark_streaming_source_input_rows_total" && s.label("query") == c.query
        })
        .expect("source series");
    assert!(
        rows.label("source").starts_with("RateStreamV"),
        "{:?}",
        rows.labels
    );
    let want: f64 = c.ps.iter().map(|p| src_sum(p, "numInputRows")).sum();
    close(Some(rows.value), want, &c.what("source rows"));
    let src = [("source", rows.label("source"))];
    close(
        c.get("spark_streaming_source_input_rows_per_second", &src),
        srcs[0]["inputRowsPerSecond"].as_f64().expect("rate"),
        &c.what("source input rate"),
    );
    close(
        c.get("spark_streaming_source_processed_rows_per_second", &src),
        srcs[0]["processedRowsPerSecond"].as_f64().expect("rate"),
        &c.what("source processed rate"),
    );
}

/// The watermark: the last one that is not Spark's initial epoch; the lag from the last batch
/// that had both a watermark and an event-time max. Neither series without a watermark.
fn check_watermark(c: &Case) {
    let wm = |p: &Value| {
        p["eventTime"]["watermark"]
            .as_str()
            .map(instant_ms)
            .filter(|w| *w > 0)
    };
    let want_wm = c.ps.iter().rev().find_map(|p| wm(p));
    let want_lag = c.ps.iter().rev().find_map(|p| {
        let max = p["eventTime"]["max"].as_str().map(instant_ms)?;
        Some((max - wm(p)?) as f64 / 1000.0)
    });
    let (got_wm, got_lag) = (
        c.get("spark_streaming_watermark_seconds", &[]),
        c.get("spark_streaming_watermark_lag_seconds", &[]),
    );
    match want_wm {
        Some(w) => close(got_wm, w as f64 / 1000.0, &c.what("watermark")),
        None => assert_eq!(got_wm, None, "{}: no watermark, no series", c.query),
    }
    match want_lag {
        Some(lag) => close(got_lag, lag, &c.what("watermark lag")),
        None => assert_eq!(got_lag, None, "{}: no lag", c.query),
    }
}

/// State per operator: latest rows and memory, dropped rows summed; none when stateless.
/// Returns the number of operators.
fn check_state(c: &Case) -> usize {
    let ops = c.last()["stateOperators"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, op) in ops.iter().enumerate() {
        assert_eq!(i, 0, "the workload has one operator per query");
        let o = [(
            "operator",
            op["operatorName"].as_str().expect("operatorName"),
        )];
        let n = |k: &str| op[k].as_f64().expect("number");
        close(
            c.get("spark_streaming_state_rows", &o),
            n("numRowsTotal"),
            &c.what("state rows"),
        );
        close(
            c.get("spark_streaming_state_memory_bytes", &o),
            n("memoryUsedBytes"),
            &c.what("state memory"),
        );
        let dropped: f64 =
            c.ps.iter()
                .map(|p| {
                    p["stateOperators"][i]["numRowsDroppedByWatermark"]
                        .as_f64()
                        .unwrap_or(0.0)
                })
                .sum();
        let got = c.get("spark_streaming_state_rows_dropped_by_watermark_total", &o);
        close(got, dropped, &c.what("dropped"));
    }
    if ops.is_empty() {
        assert!(
            !c.got.iter().any(
                |s| s.name.starts_with("spark_streaming_state_") && s.label("query") == c.query
            ),
            "{}: stateless, no state series",
            c.query
        );
    }
    ops.len()
}

#[test]
fn progress_metrics_equal_the_logs_query_progress_events() {
    let ev = events();
    let q = queries(&ev);
    let got = dump_log(&[]);
    let mut by_query: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["Event"] == PROGRESS) {
        let p = &e["progress"];
        by_query
            .entry(q.by_id[p["id"].as_str().expect("id")].clone())
            .or_default()
            .push(p);
    }
    assert_eq!(by_query.len(), 4);
    let mut with_state = vec![];
    for (query, ps) in &by_query {
        let c = Case {
            query,
            ps,
            got: &got,
        };
        check_totals(&c);
        check_phases(&c);
        check_sources(&c);
        check_watermark(&c);
        if check_state(&c) > 0 {
            with_state.push(query.as_str());
        }
    }
    // The fixture has both kinds: one query with a watermark and state, three without.
    assert_eq!(with_state, ["windowed_counts"]);
    assert!(by_query["windowed_counts"]
        .iter()
        .any(|p| p["eventTime"]["watermark"]
            .as_str()
            .is_some_and(|w| instant_ms(w) > 0)));
    let no_wm = value(
        &got,
        "spark_streaming_watermark_seconds",
        &[("query", "healthy_sink")],
    );
    assert!(no_wm.is_none());
}

#[test]
fn the_trigger_interval_is_inferred_or_configured() {
    let got = dump_log(&[]);
    let interval = |got: &[Sample], q: &str, from: &str| {
        value(
            got,
            "spark_streaming_trigger_interval_seconds",
            &[("query", q), ("from", from)],
        )
    };
    // Every query of the workload triggers every second; slow_sink never starts a batch on
    // schedule (each one overruns), so nothing can be inferred for it.
    for q in ["windowed_counts", "healthy_sink"] {
        assert_eq!(interval(&got, q, "inferred"), Some(1.0), "{q}");
    }
    assert!(!got
        .iter()
        .any(|s| s.name == "spark_streaming_trigger_interval_seconds"
            && s.label("query") == "slow_sink"));
    let cfg = support::files::artefact_dir("streaming-config").join("config.yaml");
    std::fs::write(
        &cfg,
        "streaming:\n  trigger_intervals:\n    slow_sink: 1s\n    healthy_sink: 1500ms\n",
    )
    .expect("write config");
    let got = dump_log(&["--config.file", cfg.to_str().expect("utf-8")]);
    assert_eq!(interval(&got, "slow_sink", "configured"), Some(1.0));
    assert_eq!(interval(&got, "healthy_sink", "configured"), Some(1.5));
    assert_eq!(
        interval(&got, "healthy_sink", "inferred"),
        None,
        "configured wins"
    );
}
