//! End-to-end: a real executor loss. A PySpark application ([`APP`]) on
//! `local-cluster[2,1,1024]` (a standalone master and two workers inside the driver JVM, each
//! executor its own JVM) runs a long job while this test SIGKILLs one executor JVM. The real
//! exporter watches the application through BOTH its live REST API (`--spark.url`) and its event
//! log (`--event-log.dir`), and a real Prometheus scrapes the exporter every second with
//! `alerts/spark-exporter.rules.yml` loaded.
//!
//! Asserted:
//! - `spark_executor_removed_total` of the application becomes exactly 1 (both sources report the
//!   same removal; it must be counted once), with a reason in the normalised set;
//! - `spark_executors{state="dead"}` >= 1 and equal to the number of dead executors in Spark's
//!   own `/allexecutors`;
//! - the job still finishes (Spark relaunches an executor and retries the task);
//! - the `SparkExecutorsLost` expression, taken verbatim from the rules file, returns a series
//!   for the application through Prometheus' `/api/v1/query`, and the alert is firing in
//!   `/api/v1/alerts`;
//! - `spark-exporter diagnose`, live and from the event log, reports one `executor_loss` with
//!   one executor lost and as many failed tasks as Spark's stages count.
//!
//! The Python interpreter is `$SPARK_E2E_PYTHON` (default `.venv/bin/python`). If it (or
//! `prometheus`) is missing the test passes with a loud message, unless `SPARK_E2E_REQUIRED=1`,
//! in which case it fails. Every child runs under a guard; Spark runs in its own process group
//! (executor JVMs and Python workers included) and the whole group is SIGKILLed on drop, so a
//! failure never leaves a JVM behind. Artefacts stay in `target/tmp/e2e-lost-<pid>/`.
//!
//! Run: `cargo test --test e2e_executor_lost -- --nocapture`

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::exposition::{parse_exposition, Sample};
use support::files::{artefact_dir, free_port, tail_file};
use support::http::{get_url, get_url_json};
use support::proc::{must_wait_for, signal, Guard};
use support::{spark, EXPORTER};

const APP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e_lost/app.py");
const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/alerts/spark-exporter.rules.yml"
);
/// Normalised removal reasons (docs/metrics.md, `spark_executor_removed_total`).
const REASONS: [&str; 6] = [
    "killed_by_driver",
    "heartbeat_timeout",
    "decommissioned",
    "exited",
    "lost",
    "other",
];

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn scrape(port: u16) -> Result<Vec<Sample>, String> {
    let (code, body) = get_url(&format!("http://127.0.0.1:{port}/metrics"))?;
    if code != 200 {
        return Err(format!("/metrics: HTTP {code}"));
    }
    Ok(parse_exposition(&body))
}

fn of_app<'a>(samples: &'a [Sample], name: &str, app: &str) -> Vec<&'a Sample> {
    samples
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == app)
        .collect()
}

/// The `expr` of alert `name` in the rules file, verbatim (block scalar `|-`).
fn alert_expr(rules: &str, name: &str) -> String {
    let lines: Vec<&str> = rules.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == format!("- alert: {name}"))
        .unwrap_or_else(|| panic!("alert {name} not in {RULES}"));
    let expr_at = (start + 1..lines.len())
        .find(|&i| lines[i].trim_start().starts_with("expr:"))
        .unwrap();
    let key_indent = lines[expr_at].len() - lines[expr_at].trim_start().len();
    let inline = lines[expr_at].trim_start()["expr:".len()..].trim();
    if !inline.starts_with('|') && !inline.is_empty() {
        return inline.trim_matches('"').to_string();
    }
    let mut out = Vec::new();
    for l in &lines[expr_at + 1..] {
        let ind = l.len() - l.trim_start().len();
        if !l.trim().is_empty() && ind <= key_indent {
            break;
        }
        out.push(l.trim());
    }
    out.join("\n").trim().to_string()
}

