//! End-to-end: a real PySpark application ([`WORKLOAD`], pip pyspark + the machine's Java 17)
//! against the real `spark-exporter` binary. The exported values must equal what Spark's own REST
//! API reports: job counts by group, description and status, stage and task counts by group,
//! task run and GC time by group, executor GC and task time, SQL executions, application info.
//!
//! One Spark run serves both tests: [`scenario`] runs it once, drives every process (workload,
//! exporter, `dump`) and records what it saw; the tests only judge the records.
//! - `live_ui_matches_rest`: the exporter polling the live UI, `dump --spark.url` against the live
//!   UI and a dead port, and the exporter after the driver went away.
//! - `event_log_matches_rest`: `dump --event-log` of the same application's finished event log.
//!
//! The exporter reaches the UI through a [`Relay`] that passes requests through unchanged and
//! keeps the newest response per endpoint. Spark reports the live *driver's* `totalDuration` as
//! the application's uptime and its `totalGCTime` as the JVM's total GC time (`AppStatusStore.
//! replaceDriverGcTime`), so those two values change between any two requests even when Spark is
//! idle; the relay is frozen for the scrape, and the executor times are compared, exactly, with
//! the `/allexecutors` response the exporter itself read last. Everything else is compared with
//! the test's own REST reads, taken before and after the scrape and required to agree.
//!
//! The Python interpreter is `$SPARK_E2E_PYTHON` (default `.venv/bin/python` under the repository).
//! If it is missing the tests pass with a loud message, unless `SPARK_E2E_REQUIRED` is set (CI
//! sets it to 1), in which case they fail. Run artefacts (workload and exporter logs, REST JSON,
//! scrapes, dumps) stay in `target/tmp/e2e-core-<pid>/` for post-mortems. `scripts/e2e-core.sh`
//! creates the virtualenv if needed and runs the tests.

#[path = "../../e2e/exposition.rs"]
mod exposition;
#[path = "../../e2e/relay.rs"]
mod relay;
#[path = "../../e2e/report.rs"]
mod report;
use crate::support;
#[path = "../../e2e/truth.rs"]
mod truth;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use exposition::{parse_exposition, project, render, single, went_backwards, Sample, Scrape};
use relay::Relay;
use report::{panic_text, Failures};
use support::command::{exporter_command, Output};
use support::files::{artefact_dir, free_port, tail, tail_file};
use support::proc::Guard;
use support::{spark, EXPORTER};
use truth::{exec_times, fetch_rest, get, key, ExecTimes, Series, Truth};

/// The PySpark application.
const WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/workload.py");
/// How long Spark may take to start and run every job (it shares two cores with others).
const WORKLOAD_DEADLINE: Duration = Duration::from_secs(150);
/// How long the driver may take to stop once released.
const STOP_DEADLINE: Duration = Duration::from_secs(60);
/// Exporter readiness, poll counting and `spark_up` changes.
const EXPORTER_DEADLINE: Duration = Duration::from_secs(30);
/// The exporter's poll interval, as a flag value.
const POLL_INTERVAL: &str = "1s";

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

#[test]
fn live_ui_matches_rest() {
    let Some(run) = shared_run() else { return };
    let mut failures = Failures::default();
    check_live_scrape(&mut failures, run);
    check_live_dumps(&mut failures, run);
    check_after_driver(&mut failures, run);
    failures.finish(run);
}

