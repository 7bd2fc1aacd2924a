//! `spark-exporter diagnose` against a real Spark History Server (PySpark 4.1.1's jars, Java 17)
//! replaying the diagnosis fixture's event logs (`tests/data/diagnosis-4.1.1`): for each of its
//! three applications, `--spark.url HS --app-id ID` gives the same findings as `--event-log`
//! (locality and scheduler delay aside: REST has neither), with the same costs, and every link
//! it prints is a page the History Server serves (HTTP 200). Then, with the comparison fixture's
//! runs added, `diagnose --compare` over the History Server equals the same comparison of the
//! event logs.
//!
//! Needs `$SPARK_E2E_PYTHON` (default `.venv/bin/python`) with pyspark; without it the test
//! passes with a loud message, unless `SPARK_E2E_REQUIRED=1`. Artefacts (the History Server's
//! log) stay in `target/tmp/diagnose-hs-<pid>/`.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use spark_exporter::config::Settings;
use spark_exporter::diagnose::report::AppReport;
use spark_exporter::diagnose::{diagnose, Request};
use spark_exporter::sources::rest::config::SparkConfig;
use support::diagnosis::{apps, assert_same_findings, event_log, fixture};
use support::files::{artefact_dir, free_port, tail_file};
use support::http::{get_json, get_url};
use support::proc::{wait_for, Guard};
use support::spark;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn one(r: Result<spark_exporter::diagnose::report::Report, impl std::fmt::Debug>) -> AppReport {
    let mut r = r.expect("diagnose");
    assert_eq!(r.applications.len(), 1);
    r.applications.pop().unwrap()
}