/// `(pid, executor_id)` of the executor JVMs of `app_id`.
fn executor_pids(app_id: &str) -> Vec<(u32, String)> {
    let out = Command::new("ps")
        .args(["-eo", "pid=,args="])
        .output()
        .unwrap();
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim();
        if !line.contains("CoarseGrainedExecutorBackend") || !line.contains(app_id) {
            continue;
        }
        let (pid, args) = line.split_once(' ').unwrap();
        let words: Vec<&str> = args.split_whitespace().collect();
        let id = words
            .iter()
            .position(|w| *w == "--executor-id")
            .and_then(|i| words.get(i + 1))
            .map(|s| s.to_string())
            .unwrap_or_default();
        v.push((pid.parse().unwrap(), id));
    }
    v
}

fn app_log_line(log: &Path, prefix: &str) -> Option<String> {
    fs::read_to_string(log)
        .ok()?
        .lines()
        .find(|l| l.starts_with(prefix))
        .map(str::to_string)
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

#[test]
fn lost_executor_is_counted_and_alert_fires() {
    let Some(python) = spark::python("e2e_executor_lost") else {
        return;
    };
    let prometheus_ok = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !prometheus_ok {
        spark::skip_unless_required(
            "e2e_executor_lost: `prometheus` is not runnable (Debian package prometheus)",
        );
        return;
    }

    let run = artefact_dir("e2e-lost");
    let events = run.join("events");
    fs::create_dir_all(&events).unwrap();
    eprintln!("[e2e-lost] artefacts in {}", run.display());
    let t0 = Instant::now();

    let mut app = start_app(&python, &run, &events, t0);
    let (mut exporter, exp_port) = start_exporter(&app.ui, &events, &run);
    let (mut prom, prom_port) = start_prometheus(&run, exp_port);
    let prom_log = run.join("prometheus").join("prometheus.log");

    wait_for_executors(&mut exporter, exp_port, &app.id, &run);
    let exec_id = kill_busy_executor(&app, t0);
    let remove_reason = wait_for_removal(&app, &exec_id, exp_port, t0);
    wait_for_job(&mut app, t0);

    // Let both sources settle (several REST polls, the event log read to the end), then judge.
    std::thread::sleep(Duration::from_secs(4));
    let mut failures = Vec::new();
    let reason = check_exporter(&mut failures, &run, &app, exp_port, &remove_reason);

    // The real alert expression through the real Prometheus.
    check_alert_expr(
        &mut failures,
        &mut prom,
        &prom_log,
        prom_port,
        &app.id,
        &reason,
        t0,
    );
    check_counted_once(&mut failures, prom_port, &app.id);
    check_alert_firing(&mut failures, prom_port, &app.id);
    check_diagnose(&mut failures, &run, &app, &events);

    // Release the application; the guards clean up everything else.
    fs::write(run.join("release"), b"").unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while app.guard.running() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
    }
    let app_id = app.id.clone();
    drop(prom);
    drop(exporter);
    drop(app);
    let leftover = executor_pids(&app_id);
    if !leftover.is_empty() {
        failures.push(format!("executor JVMs left after cleanup: {leftover:?}"));
    }
    eprintln!("[e2e-lost] {} done", el(t0));
    assert!(
        failures.is_empty(),
        "{} failure(s):\n- {}",
        failures.len(),
        failures.join("\n- ")
    );
}

// ---------------------------------------------------------------------------------------------
// The test's phases
// ---------------------------------------------------------------------------------------------

/// Seconds since `t0`, for the progress lines.
fn el(t0: Instant) -> String {
    format!("{:5.1}s", t0.elapsed().as_secs_f64())
}

/// The running PySpark application.
struct App {
    guard: Guard,
    log: PathBuf,
    id: String,
    /// The live UI, through loopback.
    ui: String,
    /// `{ui}/api/v1/applications/{id}`.
    api: String,
}

