//! A real Spark History Server (PySpark 4.1.1's jars, Java 17) over the committed fixtures'
//! event logs: one log per application (every codec and layout; Spark 3.3 to 4.3, classic,
//! Connect, streaming, the diagnosis runs, the 51 MB bench log) and the two attempts of
//! `tests/data/attempts-4.1.1/complete` (a YARN-style retried driver), 38 applications, more
//! than the old `spark.app_limit` of 20.
//!
//! At default settings (the default summary level, `groups`), `dump --spark.url HS` and a
//! serving exporter polling the History Server give what `dump --event-log` of the same folder
//! gives, for the families both sources give: jobs, stages and tasks by group and status,
//! job-duration histograms, task totals (float sums to 1e-9). At `full` the same; at `app` the
//! application series. Single-source families (task durations, locality, scheduler delay:
//! event log only) and `spark_app_runs_total{status}` (REST cannot know the exit code) are not
//! compared. Every application the History Server lists is exported (none left out), and each
//! attempt is a run with its `attempt_id` and its own job 0.
//!
//! The serving exporter follows applications that ended within `model.app_retention`; these
//! ended days ago, so it runs with a retention of ten years. The History Server retains every
//! job, stage and task (`spark.ui.retained*` raised): through a History Server counts are exact
//! within its retention.
//!
//! Needs `$SPARK_E2E_PYTHON` (default `.venv/bin/python`) with pyspark; without it the test
//! passes with a loud message, unless `SPARK_E2E_REQUIRED=1`. Artefacts stay in
//! `target/tmp/history-server-<pid>/`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::command::exporter_command;
use support::committed_logs::committed_event_logs;
use support::exposition::{diff, parse_exposition, Sample, Series};
use support::files::{artefact_dir, free_port, tail_file};
use support::http::get_json;
use support::proc::{wait_for, Guard};
use support::spark;

/// The families both sources give, compared at `groups` and `full`.
const GROUP_FAMILIES: &[&str] = &[
    "spark_jobs_total",
    "spark_stages_total",
    "spark_tasks_total",
    "spark_job_duration_seconds_bucket",
    "spark_job_duration_seconds_sum",
    "spark_job_duration_seconds_count",
    "spark_task_run_time_seconds_total",
    "spark_task_cpu_time_seconds_total",
    "spark_task_gc_time_seconds_total",
    "spark_task_input_bytes_total",
    "spark_task_output_bytes_total",
    "spark_task_shuffle_read_bytes_total",
    "spark_task_shuffle_write_bytes_total",
    "spark_task_memory_spilled_bytes_total",
    "spark_task_disk_spilled_bytes_total",
];

/// The application series compared at every level.
const APP_FAMILIES: &[&str] = &[
    "spark_app_info",
    "spark_app_start_time_seconds",
    "spark_app_end_time_seconds",
];

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// One log per application into `dir`: the attempts fixture's `crashed/` copy is the same
/// application as `complete/`, so it stays out.
fn store(dir: &Path, copies: &Path) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = BTreeSet::new();
    for p in committed_event_logs(root, copies) {
        if p.components().any(|c| c.as_os_str() == "crashed") {
            continue;
        }
        let name = p.file_name().unwrap().to_owned();
        assert!(names.insert(name.clone()), "{name:?} twice");
        copy_tree(&p, &dir.join(&name));
    }
    names.len()
}

/// `samples` of `families`, by series identity. A Spark Connect server's job descriptions
/// are the operations' statements, which only its event log records (REST shows the plan
/// dump): its group series are summed over `job_group` and `job_description`.
fn series(samples: &[Sample], families: &[&str]) -> Series {
    let mut out = Series::new();
    for s in samples
        .iter()
        .filter(|s| families.contains(&s.name.as_str()))
    {
        let mut s = s.clone();
        if s.label("app_name").contains("SparkConnectServer") {
            s.labels.remove("job_group");
            s.labels.remove("job_description");
        }
        *out.entry(s.id()).or_default() += s.value;
    }
    out
}

fn dump(args: &[&str]) -> Vec<Sample> {
    let out = exporter_command(args, Duration::from_secs(600));
    assert!(out.status.success(), "dump {args:?}: {}", out.stderr);
    parse_exposition(&out.stdout)
}

