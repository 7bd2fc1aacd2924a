//! End-to-end: the exporter tails the event log of a *live* PySpark application while it runs,
//! and the exported counts equal Spark's own REST API and a direct count of the events in the
//! log.
//!
//! The application is `tests/e2e_live/workload.py` (pip pyspark 4.1.1, local[2], Java 17): a
//! rolling zstd event log (Spark 4's default layout) that rolls into a second part while the
//! application runs, job groups, skipped stages, a 400-task stage, a cancelled job (killed tasks),
//! a failing job. Three exporters watch it:
//!
//! - **A**, event log only (`--spark.url=`), started before the application exists: it must
//!   really tail the growing `.inprogress` log. It is scraped every few hundred milliseconds
//!   while the application runs: counters never go backwards, the totals grow in several steps,
//!   and each job group shows up while the log is still in progress.
//! - **B**, REST API *and* event log, also started before the application: the model counts each
//!   job, stage and task once by Spark id, so B must give exactly A's counts.
//! - **C**, REST API and event log, started after the jobs are done (reads the whole log and the
//!   full REST lists at once): the same counts again.
//!
//! Once the jobs are done and the driver holds its UI, `spark_jobs_total` per job group and
//! status, and `spark_stages_total` and `spark_tasks_total` per group and status, of A, B and C
//! must equal the REST API (`/jobs`; `/stages?details=false`, a stage's group being that of the
//! job whose `stageIds` list it), and no job, stage, task or SQL execution may be left active
//! (the cancelled job's killed tasks end after its stage did). After the driver stops
//! (ApplicationEnd written, `appstatus_` renamed) the same counts must equal a direct count of
//! the events in the decompressed log (`tests/e2e_live/count_log.py`: `zstd -dc` + Python's
//! json), the executor task time (Finish Time - Launch Time summed over each executor's task
//! ends) must equal `spark_executor_task_time_seconds_total` of A, and every exporter must show
//! the application's end time.
//!
//! Executor task time is compared with the log, not with REST: in local mode the only executor
//! is `driver`, for which Spark's live REST API reports the driver's uptime as `totalDuration`
//! (and the JVM's GC time as `totalGCTime`), not sums over tasks. Executors other than `driver`
//! (none in local mode) are also compared with REST's `totalDuration`.
//!
//! The Python interpreter is `$SPARK_E2E_PYTHON` (default `.venv/bin/python`). If it (or the
//! `zstd` command) is missing the test passes with a loud message, unless `SPARK_E2E_REQUIRED`
//! is set (CI sets it), in which case it fails. Artefacts (logs, scrapes, REST JSON, the log
//! count) stay in `target/tmp/eventlog-live-<pid>/`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use support::exposition::{parse_exposition, value, went_backwards, Sample, Series};
use support::files::{artefact_dir, free_port, tail_file};
use support::http::{get_ok, get_url_json};
use support::live::{project, start_exporter, Failures};
use support::proc::Guard;
use support::spark;

const WORKLOAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e_live/workload.py");
const COUNT_LOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e_live/count_log.py");
/// Spark start plus every job, on two cores shared with other work.
const WORKLOAD_DEADLINE: Duration = Duration::from_secs(180);
/// The driver stopping once released.
const STOP_DEADLINE: Duration = Duration::from_secs(60);
/// An exporter catching up with what is already on disk or in the REST API.
const CATCH_UP: Duration = Duration::from_secs(30);
/// Time between scrapes while the application runs.
const SCRAPE_EVERY: Duration = Duration::from_millis(300);
/// The job groups the workload uses ("" is the job without a group).
const GROUPS: [&str; 7] = [
    "etl_orders",
    "cached_report",
    "many_tasks",
    "wide_properties",
    "cancelled_scan",
    "failing_job",
    // No job group, no tag: the call site (tests/e2e_live/workload.py).
    "collect at workload.py:189",
];