/// Start the application and wait for its READY line.
fn start_app(python: &Path, run: &Path, events: &Path, t0: Instant) -> App {
    let app_log = run.join("app.log");
    let mut cmd = Command::new(python);
    cmd.args([APP, events.to_str().unwrap(), run.to_str().unwrap()]);
    let mut app = Guard::spawn("pyspark app", cmd, &app_log, true);
    let ready = must_wait_for("the app's READY line", Duration::from_secs(180), || {
        if !app.running() {
            panic!("app exited before READY:\n{}", tail_file(&app_log, 40));
        }
        app_log_line(&app_log, "READY ")
    });
    let words: Vec<&str> = ready.split_whitespace().collect();
    let (app_id, ui) = (
        words[1].to_string(),
        words[2].trim_end_matches('/').to_string(),
    );
    // The UI binds to all interfaces under a host name; go through loopback.
    let ui_port = ui.rsplit(':').next().unwrap().to_string();
    let ui = format!("http://127.0.0.1:{ui_port}");
    let api = format!("{ui}/api/v1/applications/{app_id}");
    eprintln!("[e2e-lost] {} app {app_id} ready, UI {ui}", el(t0));
    App {
        guard: app,
        log: app_log,
        id: app_id,
        ui,
        api,
    }
}

/// The exporter, both sources: the live UI and the event log directory. Returns its port.
fn start_exporter(ui: &str, events: &Path, run: &Path) -> (Guard, u16) {
    let exp_port = free_port();
    let mut cmd = Command::new(EXPORTER);
    cmd.args([
        // Exact comparisons: every scrape must show the model as it is now (the default lets a
        // body be up to 1 s old, docs/configuration.md `web.max_staleness`).
        "--web.max-staleness",
        "0s",
        "--web.listen-address",
        &format!("127.0.0.1:{exp_port}"),
        "--spark.url",
        ui,
        "--spark.poll-interval",
        "1s",
        "--event-log.dir",
        events.to_str().unwrap(),
        "--event-log.poll-interval",
        "200ms",
    ]);
    let exporter = Guard::spawn("exporter", cmd, &run.join("exporter.log"), false);
    (exporter, exp_port)
}

