//! Fault injection against the REST poller, with a real Spark: a real PySpark driver
//! (`tests/faults/driver.py`, local[2], 1 GiB) serves its UI and REST API, the real
//! `spark-exporter` binary polls it (`--spark.poll-interval 1s --spark.timeout 1s`), and the test
//! breaks what is between them.
//!
//! - `driver_killed_mid_poll_and_restarted_on_the_same_port`: the driver's JVM is frozen
//!   (SIGSTOP) just after a poll started, so one of the poll's requests is waiting on it; once
//!   the test has checked that the poll is indeed unfinished, the JVM and the Python driver are
//!   SIGKILLed. A new driver (a new application id, other job counts) then starts on the same UI
//!   port. The exporter must show `spark_up` 0 throughout the gap and 1 after; both application
//!   ids in `spark_app_info`; the old one with `spark_app_end_time_seconds` (set after three
//!   failed polls, at the last good poll); the old application's counters exactly as they were
//!   before the kill; the new one's equal to its own REST API (jobs per group, description and
//!   status; stages and tasks per group and status).
//! - `proxy_faults_against_a_live_ui`: a fault-injecting HTTP proxy (a thread of this test)
//!   between the exporter and the live UI of a driver that keeps running small jobs. Modes,
//!   switched while jobs run: pass-through; a delay over the timeout (`timeout`); HTTP 500
//!   (`http_status`); an HTML login page with 200 (`decode`); the connection closed after half
//!   the body (`body`). Each fault is held for three failed polls: `spark_up` 0, only that kind's
//!   error counter grows, and the application is marked ended; back in pass-through `spark_up`
//!   is 1 and the end time goes away (the driver never stopped). At the end the exporter's
//!   counts equal the REST API's.
//!
//! Throughout, a watcher thread scrapes `/metrics` every 100 ms: every answer must be HTTP 200
//! within 1 s, and the exporter must never exit.
//!
//! The Python interpreter is `$SPARK_E2E_PYTHON` (default `.venv/bin/python`). If it is missing
//! the tests pass with a loud message, unless `SPARK_E2E_REQUIRED` is set (CI sets it), in which
//! case they fail. The two tests take turns (one JVM at a time on two cores). Artefacts (driver
//! and exporter logs, scrapes, REST JSON) stay in `target/tmp/faults-<test>-<pid>/`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use support::exposition::*;
use support::faults::*;
use support::files::{artefact_dir, free_port, tail_file};
use support::http::*;
use support::proc::*;
use support::spark;

const DRIVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/faults/driver.py");
/// Spark's start and its jobs, on two shared cores.
const DRIVER_DEADLINE: Duration = Duration::from_secs(120);
/// The exporter catching up with Spark (a few 1 s polls).
const CATCH_UP: Duration = Duration::from_secs(30);
/// The poller's per-request timeout; the proxy's delay is well over it.
const TIMEOUT: Duration = Duration::from_secs(1);
/// `GONE_AFTER_FAILED_POLLS` of the poller.
const GONE_AFTER: f64 = 3.0;

/// One JVM at a time: the machine has two cores.
static SPARK: Mutex<()> = Mutex::new(());

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

/// A running driver.
struct Driver {
    guard: Guard,
    state: PathBuf,
    log: PathBuf,
    app_id: String,
    /// `127.0.0.1:PORT` of its UI.
    ui: String,
    python_pid: u32,
    jvm_pid: u32,
}

impl Driver {
    /// Start `driver.py` and wait until its UI is up.
    fn start(python: &Path, dir: &Path, port: u16, gen: u32, mode: &str) -> Driver {
        let state = dir.join(format!("driver-gen{gen}"));
        fs::create_dir_all(&state).unwrap();
        let log = dir.join(format!("driver-gen{gen}.log"));
        let mut cmd = Command::new(python);
        cmd.arg(DRIVER)
            .args([
                "--ui-port",
                &port.to_string(),
                "--gen",
                &gen.to_string(),
                "--mode",
                mode,
            ])
            .arg("--state-dir")
            .arg(&state);
        let mut guard = Guard::spawn(&format!("driver gen{gen}"), cmd, &log, true);
        let ui = state.join("ui.json");
        let info = wait_for(DRIVER_DEADLINE, Duration::from_millis(100), || {
            if let Some(s) = guard.exited() {
                panic!(
                    "driver gen{gen} exited ({s}) before its UI was up:\n{}",
                    tail_file(&log, 30)
                );
            }
            let v: Value = serde_json::from_str(&fs::read_to_string(&ui).ok()?).ok()?;
            Some(v)
        })
        .unwrap_or_else(|| {
            panic!(
                "driver gen{gen}: no UI within {DRIVER_DEADLINE:?}:\n{}",
                tail_file(&log, 30)
            )
        });
        let got_port = info["ui_port"].as_u64().unwrap_or(0);
        assert_eq!(got_port, u64::from(port), "driver gen{gen} UI port");
        Driver {
            guard,
            state,
            log,
            app_id: info["app_id"].as_str().unwrap().to_string(),
            ui: format!("127.0.0.1:{port}"),
            python_pid: info["python_pid"].as_u64().unwrap() as u32,
            jvm_pid: info["jvm_pid"].as_u64().unwrap() as u32,
        }
    }

