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

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::Full;
use regex::Regex;
use serde_json::Value;

/// The PySpark application.
const WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/workload.py");
/// The exporter under test.
const EXPORTER: &str = env!("CARGO_BIN_EXE_spark-exporter");
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
    let truth = &run.truth;
    let live = &run.live;
    let mut failures = Failures::default();

    // The scrape itself is well formed.
    failures.check_empty("duplicate series in /metrics", &live.duplicates);
    failures.check(
        "spark_up while the driver is alive",
        Some(1.0),
        single(&live.samples, "spark_up"),
    );

    compare_all(
        &mut failures,
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
        ("", ""),
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

    // After the driver went away: spark_up 0, the exporter up, counters never lower.
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
                &went_backwards(&live.samples, &after.samples),
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
    failures.finish(run);
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

/// A parsed scrape.
struct Scrape {
    samples: Vec<Sample>,
    duplicates: Vec<String>,
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
    let python = python()?;
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

/// The interpreter with pyspark, or `None` (skip) when it is missing and not required.
fn python() -> Option<PathBuf> {
    let p = std::env::var_os("SPARK_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    let p = if p.is_relative() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
    } else {
        p
    };
    if p.exists() {
        return Some(p);
    }
    let required = std::env::var("SPARK_E2E_REQUIRED").is_ok_and(|v| !v.is_empty() && v != "0");
    if required {
        panic!(
            "SPARK_E2E_REQUIRED is set but the PySpark interpreter {} does not exist \
             (create it with `python3 -m venv .venv && .venv/bin/pip install pyspark==4.1.1`, \
             or point SPARK_E2E_PYTHON at one)",
            p.display()
        );
    }
    // Straight to the stderr handle: `eprintln!` is captured for passing tests, and a skip must
    // be seen.
    let bar = "!".repeat(80);
    let _ = writeln!(
        std::io::stderr(),
        "\n{bar}\n!!! SKIPPED: end-to-end Spark test. No PySpark interpreter at {}.\n\
         !!! Set SPARK_E2E_PYTHON, or SPARK_E2E_REQUIRED=1 to make this a failure.\n{bar}",
        p.display()
    );
    None
}

fn scenario(python: &Path) -> Result<Run, String> {
    let dir = run_dir()?;
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
    let ui_port = free_port()?;
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
    let mut workload = Guard::spawn("workload", cmd, &workload_log, true)?;
    say(&format!(
        "Workload started (pid {}, UI port {ui_port}); waiting for its jobs.",
        workload.id()
    ));
    let deadline = Instant::now() + WORKLOAD_DEADLINE;
    while !done_marker.exists() {
        if let Some(s) = workload.try_wait() {
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

    // 2. The exporter against the live UI (through the relay), until it is ready and two polls
    //    have read /allexecutors, the last endpoint of a poll.
    let relay = Relay::start(&url, http.clone()).await?;
    let listen = format!("127.0.0.1:{}", free_port()?);
    let exporter_log = dir.join("exporter.log");
    let mut cmd = Command::new(EXPORTER);
    cmd.args([
        "--web.listen-address",
        &listen,
        "--spark.url",
        &relay.url,
        "--spark.poll-interval",
        POLL_INTERVAL,
        "--log.level",
        "debug",
    ]);
    let mut exporter = Guard::spawn("exporter", cmd, &exporter_log, false)?;
    let base = format!("http://{listen}");
    let fail = |m: String| format!("{m}\nexporter log:\n{}", tail_file(&exporter_log, 30));
    let deadline = Instant::now() + EXPORTER_DEADLINE;
    loop {
        if let Some(s) = exporter.try_wait() {
            return Err(fail(format!(
                "the exporter exited ({s}) before it was ready"
            )));
        }
        let ready = matches!(get(&http, &format!("{base}/readyz")).await, Ok((200, _)));
        if ready && relay.count("/allexecutors") >= 2 {
            break;
        }
        if Instant::now() > deadline {
            return Err(fail(format!(
                "not ready and polled twice within {EXPORTER_DEADLINE:?} \
                 (ready: {ready}; requests relayed: {:?})",
                relay.requests()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    say("Exporter ready and polled twice.");

    // 3. REST truth around the scrape; Spark is idle, but retry if the two readings differ. The
    //    relay is frozen meanwhile, so the exporter's last /allexecutors is the relay's last.
    let mut attempt = 0;
    let (truth, live_exec, live_text) = loop {
        attempt += 1;
        let before = fetch_rest(&http, &url, &app_id, &dir).await?;
        relay.freeze().await;
        let scraped = get(&http, &format!("{base}/metrics")).await;
        let execs = relay.last("/allexecutors");
        relay.thaw();
        let (code, text) = scraped?;
        if code != 200 {
            return Err(fail(format!("/metrics answered {code}")));
        }
        let execs = execs.ok_or("the relay saw no /allexecutors response")?;
        fs::write(dir.join("relayed-allexecutors.json"), &execs).ok();
        let execs: Value =
            serde_json::from_str(&execs).map_err(|e| format!("relayed /allexecutors: {e}"))?;
        let after = fetch_rest(&http, &url, &app_id, &dir).await?;
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
    let live = parse_exposition(&live_text);

    // 4. `dump --spark.url` straight at the live UI, and at a dead port.
    let dump_live = exporter_command(&["dump", "--spark.url", &url], Duration::from_secs(30));
    fs::write(dir.join("dump-live.txt"), &dump_live.stdout).ok();
    let dead = format!("http://127.0.0.1:{}", free_port()?);
    let dump_dead = exporter_command(&["dump", "--spark.url", &dead], Duration::from_secs(30));
    say("Dumps done; releasing the driver.");

    // 5. Let the driver go (and the relay with it, so the exporter meets a closed port as it
    //    would in a pod), then watch the exporter.
    fs::write(&release_marker, b"").map_err(|e| format!("release marker: {e}"))?;
    let stopped = Instant::now();
    let status = loop {
        if let Some(s) = workload.try_wait() {
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
            tail_file(&workload_log, 40)
        ));
    }
    say("Driver stopped.");
    let after = after_driver_death(&http, &base, &relay.url, &mut exporter).await;
    if let Ok(a) = &after {
        fs::write(dir.join("metrics-after.txt"), render(&a.samples)).ok();
    }

    // 6. SIGTERM: the exporter should drain and exit 0.
    let sigterm_exit = exporter.terminate(Duration::from_secs(15));
    say("Scenario recorded.");
    Ok(Run {
        dir,
        truth,
        live_exec,
        workload_gc_ms,
        live,
        dump_live,
        dump_dead,
        after,
        sigterm_exit,
        event_log_dir,
    })
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
        if exporter.try_wait().is_some() {
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
        exporter_alive: exporter.try_wait().is_none(),
        healthz,
    })
}

/// A fresh folder for this run's artefacts; runs older than an hour are removed.
fn run_dir() -> Result<PathBuf, String> {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if let Ok(entries) = fs::read_dir(&root) {
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > Duration::from_secs(3600));
            if old && e.file_name().to_string_lossy().starts_with("e2e-core-") {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = root.join(format!("e2e-core-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The relay between the exporter and the Spark UI
// ---------------------------------------------------------------------------------------------

/// Passes every GET through to the Spark UI unchanged and keeps the newest response body per
/// endpoint. Frozen, it holds new requests until thawed, so nothing the exporter has read can
/// change while the test scrapes and looks at what it read.
struct Relay {
    url: String,
    state: Arc<RelayState>,
    task: tokio::task::JoinHandle<()>,
}

struct RelayState {
    upstream: String,
    http: reqwest::Client,
    frozen: tokio::sync::watch::Sender<bool>,
    /// Requests past the gate and not yet answered.
    inflight: AtomicUsize,
    /// Every request (`path?query`) and its status, in order.
    seen: Mutex<Vec<(String, u16)>>,
    /// Newest 200 body per path (no query).
    last: Mutex<BTreeMap<String, String>>,
}

impl Relay {
    async fn start(upstream: &str, http: reqwest::Client) -> Result<Relay, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("relay: {e}"))?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let state = Arc::new(RelayState {
            upstream: upstream.to_string(),
            http,
            frozen: tokio::sync::watch::Sender::new(false),
            inflight: AtomicUsize::new(0),
            seen: Mutex::default(),
            last: Mutex::default(),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            // Connections live in this set, so aborting the task closes them all.
            let mut conns = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let st = st.clone();
                conns.spawn(async move {
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let st = st.clone();
                            async move { Ok::<_, std::convert::Infallible>(st.relay(req).await) }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
                while conns.try_join_next().is_some() {}
            }
        });
        Ok(Relay { url, state, task })
    }

    /// Hold new requests, wait for those in flight, then give the exporter a moment to apply
    /// the last response.
    async fn freeze(&self) {
        self.state.frozen.send_replace(true);
        while self.state.inflight.load(SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    fn thaw(&self) {
        self.state.frozen.send_replace(false);
    }

    /// Stop listening and drop every connection: the exporter now meets a closed port.
    fn close(&self) {
        self.task.abort();
    }

    /// Successful responses so far to paths ending with `suffix`.
    fn count(&self, suffix: &str) -> usize {
        let seen = self.state.seen.lock().unwrap();
        seen.iter()
            .filter(|(pq, code)| {
                *code == 200 && pq.split('?').next().unwrap_or("").ends_with(suffix)
            })
            .count()
    }

    fn requests(&self) -> Vec<(String, u16)> {
        self.state.seen.lock().unwrap().clone()
    }

    /// The newest successful body of a path ending with `suffix`.
    fn last(&self, suffix: &str) -> Option<String> {
        let last = self.state.last.lock().unwrap();
        last.iter()
            .find(|(p, _)| p.ends_with(suffix))
            .map(|(_, b)| b.clone())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RelayState {
    async fn relay(
        &self,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<Full<Bytes>> {
        let pq = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        let path = req.uri().path().to_string();
        // Counted in flight before looking at the gate, so `freeze` cannot miss a request.
        loop {
            self.inflight.fetch_add(1, SeqCst);
            if !*self.frozen.borrow() {
                break;
            }
            self.inflight.fetch_sub(1, SeqCst);
            let _ = self.frozen.subscribe().wait_for(|f| !*f).await;
        }
        let answer = match self.http.get(format!("{}{pq}", self.upstream)).send().await {
            Ok(r) => {
                let code = r.status().as_u16();
                match r.bytes().await {
                    Ok(b) => (code, b),
                    Err(e) => (502, Bytes::from(format!("relay: upstream body: {e}"))),
                }
            }
            Err(e) => (502, Bytes::from(format!("relay: upstream: {e}"))),
        };
        self.seen.lock().unwrap().push((pq, answer.0));
        if answer.0 == 200 {
            self.last
                .lock()
                .unwrap()
                .insert(path, String::from_utf8_lossy(&answer.1).into_owned());
        }
        self.inflight.fetch_sub(1, SeqCst);
        let mut resp = hyper::Response::new(Full::new(answer.1));
        *resp.status_mut() =
            hyper::StatusCode::from_u16(answer.0).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        resp
    }
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/// A child process that is killed (with its process group, for the JVM under PySpark) when the
/// guard is dropped, so a failed assertion or a panic never leaves Spark running.
struct Guard {
    name: &'static str,
    child: Child,
    group: bool,
}

impl Guard {
    fn spawn(
        name: &'static str,
        mut cmd: Command,
        log: &Path,
        own_group: bool,
    ) -> Result<Guard, String> {
        let out = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        if own_group {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the {name}: {e}"))?;
        Ok(Guard {
            name,
            child,
            group: own_group,
        })
    }
    fn id(&self) -> u32 {
        self.child.id()
    }
    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
    /// SIGTERM, then wait up to `grace`; `None` if it did not exit in time.
    fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let end = Instant::now() + grace;
        while Instant::now() < end {
            if let Some(s) = self.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let running = self.try_wait().is_none();
        if self.group {
            // The group id is the child's pid (process_group(0)); this reaches the JVM too,
            // should it outlive the Python driver.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
        }
        if running {
            let _ = self.child.kill();
            let _ = self.child.wait();
            eprintln!(
                "[e2e] {} (pid {}) killed by its guard.",
                self.name,
                self.child.id()
            );
        }
    }
}

/// A finished command.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Run the exporter binary with `args`, killing it after `limit`.
fn exporter_command(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(EXPORTER)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the exporter");
    // Drain the pipes on threads so a large exposition never blocks the child.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut so, &mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut se, &mut s).ok();
        s
    });
    let end = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

async fn get(http: &reqwest::Client, url: &str) -> Result<(u16, String), String> {
    let r = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let code = r.status().as_u16();
    let body = r
        .text()
        .await
        .map_err(|e| format!("GET {url}: body: {e}"))?;
    Ok((code, body))
}

async fn get_json(
    http: &reqwest::Client,
    url: &str,
    dir: &Path,
    file: &str,
) -> Result<Value, String> {
    let (code, body) = get(http, url).await?;
    fs::write(dir.join(file), &body).ok();
    if code != 200 {
        return Err(format!("GET {url}: HTTP {code}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("GET {url}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// REST truth
// ---------------------------------------------------------------------------------------------

/// Values keyed by a rendered label set such as `{job_group="a",status="failed"}`; zeros are
/// left out, so an absent series and a series at 0 are the same.
type Series = BTreeMap<String, f64>;

/// What the exporter should export, computed from the REST API alone.
#[derive(Debug, Clone, PartialEq)]
struct Truth {
    app_id: String,
    app_name: String,
    app_info: Series,
    jobs: Series,
    stages: Series,
    tasks: Series,
    run_time: Series,
    gc_time: Series,
    executor_tasks: Series,
    /// Per executor: the sum over stage attempts of `executorSummary[id].taskTime`, i.e. of the
    /// durations of the executor's tasks (what `/allexecutors` reports for executors other
    /// than the live driver).
    executor_task_sum: Series,
    sql: Series,
}

/// Executor GC and task time as one `/allexecutors` response gives them.
#[derive(Debug, Clone, PartialEq)]
struct ExecTimes {
    gc: Series,
    task_time: Series,
}

fn exec_times(execs: &Value) -> ExecTimes {
    let (mut gc, mut task_time) = (Series::new(), Series::new());
    for e in arr(execs) {
        let k = key(&[("executor_id", s(&e["id"]))]);
        gc.insert(k.clone(), n(&e["totalGCTime"]) / 1000.0);
        task_time.insert(k, n(&e["totalDuration"]) / 1000.0);
    }
    ExecTimes {
        gc: nonzero(gc),
        task_time: nonzero(task_time),
    }
}

impl Truth {
    /// What changed from `self` to `other`, one line per value.
    fn diff(&self, other: &Truth) -> String {
        let mut f = Failures::default();
        for (name, a, b) in [
            ("app_info", &self.app_info, &other.app_info),
            ("jobs", &self.jobs, &other.jobs),
            ("stages", &self.stages, &other.stages),
            ("tasks", &self.tasks, &other.tasks),
            ("run_time", &self.run_time, &other.run_time),
            ("gc_time", &self.gc_time, &other.gc_time),
            (
                "executor_tasks",
                &self.executor_tasks,
                &other.executor_tasks,
            ),
            (
                "executor_task_sum",
                &self.executor_task_sum,
                &other.executor_task_sum,
            ),
            ("sql", &self.sql, &other.sql),
        ] {
            f.compare(name, a, b);
        }
        f.0.join("\n")
    }
}

async fn fetch_rest(
    http: &reqwest::Client,
    url: &str,
    app_id: &str,
    dir: &Path,
) -> Result<Truth, String> {
    let api = format!("{url}/api/v1/applications");
    let apps = get_json(http, &api, dir, "rest-applications.json").await?;
    let base = format!("{api}/{app_id}");
    let jobs = get_json(http, &format!("{base}/jobs"), dir, "rest-jobs.json").await?;
    let stages = get_json(
        http,
        &format!("{base}/stages?details=false"),
        dir,
        "rest-stages.json",
    )
    .await?;
    let detailed = get_json(
        http,
        &format!("{base}/stages?details=true"),
        dir,
        "rest-stages-details.json",
    )
    .await?;
    let execs = get_json(
        http,
        &format!("{base}/allexecutors"),
        dir,
        "rest-allexecutors.json",
    )
    .await?;
    let sql = get_json(
        http,
        &format!("{base}/sql?details=false"),
        dir,
        "rest-sql.json",
    )
    .await?;
    truth(app_id, &apps, &jobs, &stages, &detailed, &execs, &sql)
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}
fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}
fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn add(m: &mut Series, k: String, v: f64) {
    *m.entry(k).or_default() += v;
}

fn nonzero(mut m: Series) -> Series {
    m.retain(|_, v| *v != 0.0);
    m
}

/// Expected values from the REST responses. Spark must be idle: a running job or an active stage
/// is an error, not something to compare.
fn truth(
    app_id: &str,
    apps: &Value,
    jobs: &Value,
    stages: &Value,
    detailed: &Value,
    execs: &Value,
    sql: &Value,
) -> Result<Truth, String> {
    let app = arr(apps)
        .iter()
        .find(|a| s(&a["id"]) == app_id)
        .ok_or_else(|| format!("{app_id} not in /applications"))?;
    let attempt = &app["attempts"][0];
    let app_name = s(&app["name"]).to_string();
    let app_info = Series::from([(
        key(&[
            ("app_id", app_id),
            ("app_name", &app_name),
            ("spark_version", s(&attempt["appSparkVersion"])),
            ("user", s(&attempt["sparkUser"])),
        ]),
        1.0,
    )]);

    // Jobs, and the job group of each stage: that of the first (lowest id) job listing it.
    let mut t_jobs = Series::new();
    let mut stage_group: BTreeMap<u64, String> = BTreeMap::new();
    let mut sorted: Vec<&Value> = arr(jobs).iter().collect();
    sorted.sort_by_key(|j| j["jobId"].as_u64());
    for j in sorted {
        let group = rewrite(s(&j["jobGroup"]));
        let status = match s(&j["status"]) {
            "SUCCEEDED" => "succeeded",
            "FAILED" => "failed",
            other => return Err(format!("job {} is {other}: Spark is not idle", j["jobId"])),
        };
        add(
            &mut t_jobs,
            key(&[
                ("job_group", &group),
                ("job_description", &rewrite(s(&j["description"]))),
                ("status", status),
            ]),
            1.0,
        );
        for id in arr(&j["stageIds"]) {
            stage_group
                .entry(id.as_u64().unwrap_or(u64::MAX))
                .or_insert_with(|| group.clone());
        }
    }

    let (mut t_stages, mut t_tasks, mut t_run, mut t_gc) =
        (Series::new(), Series::new(), Series::new(), Series::new());
    for st in arr(stages) {
        let id = st["stageId"].as_u64().unwrap_or(u64::MAX);
        let group = stage_group
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("<stage {id} is in no job>"));
        let status = match s(&st["status"]) {
            "COMPLETE" => "complete",
            "FAILED" => "failed",
            "SKIPPED" => "skipped",
            other => return Err(format!("stage {id} is {other}: Spark is not idle")),
        };
        add(
            &mut t_stages,
            key(&[("job_group", &group), ("status", status)]),
            1.0,
        );
        for (field, status) in [
            ("numCompleteTasks", "succeeded"),
            ("numFailedTasks", "failed"),
            ("numKilledTasks", "killed"),
        ] {
            add(
                &mut t_tasks,
                key(&[("job_group", &group), ("status", status)]),
                n(&st[field]),
            );
        }
        add(
            &mut t_run,
            key(&[("job_group", &group)]),
            n(&st["executorRunTime"]) / 1000.0,
        );
        add(
            &mut t_gc,
            key(&[("job_group", &group)]),
            n(&st["jvmGcTime"]) / 1000.0,
        );
    }
    let mut task_sum = Series::new();
    for st in arr(detailed) {
        for (id, summary) in st["executorSummary"].as_object().into_iter().flatten() {
            add(
                &mut task_sum,
                key(&[("executor_id", id)]),
                n(&summary["taskTime"]) / 1000.0,
            );
        }
    }

    let mut tasks = Series::new();
    for e in arr(execs) {
        let id = s(&e["id"]);
        tasks.insert(
            key(&[("executor_id", id), ("status", "completed")]),
            n(&e["completedTasks"]),
        );
        tasks.insert(
            key(&[("executor_id", id), ("status", "failed")]),
            n(&e["failedTasks"]),
        );
    }

    let mut t_sql = Series::new();
    for x in arr(sql) {
        let status = match s(&x["status"]) {
            "COMPLETED" => "completed",
            "FAILED" => "failed",
            other => {
                return Err(format!(
                    "SQL execution {} is {other}: Spark is not idle",
                    x["id"]
                ))
            }
        };
        add(
            &mut t_sql,
            key(&[
                ("description", &rewrite(s(&x["description"]))),
                ("status", status),
            ]),
            1.0,
        );
    }

    Ok(Truth {
        app_id: app_id.to_string(),
        app_name,
        app_info,
        jobs: nonzero(t_jobs),
        stages: nonzero(t_stages),
        tasks: nonzero(t_tasks),
        run_time: nonzero(t_run),
        gc_time: nonzero(t_gc),
        executor_tasks: nonzero(tasks),
        executor_task_sum: nonzero(task_sum),
        sql: nonzero(t_sql),
    })
}

/// The exporter's documented default label rewriting (README: dates, then long numbers, then hex,
/// then any number), written out here so the test does not trust the code it checks. Values are
/// trimmed and cut to 120 characters.
fn rewrite(raw: &str) -> String {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                "{uuid}",
            ),
            (
                r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?",
                "{date}",
            ),
            (r"\b\d{8,}\b", "{n}"),
            (r"\b(?:0x)?[0-9a-fA-F]{8,}\b", "{hex}"),
            (r"\d+", "{n}"),
        ]
        .into_iter()
        .map(|(p, r)| (Regex::new(p).unwrap(), r))
        .collect()
    });
    let mut v = raw.trim().to_string();
    for (re, rep) in rules {
        v = re.replace_all(&v, *rep).into_owned();
    }
    if v.chars().count() > 120 {
        v = v.chars().take(119).chain(['…']).collect();
    }
    v
}

/// A label set rendered the way diffs print it.
fn key(labels: &[(&str, &str)]) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(","))
}

// ---------------------------------------------------------------------------------------------
// Exposition
// ---------------------------------------------------------------------------------------------

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

impl Sample {
    fn label(&self, k: &str) -> &str {
        self.labels.get(k).map(String::as_str).unwrap_or("")
    }
    fn id(&self) -> String {
        let l: Vec<(&str, &str)> = self
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        format!("{}{}", self.name, key(&l))
    }
}

/// Parse the text format (classic or OpenMetrics): `name{k="v",...} value [timestamp]` lines;
/// comments skipped; `\\`, `\"` and `\n` unescaped in label values. Lines that do not parse are
/// reported as duplicates' neighbours would be: as problems.
fn parse_exposition(text: &str) -> Scrape {
    let mut samples = vec![];
    let mut problems = vec![];
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line) {
            Some(s) => {
                if !seen.insert(s.id()) {
                    problems.push(format!("duplicate: {}", s.id()));
                }
                samples.push(s);
            }
            None => problems.push(format!("unparsable line: {line}")),
        }
    }
    Scrape {
        samples,
        duplicates: problems,
    }
}

fn parse_line(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut labels = BTreeMap::new();
    let mut rest = &line[name_end..];
    if let Some(mut r) = rest.strip_prefix('{') {
        // `k="v"` pairs separated by commas, up to the closing brace.
        loop {
            r = r.trim_start_matches([',', ' ']);
            if let Some(after) = r.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = r.find('=')?;
            let k = r[..eq].trim().to_string();
            r = r[eq + 1..].strip_prefix('"')?;
            let mut v = String::new();
            let mut chars = r.char_indices();
            let close = loop {
                match chars.next()? {
                    (_, '\\') => match chars.next()?.1 {
                        'n' => v.push('\n'),
                        other => v.push(other),
                    },
                    (i, '"') => break i,
                    (_, c) => v.push(c),
                }
            };
            r = &r[close + 1..];
            labels.insert(k, v);
        }
    }
    let value = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// Samples re-rendered (for the artefact folder).
fn render(samples: &[Sample]) -> String {
    samples
        .iter()
        .map(|s| format!("{} {}\n", s.id(), s.value))
        .collect()
}

/// Sum the samples of `name` for `app_id` by the labels `keys` (other labels summed over).
fn project(samples: &[Sample], name: &str, app_id: &str, keys: &[&str]) -> Series {
    let mut m = Series::new();
    for smp in samples
        .iter()
        .filter(|x| x.name == name && x.label("app_id") == app_id)
    {
        let l: Vec<(&str, &str)> = keys
            .iter()
            .map(|k| {
                (
                    *k,
                    smp.labels
                        .get(*k)
                        .map(String::as_str)
                        .unwrap_or("<missing>"),
                )
            })
            .collect();
        add(&mut m, key(&l), smp.value);
    }
    nonzero(m)
}

/// The value of the only sample named `name` (`None` if there is not exactly one).
fn single(samples: &[Sample], name: &str) -> Option<f64> {
    let v: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == name)
        .map(|s| s.value)
        .collect();
    (v.len() == 1).then(|| v[0])
}

/// Counter samples (`_total`, histogram `_count`/`_sum`/`_bucket`) of `before` that are lower,
/// or gone, in `after`.
fn went_backwards(before: &[Sample], after: &[Sample]) -> Vec<String> {
    let after: BTreeMap<String, f64> = after.iter().map(|s| (s.id(), s.value)).collect();
    before
        .iter()
        .filter(|s| {
            ["_total", "_count", "_sum", "_bucket"]
                .iter()
                .any(|x| s.name.ends_with(x))
        })
        .filter_map(|s| match after.get(&s.id()) {
            Some(v) if *v >= s.value => None,
            Some(v) => Some(format!("{}: {} -> {v}", s.id(), s.value)),
            None => Some(format!("{}: {} -> (gone)", s.id(), s.value)),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reporting
// ---------------------------------------------------------------------------------------------

/// Every problem of one test, reported together with a diff for each mismatching family.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn push(&mut self, m: String) {
        self.0.push(m);
    }
    fn check(&mut self, what: &str, want: Option<f64>, got: Option<f64>) {
        if want != got {
            self.push(format!("{what}: want {want:?}, got {got:?}"));
        }
    }
    fn check_empty(&mut self, what: &str, items: &[String]) {
        if !items.is_empty() {
            self.push(format!("{what}:\n    {}", items.join("\n    ")));
        }
    }
    /// Exact comparison; values that are milliseconds divided by 1000 may differ by float
    /// rounding only (1e-9 relative).
    fn compare(&mut self, what: &str, want: &Series, got: &Series) {
        let mut lines = vec![];
        for k in want.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
            let (w, g) = (want.get(k), got.get(k));
            let same = match (w, g) {
                (Some(w), Some(g)) => (w - g).abs() <= 1e-9 * w.abs().max(1.0),
                _ => false,
            };
            let show = |v: Option<&f64>| v.map_or("(none)".to_string(), |v| format!("{v}"));
            lines.push(format!(
                "  {} {k}: REST {} / exported {}",
                if same { " " } else { "✗" },
                show(w),
                show(g)
            ));
        }
        if lines.iter().any(|l| l.starts_with("  ✗")) {
            self.push(format!(
                "{what} differs from the REST API:\n{}",
                lines.join("\n")
            ));
        }
    }
    fn finish(self, run: &Run) {
        if !self.0.is_empty() {
            panic!(
                "{} problem(s); artefacts in {}\n\n{}",
                self.0.len(),
                run.dir.display(),
                self.0.join("\n\n")
            );
        }
    }
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn tail_file(p: &Path, n: usize) -> String {
    tail(&fs::read_to_string(p).unwrap_or_default(), n)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The test's own helpers, tested
// ---------------------------------------------------------------------------------------------

#[test]
fn exposition_parser_handles_escapes_and_special_values() {
    let s = parse_exposition(concat!(
        "# TYPE x counter\n",
        "x_total{a=\"say \\\"hi\\\"\",b=\"C:\\\\dir\",c=\"l1\\nl2\"} 3\n",
        "up 1\n",
        "h_bucket{le=\"+Inf\"} 4 1700000000000\n",
        "g{a=\"}{,=\"} NaN\n",
    ));
    assert!(s.duplicates.is_empty(), "{:?}", s.duplicates);
    assert_eq!(s.samples[0].label("a"), "say \"hi\"");
    assert_eq!(s.samples[0].label("b"), "C:\\dir");
    assert_eq!(s.samples[0].label("c"), "l1\nl2");
    assert_eq!(s.samples[0].value, 3.0);
    assert_eq!(
        (s.samples[1].name.as_str(), s.samples[1].value),
        ("up", 1.0)
    );
    assert_eq!(s.samples[2].label("le"), "+Inf");
    assert_eq!(s.samples[3].label("a"), "}{,=");
    assert!(s.samples[3].value.is_nan());
    assert_eq!(parse_exposition("x 1\nx 2\n").duplicates.len(), 1);
}

#[test]
fn rewrite_follows_the_documented_defaults() {
    assert_eq!(rewrite("revenue for 2026-11-01"), "revenue for {date}");
    assert_eq!(
        rewrite("Sort wide rows batch 7"),
        "Sort wide rows batch {n}"
    );
    assert_eq!(
        rewrite("run 123e4567-e89b-12d3-a456-426614174000"),
        "run {uuid}"
    );
    assert_eq!(rewrite("sha deadbeef01"), "sha {hex}");
    assert_eq!(rewrite("id 1234567890"), "id {n}");
    assert_eq!(
        rewrite("  Load orders for region EU "),
        "Load orders for region EU"
    );
}

#[test]
fn truth_from_a_recorded_snapshot() {
    // Spark 4.1.1 REST responses recorded from a similar application (tests/data).
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/spark-4.1.1-basic/rest-snapshots/0009"
    );
    let read = |f: &str| -> Value {
        serde_json::from_str(&fs::read_to_string(format!("{dir}/{f}")).unwrap()).unwrap()
    };
    let apps = Value::Array(vec![read("app.json")]);
    let t = truth(
        "local-1795981136444",
        &apps,
        &read("jobs.json"),
        &read("stages.json"),
        &Value::Array(vec![]),
        &read("allexecutors.json"),
        &read("sql__details-false.json"),
    )
    .unwrap();
    let g = |group: &str, status: &str| key(&[("job_group", group), ("status", status)]);
    let job = |group: &str, desc: &str, status: &str| {
        key(&[
            ("job_group", group),
            ("job_description", desc),
            ("status", status),
        ])
    };
    assert_eq!(
        t.jobs
            .get(&job("daily_report", "revenue for {date}", "succeeded")),
        Some(&6.0)
    );
    assert_eq!(
        t.jobs
            .get(&job("failing_job", "This job fails on purpose", "failed")),
        Some(&1.0)
    );
    assert_eq!(t.jobs.values().sum::<f64>(), 15.0);
    // Stages 4..17 belong to daily_report; 7, 10, 13 and 16 were skipped.
    assert_eq!(t.stages.get(&g("daily_report", "complete")), Some(&10.0));
    assert_eq!(t.stages.get(&g("daily_report", "skipped")), Some(&4.0));
    assert_eq!(t.stages.get(&g("failing_job", "failed")), Some(&1.0));
    assert_eq!(t.tasks.get(&g("failing_job", "failed")), Some(&2.0));
    assert_eq!(t.tasks.get(&g("failing_job", "succeeded")), Some(&3.0));
    assert_eq!(t.tasks.get(&g("failing_job", "killed")), None);
    assert_eq!(
        t.run_time.get(&key(&[("job_group", "ingest_orders")])),
        Some(&1.868)
    );
    assert_eq!(
        t.executor_tasks
            .get(&key(&[("executor_id", "driver"), ("status", "failed")])),
        Some(&2.0)
    );
    assert_eq!(
        t.sql.get(&key(&[
            ("description", "revenue for {date}"),
            ("status", "completed")
        ])),
        Some(&3.0)
    );
    assert_eq!(t.app_info.len(), 1);

    // A mismatch, a missing and an extra series are all reported; equal series are not.
    let mut f = Failures::default();
    let want = Series::from([("a".into(), 1.0), ("b".into(), 0.25)]);
    f.compare("same", &want, &want.clone());
    assert!(f.0.is_empty());
    f.compare(
        "differs",
        &want,
        &Series::from([("a".into(), 2.0), ("c".into(), 1.0)]),
    );
    assert_eq!(f.0.len(), 1);
    assert_eq!(f.0[0].matches('✗').count(), 3, "{}", f.0[0]);
}
