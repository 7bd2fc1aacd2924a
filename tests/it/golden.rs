//! Golden expositions: `spark-exporter dump` on every committed fixture (each event log, each
//! recorded REST snapshot), in both text formats, must equal the files in `tests/golden/` byte
//! for byte once the values of clock-derived families (stall seconds, event-log lag, poll
//! durations) and the fake server's port are masked.
//!
//! These files are what a refactoring of the exposition must not change. `UPDATE_GOLDEN=1 cargo
//! test --test golden` rewrites them (only do that for a change meant to alter the output, and
//! say so in the commit).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use spark_exporter::export::catalogue::CATALOGUE;
use support::command::exporter_command;
use support::rest::{AppData, FakeSpark};

/// The sample names of families whose values follow the wall clock, not the fixture (marked so
/// in the metric catalogue).
fn clock_derived() -> Vec<String> {
    CATALOGUE
        .iter()
        .filter(|m| m.clock_derived)
        .map(|m| m.prometheus_name())
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `text` with the values of clock-derived samples replaced by `<clock>`, `url` by `URL`, and
/// the build's revision and compiler (`spark_exporter_build_info`) by `<build>`.
fn mask(text: &str, url: Option<&str>) -> String {
    let clock = clock_derived();
    let build = regex::Regex::new(r#"(revision|rust_version)="[^"]*""#).unwrap();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = match url {
            Some(u) => line.replace(u, "URL"),
            None => line.to_string(),
        };
        let line = build.replace_all(&line, r#"$1="<build>""#).into_owned();
        let name = line.split(['{', ' ']).next().unwrap_or("");
        if !line.starts_with('#') && clock.iter().any(|c| c == name) {
            let cut = line.rfind(' ').unwrap_or(line.len());
            out.push_str(&line[..cut]);
            out.push_str(" <clock>\n");
        } else {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Compare `got` with the golden file `name`, or write it when `UPDATE_GOLDEN` is set.
fn check(name: &str, got: &str) -> Result<(), String> {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return Ok(());
    }
    let want = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()))?;
    if want == got {
        return Ok(());
    }
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let at = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    Err(format!(
        "{name} differs from {} at line {}:\n  want: {:?}\n  got:  {:?}\n  ({} lines wanted, {} \
            got)",
        path.display(),
        at + 1,
        w.get(at),
        g.get(at),
        w.len(),
        g.len()
    ))
}

fn dump(args: &[&str]) -> String {
    let out = exporter_command(args, Duration::from_secs(60));
    assert!(out.status.success(), "dump {args:?} failed: {}", out.stderr);
    out.stdout
}

/// The event-log fixtures: each codec and layout, Spark 3.5.5 and 4.1.1, and the basic run.
fn eventlog_fixtures() -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(root().join("tests/data/eventlogs"))
        .expect("tests/data/eventlogs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    v.push((
        "spark-4.1.1-basic".into(),
        root().join("tests/data/spark-4.1.1-basic/eventlog"),
    ));
    v.sort();
    v
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn dump_of_every_event_log_fixture_equals_its_golden_files() {
    let fixtures = eventlog_fixtures();
    assert!(fixtures.len() >= 17, "{fixtures:?}");
    let mut errors = vec![];
    for (name, dir) in &fixtures {
        for (ext, om) in [("prom", false), ("om", true)] {
            // Every detail: the golden files show what a summary would drop.
            let mut args = vec![
                "dump",
                "--model.summary-level",
                "full",
                "--event-log",
                path_str(dir),
            ];
            if om {
                args.push("--openmetrics");
            }
            let got = mask(&dump(&args), None);
            if let Err(e) = check(&format!("eventlog/{name}.{ext}"), &got) {
                errors.push(e);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dump_of_every_rest_snapshot_equals_its_golden_files() {
    let mut errors = vec![];
    for n in 0..10 {
        let server = FakeSpark::start(vec![AppData::snapshot(n)]).await;
        for (ext, om) in [("prom", false), ("om", true)] {
            let url = server.url.clone();
            let got = tokio::task::spawn_blocking(move || {
                let mut args = vec![
                    "dump",
                    "--model.summary-level",
                    "full",
                    "--spark.url",
                    url.as_str(),
                ];
                if om {
                    args.push("--openmetrics");
                }
                mask(&dump(&args), Some(&url))
            })
            .await
            .expect("dump");
            if let Err(e) = check(&format!("rest/snapshot-{n:04}.{ext}"), &got) {
                errors.push(e);
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}