/// Jobs, stages and tasks by `group\tstatus`.
#[derive(Debug, Clone, PartialEq, Default)]
struct Counts {
    jobs: Series,
    stages: Series,
    tasks: Series,
}

impl Counts {
    /// The exporter's counts for `app`.
    fn of(samples: &[Sample], app: &str) -> Counts {
        let by = ["job_group", "status"];
        Counts {
            jobs: project(samples, "spark_jobs_total", app, &by),
            stages: project(samples, "spark_stages_total", app, &by),
            tasks: project(samples, "spark_tasks_total", app, &by),
        }
    }

    fn compare(&self, f: &mut Failures, what: &str, got: &Counts) {
        f.compare(&format!("{what}: jobs"), &self.jobs, &got.jobs);
        f.compare(&format!("{what}: stages"), &self.stages, &got.stages);
        f.compare(&format!("{what}: tasks"), &self.tasks, &got.tasks);
    }
}

fn scrape(port: u16) -> Result<Vec<Sample>, String> {
    get_ok(&format!("http://127.0.0.1:{port}/metrics")).map(|t| parse_exposition(&t))
}

/// Counts from the REST API: jobs by their `jobGroup`; stages by the group of the job listing
/// them; tasks from each stage attempt's complete / failed / killed task counts.
fn rest_counts(api: &str, dir: &Path, tag: &str) -> Result<Counts, String> {
    let jobs = get_url_json(&format!("{api}/jobs"))?;
    let stages = get_url_json(&format!("{api}/stages?details=false"))?;
    fs::write(dir.join(format!("rest-jobs-{tag}.json")), jobs.to_string()).ok();
    fs::write(
        dir.join(format!("rest-stages-{tag}.json")),
        stages.to_string(),
    )
    .ok();
    let mut c = Counts::default();
    let mut stage_group: HashMap<u64, String> = HashMap::new();
    for j in jobs.as_array().ok_or("/jobs is not a list")? {
        let group = support::groups::rest_job_group(j, str::to_string);
        let status = j["status"].as_str().unwrap_or("?").to_ascii_lowercase();
        *c.jobs.entry(format!("{group}\t{status}")).or_default() += 1.0;
        for s in j["stageIds"].as_array().into_iter().flatten() {
            if let Some(s) = s.as_u64() {
                stage_group.entry(s).or_insert_with(|| group.clone());
            }
        }
    }
    for s in stages.as_array().ok_or("/stages is not a list")? {
        let id = s["stageId"].as_u64().ok_or("stage without stageId")?;
        let group = stage_group.get(&id).cloned().unwrap_or_default();
        let status = s["status"].as_str().unwrap_or("?").to_ascii_lowercase();
        *c.stages.entry(format!("{group}\t{status}")).or_default() += 1.0;
        for (field, status) in [
            ("numCompleteTasks", "succeeded"),
            ("numFailedTasks", "failed"),
            ("numKilledTasks", "killed"),
        ] {
            let n = s[field].as_f64().unwrap_or(0.0);
            *c.tasks.entry(format!("{group}\t{status}")).or_default() += n;
        }
    }
    for m in [&mut c.jobs, &mut c.stages, &mut c.tasks] {
        m.retain(|_, v| *v != 0.0);
    }
    Ok(c)
}

/// The direct count of the log's events (see `count_log.py`).
struct LogCount {
    counts: Counts,
    app_id: String,
    app_end_ms: Option<f64>,
    parts: Vec<String>,
    executor_task_ms: Series,
}

