//! Findings as metrics (issue 35): the real binary, serving, runs the diagnose rules on its own
//! model; once an application has ended and its sources delivered it, its `spark_diagnosis_*`
//! series equal `spark-exporter diagnose --format json` of the same input, finding for finding
//! (counts exactly, costs to the rounding), summed per kind and place. The input: the
//! diagnosis fixture (a real PySpark 4.1.1 run, each condition beside its healthy twin) as event
//! logs, and as a driver's REST answers (the kinds REST gives).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use spark_exporter::config::Settings;
use spark_exporter::diagnose::report::Report;
use spark_exporter::diagnose::{diagnose, Request};
use support::diagnosis::{app_id, fixture, replay};
use support::exposition::parse_exposition;
use support::files::free_port;
use support::http::http_get;
use support::proc::Guard;
use support::EXPORTER;

/// `(app_id, kind, job_group, job_description, query)`.
type Place = (String, String, String, String, String);
/// Findings and their cost, per place.
type Tallies = BTreeMap<Place, (u64, f64)>;

/// What `diagnose` found, summed per place.
fn from_report(r: &Report) -> Tallies {
    let mut m = Tallies::new();
    for a in &r.applications {
        for f in &a.findings {
            let s = |v: &Option<String>| v.clone().unwrap_or_default();
            let e = m
                .entry((
                    a.app_id.clone(),
                    f.kind.as_str().to_string(),
                    s(&f.at.job_group),
                    s(&f.at.description),
                    s(&f.at.query),
                ))
                .or_default();
            e.0 += 1;
            e.1 += f.cost_seconds;
        }
    }
    m
}

/// What the exporter serves: final findings and the window's, per place.
fn from_metrics(text: &str) -> Tallies {
    let mut m = Tallies::new();
    for s in parse_exposition(text) {
        let (count, cost) = match s.name.as_str() {
            "spark_diagnosis_findings_total" | "spark_diagnosis_window_findings" => (true, false),
            "spark_diagnosis_cost_seconds_total" | "spark_diagnosis_window_cost_seconds" => {
                (false, true)
            }
            _ => continue,
        };
        let e = m
            .entry((
                s.label("app_id").to_string(),
                s.label("kind").to_string(),
                s.label("job_group").to_string(),
                s.label("job_description").to_string(),
                s.label("query").to_string(),
            ))
            .or_default();
        if count {
            e.0 += s.value as u64;
        }
        if cost {
            e.1 += s.value;
        }
    }
    m
}

/// The places where `got` differs from `want` (costs within 1e-9 relative).
fn differences(want: &Tallies, got: &Tallies) -> Vec<String> {
    let mut out = vec![];
    for k in want.keys().chain(got.keys()) {
        let (w, g) = (want.get(k), got.get(k));
        let same = match (w, g) {
            (Some(w), Some(g)) => {
                w.0 == g.0 && (w.1 - g.1).abs() <= 1e-9 * w.1.abs().max(g.1.abs()).max(1.0)
            }
            _ => false,
        };
        if !same
            && !out
                .iter()
                .any(|l: &String| l.starts_with(&format!("{k:?}")))
        {
            out.push(format!("{k:?}: diagnose {w:?}, exporter {g:?}"));
        }
    }
    out
}

/// The exporter with `args`; waits for its start-up read.
fn start(port: u16, args: &[&str]) -> Guard {
    support::proc::start_ready(port, args)
}

fn scrape(port: u16, path: &str) -> Option<(u16, String)> {
    http_get(&format!("127.0.0.1:{port}"), path, Duration::from_secs(5))
        .ok()
        .map(|(c, b)| (c, String::from_utf8_lossy(&b).into_owned()))
}