fn assert_same(what: &str, want: &Series, got: &Series) {
    assert!(!want.is_empty(), "{what}: nothing to compare");
    let d = diff(want, got);
    let mut by_app: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &d {
        let app = l
            .split("app_id=\"")
            .nth(1)
            .and_then(|r| r.split('"').next());
        *by_app.entry(app.unwrap_or("-")).or_default() += 1;
    }
    assert!(
        d.is_empty(),
        "{what}: {} differences (want: the event log), by application {by_app:?}\n{}",
        d.len(),
        d.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

fn apps_of(samples: &[Sample]) -> BTreeSet<String> {
    samples
        .iter()
        .filter(|s| s.name == "spark_app_info")
        .map(|s| format!("{}/{}", s.label("app_id"), s.label("attempt_id")))
        .collect()
}

fn jars(python: &Path) -> Option<PathBuf> {
    let out = Command::new(python)
        .args([
            "-c",
            "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_dir().then_some(p)
}

#[test]
fn a_real_history_server_gives_the_event_logs_counts_at_every_summary_level() {
    let Some(python) = spark::python("history_server") else {
        return;
    };
    let Some(jars) = jars(&python) else {
        spark::skip_unless_required("history_server: no pyspark jars");
        return;
    };
    let run = artefact_dir("history-server");
    let logs = run.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let n = store(&logs, &run.join("copies"));
    let port = free_port();
    let mut cmd = Command::new("java");
    cmd.args([
        "-Xmx2g",
        "-cp",
        &format!("{}/*", jars.display()),
        &format!("-Dspark.history.fs.logDirectory=file:{}", logs.display()),
        "-Dspark.history.fs.update.interval=1s",
        &format!("-Dspark.history.ui.port={port}"),
        "-Dspark.history.retainedApplications=100",
        "-Dspark.ui.retainedJobs=1000000",
        "-Dspark.ui.retainedStages=1000000",
        "-Dspark.ui.retainedTasks=10000000",
        "org.apache.spark.deploy.history.HistoryServer",
    ]);
    let hs_log = run.join("history-server.log");
    let mut hs = Guard::spawn("history-server", cmd, &hs_log, true);
    let addr = format!("127.0.0.1:{port}");
    // Every log listed (the attempts fixture is one application of two attempts).
    let listed = wait_for(Duration::from_secs(240), Duration::from_millis(500), || {
        let v = get_json(&addr, "/api/v1/applications").ok()?;
        (v.as_array()?.len() == n - 1).then_some(())
    });
    assert!(
        listed.is_some() && hs.running(),
        "the History Server did not list the {} applications:\n{}",
        n - 1,
        tail_file(&hs_log, 40)
    );
    let url = format!("http://{addr}");
    let log_dir = logs.to_string_lossy().into_owned();

    for level in ["groups", "full", "app"] {
        let from_log = dump(&[
            "dump",
            "--model.summary-level",
            level,
            "--event-log",
            &log_dir,
        ]);
        // A History Server replays an application's log at its first request (the 51 MB bench
        // log takes seconds): more than the default 5 s timeout on a loaded machine.
        let from_hs = dump(&[
            "dump",
            "--model.summary-level",
            level,
            "--spark.timeout",
            "120s",
            "--spark.url",
            &url,
        ]);
        // Every application, each attempt its own run.
        let apps = apps_of(&from_log);
        assert_eq!(apps.len(), n, "{level}: one run per log");
        assert_eq!(apps_of(&from_hs), apps, "{level}: every application listed");
        for a in ["1", "2"] {
            assert!(
                apps.contains(&format!("application_1796000000000_0001/{a}")),
                "{apps:?}"
            );
        }
        let fams = if level == "app" {
            APP_FAMILIES.to_vec()
        } else {
            [APP_FAMILIES, GROUP_FAMILIES].concat()
        };
        assert_same(
            &format!("dump --spark.url at {level}"),
            &series(&from_log, &fams),
            &series(&from_hs, &fams),
        );
        if level == "app" {
            assert!(
                series(&from_hs, GROUP_FAMILIES).is_empty(),
                "app level: no group series"
            );
        }
        if level == "groups" {
            // Both attempts' job 0: one job each, with the attempt's own task count.
            for (a, tasks) in [("1", 2.0), ("2", 3.0)] {
                let with = [
                    ("app_id", "application_1796000000000_0001"),
                    ("attempt_id", a),
                    ("status", "succeeded"),
                ];
                for s in [&from_log, &from_hs] {
                    assert_eq!(
                        support::exposition::value(s, "spark_jobs_total", &with),
                        Some(1.0)
                    );
                    assert_eq!(
                        support::exposition::value(s, "spark_tasks_total", &with),
                        Some(tasks)
                    );
                }
            }
            // Serve mode, default settings but the retention: the same once complete.
            let served = serve(&run, &url);
            assert_same(
                "serve mode at groups",
                &series(&from_log, &fams),
                &series(&served, &fams),
            );
            assert_eq!(apps_of(&served), apps);
            // The memory guard: `spark.app_limit` below what the History Server lists follows
            // the most recently ended applications and counts the rest, none half-exported.
            let limit = 30;
            let (guarded, skipped) = serve_with(&run, &url, &["--spark.app-limit", "30"]);
            let listed = n - 1;
            assert_eq!(skipped, (listed - limit) as f64, "skips counted");
            let ids: BTreeSet<String> = guarded
                .iter()
                .filter(|s| s.name == "spark_app_info")
                .map(|s| s.label("app_id").to_string())
                .collect();
            assert_eq!(ids.len(), limit, "{ids:?}");
            let only = |samples: &[Sample]| -> Vec<Sample> {
                samples
                    .iter()
                    .filter(|s| ids.contains(s.label("app_id")))
                    .cloned()
                    .collect()
            };
            assert_same(
                "serve mode with spark.app_limit 30",
                &series(&only(&from_log), &fams),
                &series(&guarded, &fams),
            );
        }
    }
    hs.terminate(Duration::from_secs(5));
}

/// A serving exporter polling the History Server: its exposition once the start-up read is
/// complete (`/readyz?complete`).
fn serve(run: &Path, url: &str) -> Vec<Sample> {
    let (samples, skipped) = serve_with(run, url, &[]);
    assert_eq!(skipped, 0.0, "none skipped");
    samples
}

/// [`serve`] with `extra` flags: the exposition and the applications it says it skipped.
fn serve_with(run: &Path, url: &str, extra: &[&str]) -> (Vec<Sample>, f64) {
    let port = free_port();
    let mut cmd = Command::new(support::EXPORTER);
    cmd.args(extra);
    cmd.args([
        "--spark.url",
        url,
        "--model.app-retention",
        "87600h",
        "--spark.timeout",
        "120s",
        "--web.listen-address",
        &format!("127.0.0.1:{port}"),
    ]);
    let log = run.join(format!("exporter-{port}.log"));
    let mut ex = Guard::spawn("exporter", cmd, &log, true);
    let addr = format!("127.0.0.1:{port}");
    let complete = wait_for(Duration::from_secs(300), Duration::from_millis(500), || {
        let (code, _) = support::http::get_url(&format!("http://{addr}/readyz?complete")).ok()?;
        (code == 200).then_some(())
    });
    assert!(
        complete.is_some(),
        "never complete:\n{}",
        tail_file(&log, 40)
    );
    let (code, body) = support::http::get_url(&format!("http://{addr}/metrics")).unwrap();
    assert_eq!(code, 200);
    let samples = parse_exposition(&body);
    let skipped: BTreeMap<String, f64> = samples
        .iter()
        .filter(|s| s.name == "spark_exporter_rest_apps_skipped")
        .map(|s| (s.label("target").to_string(), s.value))
        .collect();
    ex.terminate(Duration::from_secs(10));
    (samples, skipped.values().sum::<f64>())
}

/// The two-attempt fixture from its logs alone (no Spark needed): each attempt is a run of its
/// own with its job 0; attempt 1 of `crashed/`, whose log has no `ApplicationEnd`, ends when
/// attempt 2 starts, with status `unknown`.
#[test]
fn each_attempt_is_a_run_and_a_crashed_one_ends_when_the_next_starts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/attempts-4.1.1");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("meta.json")).unwrap()).unwrap();
    let id = meta["app_id"].as_str().unwrap();
    let at = |a: usize, k: &str| meta["attempts"][a][k].as_f64().unwrap() / 1000.0;
    for (folder, first_end, first_status) in [
        ("complete", at(0, "end_time"), "succeeded"),
        ("crashed", at(1, "start_time"), "unknown"),
    ] {
        let dir = root.join(folder);
        let s = dump(&["dump", "--event-log", dir.to_str().unwrap()]);
        let v = |name: &str, a: &str, extra: &[(&str, &str)]| {
            let mut with = vec![("app_id", id), ("attempt_id", a)];
            with.extend_from_slice(extra);
            support::exposition::value(&s, name, &with)
        };
        for (a, tasks) in [("1", 2.0), ("2", 3.0)] {
            let ok = [("status", "succeeded"), ("job_group", "attempt_job")];
            assert_eq!(v("spark_jobs_total", a, &ok), Some(1.0), "{folder} {a}");
            assert_eq!(v("spark_tasks_total", a, &ok), Some(tasks), "{folder} {a}");
            assert_eq!(
                v("spark_app_start_time_seconds", a, &[]).map(|x| x > 0.0),
                Some(true)
            );
        }
        assert_eq!(
            v("spark_app_end_time_seconds", "1", &[]),
            Some(first_end),
            "{folder}"
        );
        assert_eq!(
            v("spark_app_end_time_seconds", "2", &[]),
            Some(at(1, "end_time"))
        );
        assert_eq!(
            v("spark_app_runs_total", "1", &[("status", first_status)]),
            Some(1.0),
            "{folder}"
        );
        assert_eq!(
            v("spark_app_runs_total", "2", &[("status", "succeeded")]),
            Some(1.0)
        );
    }
}