/// The exporter's scrape of the live UI: well formed, every family equal to the REST truth,
/// executor times equal to the exporter's own last `/allexecutors`, the rewriting contract.
fn check_live_scrape(failures: &mut Failures, run: &Run) {
    let truth = &run.truth;
    let live = &run.live;

    // The scrape itself is well formed.
    failures.check_empty("duplicate series in /metrics", &live.duplicates);
    failures.check(
        "spark_up while the driver is alive",
        Some(1.0),
        single(&live.samples, "spark_up"),
    );

    compare_all(
        failures,
        "exporter (live UI, after two polls)",
        truth,
        &live.samples,
    );
    // Executor times: exactly what the exporter's own last /allexecutors said.
    let app = &truth.app_id;
    for (name, want) in [
        ("spark_executor_gc_time_seconds_total", &run.live_exec.gc),
        (
            "spark_executor_task_time_seconds_total",
            &run.live_exec.task_time,
        ),
    ] {
        failures.compare(
            &format!("exporter (live UI): {name} (vs the exporter's last /allexecutors)"),
            want,
            &project(&live.samples, name, app, &["executor_id"]),
        );
    }

    // The rewriting contract, pinned to literal values so a changed default rule is caught even
    // if the test's own copy of the rules changed with it.
    let jobs = project(
        &live.samples,
        "spark_jobs_total",
        &truth.app_id,
        &["job_group", "job_description"],
    );
    for (group, desc) in [
        ("daily_report", "revenue for {date}"),
        ("daily_report", "audit \"EU\" totals in C:\\reports"),
        ("gc_pressure", "Sort wide rows batch {n}"),
        // No job group, no tag: the call site, line kept, folders dropped.
        ("collect at workload.py:98", ""),
    ] {
        let k = key(&[("job_group", group), ("job_description", desc)]);
        if !jobs.contains_key(&k) {
            failures.push(format!(
                "no spark_jobs_total series {k}; series: {:?}",
                jobs.keys()
            ));
        }
    }
    if run.workload_gc_ms == 0 {
        failures
            .push("the workload's tasks had no GC time: the GC comparison proves little".into());
    }
}

/// `dump --spark.url`: against the live UI the same job counts and exit 0, against a dead port
/// non-zero.
fn check_live_dumps(failures: &mut Failures, run: &Run) {
    let truth = &run.truth;
    // `dump --spark.url` against the live UI: same job counts, exit 0.
    let d = &run.dump_live;
    if !d.status.success() {
        failures.push(format!(
            "dump --spark.url (live) exited {}; stderr:\n{}",
            d.status,
            tail(&d.stderr, 20)
        ));
    }
    let dumped = parse_exposition(&d.stdout).samples;
    failures.compare(
        "dump --spark.url (live): spark_jobs_total",
        &truth.jobs,
        &project(
            &dumped,
            "spark_jobs_total",
            &truth.app_id,
            &["job_group", "job_description", "status"],
        ),
    );
    // ... and non-zero against a port nobody listens on.
    if run.dump_dead.status.success() {
        failures.push(format!(
            "dump --spark.url against a dead port exited 0; stderr:\n{}",
            tail(&run.dump_dead.stderr, 10)
        ));
    }
}

/// After the driver went away: spark_up 0, the exporter up, counters never lower; then a clean
/// exit on SIGTERM.
fn check_after_driver(failures: &mut Failures, run: &Run) {
    match &run.after {
        Err(e) => failures.push(format!("after the driver stopped: {e}")),
        Ok(after) => {
            failures.check(
                "spark_up after the driver stopped",
                Some(0.0),
                single(&after.samples, "spark_up"),
            );
            if !after.exporter_alive {
                failures.push("the exporter exited after the driver went away".into());
            }
            failures.check_empty(
                "counters that went backwards or vanished after the driver stopped",
                &went_backwards(&run.live.samples, &after.samples),
            );
            if after.healthz != 200 {
                failures.push(format!(
                    "/healthz answered {} after the driver stopped",
                    after.healthz
                ));
            }
        }
    }
    match &run.sigterm_exit {
        Some(s) if s.success() => {}
        other => failures.push(format!(
            "exporter after SIGTERM: {other:?} (want a clean exit 0 within the grace period)"
        )),
    }
}