fn count_log(python: &Path, log: &Path, dir: &Path) -> LogCount {
    let out = Command::new(python)
        .arg(COUNT_LOG)
        .arg(log)
        .output()
        .expect("run count_log.py");
    assert!(
        out.status.success(),
        "count_log.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::write(dir.join("log-count.json"), &out.stdout).ok();
    let v: Value = serde_json::from_slice(&out.stdout).expect("count_log.py output");
    let series = |k: &str| -> Series {
        v[k].as_object()
            .into_iter()
            .flatten()
            .map(|(k, n)| (k.clone(), n.as_f64().unwrap_or(f64::NAN)))
            .filter(|(_, n)| *n != 0.0)
            .collect()
    };
    LogCount {
        counts: Counts {
            jobs: series("jobs"),
            stages: series("stages"),
            tasks: series("tasks"),
        },
        app_id: v["app_id"].as_str().unwrap_or_default().to_string(),
        app_end_ms: v["app_end_ms"].as_f64(),
        parts: v["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect(),
        executor_task_ms: series("executor_task_ms"),
    }
}

/// The rolling folder of the application in `events`, if Spark created it.
fn rolling_folder(events: &Path) -> Option<PathBuf> {
    fs::read_dir(events)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("eventlog_v2_"))
        })
}

/// Whether the log still says "in progress" (`appstatus_<app>.inprogress` exists).
fn in_progress(folder: Option<&Path>) -> bool {
    let Some(folder) = folder else { return true };
    fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("appstatus_") && n.ends_with(".inprogress")
        })
}

fn part_names(folder: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("events_"))
        .collect();
    v.sort();
    v
}

/// Non-zero "active" gauges of `app`: jobs, stages, a stage's tasks, an executor's tasks, SQL
/// executions. Once every job has ended they must all be zero (a cancelled job's tasks end after
/// its stage did).
fn still_active(samples: &[Sample], app: &str) -> Vec<String> {
    const ACTIVE: [&str; 5] = [
        "spark_jobs_active",
        "spark_stages_active",
        "spark_stage_tasks_active",
        "spark_executor_active_tasks",
        "spark_sql_executions_active",
    ];
    samples
        .iter()
        .filter(|s| ACTIVE.contains(&s.name.as_str()) && s.label("app_id") == app && s.value != 0.0)
        .map(|s| format!("{} {}", s.id(), s.value))
        .collect()
}