    /// Wait until the driver's jobs are done (`done.json`).
    fn wait_done(&mut self) {
        let done = self.state.join("done.json");
        let log = self.log.clone();
        wait_for(DRIVER_DEADLINE, Duration::from_millis(200), || {
            if let Some(s) = self.guard.exited() {
                panic!(
                    "the driver exited ({s}) before its jobs were done:\n{}",
                    tail_file(&log, 30)
                );
            }
            done.exists().then_some(())
        })
        .unwrap_or_else(|| {
            panic!(
                "the driver's jobs took over {DRIVER_DEADLINE:?}:\n{}",
                tail_file(&log, 30)
            )
        });
    }

    fn touch(&self, name: &str) {
        fs::write(self.state.join(name), b"").unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// What Spark says and what the exporter says
// ---------------------------------------------------------------------------------------------

/// Counts from Spark's REST API while the application is idle.
#[derive(Debug, Clone, PartialEq)]
struct Truth {
    /// By job group, job description and status.
    jobs: Series,
    /// By job group and status (a stage's group is that of the lowest job id listing it).
    stages: Series,
    /// By job group and status.
    tasks: Series,
}

fn lbl(pairs: &[(&str, &str)]) -> String {
    render_labels(
        &pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn st(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// Read the REST API straight from the driver (never through the proxy), twice, until two reads
/// agree: Spark must be idle.
fn rest_truth(ui: &str, app_id: &str, dir: &Path) -> Truth {
    let read = || -> Result<Truth, String> {
        let base = format!("/api/v1/applications/{app_id}");
        let jobs = get_json(ui, &format!("{base}/jobs"))?;
        let stages = get_json(ui, &format!("{base}/stages?details=false"))?;
        fs::write(
            dir.join(format!("rest-{app_id}-jobs.json")),
            jobs.to_string(),
        )
        .ok();
        fs::write(
            dir.join(format!("rest-{app_id}-stages.json")),
            stages.to_string(),
        )
        .ok();
        let mut t = Truth {
            jobs: Series::new(),
            stages: Series::new(),
            tasks: Series::new(),
        };
        let mut stage_group: BTreeMap<u64, String> = BTreeMap::new();
        let mut sorted: Vec<&Value> = arr(&jobs).iter().collect();
        sorted.sort_by_key(|j| j["jobId"].as_u64());
        for j in sorted {
            let status = match st(&j["status"]) {
                "SUCCEEDED" => "succeeded",
                "FAILED" => "failed",
                other => return Err(format!("job {} is {other}", j["jobId"])),
            };
            let group = support::groups::rest_job_group(j, str::to_string);
            let k = lbl(&[
                ("job_group", &group),
                ("job_description", st(&j["description"])),
                ("status", status),
            ]);
            *t.jobs.entry(k).or_default() += 1.0;
            for id in arr(&j["stageIds"]) {
                stage_group
                    .entry(id.as_u64().unwrap())
                    .or_insert_with(|| group.clone());
            }
        }
        for s in arr(&stages) {
            let id = s["stageId"].as_u64().unwrap();
            let group = stage_group
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("<stage {id} in no job>"));
            let status = match st(&s["status"]) {
                "COMPLETE" => "complete",
                "FAILED" => "failed",
                "SKIPPED" => "skipped",
                other => return Err(format!("stage {id} is {other}")),
            };
            *t.stages
                .entry(lbl(&[("job_group", &group), ("status", status)]))
                .or_default() += 1.0;
            for (field, status) in [
                ("numCompleteTasks", "succeeded"),
                ("numFailedTasks", "failed"),
                ("numKilledTasks", "killed"),
            ] {
                *t.tasks
                    .entry(lbl(&[("job_group", &group), ("status", status)]))
                    .or_default() += s[field].as_f64().unwrap_or(0.0);
            }
        }
        for m in [&mut t.jobs, &mut t.stages, &mut t.tasks] {
            m.retain(|_, v| *v != 0.0);
        }
        Ok(t)
    };
    let mut last = String::new();
    for _ in 0..10 {
        match (read(), read()) {
            (Ok(a), Ok(b)) if a == b => return a,
            (a, b) => last = format!("{a:?} / {b:?}"),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("the REST API of {app_id} did not settle: {last}");
}

/// The same counts as the exporter shows them.
fn exported(samples: &[Sample], app_id: &str) -> Truth {
    Truth {
        jobs: project(
            samples,
            "spark_jobs_total",
            app_id,
            &["job_group", "job_description", "status"],
        ),
        stages: project(
            samples,
            "spark_stages_total",
            app_id,
            &["job_group", "status"],
        ),
        tasks: project(
            samples,
            "spark_tasks_total",
            app_id,
            &["job_group", "status"],
        ),
    }
}

fn assert_truth(what: &str, want: &Truth, got: &Truth) {
    assert_series(&format!("{what}: spark_jobs_total"), &want.jobs, &got.jobs);
    assert_series(
        &format!("{what}: spark_stages_total"),
        &want.stages,
        &got.stages,
    );
    assert_series(
        &format!("{what}: spark_tasks_total"),
        &want.tasks,
        &got.tasks,
    );
}

fn up(samples: &[Sample], target: &str) -> Option<f64> {
    value(samples, "spark_up", &[("target", target)])
}

fn requests(samples: &[Sample], target: &str) -> f64 {
    value(
        samples,
        "spark_exporter_rest_requests_total",
        &[("target", target)],
    )
    .unwrap_or(0.0)
}

fn end_time(samples: &[Sample], app_id: &str) -> Option<f64> {
    value(samples, "spark_app_end_time_seconds", &[("app_id", app_id)])
}

fn app_ids(samples: &[Sample]) -> BTreeSet<String> {
    samples
        .iter()
        .filter(|s| s.name == "spark_app_info")
        .map(|s| s.label("app_id").to_string())
        .collect()
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn start_exporter(dir: &Path, url: &str) -> Exporter {
    Exporter::start(
        dir,
        "exporter",
        &[],
        &[
            "--spark.url",
            url,
            "--spark.poll-interval",
            "1s",
            "--spark.timeout",
            "1s",
        ],
        &[],
    )
}

/// Scrape until `cond` holds (or fail after `limit` with the exporter's log).
fn wait_scrape(
    exp: &mut Exporter,
    limit: Duration,
    what: &str,
    mut cond: impl FnMut(&[Sample]) -> bool,
) -> Vec<Sample> {
    let mut last = vec![];
    let ok = wait_for(limit, Duration::from_millis(100), || {
        exp.assert_alive();
        last = exp.scrape();
        cond(&last).then_some(())
    });
    if ok.is_none() {
        let selfm: Vec<String> = last
            .iter()
            .filter(|s| {
                s.name.starts_with("spark_exporter_")
                    || s.name == "spark_up"
                    || s.name.starts_with("spark_app_")
            })
            .map(|s| format!("  {} {}", s.id(), s.value))
            .collect();
        panic!(
            "not within {limit:?}: {what}\nlast scrape (self-metrics, apps):\n{}\nexporter \
                log:\n{}",
            selfm.join("\n"),
            tail_file(&exp.log, 30)
        );
    }
    last
}

// ---------------------------------------------------------------------------------------------
// 1. Driver killed mid-poll, a new driver on the same port
// ---------------------------------------------------------------------------------------------

#[test]
fn driver_killed_mid_poll_and_restarted_on_the_same_port() {
    let Some(python) = spark::python("faults_spark_ui") else {
        return;
    };
    let _turn = SPARK.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let say = |m: &str| say(t0, "kill", m);
    let dir = artefact_dir("faults-kill");
    let port = free_port();
    let target = format!("http://127.0.0.1:{port}");

    let mut old = Driver::start(&python, &dir, port, 1, "batch");
    say(&format!(
        "driver gen1 up: {} on port {port} (JVM {}, python {})",
        old.app_id, old.jvm_pid, old.python_pid
    ));
    old.wait_done();
    let truth_old = rest_truth(&old.ui, &old.app_id, &dir);
    say(&format!("gen1 jobs done: {truth_old:?}"));

    let mut exp = start_exporter(&dir, &target);
    let watch = Watcher::start(&exp.addr);
    let s = wait_scrape(
        &mut exp,
        CATCH_UP,
        "the exporter equals gen1's REST API",
        |s| up(s, &target) == Some(1.0) && exported(s, &old.app_id) == truth_old,
    );
    assert_truth(
        "gen1 before the fault",
        &truth_old,
        &exported(&s, &old.app_id),
    );

    let per_poll = idle_poll_requests(&exp, &target, &say);
    let kill = kill_mid_poll(&exp, &target, &mut old, per_poll, &dir, &say);
    let ended = check_gap(&mut exp, &target, &old.app_id, &kill, &say);

    // A new driver on the same port; spark_up stays 0 while nothing listens on the port.
    let probe = Probe::start(&exp.addr, &old.ui, &target);
    let mut new = Driver::start(&python, &dir, port, 2, "batch");
    say(&format!("driver gen2 up on the same port: {}", new.app_id));
    assert_ne!(
        new.app_id, old.app_id,
        "a restarted driver is a new application"
    );
    new.wait_done();
    let truth_new = rest_truth(&new.ui, &new.app_id, &dir);
    say(&format!("gen2 jobs done: {truth_new:?}"));
    let fin = wait_scrape(
        &mut exp,
        CATCH_UP,
        "the exporter equals gen2's REST API",
        |s| up(s, &target) == Some(1.0) && exported(s, &new.app_id) == truth_new,
    );
    let seen = probe.stop();
    fs::write(dir.join("metrics-final.txt"), format!("{fin:#?}")).ok();

    // spark_up: 0 while nothing listened on the port, then 1.
    let closed: Vec<_> = seen.iter().filter(|(_, open, _, _)| !open).collect();
    assert!(
        closed.len() >= 5,
        "the probe saw the port closed only {} times",
        closed.len()
    );
    assert!(
        closed.iter().all(|(_, _, v, _)| *v == Some(0.0)),
        "spark_up while no driver listened: {closed:?}"
    );
    say(&format!(
        "spark_up 0 in all {} scrapes while the port was closed",
        closed.len()
    ));
    assert_eq!(up(&fin, &target), Some(1.0));

    let apps = [(&old.app_id, &truth_old), (&new.app_id, &truth_new)];
    check_both_applications(&fin, apps, ended, &kill.samples);
    let while_closed = &closed.last().unwrap().3;
    check_error_kinds(&fin, &target, while_closed);
    say(&format!(
        "errors while the port was closed {while_closed:?}, at the end {:?}; the frozen poll had done \
         {} of {per_poll} requests",
        scrape_errors(&fin, &target),
        kill.done_in_poll
    ));

    watch.assert_ok("the kill and the restart");
    exp.assert_alive();
    new.touch("release");
    let exit = exp.terminate();
    assert!(
        exit.is_some_and(|s| s.success()),
        "exporter after SIGTERM: {exit:?}"
    );
    let _ = new.guard.terminate(Duration::from_secs(30));
    say("done");
}

/// Requests of one idle poll: the counter between polls, three polls in a row.
fn idle_poll_requests(exp: &Exporter, target: &str, say: &impl Fn(&str)) -> f64 {
    let mut stable = vec![];
    let mut last = (f64::NAN, Instant::now());
    wait_for(Duration::from_secs(15), Duration::from_millis(20), || {
        let r = requests(&exp.scrape(), target);
        if r != last.0 {
            last = (r, Instant::now());
        } else if last.1.elapsed() > Duration::from_millis(300) && stable.last() != Some(&r) {
            stable.push(r);
        }
        (stable.len() >= 3).then_some(())
    })
    .expect("three polls within 15 s");
    let per_poll = stable[2] - stable[1];
    assert_eq!(
        per_poll,
        stable[1] - stable[0],
        "an idle poll makes the same requests: {stable:?}"
    );
    say(&format!("an idle poll makes {per_poll} requests"));
    per_poll
}

/// The kill of the first driver, in the middle of a poll.
struct Kill {
    /// The last scrape before the kill.
    samples: Vec<Sample>,
    /// Requests of the frozen poll done before the freeze.
    done_in_poll: f64,
    killed_at: Instant,
    /// Seconds since the epoch at the kill.
    killed_epoch: f64,
}

/// Freeze the JVM just after a poll started; kill only if the poll is unfinished, so one of its
/// requests waits on the dead driver. Otherwise let it go and try the next poll.
fn kill_mid_poll(
    exp: &Exporter,
    target: &str,
    old: &mut Driver,
    per_poll: f64,
    dir: &Path,
    say: &impl Fn(&str),
) -> Kill {
    let mut pre_kill = None;
    for attempt in 1..=15 {
        let mut c0 = requests(&exp.scrape(), target);
        let mut since = Instant::now();
        let started = wait_for(Duration::from_secs(5), Duration::from_millis(2), || {
            let r = requests(&exp.scrape(), target);
            if r != c0 && since.elapsed() < Duration::from_millis(300) {
                // Mid-poll when we looked: wait for the next one.
                c0 = r;
                since = Instant::now();
                return None;
            }
            (r > c0).then_some(())
        });
        assert!(started.is_some(), "no poll started within 5 s");
        assert!(signal(old.jvm_pid, "STOP"), "SIGSTOP the JVM");
        std::thread::sleep(Duration::from_millis(300));
        let s = exp.scrape();
        let done = requests(&s, target) - c0;
        if done < per_poll {
            say(&format!(
                "attempt {attempt}: JVM frozen after {done} of the poll's {per_poll} requests; \
                    SIGKILL JVM and python"
            ));
            assert!(signal(old.jvm_pid, "KILL") && signal(old.python_pid, "KILL"));
            pre_kill = Some((s, done, Instant::now(), now_secs()));
            break;
        }
        say(&format!(
            "attempt {attempt}: the poll finished ({done} requests) before the freeze; again"
        ));
        signal(old.jvm_pid, "CONT");
    }
    let (pre_kill, done_in_poll, killed_at, killed_epoch) =
        pre_kill.expect("a poll caught in the middle within 15 attempts");
    fs::write(dir.join("metrics-pre-kill.txt"), format!("{pre_kill:#?}")).ok();
    assert!(
        wait_for(Duration::from_secs(10), Duration::from_millis(50), || {
            (!alive(old.jvm_pid) && !alive(old.python_pid)).then_some(())
        })
        .is_some()
    );
    old.guard.kill_group();
    say("gen1 killed");
    Kill {
        samples: pre_kill,
        done_in_poll,
        killed_at,
        killed_epoch,
    }
}

/// The gap: spark_up 0 within a poll or two, and the old application marked ended after three
/// failed polls, at its last good poll (before the freeze). Returns its end time.
fn check_gap(
    exp: &mut Exporter,
    target: &str,
    old_app: &str,
    kill: &Kill,
    say: &impl Fn(&str),
) -> f64 {
    let killed_epoch = kill.killed_epoch;
    let gap = wait_scrape(
        exp,
        Duration::from_secs(15),
        "the old application ended after three failed polls",
        |s| end_time(s, old_app).is_some(),
    );
    assert_eq!(up(&gap, target), Some(0.0), "spark_up during the gap");
    let ended = end_time(&gap, old_app).unwrap();
    assert!(
        ended <= killed_epoch && ended >= killed_epoch - 3.0,
        "the old application's end ({ended}) should be its last good poll, just before the kill at \
            {killed_epoch}"
    );
    say(&format!(
        "old app ended at {ended:.3} (kill at {killed_epoch:.3}); {:.1}s after the kill",
        kill.killed_at.elapsed().as_secs_f64()
    ));
    ended
}

/// What the probe saw per scrape: seconds since it started, whether the port was open,
/// `spark_up`, the scrape errors by kind.
type Seen = Vec<(f64, bool, Option<f64>, BTreeMap<String, f64>)>;

/// A thread that checks the driver's port, then scrapes: the port goes from closed to open once,
/// so a scrape taken while it is still closed reflects polls of a closed port.
struct Probe {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Probe {
    fn start(exporter: &str, ui: &str, target: &str) -> Probe {
        let spark_up_seen = Arc::new(Mutex::new(Seen::new()));
        let stop_probe = Arc::new(AtomicBool::new(false));
        let (seen, stop, addr, target) = (
            spark_up_seen.clone(),
            stop_probe.clone(),
            exporter.to_string(),
            target.to_string(),
        );
        let ui: std::net::SocketAddr = ui.parse().unwrap();
        let thread = std::thread::spawn(move || {
            let t = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let open = TcpStream::connect_timeout(&ui, Duration::from_millis(200)).is_ok();
                if let Ok((200, body)) = http_get(&addr, "/metrics", SCRAPE_BUDGET) {
                    let samples = parse_exposition(&String::from_utf8_lossy(&body));
                    let (v, e) = (up(&samples, &target), scrape_errors(&samples, &target));
                    seen.lock()
                        .unwrap()
                        .push((t.elapsed().as_secs_f64(), open, v, e));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        Probe {
            seen: spark_up_seen,
            stop: stop_probe,
            thread,
        }
    }

    /// Stop the thread; what it saw.
    fn stop(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        let seen = self.seen.lock().unwrap().clone();
        seen
    }
}

/// Both applications (`(app id, REST truth)`, old then new); the old one ended (at `ended`),
/// with its counters as before the kill (`pre_kill`); the new one running, with its own REST
/// API's counts.
fn check_both_applications(
    fin: &[Sample],
    [(old, truth_old), (new, truth_new)]: [(&String, &Truth); 2],
    ended: f64,
    pre_kill: &[Sample],
) {
    let ids = app_ids(fin);
    assert!(
        ids.contains(old) && ids.contains(new),
        "spark_app_info: {ids:?}"
    );
    assert_eq!(
        end_time(fin, old),
        Some(ended),
        "the old application's end time"
    );
    assert_eq!(end_time(fin, new), None, "the new application is running");
    // Its job, stage and task counters stay; its run has ended since (the driver vanished), so
    // `spark_app_runs_total{status="unknown"}` went from 0 to 1.
    let not_runs = |s: &Sample| is_counter(s) && s.name != "spark_app_runs_total";
    assert_series(
        "old application's counters after the restart vs just before the kill",
        &app_samples(pre_kill, old, not_runs),
        &app_samples(fin, old, not_runs),
    );
    let runs = |status: &str| {
        fin.iter()
            .find(|s| {
                s.name == "spark_app_runs_total"
                    && s.label("app_id") == old.as_str()
                    && s.label("status") == status
            })
            .map(|s| s.value)
    };
    assert_eq!(
        [runs("succeeded"), runs("failed"), runs("unknown")],
        [Some(0.0), Some(0.0), Some(1.0)],
        "a vanished driver's run ended, outcome unknown"
    );
    assert_truth(
        "old application after the restart",
        truth_old,
        &exported(fin, old),
    );
    assert_truth("new application", truth_new, &exported(fin, new));
}

/// The errors say what happened. While nothing listened on the port (`while_closed`): `connect`
/// only (the request in flight at the kill may instead have been cut in its `body`), at least
/// once per failed poll. Once the new driver's port is open Spark's UI is still starting: until
/// its handlers are attached it answers every path with an HTML "Spark is starting up" page and
/// 200 (`decode`), or, in the moment between Jetty starting and the REST servlet being attached,
/// 404 for `/api/v1/applications` (`http_status`, seen in 2 of 4 runs here); and a cold JVM can
/// answer after the 1 s timeout (`timeout`); nothing else.
fn check_error_kinds(fin: &[Sample], target: &str, while_closed: &BTreeMap<String, f64>) {
    let connect = while_closed.get("connect").copied().unwrap_or(0.0);
    let odd: Vec<_> = while_closed
        .keys()
        .filter(|k| *k != "connect" && *k != "body")
        .collect();
    assert!(
        connect >= GONE_AFTER
            && odd.is_empty()
            && while_closed.get("body").copied().unwrap_or(0.0) <= 1.0,
        "errors while no driver listened: {while_closed:?}"
    );
    let errors = scrape_errors(fin, target);
    let odd: Vec<_> = errors
        .keys()
        .filter(|k| !["connect", "body", "decode", "timeout", "http_status"].contains(&k.as_str()))
        .collect();
    assert!(odd.is_empty(), "error kinds at the end: {errors:?}");
}

// ---------------------------------------------------------------------------------------------
// 2. A fault-injecting proxy before a live UI
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Relay Spark's answer unchanged.
    Pass,
    /// Answer after 2.5 s (the exporter's timeout is 1 s).
    Delay,
    /// HTTP 500.
    Status500,
    /// A login page, HTML, with 200 (an auth proxy in front of the UI).
    Html,
    /// Spark's status and headers with the full Content-Length, half the body, then close.
    HalfBody,
}

const LOGIN_PAGE: &str = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>\
    <form method=\"post\" action=\"/login\"><input name=\"user\"><input name=\"password\" \
    type=\"password\"><button>Sign in</button></form></body></html>";

/// The proxy: a thread accepting connections, one thread per connection, one request each.
struct Proxy {
    url: String,
    mode: Arc<Mutex<Mode>>,
    stop: Arc<AtomicBool>,
    /// Requests answered per mode.
    served: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mode = Arc::new(Mutex::new(Mode::Pass));
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(Mutex::new(BTreeMap::new()));
        let (m, s, c, up) = (
            mode.clone(),
            stop.clone(),
            served.clone(),
            upstream.to_string(),
        );
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (m, c, up) = (m.clone(), c.clone(), up.clone());
                        std::thread::spawn(move || {
                            let mode = *m.lock().unwrap();
                            if proxy_one(conn, &up, mode).is_ok() {
                                *c.lock().unwrap().entry(format!("{mode:?}")).or_insert(0) += 1;
                            }
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Proxy {
            url,
            mode,
            stop,
            served,
        }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Serve one request on `conn` in `mode`.
fn proxy_one(mut conn: TcpStream, upstream: &str, mode: Mode) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while find(&head, b"\r\n\r\n").is_none() {
        let n = conn.read(&mut buf)?;
        if n == 0 || head.len() > 65536 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let respond = |conn: &mut TcpStream,
                   status: &str,
                   ct: &str,
                   body: &[u8],
                   send: usize|
     -> std::io::Result<()> {
        write!(
            conn,
            "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: \
                close\r\n\r\n",
            body.len()
        )?;
        conn.write_all(&body[..send])?;
        conn.flush()?;
        conn.shutdown(Shutdown::Both)
    };
    let fetch = || -> std::io::Result<(String, String, Vec<u8>)> {
        let (_, head, body) = http_get_full(upstream, &path, Duration::from_secs(10))
            .map_err(std::io::Error::other)?;
        let status = head
            .lines()
            .next()
            .unwrap_or("")
            .split_once(' ')
            .map_or("502 Bad Gateway", |(_, status)| status)
            .to_string();
        let ct = head
            .lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "application/json".into());
        Ok((status, ct, body))
    };
    match mode {
        Mode::Pass => {
            let (status, ct, body) = fetch()?;
            respond(&mut conn, &status, &ct, &body, body.len())
        }
        Mode::Delay => {
            std::thread::sleep(TIMEOUT * 5 / 2);
            let (status, ct, body) = fetch()?;
            respond(&mut conn, &status, &ct, &body, body.len())
        }
        Mode::Status500 => {
            let body = b"Internal Server Error";
            respond(
                &mut conn,
                "500 Internal Server Error",
                "text/plain",
                body,
                body.len(),
            )
        }
        Mode::Html => respond(
            &mut conn,
            "200 OK",
            "text/html;charset=utf-8",
            LOGIN_PAGE.as_bytes(),
            LOGIN_PAGE.len(),
        ),
        Mode::HalfBody => {
            let (status, ct, body) = fetch()?;
            respond(&mut conn, &status, &ct, &body, body.len() / 2)
        }
    }
}

#[test]
fn proxy_faults_against_a_live_ui() {
    let Some(python) = spark::python("faults_spark_ui") else {
        return;
    };
    let _turn = SPARK.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let say = |m: &str| say(t0, "proxy", m);
    let dir = artefact_dir("faults-proxy");
    let port = free_port();
    let mut driver = Driver::start(&python, &dir, port, 1, "trickle");
    say(&format!("driver up: {} on port {port}", driver.app_id));
    // Spark's REST API initialises on its first request, which can take longer than the
    // exporter's 1 s timeout: warm it first, so the only errors are the injected ones.
    wait_for(DRIVER_DEADLINE, Duration::from_millis(200), || {
        matches!(
            http_get(&driver.ui, "/api/v1/applications", TIMEOUT),
            Ok((200, _))
        )
        .then_some(())
    })
    .expect("Spark's REST API answers within 1 s");
    let proxy = Proxy::start(&driver.ui);
    let target = proxy.url.clone();
    let mut exp = start_exporter(&dir, &target);
    let watch = Watcher::start(&exp.addr);
    let app = driver.app_id.clone();

    let s = wait_scrape(
        &mut exp,
        CATCH_UP,
        "polled through the proxy, jobs counted",
        |s| up(s, &target) == Some(1.0) && app_jobs(s, &app) > 0.0,
    );
    say(&format!(
        "exporter up through the proxy; {} jobs so far",
        app_jobs(&s, &app)
    ));

    for (mode, kind) in [
        (Mode::Delay, "timeout"),
        (Mode::Status500, "http_status"),
        (Mode::Html, "decode"),
        (Mode::HalfBody, "body"),
    ] {
        hold_fault(&mut exp, &proxy, &app, mode, kind, &say);
    }

    driver.touch("stop-jobs");
    driver.wait_done();
    check_after_faults(&mut exp, &proxy, &driver, &dir, &say);

    watch.assert_ok("the proxy faults");
    exp.assert_alive();
    driver.touch("release");
    let exit = exp.terminate();
    assert!(
        exit.is_some_and(|s| s.success()),
        "exporter after SIGTERM: {exit:?}"
    );
    let _ = driver.guard.terminate(Duration::from_secs(30));
    say("done");
}

/// `spark_jobs_total` of `app`, all groups and statuses.
fn app_jobs(s: &[Sample], app: &str) -> f64 {
    project(s, "spark_jobs_total", app, &["job_group"])
        .values()
        .sum::<f64>()
}

/// Hold fault `mode` for three failed polls: `spark_up` 0, only `kind`'s error counter grows,
/// the application is marked ended; back in pass-through `spark_up` is 1 and the end time goes
/// away.
fn hold_fault(
    exp: &mut Exporter,
    proxy: &Proxy,
    app: &str,
    mode: Mode,
    kind: &str,
    say: &impl Fn(&str),
) {
    let target = &proxy.url;
    let jobs = |s: &[Sample]| app_jobs(s, app);
    let before = exp.scrape();
    let e0 = scrape_errors(&before, target);
    if mode == Mode::Delay {
        assert!(e0.is_empty(), "errors before any fault: {e0:?}");
    }
    let j0 = jobs(&before);
    proxy.set(mode);
    say(&format!("{mode:?}: expecting {kind}"));
    // Three failed polls: spark_up 0, the app marked ended (its driver seems gone).
    let during = wait_scrape(
        exp,
        CATCH_UP,
        &format!("{mode:?}: three {kind} errors"),
        |s| {
            scrape_errors(s, target).get(kind).copied().unwrap_or(0.0)
                >= e0.get(kind).copied().unwrap_or(0.0) + GONE_AFTER
        },
    );
    assert_eq!(
        up(&during, target),
        Some(0.0),
        "{mode:?}: spark_up during the fault"
    );
    let e1 = scrape_errors(&during, target);
    for (k, v) in &e1 {
        if k != kind {
            assert_eq!(
                Some(v),
                e0.get(k),
                "{mode:?}: only {kind} errors should grow; before {e0:?}, now {e1:?}"
            );
        }
    }
    let during = wait_scrape(
        exp,
        Duration::from_secs(5),
        &format!("{mode:?}: app marked ended"),
        |s| end_time(s, app).is_some(),
    );
    assert!(jobs(&during) >= j0, "{mode:?}: counters never go back");
    proxy.set(Mode::Pass);
    let after = wait_scrape(
        exp,
        CATCH_UP,
        &format!("{mode:?}: back in pass-through, up and not ended"),
        |s| up(s, target) == Some(1.0) && end_time(s, app).is_none(),
    );
    say(&format!(
        "{mode:?}: errors {:?} -> {:?}; jobs {j0} -> {}; recovered",
        e0,
        scrape_errors(&after, target),
        jobs(&after)
    ));
}

/// Once the jobs stopped: the exporter's counts equal the REST API's, `spark_up` 1, the
/// application never ended, each injected kind counted at least three times, no `connect`.
fn check_after_faults(
    exp: &mut Exporter,
    proxy: &Proxy,
    driver: &Driver,
    dir: &Path,
    say: &impl Fn(&str),
) {
    let (target, app) = (&proxy.url, &driver.app_id);
    let truth = rest_truth(&driver.ui, app, dir);
    say(&format!(
        "jobs stopped: {} jobs in REST",
        truth.jobs.values().sum::<f64>()
    ));
    let fin = wait_scrape(exp, CATCH_UP, "the exporter equals the REST API", |s| {
        exported(s, app) == truth
    });
    assert_truth("after the faults", &truth, &exported(&fin, app));
    assert_eq!(up(&fin, target), Some(1.0));
    assert_eq!(end_time(&fin, app), None, "the application never stopped");
    let errors = scrape_errors(&fin, target);
    for kind in ["timeout", "http_status", "decode", "body"] {
        assert!(
            errors.get(kind).copied().unwrap_or(0.0) >= GONE_AFTER,
            "{kind} errors: {errors:?}"
        );
    }
    assert!(
        !errors.contains_key("connect"),
        "no connect errors: {errors:?}"
    );
    say(&format!(
        "final errors {errors:?}; proxy served {:?}",
        proxy.served.lock().unwrap()
    ));
}