#[test]
fn event_log_matches_rest() {
    let Some(run) = shared_run() else { return };
    let truth = &run.truth;
    let mut failures = Failures::default();
    let out = exporter_command(
        &["dump", "--event-log", &run.event_log_dir.to_string_lossy()],
        Duration::from_secs(60),
    );
    fs::write(run.dir.join("dump-eventlog.txt"), &out.stdout).ok();
    fs::write(run.dir.join("dump-eventlog.stderr"), &out.stderr).ok();
    if !out.status.success() {
        failures.push(format!(
            "dump --event-log exited {}; stderr:\n{}",
            out.status,
            tail(&out.stderr, 20)
        ));
    }
    let s = parse_exposition(&out.stdout);
    failures.check_empty("duplicate series in dump --event-log", &s.duplicates);
    let app = &truth.app_id;
    let what = "dump --event-log";
    failures.compare(
        &format!("{what}: spark_jobs_total"),
        &truth.jobs,
        &project(
            &s.samples,
            "spark_jobs_total",
            app,
            &["job_group", "job_description", "status"],
        ),
    );
    failures.compare(
        &format!("{what}: spark_stages_total"),
        &truth.stages,
        &project(
            &s.samples,
            "spark_stages_total",
            app,
            &["job_group", "status"],
        ),
    );
    failures.compare(
        &format!("{what}: spark_tasks_total"),
        &truth.tasks,
        &project(
            &s.samples,
            "spark_tasks_total",
            app,
            &["job_group", "status"],
        ),
    );
    // Per-executor task time as the stages report it (sum of task durations): the driver's
    // `totalDuration` in /allexecutors is the live application's uptime, which no event log has.
    let name = "spark_executor_task_time_seconds_total";
    failures.compare(
        &format!("{what}: {name} (vs the stages' executorSummary taskTime)"),
        &truth.executor_task_sum,
        &project(&s.samples, name, app, &["executor_id"]),
    );
    failures.finish(run);
}