/// Scrape `port` until `ok` holds (or `limit` passes); the last scrape either way.
fn scrape_until(port: u16, limit: Duration, ok: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
    let end = Instant::now() + limit;
    loop {
        let s = scrape(port).unwrap_or_default();
        if ok(&s) || Instant::now() > end {
            return s;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// What exporter A was seen doing while the application ran.
#[derive(Default)]
struct Watch {
    /// Distinct totals of `spark_jobs_total` seen before the jobs were done.
    job_totals: BTreeSet<u64>,
    /// Job groups whose jobs A exported while the log was still in progress.
    groups_live: BTreeSet<String>,
    /// Largest number of followed files A reported `active` at once.
    max_active_files: f64,
    /// Counters that went backwards between two scrapes, per exporter.
    backwards: Vec<String>,
    scrapes: usize,
    /// The previous scrape of A and of B.
    last: [Vec<Sample>; 2],
}

impl Watch {
    /// Scrape A and B (`ports`) once: counters must never go backwards, and A must follow the
    /// growing log in `events`.
    fn observe(&mut self, events: &Path, ports: [u16; 2], before_done: bool) {
        let folder = rolling_folder(events);
        let live = in_progress(folder.as_deref());
        for (i, port) in ports.into_iter().enumerate() {
            let Ok(s) = scrape(port) else { continue };
            for w in went_backwards(&self.last[i], &s) {
                self.backwards
                    .push(format!("exporter {}: {w}", ["A", "B"][i]));
            }
            if i == 0 {
                let groups: BTreeSet<String> = s
                    .iter()
                    .filter(|x| x.name == "spark_jobs_total" && x.value > 0.0)
                    .map(|x| x.label("job_group").to_string())
                    .collect();
                let n: f64 = s
                    .iter()
                    .filter(|x| x.name == "spark_jobs_total")
                    .map(|x| x.value)
                    .sum();
                if before_done && n > 0.0 {
                    self.job_totals.insert(n as u64);
                }
                if live {
                    self.groups_live.extend(groups);
                }
                let active = value(&s, "spark_exporter_eventlog_files", &[("state", "active")]);
                self.max_active_files = self.max_active_files.max(active.unwrap_or(0.0));
            }
            self.scrapes += 1;
            self.last[i] = s;
        }
    }
}

/// Where the test keeps its artefacts and event logs, and the ports of A, B and C.
struct Setup {
    dir: PathBuf,
    events: PathBuf,
    ports: [(&'static str, u16); 3],
}

impl Setup {
    /// The ports of A and B, the exporters watching the application while it runs.
    fn watched(&self) -> [u16; 2] {
        [self.ports[0].1, self.ports[1].1]
    }
}

#[test]
fn live_event_log_matches_rest_and_log() {
    let Some(python) = spark::python("eventlog_live") else {
        return;
    };
    if Command::new("zstd").arg("--version").output().is_err() {
        spark::skip_unless_required(
            "eventlog_live: the `zstd` command is missing (apt-get install zstd)",
        );
        return;
    }
    let t0 = Instant::now();
    let dir = artefact_dir("eventlog-live");
    let events = dir.join("events");
    fs::create_dir_all(&events).unwrap();
    let events_arg = events.to_str().unwrap();
    let ui_port = free_port();
    let ui = format!("http://127.0.0.1:{ui_port}");
    let (port_a, port_b, port_c) = (free_port(), free_port(), free_port());
    let setup = Setup {
        dir: dir.clone(),
        events: events.clone(),
        ports: [("A", port_a), ("B", port_b), ("C", port_c)],
    };
    let mut f = Failures::default();

    // Both exporters run before the application exists: the folder is empty.
    let log_only = ["--spark.url=", "--event-log.dir", events_arg];
    let tail = ["--event-log.poll-interval", "200ms"];
    let both = [
        "--spark.url",
        &ui,
        "--spark.poll-interval",
        "1s",
        "--event-log.dir",
        events_arg,
    ];
    let both_args = [&both[..], &tail].concat();
    let a = start_exporter(
        "exporter-a",
        port_a,
        &[&log_only[..], &tail].concat(),
        &dir,
        CATCH_UP,
    );
    let b = start_exporter("exporter-b", port_b, &both_args, &dir, CATCH_UP);

    let (progress, done, release) = (
        dir.join("progress.jsonl"),
        dir.join("done.json"),
        dir.join("release"),
    );
    let mut cmd = Command::new(&python);
    cmd.arg(WORKLOAD)
        .arg("--ui-port")
        .arg(ui_port.to_string())
        .arg("--event-log-dir")
        .arg(&events)
        .arg("--progress-file")
        .arg(&progress)
        .arg("--done-marker")
        .arg(&done)
        .arg("--release-marker")
        .arg(&release);
    let workload_log = dir.join("workload.log");
    let mut workload = Guard::spawn("workload", cmd, &workload_log, true);

    // While the jobs run: scrape A and B, counters must never go backwards, and A must follow
    // the growing log.
    let mut watch = Watch::default();
    watch_until_done(&setup, &mut watch, &mut workload, &workload_log, &done);
    let marker: Value = serde_json::from_str(&fs::read_to_string(&done).unwrap()).unwrap();
    let app = marker["app_id"].as_str().unwrap().to_string();
    let api = format!("{ui}/api/v1/applications/{app}");
    eprintln!("[live] jobs done after {:?}: app {app}", t0.elapsed());
    let folder = rolling_folder(&events).expect("a rolling eventlog_v2_ folder");

    // The driver holds its UI: REST is the truth. C starts now, on what is already there.
    let rest = rest_counts(&api, &dir, "held").expect("REST counts");
    let c = start_exporter("exporter-c", port_c, &both_args, &dir, CATCH_UP);
    check_started_whole(&mut f, port_c, &app, &rest);
    let held = check_held(&mut f, &setup, &mut watch, &api, &app, &rest, &folder);
    check_executors_vs_rest(&mut f, &dir, &api, &app, &held["A"]);
    check_watch(&mut f, &watch, &folder);

    // Stop the driver: ApplicationEnd is written and appstatus loses `.inprogress`.
    fs::write(&release, b"").unwrap();
    match workload.wait_exit(STOP_DEADLINE) {
        Some(s) if s.success() => {}
        other => panic!(
            "the workload did not stop cleanly ({other:?}):\n{}",
            tail_file(&workload_log, 40)
        ),
    }
    let log = check_log(&mut f, &python, &folder, &dir, &app, &rest);
    for (name, port) in setup.ports {
        check_ended(&mut f, &dir, name, port, &app, &log, &held[name]);
    }
    eprintln!(
        "[live] {} scrapes while running; job totals seen {:?}; parts {:?}; {:?} in all",
        watch.scrapes,
        watch.job_totals,
        log.parts,
        t0.elapsed()
    );
    drop((a, b, c));
    f.finish(&dir);
}

/// C is a sidecar (re)started beside a live driver, on REST and the driver's in-progress log:
/// from its first scrape until a second after its start-up read is complete
/// (`spark_exporter_startup_complete` 1), every scrape shows the application whole (the REST
/// counts, which stay stable while the driver holds) or not at all, never partly read
/// (docs/internals.md, *Restarts and the start-up read*).
fn check_started_whole(f: &mut Failures, port: u16, app: &str, rest: &Counts) {
    let end = Instant::now() + CATCH_UP;
    let (mut scrapes, mut absent, mut partial) = (0, 0, Vec::new());
    let mut complete_at: Option<Instant> = None;
    while Instant::now() < end && complete_at.is_none_or(|t| t.elapsed() < Duration::from_secs(1)) {
        if let Ok(s) = scrape(port) {
            scrapes += 1;
            let c = Counts::of(&s, app);
            if !s.iter().any(|x| x.label("app_id") == app) {
                absent += 1;
            } else if c != *rest {
                partial.push(format!(
                    "scrape {scrapes}: jobs {:?} stages {:?} tasks {:?}",
                    c.jobs, c.stages, c.tasks
                ));
            }
            if complete_at.is_none()
                && value(&s, "spark_exporter_startup_complete", &[]) == Some(1.0)
            {
                complete_at = Some(Instant::now());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("[live] C: {scrapes} scrapes from its start, {absent} without the application");
    f.check(
        "exporter C (started beside the live driver): its start-up read completes",
        complete_at.is_some(),
        || format!("spark_exporter_startup_complete not 1 within {CATCH_UP:?}"),
    );
    f.check(
        "exporter C (started beside the live driver): the application absent or whole in every \
            scrape, never partly read",
        partial.is_empty(),
        || {
            format!(
                "{} partial scrapes of {scrapes}; REST {:?} {:?} {:?}; \
            {}",
                partial.len(),
                rest.jobs,
                rest.stages,
                rest.tasks,
                partial.join("; ")
            )
        },
    );
}

/// Scrape A and B every [`SCRAPE_EVERY`] until the workload's `done` marker appears.
fn watch_until_done(
    setup: &Setup,
    watch: &mut Watch,
    workload: &mut Guard,
    workload_log: &Path,
    done: &Path,
) {
    let deadline = Instant::now() + WORKLOAD_DEADLINE;
    while !done.exists() {
        if let Some(s) = workload.exited() {
            panic!(
                "the workload exited ({s}) before its jobs were done:\n{}",
                tail_file(workload_log, 40)
            );
        }
        assert!(
            Instant::now() < deadline,
            "jobs not done within {WORKLOAD_DEADLINE:?}:\n{}",
            tail_file(workload_log, 40)
        );
        watch.observe(&setup.events, setup.watched(), true);
        std::thread::sleep(SCRAPE_EVERY);
    }
}

/// While the driver holds its UI: A, B and C equal the REST counts (`rest`, which stays stable)
/// and nothing is left active. Returns each exporter's scrape by name.
fn check_held(
    f: &mut Failures,
    setup: &Setup,
    watch: &mut Watch,
    api: &str,
    app: &str,
    rest: &Counts,
    folder: &Path,
) -> BTreeMap<&'static str, Vec<Sample>> {
    let dir = &setup.dir;
    let mut held = BTreeMap::new();
    for (name, port) in setup.ports {
        let s = scrape_until(port, CATCH_UP, |s| {
            Counts::of(s, app) == *rest && still_active(s, app).is_empty()
        });
        fs::write(
            dir.join(format!("scrape-{name}-held.txt")),
            get_ok(&format!("http://127.0.0.1:{port}/metrics")).unwrap_or_default(),
        )
        .ok();
        held.insert(name, s);
        watch.observe(&setup.events, setup.watched(), false);
    }
    let rest_again = rest_counts(api, dir, "held-again").expect("REST counts");
    f.check(
        "REST counts stable while the driver holds (no job ran after the done marker)",
        *rest == rest_again,
        || format!("{rest:?} then {rest_again:?}"),
    );
    f.check(
        "the log is still in progress while the driver holds",
        in_progress(Some(folder)),
        || format!("{} has no appstatus_*.inprogress", folder.display()),
    );
    for name in ["A", "B", "C"] {
        rest.compare(
            f,
            &format!("exporter {name} (driver alive) vs REST"),
            &Counts::of(&held[name], app),
        );
        let active = still_active(&held[name], app);
        f.check(
            &format!("exporter {name}: nothing left active once every job ended"),
            active.is_empty(),
            || active.join(", "),
        );
    }
    held
}

/// `spark_executor_task_time_seconds_total` of `app` per executor, in whole milliseconds.
fn exec_task_ms(s: &[Sample], app: &str) -> Series {
    project(
        s,
        "spark_executor_task_time_seconds_total",
        app,
        &["executor_id"],
    )
    .into_iter()
    .map(|(k, v)| (k, (v * 1000.0).round()))
    .collect()
}

/// Executors other than the driver: A's exported task time = REST's totalDuration.
fn check_executors_vs_rest(f: &mut Failures, dir: &Path, api: &str, app: &str, held_a: &[Sample]) {
    let execs = get_url_json(&format!("{api}/allexecutors")).expect("REST executors");
    fs::write(dir.join("rest-allexecutors.json"), execs.to_string()).ok();
    let rest_exec: Series = execs
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["id"].as_str() != Some("driver"))
        .map(|e| {
            let id = e["id"].as_str().unwrap_or("?").to_string();
            (id, e["totalDuration"].as_f64().unwrap_or(f64::NAN))
        })
        .collect();
    let a_exec_non_driver: Series = exec_task_ms(held_a, app)
        .into_iter()
        .filter(|(k, _)| rest_exec.contains_key(k))
        .collect();
    f.compare(
        &format!(
            "exporter A: task time of non-driver executors vs REST totalDuration ({} executors)",
            rest_exec.len()
        ),
        &rest_exec,
        &a_exec_non_driver,
    );
}

/// What A did while the application ran, and the log rolling.
fn check_watch(f: &mut Failures, watch: &Watch, folder: &Path) {
    f.check(
        "no counter of A or B went backwards between scrapes",
        watch.backwards.is_empty(),
        || watch.backwards.join("\n"),
    );
    f.check(
        "A's job total grew in at least 3 steps while the jobs ran",
        watch.job_totals.len() >= 3,
        || format!("distinct totals seen: {:?}", watch.job_totals),
    );
    let want_groups: BTreeSet<String> = GROUPS.iter().map(|g| g.to_string()).collect();
    f.check(
        "A exported every job group's jobs while the log was still .inprogress",
        want_groups.is_subset(&watch.groups_live),
        || format!("seen while live: {:?}", watch.groups_live),
    );
    f.check(
        "A followed an active (growing) file",
        watch.max_active_files >= 1.0,
        || {
            format!(
                "max spark_exporter_eventlog_files{{state=\"active\"}}: {}",
                watch.max_active_files
            )
        },
    );
    let parts_live = part_names(folder);
    f.check(
        "the log rolled into 2+ parts while the application ran",
        parts_live.len() >= 2,
        || format!("parts: {parts_live:?}"),
    );
}

/// Once the driver stopped: the log is complete, names the application, agrees with REST and
/// has an ApplicationEnd. Returns its direct count.
fn check_log(
    f: &mut Failures,
    python: &Path,
    folder: &Path,
    dir: &Path,
    app: &str,
    rest: &Counts,
) -> LogCount {
    f.check(
        "appstatus renamed (no .inprogress) after the driver stopped",
        !in_progress(Some(folder)),
        || format!("{:?}", fs::read_dir(folder).map(|d| d.count())),
    );
    let log = count_log(python, folder, dir);
    f.check("the log names the application", log.app_id == app, || {
        format!("log says {:?}, Spark said {app:?}", log.app_id)
    });
    log.counts
        .compare(f, "log count vs REST (the two truths agree)", rest);
    let end_s = log.app_end_ms.map(|ms| ms / 1000.0);
    f.check(
        "the log has an ApplicationEnd",
        end_s.is_some(),
        String::new,
    );
    log
}

/// Exporter `name` after the application ended: the log's counts and end time, nothing active,
/// nothing backwards since `held`, no event-log errors; for A also task time and files.
fn check_ended(
    f: &mut Failures,
    dir: &Path,
    name: &str,
    port: u16,
    app: &str,
    log: &LogCount,
    held: &[Sample],
) {
    let end_s = log.app_end_ms.map(|ms| ms / 1000.0);
    let s = scrape_until(port, CATCH_UP, |s| {
        value(s, "spark_app_end_time_seconds", &[("app_id", app)]) == end_s
            && Counts::of(s, app) == log.counts
            && still_active(s, app).is_empty()
    });
    fs::write(
        dir.join(format!("scrape-{name}-ended.txt")),
        get_ok(&format!("http://127.0.0.1:{port}/metrics")).unwrap_or_default(),
    )
    .ok();
    log.counts.compare(
        f,
        &format!("exporter {name} (application ended) vs the log's events"),
        &Counts::of(&s, app),
    );
    let got = value(&s, "spark_app_end_time_seconds", &[("app_id", app)]);
    f.check(
        &format!("exporter {name}: spark_app_end_time_seconds = the log's ApplicationEnd"),
        got == end_s,
        || format!("expected {end_s:?}, got {got:?}"),
    );
    let active = still_active(&s, app);
    f.check(
        &format!("exporter {name}: nothing active after the application ended"),
        active.is_empty(),
        || active.join(", "),
    );
    let backwards = went_backwards(held, &s);
    f.check(
        &format!("exporter {name}: no counter went backwards after the driver stopped"),
        backwards.is_empty(),
        || backwards.join("\n"),
    );
    let errors: Vec<String> = s
        .iter()
        .filter(|x| x.name == "spark_exporter_eventlog_errors_total" && x.value != 0.0)
        .map(|x| format!("{} {}", x.id(), x.value))
        .collect();
    f.check(
        &format!("exporter {name}: no event-log errors on a real log"),
        errors.is_empty(),
        || errors.join(", "),
    );
    if name == "A" {
        f.compare(
            "exporter A: spark_executor_task_time_seconds_total (ms) vs the log's task ends",
            &log.executor_task_ms,
            &exec_task_ms(&s, app),
        );
        let files = |state: &str| value(&s, "spark_exporter_eventlog_files", &[("state", state)]);
        f.check(
            "exporter A: every part finished, none active or failed",
            files("finished") == Some(log.parts.len() as f64)
                && files("active") == Some(0.0)
                && files("error") == Some(0.0),
            || {
                format!(
                    "parts {:?}; files finished {:?} active {:?} error {:?}",
                    log.parts,
                    files("finished"),
                    files("active"),
                    files("error")
                )
            },
        );
    }
}