/// Prometheus, with the real rules file, scraping the exporter every second. Returns its port.
fn start_prometheus(run: &Path, exp_port: u16) -> (Guard, u16) {
    let prom_port = free_port();
    let prom_dir = run.join("prometheus");
    fs::create_dir_all(prom_dir.join("data")).unwrap();
    let prom_cfg = prom_dir.join("prometheus.yml");
    fs::write(
        &prom_cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {RULES}\n\
             scrape_configs:\n  - job_name: spark-exporter\n    static_configs:\n      - targets: ['127.0.0.1:{exp_port}']\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new("prometheus");
    cmd.args([
        &format!("--config.file={}", prom_cfg.display()),
        &format!("--storage.tsdb.path={}", prom_dir.join("data").display()),
        &format!("--web.listen-address=127.0.0.1:{prom_port}"),
    ]);
    let prom = Guard::spawn("prometheus", cmd, &prom_dir.join("prometheus.log"), false);
    (prom, prom_port)
}

/// The exporter sees the application with its executors before anything is lost.
fn wait_for_executors(exporter: &mut Guard, exp_port: u16, app_id: &str, run: &Path) {
    must_wait_for(
        "exporter: 2 active executors (+ driver)",
        Duration::from_secs(30),
        || {
            assert!(
                exporter.running(),
                "exporter died:\n{}",
                tail_file(&run.join("exporter.log"), 40)
            );
            let s = scrape(exp_port).ok()?;
            let active = of_app(&s, "spark_executors", app_id)
                .into_iter()
                .find(|s| s.label("state") == "active")?
                .value;
            (active >= 3.0).then_some(())
        },
    );
    let before = scrape(exp_port).unwrap();
    assert!(
        of_app(&before, "spark_executor_removed_total", app_id)
            .iter()
            .all(|s| s.value == 0.0),
        "removals before the kill: {:?}",
        of_app(&before, "spark_executor_removed_total", app_id)
    );
}

/// Kill one executor JVM while it runs a task of the long job; returns its executor id.
fn kill_busy_executor(app: &App, t0: Instant) -> String {
    let (api, app_id) = (&app.api, &app.id);
    let (pid, exec_id) = must_wait_for(
        "an executor of the app running a task",
        Duration::from_secs(60),
        || {
            let execs = get_url_json(&format!("{api}/executors")).ok()?;
            let busy: Vec<String> = execs
                .as_array()?
                .iter()
                .filter(|e| e["id"] != "driver" && e["activeTasks"].as_u64() > Some(0))
                .filter_map(|e| e["id"].as_str().map(str::to_string))
                .collect();
            executor_pids(app_id)
                .into_iter()
                .find(|(_, id)| busy.contains(id))
        },
    );
    assert_eq!(
        executor_pids(app_id).len(),
        2,
        "executor JVMs: {:?}",
        executor_pids(app_id)
    );
    eprintln!(
        "[e2e-lost] {} SIGKILL executor {exec_id} (pid {pid})",
        el(t0)
    );
    assert!(signal(pid, "KILL"), "SIGKILL executor pid {pid}");
    exec_id
}

/// Spark notices, the exporter counts it. Returns Spark's `removeReason`.
fn wait_for_removal(app: &App, exec_id: &str, exp_port: u16, t0: Instant) -> String {
    let (api, app_id) = (&app.api, &app.id);
    let rest_dead = must_wait_for(
        "Spark REST: the killed executor dead",
        Duration::from_secs(120),
        || {
            let all = get_url_json(&format!("{api}/allexecutors")).ok()?;
            let e = all.as_array()?.iter().find(|e| e["id"] == exec_id)?.clone();
            (e["isActive"] == false).then_some(e)
        },
    );
    let remove_reason = rest_dead["removeReason"]
        .as_str()
        .unwrap_or("<none>")
        .to_string();
    eprintln!(
        "[e2e-lost] {} Spark REST removeReason: {remove_reason:?}",
        el(t0)
    );
    must_wait_for(
        "exporter: spark_executor_removed_total >= 1",
        Duration::from_secs(30),
        || {
            let s = scrape(exp_port).ok()?;
            let sum: f64 = of_app(&s, "spark_executor_removed_total", app_id)
                .iter()
                .map(|s| s.value)
                .sum();
            (sum >= 1.0).then_some(())
        },
    );
    remove_reason
}

/// The job still finishes.
fn wait_for_job(app: &mut App, t0: Instant) {
    let done = must_wait_for(
        "the app's DONE line (job finished)",
        Duration::from_secs(240),
        || {
            if !app.guard.running() {
                panic!("app exited before DONE:\n{}", tail_file(&app.log, 40));
            }
            app_log_line(&app.log, "DONE ")
        },
    );
    eprintln!("[e2e-lost] {} app: {done}", el(t0));
    let jobs = get_url_json(&format!("{}/jobs", app.api)).unwrap();
    let long = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["description"] == "long job")
        .expect("long job in /jobs");
    assert_eq!(long["status"], "SUCCEEDED", "long job: {long}");
    eprintln!(
        "[e2e-lost] long job: status {} tasks completed {} failed {} killed {}",
        long["status"], long["numCompletedTasks"], long["numFailedTasks"], long["numKilledTasks"]
    );
}