/// Every REST-derived family against one exposition.
fn compare_all(f: &mut Failures, what: &str, t: &Truth, samples: &[Sample]) {
    let app = &t.app_id;
    let mut cmp = |name: &str, want: &Series, keys: &[&str]| {
        f.compare(
            &format!("{what}: {name}"),
            want,
            &project(samples, name, app, keys),
        );
    };
    cmp(
        "spark_jobs_total",
        &t.jobs,
        &["job_group", "job_description", "status"],
    );
    cmp("spark_stages_total", &t.stages, &["job_group", "status"]);
    cmp("spark_tasks_total", &t.tasks, &["job_group", "status"]);
    cmp(
        "spark_task_run_time_seconds_total",
        &t.run_time,
        &["job_group"],
    );
    cmp(
        "spark_task_gc_time_seconds_total",
        &t.gc_time,
        &["job_group"],
    );
    cmp(
        "spark_executor_tasks_total",
        &t.executor_tasks,
        &["executor_id", "status"],
    );
    cmp(
        "spark_sql_executions_total",
        &t.sql,
        &["description", "status"],
    );
    cmp(
        "spark_app_info",
        &t.app_info,
        &["app_id", "app_name", "spark_version", "user"],
    );
    // Every job/stage/task series names the application as Spark does.
    for name in [
        "spark_jobs_total",
        "spark_stages_total",
        "spark_tasks_total",
    ] {
        let names: BTreeSet<&str> = samples
            .iter()
            .filter(|s| s.name == name && s.label("app_id") == app)
            .map(|s| s.label("app_name"))
            .collect();
        let want: BTreeSet<&str> = [t.app_name.as_str()].into();
        if names != want {
            f.push(format!(
                "{what}: {name} app_name labels {names:?}, want {want:?}"
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run: one Spark application, every process, every observation
// ---------------------------------------------------------------------------------------------

/// What one scenario saw. Processes are gone by the time this exists.
struct Run {
    dir: PathBuf,
    /// From the REST API, read directly; stable while Spark is idle.
    truth: Truth,
    /// Executor times from the last `/allexecutors` response the exporter read.
    live_exec: ExecTimes,
    /// GC time of the workload's tasks, as the workload measured it.
    workload_gc_ms: u64,
    live: Scrape,
    dump_live: Output,
    dump_dead: Output,
    after: Result<Scrape2, String>,
    sigterm_exit: Option<ExitStatus>,
    event_log_dir: PathBuf,
}

/// What the exporter looked like once the driver was gone.
struct Scrape2 {
    samples: Vec<Sample>,
    exporter_alive: bool,
    healthz: u16,
}

/// The shared run, or `None` when the tests are skipped. Panics (failing the calling test) if
/// the scenario could not run.
fn shared_run() -> Option<&'static Run> {
    static RUN: OnceLock<Result<Run, String>> = OnceLock::new();
    let python = spark::python("e2e_core")?;
    let r = RUN.get_or_init(|| {
        // A panic inside would leave the cell empty and make the other test run Spark again.
        std::panic::catch_unwind(|| scenario(&python))
            .unwrap_or_else(|p| Err(format!("scenario panicked: {}", panic_text(&p))))
    });
    match r {
        Ok(run) => Some(run),
        Err(e) => panic!("end-to-end scenario failed: {e}"),
    }
}

fn scenario(python: &Path) -> Result<Run, String> {
    let dir = artefact_dir("e2e-core");
    // Two workers: the relay keeps serving the exporter while this thread waits on a `dump`.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    rt.block_on(scenario_async(python, dir))
}

async fn scenario_async(python: &Path, dir: PathBuf) -> Result<Run, String> {
    let t0 = Instant::now();
    let say = |m: &str| eprintln!("[e2e {:>5.1}s] {m}", t0.elapsed().as_secs_f64());
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;

    // 1. The workload, until its jobs are done.
    let mut workload = run_workload(python, &dir, &say).await?;
    let url = workload.url.clone();

    // 2. The exporter against the live UI (through the relay), until it is ready and two polls
    //    have read /allexecutors, the last endpoint of a poll.
    let relay = Relay::start(&url, http.clone()).await?;
    let mut exporter = start_exporter(&http, &relay, &dir).await?;
    say("Exporter ready and polled twice.");

    // 3. REST truth around the scrape.
    let (truth, live_exec, live) =
        scrape_with_truth(&http, &url, &relay, &exporter, &workload.app_id, &dir, &say).await?;

    // 4. `dump --spark.url` straight at the live UI, and at a dead port.
    let dump_live = exporter_command(&["dump", "--spark.url", &url], Duration::from_secs(30));
    fs::write(dir.join("dump-live.txt"), &dump_live.stdout).ok();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let dump_dead = exporter_command(&["dump", "--spark.url", &dead], Duration::from_secs(30));
    say("Dumps done; releasing the driver.");

    // 5. Let the driver go (and the relay with it, so the exporter meets a closed port as it
    //    would in a pod), then watch the exporter.
    release_driver(&mut workload, &relay).await?;
    say("Driver stopped.");
    let after = after_driver_death(&http, &exporter.base, &relay.url, &mut exporter.guard).await;
    if let Ok(a) = &after {
        fs::write(dir.join("metrics-after.txt"), render(&a.samples)).ok();
    }

    // 6. SIGTERM: the exporter drains until a scrape shows the final state, then exits 0.
    let metrics_url = format!("{}/metrics", exporter.base);
    let sigterm_exit = exporter
        .guard
        .terminate_scraped(Duration::from_secs(15), &metrics_url);
    say("Scenario recorded.");
    Ok(Run {
        dir,
        truth,
        live_exec,
        workload_gc_ms: workload.gc_ms,
        live,
        dump_live,
        dump_dead,
        after,
        sigterm_exit,
        event_log_dir: workload.event_log_dir,
    })
}

/// The running PySpark workload, its jobs done, holding the driver until released.
struct Workload {
    guard: Guard,
    log: PathBuf,
    release_marker: PathBuf,
    event_log_dir: PathBuf,
    app_id: String,
    /// GC time of the workload's tasks, as the workload measured it.
    gc_ms: u64,
    /// The live UI.
    url: String,
}

/// Start the workload and wait until its jobs are done (its done marker).
async fn run_workload(python: &Path, dir: &Path, say: &impl Fn(&str)) -> Result<Workload, String> {
    let ui_port = free_port();
    let event_log_dir = dir.join("eventlog");
    let done_marker = dir.join("done.json");
    let release_marker = dir.join("release");
    let workload_log = dir.join("workload.log");
    let mut cmd = Command::new(python);
    cmd.arg(WORKLOAD)
        .arg("--ui-port")
        .arg(ui_port.to_string())
        .arg("--event-log-dir")
        .arg(&event_log_dir)
        .arg("--done-marker")
        .arg(&done_marker)
        .arg("--release-marker")
        .arg(&release_marker)
        .arg("--hold-timeout")
        .arg("240");
    let mut workload = Guard::spawn("workload", cmd, &workload_log, true);
    say(&format!(
        "Workload started (pid {}, UI port {ui_port}); waiting for its jobs.",
        workload.pid()
    ));
    let deadline = Instant::now() + WORKLOAD_DEADLINE;
    while !done_marker.exists() {
        if let Some(s) = workload.exited() {
            return Err(format!(
                "the workload exited ({s}) before its jobs were done:\n{}",
                tail_file(&workload_log, 40)
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the workload's jobs took over {WORKLOAD_DEADLINE:?}:\n{}",
                tail_file(&workload_log, 40)
            ));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let done: Value =
        serde_json::from_str(&fs::read_to_string(&done_marker).map_err(|e| e.to_string())?)
            .map_err(|e| format!("done marker: {e}"))?;
    let app_id = done["app_id"]
        .as_str()
        .ok_or("done marker has no app_id")?
        .to_string();
    let workload_gc_ms = done["task_gc_time_ms"].as_u64().unwrap_or(0);
    // Spark moves to the next port if ours was taken meanwhile; follow what it says.
    let ui_url = done["ui_url"].as_str().ok_or("done marker has no ui_url")?;
    let port = ui_url
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    let url = format!("http://127.0.0.1:{port}");
    say(&format!("Jobs done: app {app_id} at {url}."));
    Ok(Workload {
        guard: workload,
        log: workload_log,
        release_marker,
        event_log_dir,
        app_id,
        gc_ms: workload_gc_ms,
        url,
    })
}

/// The exporter process polling the live UI through the relay.
struct Exporter {
    guard: Guard,
    /// `http://` and its listen address.
    base: String,
    log: PathBuf,
}

impl Exporter {
    /// `m` followed by the tail of the exporter's log.
    fn fail(&self, m: String) -> String {
        format!("{m}\nexporter log:\n{}", tail_file(&self.log, 30))
    }
}

/// Start the exporter against the relay and wait until it is ready and two polls have read
/// /allexecutors.
async fn start_exporter(
    http: &reqwest::Client,
    relay: &Relay,
    dir: &Path,
) -> Result<Exporter, String> {
    let listen = format!("127.0.0.1:{}", free_port());
    let exporter_log = dir.join("exporter.log");
    let mut cmd = Command::new(EXPORTER);
    cmd.args([
        // Exact comparisons: every scrape must show the model as it is now (the default lets a
        // body be up to 1 s old, docs/configuration.md `web.max_staleness`).
        "--web.max-staleness",
        "0s",
        "--web.listen-address",
        &listen,
        "--spark.url",
        &relay.url,
        "--spark.poll-interval",
        POLL_INTERVAL,
        "--log.level",
        "debug",
    ]);
    let mut exporter = Exporter {
        guard: Guard::spawn("exporter", cmd, &exporter_log, false),
        base: format!("http://{listen}"),
        log: exporter_log,
    };
    let deadline = Instant::now() + EXPORTER_DEADLINE;
    loop {
        if let Some(s) = exporter.guard.exited() {
            return Err(exporter.fail(format!("the exporter exited ({s}) before it was ready")));
        }
        let ready = matches!(
            get(http, &format!("{}/readyz", exporter.base)).await,
            Ok((200, _))
        );
        if ready && relay.count("/allexecutors") >= 2 {
            break;
        }
        if Instant::now() > deadline {
            return Err(exporter.fail(format!(
                "not ready and polled twice within {EXPORTER_DEADLINE:?} \
                 (ready: {ready}; requests relayed: {:?})",
                relay.requests()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(exporter)
}

/// REST truth around one scrape; Spark is idle, but retry if the two readings differ. The relay
/// is frozen meanwhile, so the exporter's last /allexecutors is the relay's last.
async fn scrape_with_truth(
    http: &reqwest::Client,
    url: &str,
    relay: &Relay,
    exporter: &Exporter,
    app_id: &str,
    dir: &Path,
    say: &impl Fn(&str),
) -> Result<(Truth, ExecTimes, Scrape), String> {
    let mut attempt = 0;
    let (truth, live_exec, live_text) = loop {
        attempt += 1;
        let before = fetch_rest(http, url, app_id, dir).await?;
        relay.freeze().await;
        let scraped = get(http, &format!("{}/metrics", exporter.base)).await;
        let execs = relay.last("/allexecutors");
        relay.thaw();
        let (code, text) = scraped?;
        if code != 200 {
            return Err(exporter.fail(format!("/metrics answered {code}")));
        }
        let execs = execs.ok_or("the relay saw no /allexecutors response")?;
        fs::write(dir.join("relayed-allexecutors.json"), &execs).ok();
        let execs: Value =
            serde_json::from_str(&execs).map_err(|e| format!("relayed /allexecutors: {e}"))?;
        let after = fetch_rest(http, url, app_id, dir).await?;
        if before == after {
            break (after, exec_times(&execs), text);
        }
        let changes = before.diff(&after);
        if attempt == 3 {
            return Err(format!(
                "the REST API kept changing while the application was idle:\n{changes}"
            ));
        }
        say(&format!(
            "REST changed during the scrape; again.\n{changes}"
        ));
    };
    fs::write(dir.join("metrics-live.txt"), &live_text).ok();
    Ok((truth, live_exec, parse_exposition(&live_text)))
}

/// Release the driver, wait for it to stop, then close the relay.
async fn release_driver(workload: &mut Workload, relay: &Relay) -> Result<(), String> {
    fs::write(&workload.release_marker, b"").map_err(|e| format!("release marker: {e}"))?;
    let stopped = Instant::now();
    let status = loop {
        if let Some(s) = workload.guard.exited() {
            break s;
        }
        if stopped.elapsed() > STOP_DEADLINE {
            return Err(format!("the driver did not stop within {STOP_DEADLINE:?}"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    relay.close();
    if !status.success() {
        return Err(format!(
            "the workload exited {status}:\n{}",
            tail_file(&workload.log, 40)
        ));
    }
    Ok(())
}

/// Wait for `spark_up` to fall to 0, then let one more poll interval pass and scrape again.
async fn after_driver_death(
    http: &reqwest::Client,
    base: &str,
    url: &str,
    exporter: &mut Guard,
) -> Result<Scrape2, String> {
    let deadline = Instant::now() + EXPORTER_DEADLINE;
    loop {
        if exporter.exited().is_some() {
            return Err("the exporter exited after the driver stopped".into());
        }
        let (_, text) = get(http, &format!("{base}/metrics")).await?;
        let up = parse_exposition(&text)
            .samples
            .into_iter()
            .find(|s| s.name == "spark_up" && s.label("target") == url);
        if up.map(|s| s.value) == Some(0.0) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "spark_up did not fall to 0 within {EXPORTER_DEADLINE:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (code, text) = get(http, &format!("{base}/metrics")).await?;
    if code != 200 {
        return Err(format!("/metrics answered {code} after the driver stopped"));
    }
    let (healthz, _) = get(http, &format!("{base}/healthz")).await?;
    Ok(Scrape2 {
        samples: parse_exposition(&text).samples,
        exporter_alive: exporter.exited().is_none(),
        healthz,
    })
}
