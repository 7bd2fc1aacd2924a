//! OTLP export from an exporter watching a REAL, live PySpark application (tests/e2e/workload.py,
//! pip pyspark + the machine's Java 17), received by the real OTLP receiver of tests/support/otlp
//! (gRPC).
//!
//! The exporter polls the live Spark UI's REST API every second and exports every second. While
//! the jobs run, the receiver is stopped (port closed, connections dropped) and started again on
//! the same port: exports must resume by themselves and the failures must be counted. Once the
//! jobs are done and two more polls have passed, an export is compared with a `/metrics` scrape
//! taken just before it, every series of every family both ways, with the same rules as
//! tests/it/otlp_export.rs (the tables of docs/otlp.md, the × 1000 ms scaling, the clock-driven
//! gauges of `otlp::TIME_DEPENDENT` within a few seconds).
//!
//! Looser than tests/it/otlp_export.rs, because a live application is not a static file:
//! - `spark_executor_task_time_seconds_total` and `spark_executor_gc_time_seconds_total` for
//!   `executor_id="driver"`: Spark's REST API reports the live driver's `totalDuration` as the
//!   application's uptime and its `totalGCTime` as the whole JVM's GC time, so both grow between
//!   any two polls even when no job runs. The OTLP point must exist, with the documented unit and
//!   instrument, and its value (ms) must be at least the scraped one and at most 10 s above it
//!   (the export is taken after the scrape, and these only grow).
//! - the exporter's own polling self-metrics (`spark_exporter_rest_*`, `spark_exporter_scrape_*`)
//!   move with every poll: same presence, unit and instrument checks; counters must not be below
//!   the scraped value. The other `spark_exporter_*` families (build info, label overflow, event
//!   log) stay exact; the OTLP ones are in `otlp::TIME_DEPENDENT` already.
//!
//! The interpreter is `$SPARK_E2E_PYTHON` (default `.venv/bin/python`); if it is missing the test
//! passes with a loud message, unless `SPARK_E2E_REQUIRED` is set, in which case it fails. Every
//! child (the workload, with Spark's JVM in its process group, and the exporter) is killed by a
//! guard on drop, so a failed assertion leaves nothing running. Logs stay in
//! `target/tmp/otlp-live-<pid>/`.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::files::{artefact_dir, free_port, tail_file};
use support::otlp::{
    clean_env, compare, documented, parse_prometheus, points, Point, Prom, Proto, Received,
    Receiver, PV,
};
use support::proc::Guard;
use support::{spark, EXPORTER};

const WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/workload.py");
/// Seconds the clock-driven gauges may differ between a scrape and an export.
const SLACK: Option<f64> = Some(10.0);
/// How far (ms) the driver's uptime-driven executor times may move between scrape and export.
const DRIVER_SLACK_MS: f64 = 10_000.0;

// ---------------------------------------------------------------------------------------------
// The exporter

/// The exporter on the live UI with OTLP on; stderr kept in memory and in a file.
struct LiveExporter {
    guard: Guard,
    port: u16,
}

impl LiveExporter {
    fn start(spark_url: &str, r: &Receiver, log_file: &Path) -> LiveExporter {
        let port = free_port();
        let mut cmd = Command::new(EXPORTER);
        cmd.args([
            // Scrapes are compared with OTLP exports of the same moment: no up-to-1 s-old
            // bodies (docs/configuration.md `web.max_staleness`).
            "--web.max-staleness".to_string(),
            "0s".into(),
            "--web.listen-address".into(),
            format!("127.0.0.1:{port}"),
            "--spark.url".into(),
            spark_url.into(),
            "--spark.poll-interval".into(),
            "1s".into(),
            "--otlp.endpoint".into(),
            r.endpoint(),
            "--otlp.protocol".into(),
            Proto::Grpc.flag().into(),
            "--otlp.interval".into(),
            "1s".into(),
            "--log.level".into(),
            "debug".into(),
        ]);
        clean_env(&mut cmd);
        LiveExporter {
            guard: Guard::capture("exporter", cmd, Some(log_file)),
            port,
        }
    }

    fn log_count(&self, needle: &str) -> usize {
        self.guard.count_lines(needle)
    }

    fn log_tail(&self) -> String {
        let l = self.guard.lines();
        l[l.len().saturating_sub(40)..].join("\n")
    }