/// Scrape until the exporter's findings equal `want` (they are counted within a second of an
/// application's end), or panic with the differences.
fn served_equal(port: u16, want: &Tallies, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = from_metrics(&scrape(port, "/metrics").map(|r| r.1).unwrap_or_default());
        let diff = differences(want, &got);
        if diff.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the exporter's findings differ from diagnose's:\n{}",
            diff.join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every condition of the committed fixture is a series with its job group and kind; its
/// healthy twin has none. (Another run, `DIAGNOSIS_FIXTURE`, is checked with the thresholds of
/// its short run by `tests/e2e_diagnosis.py`.)
fn provoked(want: &Tallies) {
    if std::env::var_os("DIAGNOSIS_FIXTURE").is_some() {
        return;
    }
    let has = |app: &str, kind: &str, group: &str| {
        let id = app_id(app);
        want.keys()
            .any(|(a, k, g, _, _)| *a == id && k == kind && (group == "*" || g == group))
    };
    for (app, kind, group) in [
        ("diagnosis", "skew", "skewed"),
        ("diagnosis", "spill", "spill"),
        ("diagnosis", "gc_pressure", "gc_pressure"),
        ("diagnosis", "join_strategy", "join_smj"),
        ("diagnosis-idle", "idle_cores", ""),
    ] {
        assert!(
            has(app, kind, group),
            "{app}: no {kind} finding in {group:?}"
        );
    }
    for (app, kind, group) in [
        ("diagnosis", "skew", "balanced"),
        ("diagnosis", "spill", "no_spill"),
        ("diagnosis", "gc_pressure", "gc_light"),
        ("diagnosis", "join_strategy", "join_broadcast"),
        ("diagnosis-busy", "idle_cores", "*"),
    ] {
        assert!(
            !has(app, kind, group),
            "{app}: a {kind} finding in the twin {group:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_findings_served_equal_diagnose_of_the_same_event_logs() {
    let logs = fixture().join("eventlog");
    let req = Request {
        event_logs: vec![logs.to_string_lossy().into_owned()],
        ..Request::default()
    };
    let want = from_report(
        &diagnose(&Settings::default(), &req)
            .await
            .expect("diagnose"),
    );
    provoked(&want);
    let port = free_port();
    let _g = start(port, &["--spark.url=", "--event-log.dir", path(&logs)]);
    served_equal(port, &want, "event logs");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_findings_dumped_equal_diagnose_of_the_same_driver() {
    let server = replay().await;
    let mut want = Tallies::new();
    for app in ["diagnosis", "diagnosis-idle", "diagnosis-busy"] {
        let req = Request {
            spark_url: Some(server.url.clone()),
            app_id: Some(app_id(app)),
            ..Request::default()
        };
        let r = diagnose(&Settings::default(), &req)
            .await
            .expect("diagnose");
        want.extend(from_report(&r));
    }
    provoked(&want);
    // One read of the driver's answers, as `dump` prints it (the fake driver answers on this
    // runtime meanwhile).
    let url = server.url.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(EXPORTER)
            .args(["dump", "--spark.url", &url])
            .output()
            .expect("dump")
    })
    .await
    .expect("dump");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = from_metrics(&String::from_utf8_lossy(&out.stdout));
    // The kinds REST gives: skew needs a stage's final task summary, which the exporter reads
    // of the stages it sees end and, on a first read, of those that ended within
    // `model.stage_retention` (`diagnose` reads every one): where it found skew, it is
    // diagnose's.
    let mut got = got;
    let skew = |t: &mut Tallies| -> Tallies {
        let s = t
            .iter()
            .filter(|(k, _)| k.1 == "skew")
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        t.retain(|k, _| k.1 != "skew");
        s
    };
    let (want_skew, got_skew) = (skew(&mut want), skew(&mut got));
    let found: Tallies = want_skew
        .into_iter()
        .filter(|(k, _)| got_skew.contains_key(k))
        .collect();
    let diff = differences(&found, &got_skew);
    assert!(diff.is_empty(), "REST skew: {}", diff.join("\n"));
    let diff = differences(&want, &got);
    assert!(diff.is_empty(), "REST: {}", diff.join("\n"));
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
