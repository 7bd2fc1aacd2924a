//! The live event-log tests' exporters and checks (`tests/it/jvm/eventlog_live.rs`,
//! `tests/it/eventlog_restart.rs`): an exporter on a given port, counts projected onto label
//! values, and a collector of failed checks.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::exposition::{diff, Sample, Series};
use super::files::tail_file;
use super::http::get_ok;
use super::proc::Guard;
use super::EXPORTER;

/// Start the exporter with `args` on `127.0.0.1:port`, logging to `dir/<name>.log`, and wait up
/// to `limit` for its `/healthz`.
pub fn start_exporter(name: &str, port: u16, args: &[&str], dir: &Path, limit: Duration) -> Guard {
    let mut cmd = Command::new(EXPORTER);
    // Exact comparisons: every scrape must show the model as it is now (the default lets a body
    // be up to 1 s old, docs/configuration.md `web.max_staleness`).
    cmd.args(["--web.max-staleness", "0s", "--web.listen-address"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args);
    let log = dir.join(format!("{name}.log"));
    let mut g = Guard::spawn(name, cmd, &log, false);
    let end = Instant::now() + limit;
    loop {
        if get_ok(&format!("http://127.0.0.1:{port}/healthz")).is_ok() {
            return g;
        }
        if let Some(s) = g.exited() {
            panic!("{name} exited ({s}) at start:\n{}", tail_file(&log, 40));
        }
        assert!(Instant::now() < end, "{name} not healthy within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sum `name`'s samples of application `app` by the labels `keys` (their values joined with a
/// tab), leaving out zero sums (the exporter pre-creates zero series per status; the truths have
/// no zeros).
pub fn project(samples: &[Sample], name: &str, app: &str, keys: &[&str]) -> Series {
    let mut m = Series::new();
    for s in samples
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == app)
    {
        let k: Vec<&str> = keys.iter().map(|k| s.label(k)).collect();
        *m.entry(k.join("\t")).or_default() += s.value;
    }
    m.retain(|_, v| *v != 0.0);
    m
}

/// Collects failed checks, so one run reports every difference at once.
#[derive(Default)]
pub struct Failures(pub Vec<String>);

impl Failures {
    /// Record a difference between two series sets.
    pub fn compare(&mut self, what: &str, want: &Series, got: &Series) {
        let d = diff(want, got);
        if d.is_empty() {
            eprintln!("[ok] {what}");
        } else {
            self.0.push(format!("{what}:\n{}", d.join("\n")));
        }
    }
    /// Record a failed condition.
    pub fn check(&mut self, what: &str, ok: bool, detail: impl FnOnce() -> String) {
        if ok {
            eprintln!("[ok] {what}");
        } else {
            self.0.push(format!("{what}: {}", detail()));
        }
    }
    /// Panic with every recorded failure.
    pub fn finish(self, artefacts: &Path) {
        if !self.0.is_empty() {
            panic!(
                "{} check(s) failed (artefacts in {}):\n{}",
                self.0.len(),
                artefacts.display(),
                self.0.join("\n")
            );
        }
    }
}