/// The exporter's removal counter, reason and executor gauges against Spark's `/allexecutors`,
/// and proof the event log was read. Returns the exported removal reason.
fn check_exporter(
    failures: &mut Vec<String>,
    run: &Path,
    app: &App,
    exp_port: u16,
    remove_reason: &str,
) -> String {
    let all = get_url_json(&format!("{}/allexecutors", app.api)).unwrap();
    fs::write(run.join("allexecutors.json"), all.to_string()).ok();
    let execs = all.as_array().unwrap();
    let rest_dead_count = execs.iter().filter(|e| e["isActive"] == false).count();
    let rest_active_count = execs.iter().filter(|e| e["isActive"] == true).count();
    for e in execs {
        eprintln!(
            "[e2e-lost]   REST executor {:>6} isActive={} removeReason={}",
            e["id"], e["isActive"], e["removeReason"]
        );
    }
    let after = scrape(exp_port).unwrap();
    fs::write(
        run.join("scrape.txt"),
        get_url(&format!("http://127.0.0.1:{exp_port}/metrics"))
            .unwrap()
            .1,
    )
    .ok();
    let removed = of_app(&after, "spark_executor_removed_total", &app.id);
    let gauges = of_app(&after, "spark_executors", &app.id);
    eprintln!("[e2e-lost] exporter spark_executor_removed_total: {removed:?}");
    eprintln!("[e2e-lost] exporter spark_executors: {gauges:?}");

    let total: f64 = removed.iter().map(|s| s.value).sum();
    if total != 1.0 {
        failures.push(format!(
            "spark_executor_removed_total sum = {total}, want exactly 1: {removed:?}"
        ));
    }
    let nonzero: Vec<_> = removed.iter().filter(|s| s.value > 0.0).collect();
    let reason = nonzero
        .first()
        .map(|s| s.label("reason"))
        .unwrap_or("<none>")
        .to_string();
    if !REASONS.contains(&reason.as_str()) {
        failures.push(format!(
            "reason {reason:?} not in the normalised set {REASONS:?}"
        ));
    }
    eprintln!("[e2e-lost] Spark said {remove_reason:?}; the exporter made it reason={reason:?}");
    let dead = gauges
        .iter()
        .find(|s| s.label("state") == "dead")
        .map(|s| s.value);
    let active = gauges
        .iter()
        .find(|s| s.label("state") == "active")
        .map(|s| s.value);
    if dead.unwrap_or(0.0) < 1.0 {
        failures.push(format!(
            "spark_executors{{state=\"dead\"}} = {dead:?}, want >= 1"
        ));
    }
    if dead != Some(rest_dead_count as f64) {
        failures.push(format!(
            "spark_executors{{state=\"dead\"}} = {dead:?}, Spark REST /allexecutors dead = \
                {rest_dead_count}"
        ));
    }
    if active != Some(rest_active_count as f64) {
        failures.push(format!(
            "spark_executors{{state=\"active\"}} = {active:?}, Spark REST /allexecutors active = \
                {rest_active_count}"
        ));
    }

    // Both sources really fed the exporter: the event log was read.
    let ev = after
        .iter()
        .find(|s| s.name == "spark_exporter_eventlog_events_total")
        .map(|s| s.value);
    if ev.unwrap_or(0.0) <= 0.0 {
        failures.push(format!(
            "spark_exporter_eventlog_events_total = {ev:?}: the event log was not read"
        ));
    }
    reason
}

