//! The model's state is one value (issue 30): for every committed fixture (each event log under
//! `tests/data`, each recorded REST answer), the model filled from it, written out
//! (`Model::save_state`) and read back into a new model (`Model::load_state`), renders the same
//! exposition, byte for byte, and writes the same bytes again. Both with every detail
//! (`model.summary_level: full`) and with the summary levels under which an ended application
//! keeps only its summary (`groups`, the default, and `app`).

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use spark_exporter::config::{Settings, SummaryLevel};
use spark_exporter::model::Model;
use spark_exporter::sinks::prometheus;
use spark_exporter::sources::rest::config::SparkConfig;
use spark_exporter::telemetry::Telemetry;
use support::rest::{AppData, FakeSpark};

/// Later than every fixture's end, so the default summary level summarises ended applications.
const NOW_MS: i64 = 1_900_000_000_000;

/// Every detail; the default (job groups kept); the application only.
const LEVELS: [SummaryLevel; 3] = [SummaryLevel::Full, SummaryLevel::Groups, SummaryLevel::App];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn model(settings: &Settings) -> Arc<Model> {
    Model::with_clock(
        settings,
        Arc::new(Telemetry::default()),
        Arc::new(|| NOW_MS),
    )
}

/// The model's series in both text formats (the exporter's own self-metrics are not state).
fn exposition(m: &Arc<Model>) -> String {
    let mut out = String::new();
    for om in [false, true] {
        let reg = prometheus::registry(m.clone()).with_created(true);
        let text = prometheus::render(&reg, om).expect("render");
        // The process's own series (`process_*`, `spark_exporter_*`, the poller's `spark_up`)
        // are not the model's.
        let own = |l: &str| {
            ["spark_exporter_", "process_", "spark_up"]
                .iter()
                .any(|p| l.contains(p))
        };
        for line in text.lines().filter(|l| !own(l)) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Where two expositions first differ (`line N: "a" vs "b" (n vs m lines)`), if they do.
fn difference(want: &str, got: &str) -> Option<String> {
    if want == got {
        return None;
    }
    let at = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    Some(format!(
        "line {}: {:?} vs {:?} ({} vs {} lines)",
        at + 1,
        want.lines().nth(at),
        got.lines().nth(at),
        want.lines().count(),
        got.lines().count()
    ))
}

/// Write `m`'s state out, read it into a new model, and compare.
fn round_trip(what: &str, settings: &Settings, m: &Arc<Model>) -> Result<(), String> {
    let mut bytes = Vec::new();
    m.save_state(&mut bytes)
        .map_err(|e| format!("{what}: {e}"))?;
    let back = model(settings);
    back.load_state(bytes.as_slice())
        .map_err(|e| format!("{what}: {e}"))?;
    let (want, got) = (exposition(m), exposition(&back));
    if want.lines().count() < 10 {
        return Err(format!("{what}: only {} lines", want.lines().count()));
    }
    if let Some(d) = difference(&want, &got) {
        return Err(format!("{what}: the exposition read back differs at {d}"));
    }
    let mut again = Vec::new();
    back.save_state(&mut again)
        .map_err(|e| format!("{what}: {e}"))?;
    if again != bytes {
        return Err(format!("{what}: the state read back writes other bytes"));
    }
    Ok(())
}

fn settings(level: SummaryLevel) -> Settings {
    let mut s = Settings::default();
    s.model.summary_level = level;
    s
}

#[test]
fn every_event_log_fixtures_model_reads_back_the_same() {
    let logs = support::committed_logs::committed_event_logs(
        &root(),
        &root().join("target/tmp/model_state"),
    );
    assert!(logs.len() >= 30, "{logs:?}");
    let mut errors = vec![];
    let mut summarised = 0;
    for log in &logs {
        for level in LEVELS {
            let s = settings(level);
            let m = model(&s);
            let observer = m.observer(spark_exporter::sources::source("event_log"));
            spark_exporter::sources::eventlog::ingest_paths(&[log], &s, &observer, m.telemetry())
                .expect("read the log");
            m.flush_pending();
            m.view(|v| summarised += v.apps().filter(|a| a.stage_count() == 0).count());
            let what = format!("{} at {level:?}", rel(log));
            if let Err(e) = round_trip(&what, &s, &m) {
                errors.push(e);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(summarised > 0, "no summarised application was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rest_fixtures_model_reads_back_the_same() {
    // Every recorded REST answer: a folder with the application and its jobs.
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        entries.sort();
        if d.join("app.json").exists() && d.join("jobs.json").exists() {
            out.push(d.to_path_buf());
        }
        for p in entries.into_iter().filter(|p| p.is_dir()) {
            walk(&p, out);
        }
    }
    let mut dirs = vec![];
    walk(&root().join("tests/data"), &mut dirs);
    assert!(dirs.len() >= 20, "{dirs:?}");
    let mut errors = vec![];
    for dir in &dirs {
        let server = FakeSpark::start(vec![AppData::from_dir(dir.to_str().unwrap())]).await;
        for level in LEVELS {
            let mut s = settings(level);
            SparkConfig::of_mut(&mut s).urls = vec![server.url.clone()];
            let s = Arc::new(s);
            let m = model(&s);
            spark_exporter::sources::rest::poll_once(
                s.clone(),
                Arc::new(m.observer(spark_exporter::sources::source("rest"))),
                m.telemetry().clone(),
            )
            .await
            .expect("poll");
            m.flush_pending();
            let what = format!("{} at {level:?}", rel(dir));
            if let Err(e) = round_trip(&what, &s, &m) {
                errors.push(e);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn a_damaged_or_other_version_state_is_refused_and_changes_nothing() {
    let s = Settings::default();
    let m = model(&s);
    let log = root().join("tests/data/spark-4.1.1-basic/eventlog");
    spark_exporter::sources::eventlog::ingest_paths(
        &[&log],
        &s,
        &m.observer(spark_exporter::sources::source("event_log")),
        m.telemetry(),
    )
    .expect("read the log");
    let before = exposition(&m);
    let mut bytes = Vec::new();
    m.save_state(&mut bytes).expect("save");
    let text = String::from_utf8(bytes.clone()).expect("JSON");
    let other = text.replacen(
        &format!("\"version\":{}", spark_exporter::model::STATE_VERSION),
        "\"version\":999",
        1,
    );
    assert_ne!(other, text);
    for bad in [
        &bytes[..bytes.len() / 2],
        other.as_bytes(),
        b"<html>502</html>".as_slice(),
    ] {
        assert!(m.load_state(bad).is_err());
        assert_eq!(exposition(&m), before);
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// What a diagnosis reads of a stage attempt is complete when the attempt settles, whatever the
/// model's retention: for every committed event log, a model that lets every ended stage go
/// (`model.stage_retention: 0`, expired after the read) gives the same stage details, as they
/// settled, as a model that holds them all gives at the end; except for a killed speculative
/// task that ends after its stage, which only the latter counts (listed).
#[test]
fn every_stage_attempt_settles_with_its_final_detail() {
    let logs = support::committed_logs::committed_event_logs(
        &root(),
        &root().join("target/tmp/model_state_settle"),
    );
    let mut errors = vec![];
    let (mut settled_n, mut late) = (0, vec![]);
    for log in &logs {
        let read = |s: &Settings| {
            let m = model(s);
            m.keep_settled_stages();
            let observer = m.observer(spark_exporter::sources::source("event_log"));
            spark_exporter::sources::eventlog::ingest_paths(&[log], s, &observer, m.telemetry())
                .expect("read the log");
            m
        };
        let all = read(&settings(SummaryLevel::Full));
        let mut none = settings(SummaryLevel::Full);
        none.model.stage_retention = std::time::Duration::ZERO;
        let short = read(&none);
        short.expire(NOW_MS);
        let mut settled = short.take_settled_stages();
        settled_n += settled.len();
        all.view(|v| {
            short.view(|w| {
                for a in v.apps() {
                    let key = spark_exporter::model::app_key(a.id(), a.attempt().map(|x| &**x));
                    let b = w.app(&key).expect("the same applications");
                    let mut got: Vec<_> = settled
                        .iter()
                        .filter(|(k, _)| *k == key)
                        .map(|(_, d)| d.clone())
                        .chain(b.stage_details())
                        .collect();
                    got.sort_by_key(|d| (d.stage_id, d.attempt));
                    let want = a.stage_details();
                    if got.len() != want.len() {
                        errors.push(format!(
                            "{} {key}: {} stage attempts, {} settled or held",
                            rel(log),
                            want.len(),
                            got.len()
                        ));
                        continue;
                    }
                    for (g, w) in got.iter().zip(&want) {
                        if g == w {
                            continue;
                        }
                        if g.tasks.killed < w.tasks.killed
                            && (g.stage_id, g.attempt) == (w.stage_id, w.attempt)
                        {
                            late.push(format!("{} {key} stage {}", rel(log), w.stage_id));
                        } else {
                            errors.push(format!("{} {key}: {g:?} is not {w:?}", rel(log)));
                        }
                    }
                }
            })
        });
        settled.clear();
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(settled_n >= 600, "{settled_n} settled");
    assert!(late.len() <= 20, "{late:?}");
    eprintln!("{settled_n} stage attempts settled; late task ends: {late:?}");
}

/// A restart from a checkpoint that holds the state but no read positions reads every log again
/// (issue 34, step 1): for every committed event log, at every summary level, the model read
/// back from its state and fed the whole log a second time renders what it rendered before.
/// Counters do not count twice (the sources' calls are idempotent, keyed by Spark's ids, and the
/// summarised applications keep their counted-id sets).
#[test]
fn a_model_read_back_and_fed_the_same_log_again_counts_nothing_twice() {
    let logs = support::committed_logs::committed_event_logs(
        &root(),
        &root().join("target/tmp/model_state_replay"),
    );
    let mut errors = vec![];
    // Per run (the default), and by name with the exporter started before the runs ended (so
    // they count into their names).
    let modes = [None, Some(1_700_000_000_000i64)];
    let mut runs_by_name = 0;
    for log in &logs {
        for (level, early) in LEVELS.into_iter().flat_map(|l| modes.map(|m| (l, m))) {
            let mut s = settings(level);
            let model = |s: &Settings| match early {
                None => model(s),
                Some(t) => {
                    Model::with_clock(s, Arc::new(Telemetry::default()), Arc::new(move || t))
                }
            };
            if early.is_some() {
                s.model.aggregate_by = spark_exporter::config::AggregateBy::AppName;
            }
            let m = model(&s);
            let read = |m: &Arc<Model>| {
                let observer = m.observer(spark_exporter::sources::source("event_log"));
                spark_exporter::sources::eventlog::ingest_paths(
                    &[log],
                    &s,
                    &observer,
                    m.telemetry(),
                )
                .expect("read the log");
                m.flush_pending();
            };
            read(&m);
            let mut bytes = Vec::new();
            m.save_state(&mut bytes).expect("save");
            let back = model(&s);
            back.load_state(bytes.as_slice()).expect("load");
            read(&back);
            let (want, got) = (exposition(&m), exposition(&back));
            if early.is_some() {
                runs_by_name += want
                    .lines()
                    .filter(|l| l.starts_with("spark_app_runs_total{") && !l.ends_with(" 0"))
                    .count();
            }
            if let Some(d) = difference(&want, &got) {
                errors.push(format!(
                    "{} at {level:?}{}: {d}",
                    rel(log),
                    if early.is_some() { " by name" } else { "" },
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(runs_by_name > 10, "name mode counted {runs_by_name} runs");
}