    async fn scrape(&mut self) -> Prom {
        assert!(
            self.guard.running(),
            "the exporter died; log:\n{}",
            self.log_tail()
        );
        let url = format!("http://127.0.0.1:{}/metrics", self.port);
        for _ in 0..200 {
            if let Ok(r) = reqwest::get(&url).await {
                if let Ok(body) = r.text().await {
                    return parse_prometheus(&body);
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("/metrics did not answer; log:\n{}", self.log_tail());
    }
}

// ---------------------------------------------------------------------------------------------
// Comparison

fn sum_of(p: &Prom, name: &str) -> f64 {
    p.0.iter()
        .filter(|((n, _), _)| n == name)
        .map(|(_, v)| v)
        .sum()
}

/// Core-seconds (and memory GiB-seconds, and their money) of live executors count to each REST
/// poll's clock: a poll between the scrape and the export adds the poll interval times the
/// cores (the GiB). Compared loosely.
const COST_CLOCK: [&str; 4] = [
    "spark_executor_core_seconds_allocated_total",
    "spark_executor_idle_core_seconds",
    "spark_executor_memory_gib_seconds_allocated_total",
    "spark_app_cost_total",
];
/// At most this many core-seconds more in the export than in the scrape before it.
const COST_SLACK_S: f64 = 30.0;

/// Families whose values move with the live driver's clock or with every poll (see the module
/// comment); compared loosely.
fn loose(name: &str, labels: &BTreeMap<String, String>) -> bool {
    let driver_time = (name == "spark_executor_task_time_seconds_total"
        || name == "spark_executor_gc_time_seconds_total")
        && labels.get("executor_id").map(String::as_str) == Some("driver");
    driver_time
        || COST_CLOCK.contains(&name)
        || name.starts_with("spark_exporter_rest_")
        || name.starts_with("spark_exporter_scrape_")
        || name.starts_with("process_")
}

/// Compare like tests/it/otlp_export.rs, except that the loose series are checked here and then set
/// to the exported value before `otlp::compare` does the exact comparison of everything else.
fn compare_live(prom: &Prom, pts: &[Point]) -> Vec<String> {
    let (rows, renames) = documented();
    let mut errors = vec![];
    let mut patched = prom.clone();
    for ((name, labels), value) in patched.0.iter_mut() {
        if !loose(name, labels) {
            continue;
        }
        let Some(row) = rows.get(name.as_str()) else {
            continue; // otlp::compare reports it
        };
        let mut attrs: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (renames.get(k).cloned().unwrap_or(k.clone()), v.clone()))
            .collect();
        for (k, v) in &row.extra {
            attrs.insert(k.clone(), v.clone());
        }
        let Some(p) = pts.iter().find(|p| {
            p.name == row.otlp
                && p.attrs.len() == attrs.len()
                && p.attrs.iter().all(|(k, (v, _))| attrs.get(k) == Some(v))
        }) else {
            continue; // otlp::compare reports the missing point
        };
        let got = match p.value {
            PV::Int(i) => i as f64,
            PV::Double(d) => d,
            PV::Hist(..) => {
                errors.push(format!("{name}{labels:?}: a histogram, not a number"));
                continue;
            }
        };
        let want = if row.millis {
            (*value * 1000.0).round()
        } else {
            *value
        };
        if COST_CLOCK.contains(&name.as_str()) {
            // Idle also drops when a task ends in between (its run time becomes used).
            let low = if name.contains("idle") {
                want - COST_SLACK_S
            } else {
                want
            };
            if !(got >= low && got - want <= COST_SLACK_S) {
                errors.push(format!(
                    "{name}{labels:?} (clock, loose): OTLP {got} not within [{low}, {want} + \
                        {COST_SLACK_S}]"
                ));
            }
        } else if name.starts_with("spark_executor_") {
            if !(got >= want && got - want <= DRIVER_SLACK_MS) {
                errors.push(format!(
                    "{name}{labels:?} (driver, loose): OTLP {got} ms not within [{want}, {want} + \
                        {DRIVER_SLACK_MS}]"
                ));
            }
        } else if p.kind == "counter" && got < want {
            errors.push(format!(
                "{name}{labels:?} (self-metric, loose): OTLP {got} < Prometheus {want}"
            ));
        }
        // What otlp::compare will read back as equal.
        *value = if row.millis { got / 1000.0 } else { got };
    }
    errors.extend(compare(&patched, pts, SLACK));
    errors
}

// ---------------------------------------------------------------------------------------------
// The test

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_pyspark_export_equals_metrics_across_a_receiver_restart() {
    let Some(python) = spark::python("otlp_live") else {
        return;
    };
    let t0 = Instant::now();
    let say = |m: &str| eprintln!("[otlp-live {:>5.1}s] {m}", t0.elapsed().as_secs_f64());
    let dir = artefact_dir("otlp-live");

    // 1. The workload, in its own process group (Spark's JVM included).
    let mut workload = Workload::start(&python, &dir);
    let ui = workload.wait_for_ui().await;
    say(&format!("Spark UI at {ui}"));

    // 2. Receiver and exporter while the jobs run.
    let mut r = Receiver::start(Proto::Grpc, false).await;
    let mut exp = LiveExporter::start(&ui, &r, &dir.join("exporter.log"));
    let first_live = first_export_with_jobs(&r, &exp).await;
    let jobs_running = !workload.done_marker.exists();
    say(&format!(
        "First export with Spark jobs received ({} points); jobs still running: {jobs_running}",
        points(&first_live.req).len()
    ));
    assert!(
        jobs_running,
        "{}",
        workload.fail(
            "the workload finished before the first export; the restart would not be mid-run"
        )
    );

    // 3. The receiver goes away mid-run, then comes back on the same port.
    let resumed_at = restart_receiver(&mut r, &mut exp, &workload, &say).await;

    // 4. The jobs end; then two more polls.
    let app_id = workload.wait_for_jobs(&say).await;
    // Two polls after the jobs ended: more than two poll intervals, and the exporter must have
    // made new REST requests meanwhile (it polls every second).
    let reqs0 = sum_of(&exp.scrape().await, "spark_exporter_rest_requests_total");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let reqs1 = sum_of(&exp.scrape().await, "spark_exporter_rest_requests_total");
    assert!(
        reqs1 > reqs0,
        "no REST polls after the jobs ended ({reqs0} -> {reqs1})"
    );
    assert!(r.count() > resumed_at, "exports stopped after the restart");

    // 5. Scrape, take the next export, compare; retried only when a poll landed in between.
    let (prom, got) = export_equal_to_metrics(&mut exp, &r, &say).await;
    check_live_application(&prom, &points(&got.req), &app_id, &say);

    // 6. Release the driver; the guards kill whatever is left.
    fs::write(&workload.release_marker, b"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while workload.guard.running() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    say(&format!("Workload exited: {}", !workload.guard.running()));
}

/// The PySpark workload and its marker files.
struct Workload {
    guard: Guard,
    log: PathBuf,
    done_marker: PathBuf,
    release_marker: PathBuf,
}

impl Workload {
    /// Start the workload, in its own process group (Spark's JVM included).
    fn start(python: &Path, dir: &Path) -> Workload {
        let (done_marker, release_marker) = (dir.join("done.json"), dir.join("release"));
        let workload_log = dir.join("workload.log");
        let mut cmd = Command::new(python);
        cmd.arg(WORKLOAD)
            .args(["--ui-port", &free_port().to_string()])
            .arg("--event-log-dir")
            .arg(dir.join("eventlog"))
            .arg("--done-marker")
            .arg(&done_marker)
            .arg("--release-marker")
            .arg(&release_marker)
            .args(["--hold-timeout", "120"]);
        Workload {
            guard: Guard::spawn("workload", cmd, &workload_log, true),
            log: workload_log,
            done_marker,
            release_marker,
        }
    }

    /// `m` followed by the tail of the workload's log.
    fn fail(&self, m: &str) -> String {
        format!("{m}; workload log:\n{}", tail_file(&self.log, 40))
    }

    /// The UI is up once the workload logs it (Spark may have moved to another port).
    async fn wait_for_ui(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let log = fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(l) = log.lines().find(|l| l.contains("Spark up in")) {
                let port = l.rsplit(':').next().unwrap().trim().trim_end_matches('/');
                break format!("http://127.0.0.1:{port}");
            }
            assert!(
                self.guard.running(),
                "{}",
                self.fail("the workload exited before Spark was up")
            );
            assert!(
                Instant::now() < deadline,
                "{}",
                self.fail("Spark not up within 90 s")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Wait for the done marker; the application id.
    async fn wait_for_jobs(&mut self, say: &impl Fn(&str)) -> String {
        let deadline = Instant::now() + Duration::from_secs(150);
        while !self.done_marker.exists() {
            assert!(
                self.guard.running(),
                "{}",
                self.fail("the workload exited before its jobs were done")
            );
            assert!(
                Instant::now() < deadline,
                "{}",
                self.fail("jobs not done within 150 s")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let done: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&self.done_marker).unwrap()).unwrap();
        let app_id = done["app_id"].as_str().expect("app_id").to_string();
        say(&format!("Jobs done: app {app_id} in {}s", done["seconds"]));
        app_id
    }
}

/// The first export that has Spark jobs in it.
async fn first_export_with_jobs(r: &Receiver, exp: &LiveExporter) -> Received {
    let has_app = |pts: &[Point]| pts.iter().any(|p| p.name == "spark.job.result");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(got) = r.received().into_iter().find(|g| has_app(&points(&g.req))) {
            break got;
        }
        assert!(
            Instant::now() < deadline,
            "no export with Spark jobs within 30 s; exporter log:\n{}",
            exp.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The receiver goes away mid-run: nothing arrives, /metrics keeps answering, failures are
/// counted; then it comes back on the same port and exports resume by themselves. Returns the
/// number of exports received once they resumed.
async fn restart_receiver(
    r: &mut Receiver,
    exp: &mut LiveExporter,
    workload: &Workload,
    say: &impl Fn(&str),
) -> usize {
    let done_marker = &workload.done_marker;
    let port = r.port;
    let before = sum_of(
        &exp.scrape().await,
        "spark_exporter_otlp_export_failures_total",
    );
    r.stop().await;
    let down_at = r.count();
    let stopped_mid_run = !done_marker.exists();
    say(&format!(
        "Receiver stopped after {down_at} exports (jobs running: {stopped_mid_run})"
    ));
    tokio::time::sleep(Duration::from_secs(4)).await;
    exp.scrape().await;
    assert_eq!(r.count(), down_at, "exports arrived at a stopped receiver");
    r.restart().await;
    assert_eq!(r.port, port, "restarted on the same port");
    let after = sum_of(
        &exp.scrape().await,
        "spark_exporter_otlp_export_failures_total",
    );
    say(&format!(
        "Receiver restarted on port {port}; failures {before} -> {after}; jobs running: {}",
        !done_marker.exists()
    ));
    assert!(
        stopped_mid_run,
        "{}",
        workload.fail("the receiver was stopped after the jobs ended")
    );
    assert!(
        after > before,
        "spark_exporter_otlp_export_failures_total {before} -> {after}"
    );
    assert!(
        r.wait_beyond(down_at, Duration::from_secs(15))
            .await
            .is_some(),
        "exports did not resume after the restart; log:\n{}",
        exp.log_tail()
    );
    let resumed_at = r.count();
    let deadline = Instant::now() + Duration::from_secs(5);
    while exp.log_count("OTLP export resumed") == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        exp.log_count("OTLP export resumed") > 0,
        "no 'OTLP export resumed' log line"
    );
    say("Exports resumed");
    resumed_at
}

/// Scrape, take the next export, compare; retried (up to 5 times) only when a poll landed in
/// between. The matching scrape and export.
async fn export_equal_to_metrics(
    exp: &mut LiveExporter,
    r: &Receiver,
    say: &impl Fn(&str),
) -> (Prom, Received) {
    let mut last = vec![];
    for attempt in 1..=5 {
        let prom = exp.scrape().await;
        let n = r.count();
        let got = r
            .wait_beyond(n, Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("no export within 10 s; log:\n{}", exp.log_tail()));
        last = compare_live(&prom, &points(&got.req));
        if last.is_empty() {
            say(&format!("Export equals /metrics (attempt {attempt})"));
            return (prom, got);
        }
        say(&format!(
            "attempt {attempt}: {} differences (a poll between scrape and export?):\n{}",
            last.len(),
            last.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
        ));
    }
    panic!("OTLP export and /metrics differ:\n{}", last.join("\n"));
}

/// It was the live application, with its jobs, at the end.
fn check_live_application(prom: &Prom, pts: &[Point], app_id: &str, say: &impl Fn(&str)) {
    let up: Vec<f64> = prom
        .0
        .iter()
        .filter(|((n, _), _)| n == "spark_up")
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(up, vec![1.0], "spark_up of the live UI");
    assert!(
        prom.0
            .keys()
            .any(|(n, l)| n == "spark_app_info"
                && l.get("app_id").map(String::as_str) == Some(app_id)),
        "no spark_app_info for {app_id}"
    );
    assert!(
        sum_of(prom, "spark_jobs_total") >= 8.0,
        "jobs: {}",
        sum_of(prom, "spark_jobs_total")
    );
    assert_eq!(sum_of(prom, "spark_jobs_active"), 0.0);
    assert!(
        pts.iter().any(|p| p.name == "spark.job.result"
            && p.attrs.get("spark.job.group").map(|v| v.0.as_str()) == Some("failing_job")
            && p.attrs.values().any(|v| v.0 == "failed")),
        "the failed job is exported"
    );
    say(&format!(
        "{} series compared, {} OTLP points",
        prom.0.len(),
        pts.len()
    ));
}