#[test]
fn a_real_history_server_gives_the_findings_of_the_event_logs_and_serves_every_link() {
    let Some(python) = spark::python("diagnose_history") else {
        return;
    };
    let jars = Command::new(&python)
        .args([
            "-c",
            "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))",
        ])
        .output()
        .expect("python");
    let jars = String::from_utf8_lossy(&jars.stdout).trim().to_string();
    if !Path::new(&jars).is_dir() {
        spark::skip_unless_required("diagnose_history: no pyspark jars");
        return;
    }
    let run = artefact_dir("diagnose-hs");
    let logs = run.join("logs");
    copy_tree(&fixture().join("eventlog"), &logs);
    let port = free_port();
    let mut cmd = Command::new("java");
    cmd.args([
        "-Xmx1g",
        "-cp",
        &format!("{jars}/*"),
        &format!("-Dspark.history.fs.logDirectory=file:{}", logs.display()),
        "-Dspark.history.fs.update.interval=1s",
        &format!("-Dspark.history.ui.port={port}"),
        "-Dspark.ui.retainedTasks=1000000",
        "org.apache.spark.deploy.history.HistoryServer",
    ]);
    let hs_log = run.join("history-server.log");
    let mut hs = Guard::spawn("history-server", cmd, &hs_log, true);
    let addr = format!("127.0.0.1:{port}");
    let listed = wait_for(Duration::from_secs(120), Duration::from_millis(500), || {
        let v = get_json(&addr, "/api/v1/applications").ok()?;
        (v.as_array()?.len() == 3).then_some(())
    });
    assert!(
        listed.is_some() && hs.running(),
        "the History Server did not list the three applications:\n{}",
        tail_file(&hs_log, 40)
    );
    let url = format!("http://{addr}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    // A History Server replays an application's log at its first request: on a loaded machine
    // that takes longer than the default 5 s timeout.
    let mut settings = Settings::default();
    SparkConfig::of_mut(&mut settings).timeout = Duration::from_secs(120);
    let mut links = 0;
    for app in apps() {
        let log = one(rt.block_on(diagnose(
            &settings,
            &Request {
                event_logs: vec![event_log(&app).to_string_lossy().into_owned()],
                ..Request::default()
            },
        )));
        let hs_report = one(rt.block_on(diagnose(
            &settings,
            &Request {
                spark_url: Some(url.clone()),
                app_id: Some(app.clone()),
                ..Request::default()
            },
        )));
        assert_same_findings(&hs_report, &log, 0.02, &app);
        // Every link is a History Server page of this application.
        for u in hs_report
            .findings
            .iter()
            .filter_map(|f| f.url.as_deref())
            .chain(
                hs_report
                    .bottlenecks
                    .iter()
                    .filter_map(|b| b.url.as_deref()),
            )
        {
            assert!(u.starts_with(&format!("{url}/history/{app}/")), "{u}");
            let (code, body) = get_url(u).unwrap_or((0, String::new()));
            assert_eq!(code, 200, "{u}");
            // A page with the stage's or the query's details: the UI answers 200 with "No
            // information to display" for one it does not know.
            assert!(!body.contains("No information to display"), "{u}");
            if u.contains("stages/stage/?id=") {
                assert!(body.contains("Total Time Across All Tasks"), "{u}");
            }
            if u.contains("SQL/execution/?id=") {
                assert!(body.contains("Submitted Time"), "{u}");
            }
            links += 1;
        }
    }
    assert!(links >= 10, "only {links} links");
    // What a page of a stage or query the application does not have says.
    for bogus in ["stages/stage/?id=9999&attempt=0", "SQL/execution/?id=9999"] {
        let (_, body) =
            get_url(&format!("{url}/history/{}/{bogus}", apps()[0])).unwrap_or((0, String::new()));
        assert!(body.contains("No information to display"), "{bogus}");
    }
    // `diagnose` and `--review` read with the configured body cap (issue 49: they used their
    // own): the History Server's answers are larger than 2 KiB, so both fail, naming it.
    let mut small = settings.clone();
    SparkConfig::of_mut(&mut small).max_body_bytes = 2048;
    let e = rt
        .block_on(diagnose(
            &small,
            &Request {
                spark_url: Some(url.clone()),
                app_id: Some(apps()[0].clone()),
                ..Request::default()
            },
        ))
        .expect_err("a body over spark.max_body_bytes");
    assert!(e.to_string().contains("spark.max_body_bytes"), "{e}");
    let review = |s: &Settings| {
        rt.block_on(spark_exporter::diagnose::review::review(
            s,
            &spark_exporter::diagnose::review::ReviewRequest {
                spark_url: Some(url.clone()),
                top: 10,
                ..Default::default()
            },
        ))
    };
    let mut tiny = settings.clone();
    SparkConfig::of_mut(&mut tiny).max_body_bytes = 256;
    let e = review(&tiny).expect_err("a listing over spark.max_body_bytes");
    assert!(e.to_string().contains("spark.max_body_bytes"), "{e}");
    // At the default cap the same review reads all three.
    let r = review(&settings).expect("review");
    assert_eq!(r.counts.reviewed, 3, "{:?}", r.counts);
    compare_over_the_history_server(&rt, &settings, &logs, &addr);
    hs.terminate(Duration::from_secs(5));
}

/// `diagnose --compare` (issue 52) over the same History Server, once the comparison fixture's
/// three runs are in its folder: the run and its baseline downloaded as their event logs
/// (`/logs`) give the comparison of the logs themselves; `previous` is the name's latest runs
/// before it.
fn compare_over_the_history_server(
    rt: &tokio::runtime::Runtime,
    settings: &Settings,
    logs: &Path,
    addr: &str,
) {
    use spark_exporter::diagnose::compared::{compared, CompareRequest};
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare-4.1.1");
    for run in ["base", "aqe_off", "one_exec"] {
        copy_tree(&fixture.join("eventlog").join(run), logs);
    }
    let listed = wait_for(Duration::from_secs(120), Duration::from_millis(500), || {
        let v = get_json(addr, "/api/v1/applications").ok()?;
        (v.as_array()?.len() == 6).then_some(())
    });
    assert!(
        listed.is_some(),
        "the History Server did not list the comparison's runs"
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("meta.json")).unwrap()).unwrap();
    let id = |r: &str| meta["runs"][r].as_str().unwrap().to_string();
    let url = format!("http://{addr}");
    let over_hs = |run: &str, baseline: String, runs: usize| {
        let req = CompareRequest {
            run: Request {
                spark_url: Some(url.clone()),
                app_id: Some(id(run)),
                ..Request::default()
            },
            baseline,
            runs,
            force: false,
        };
        rt.block_on(compared(settings, &req))
            .expect("compare over the History Server")
    };
    let from_logs = {
        let log = |r: &str| {
            fixture
                .join("eventlog")
                .join(r)
                .to_string_lossy()
                .into_owned()
        };
        let req = CompareRequest {
            run: Request {
                event_logs: vec![log("aqe_off")],
                ..Request::default()
            },
            baseline: log("base"),
            runs: 7,
            force: false,
        };
        rt.block_on(compared(settings, &req))
            .expect("compare the logs")
    };
    let mut hs = over_hs("aqe_off", id("base"), 7);
    assert_eq!(hs.baseline.input, url);
    hs.baseline.input = from_logs.baseline.input.clone();
    assert_eq!(hs, from_logs);
    assert_eq!(hs.settings[0].key, "spark.sql.adaptive.enabled");
    // The latest two runs of "diagnosis" before one_exec (the diagnosis fixture's is older).
    let prev = over_hs("one_exec", "previous".into(), 2);
    assert_eq!(prev.baseline.kind, "median");
    assert_eq!(prev.baseline.runs, [id("base"), id("aqe_off")]);
}