/// The `SparkExecutorsLost` expression, verbatim from the rules file, returns exactly one series
/// for the application, with the exported reason and value 1.
fn check_alert_expr(
    failures: &mut Vec<String>,
    prom: &mut Guard,
    prom_log: &Path,
    prom_port: u16,
    app_id: &str,
    reason: &str,
    t0: Instant,
) {
    let rules = fs::read_to_string(RULES).unwrap();
    let expr = alert_expr(&rules, "SparkExecutorsLost");
    eprintln!("[e2e-lost] SparkExecutorsLost expr:\n{expr}");
    let q = format!(
        "http://127.0.0.1:{prom_port}/api/v1/query?query={}",
        urlencode(&expr)
    );
    let end = Instant::now() + Duration::from_secs(45);
    let mut last = String::new();
    let mut fired = None;
    while Instant::now() < end {
        assert!(
            prom.running(),
            "prometheus died:\n{}",
            tail_file(prom_log, 40)
        );
        match get_url_json(&q) {
            Ok(v) => {
                last = v.to_string();
                if let Some(r) = v["data"]["result"].as_array().filter(|r| !r.is_empty()) {
                    fired = Some(r.clone());
                    break;
                }
            }
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    match &fired {
        None => failures.push(format!(
            "SparkExecutorsLost expression returned no series in 45 s; last answer: {last}"
        )),
        Some(r) => {
            eprintln!(
                "[e2e-lost] {} /api/v1/query -> {}",
                el(t0),
                Value::Array(r.clone())
            );
            let ours: Vec<_> = r
                .iter()
                .filter(|s| s["metric"]["app_id"] == app_id)
                .collect();
            if ours.len() != 1 {
                failures.push(format!(
                    "want exactly one alert series for {app_id}, got {r:?}"
                ));
            } else {
                let m = &ours[0]["metric"];
                let v: f64 = ours[0]["value"][1]
                    .as_str()
                    .unwrap_or("nan")
                    .parse()
                    .unwrap_or(f64::NAN);
                if m["reason"] != reason || v != 1.0 {
                    failures.push(format!(
                        "alert series {} value {v}, want reason={reason} value 1",
                        ours[0]
                    ));
                }
            }
        }
    }
}

/// Counted once at every scrape, not only at the end: the highest value Prometheus ever saw.
/// `spark-exporter diagnose`, live (the driver) and post-mortem (its event log so far): one
/// `executor_loss` finding, one executor lost, and as many failed tasks as Spark's stages say.
fn check_diagnose(failures: &mut Vec<String>, run: &Path, app: &App, events: &Path) {
    let stages = get_url_json(&format!("{}/stages", app.api)).unwrap();
    let failed: u64 = stages
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["numFailedTasks"].as_u64().unwrap_or(0))
        .sum();
    let ev = events.to_string_lossy().into_owned();
    for (what, args) in [
        ("live", vec!["--spark.url", app.ui.as_str()]),
        ("post-mortem", vec!["--event-log", ev.as_str()]),
    ] {
        let mut argv = vec!["diagnose", "--format", "json", "--app-id", app.id.as_str()];
        argv.extend(args);
        let out = Command::new(EXPORTER).args(&argv).output().unwrap();
        fs::write(run.join(format!("diagnose-{what}.json")), &out.stdout).ok();
        if !out.status.success() {
            failures.push(format!(
                "diagnose {what}: exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let loss: Vec<&Value> = r["applications"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "executor_loss")
            .collect();
        let got = loss.first().map(|f| {
            (
                f["numbers"]["executors_lost"].as_f64(),
                f["numbers"]["failed_tasks"].as_f64(),
            )
        });
        let want = Some((Some(1.0), Some(failed as f64)));
        eprintln!(
            "[e2e-lost] diagnose {what}: executor_loss {got:?}, Spark: 1 lost, {failed} \
            failed tasks"
        );
        if loss.len() != 1 || got != want {
            failures.push(format!(
                "diagnose {what}: executor_loss {got:?} ({} findings), want {want:?}",
                loss.len()
            ));
        }
    }
}

fn check_counted_once(failures: &mut Vec<String>, prom_port: u16, app_id: &str) {
    let q = format!(
        "http://127.0.0.1:{prom_port}/api/v1/query?query={}",
        urlencode(&format!(
            "max_over_time(sum(spark_executor_removed_total{{app_id=\"{app_id}\"}})[10m:1s])"
        ))
    );
    match get_url_json(&q) {
        Ok(v) => {
            let max = v["data"]["result"][0]["value"][1]
                .as_str()
                .map(str::to_string);
            eprintln!("[e2e-lost] highest removed_total Prometheus scraped: {max:?}");
            if max.as_deref() != Some("1") {
                failures.push(format!(
                    "highest scraped spark_executor_removed_total sum = {max:?}, want 1: {v}"
                ));
            }
        }
        Err(e) => failures.push(e),
    }
}

/// `SparkExecutorsLost` for the application is firing in `/api/v1/alerts`.
fn check_alert_firing(failures: &mut Vec<String>, prom_port: u16, app_id: &str) {
    let alerts = must_wait_for(
        "SparkExecutorsLost in /api/v1/alerts",
        Duration::from_secs(20),
        || {
            let v = get_url_json(&format!("http://127.0.0.1:{prom_port}/api/v1/alerts")).ok()?;
            v["data"]["alerts"]
                .as_array()?
                .iter()
                .find(|a| {
                    a["labels"]["alertname"] == "SparkExecutorsLost"
                        && a["labels"]["app_id"] == app_id
                })
                .cloned()
        },
    );
    eprintln!("[e2e-lost] /api/v1/alerts: {alerts}");
    if alerts["state"] != "firing" {
        failures.push(format!(
            "SparkExecutorsLost state {}, want firing",
            alerts["state"]
        ));
    }
}
