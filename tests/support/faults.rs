//! The fault-injection tests' exporter (`tests/faults_*.rs`): a running exporter scraped within
//! a budget, a background `/metrics` watcher that records every answer's status and latency
//! during a fault, and series views and comparison with readable diffs.
//!
//! Everything here talks to real processes over loopback only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::command::exporter_command;
use super::exposition::{diff, parse_exposition, render_labels, Sample, Series};
use super::files::{free_port, tail_file};
use super::http::http_get;
use super::proc::{wait_for, Guard};
use super::EXPORTER;

/// What every fault must leave intact: `/metrics` answers 200 within this.
pub const SCRAPE_BUDGET: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------------
// The exporter
// ---------------------------------------------------------------------------------------------

/// `dump --event-log PATH`: the exposition of a clean, complete read of a log.
pub fn dump_event_log(path: &Path) -> Vec<Sample> {
    let out = exporter_command(
        &["dump", "--event-log", &path.to_string_lossy()],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "dump --event-log {} exited {}:\n{}",
        path.display(),
        out.status,
        out.stderr
    );
    parse_exposition(&out.stdout)
}

/// A running exporter.
pub struct Exporter {
    pub guard: Guard,
    /// `127.0.0.1:PORT` of its web server.
    pub addr: String,
    pub log: PathBuf,
}

impl Exporter {
    /// SIGTERM, scraping until it exits (the drain ends on the first scrape of the final state),
    /// up to 15 s.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let url = format!("http://{}/metrics", self.addr);
        self.guard.terminate_scraped(Duration::from_secs(15), &url)
    }

    /// Start the exporter (`prefix` is prepended to the command, e.g. `setpriv ...`), log level
    /// debug, listening on a free port, and wait until `/metrics` answers 200.
    pub fn start(
        dir: &Path,
        name: &str,
        prefix: &[&str],
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Exporter {
        Exporter::start_bin(dir, name, prefix, Path::new(EXPORTER), args, envs)
    }

    /// [`Exporter::start`] with another copy of the binary.
    pub fn start_bin(
        dir: &Path,
        name: &str,
        prefix: &[&str],
        bin: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Exporter {
        let mut last = String::new();
        // A free port can be taken between our probe and the exporter's bind: try again.
        for attempt in 0..3 {
            let addr = format!("127.0.0.1:{}", free_port());
            let log = dir.join(format!("{name}-{attempt}.log"));
            let mut cmd = match prefix.split_first() {
                Some((first, rest)) => {
                    let mut c = Command::new(first);
                    c.args(rest).arg(bin);
                    c
                }
                None => Command::new(bin),
            };
            // Exact comparisons: every scrape must show the model as it is now (the default
            // lets a body be up to 1 s old, docs/configuration.md `web.max_staleness`).
            cmd.args(["--web.listen-address", &addr, "--log.level", "debug"])
                .args(["--web.max-staleness", "0s"])
                .args(args)
                .envs(envs.iter().copied());
            let mut guard = Guard::spawn(name, cmd, &log, true);
            let ready = wait_for(Duration::from_secs(20), Duration::from_millis(50), || {
                if guard.exited().is_some() {
                    return Some(false);
                }
                matches!(http_get(&addr, "/metrics", SCRAPE_BUDGET), Ok((200, _))).then_some(true)
            });
            if ready == Some(true) {
                return Exporter { guard, addr, log };
            }
            last = format!(
                "the exporter did not serve /metrics (exit: {:?}):\n{}",
                guard.exited(),
                tail_file(&log, 20)
            );
        }
        panic!("{last}");
    }

    /// One scrape that must answer 200 within [`SCRAPE_BUDGET`].
    pub fn scrape(&self) -> Vec<Sample> {
        self.scrape_text().1
    }

    /// One scrape: the raw text and its samples.
    pub fn scrape_text(&self) -> (String, Vec<Sample>) {
        let started = Instant::now();
        let (code, body) = http_get(&self.addr, "/metrics", SCRAPE_BUDGET).unwrap_or_else(|e| {
            panic!("/metrics: {e}\nexporter log:\n{}", tail_file(&self.log, 30))
        });
        let took = started.elapsed();
        assert_eq!(code, 200, "/metrics answered {code}");
        assert!(took <= SCRAPE_BUDGET, "/metrics took {took:?}");
        let text = String::from_utf8_lossy(&body).into_owned();
        let samples = parse_exposition(&text);
        (text, samples)
    }

    /// Panics if the exporter has exited.
    pub fn assert_alive(&mut self) {
        if let Some(s) = self.guard.exited() {
            panic!(
                "the exporter exited ({s}); log:\n{}",
                tail_file(&self.log, 40)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The /metrics watcher
// ---------------------------------------------------------------------------------------------

/// Scrapes `/metrics` every 100 ms on its own thread and records every failure: an error, a
/// status other than 200, or an answer slower than [`SCRAPE_BUDGET`].
pub struct Watcher {
    stop: Arc<AtomicBool>,
    state: Arc<Mutex<WatchState>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default, Debug, Clone)]
pub struct WatchState {
    pub scrapes: u64,
    pub failures: Vec<String>,
    pub slowest: Duration,
}

impl Watcher {
    pub fn start(addr: &str) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let state = Arc::new(Mutex::new(WatchState::default()));
        let (s2, st2, addr) = (stop.clone(), state.clone(), addr.to_string());
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            while !s2.load(Ordering::Relaxed) {
                let started = Instant::now();
                // Twice the budget, so a slow answer is seen as slow rather than as an error.
                let r = http_get(&addr, "/metrics", SCRAPE_BUDGET * 2);
                let took = started.elapsed();
                let mut st = st2.lock().unwrap();
                st.scrapes += 1;
                st.slowest = st.slowest.max(took);
                let at = t0.elapsed().as_secs_f64();
                match r {
                    Ok((200, _)) if took <= SCRAPE_BUDGET => {}
                    Ok((200, _)) => st.failures.push(format!("+{at:.1}s: 200 after {took:?}")),
                    Ok((code, _)) => st.failures.push(format!("+{at:.1}s: HTTP {code}")),
                    Err(e) => st.failures.push(format!("+{at:.1}s: {e}")),
                }
                drop(st);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Watcher {
            stop,
            state,
            thread: Some(thread),
        }
    }

    /// What was recorded so far.
    pub fn state(&self) -> WatchState {
        self.state.lock().unwrap().clone()
    }

    /// Panics unless every scrape so far answered 200 within budget (and there were some).
    pub fn assert_ok(&self, during: &str) {
        let st = self.state();
        assert!(
            st.failures.is_empty(),
            "/metrics misbehaved during {during} ({} of {} scrapes; slowest {:?}):\n{}",
            st.failures.len(),
            st.scrapes,
            st.slowest,
            st.failures.join("\n")
        );
        assert!(st.scrapes > 0, "no scrape happened during {during}");
    }

    pub fn stop(&mut self) -> WatchState {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.state()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------------
// Exposition
// ---------------------------------------------------------------------------------------------

/// Every sample of `app_id` (all families), keyed by `name{labels}`.
pub fn app_samples(samples: &[Sample], app_id: &str, keep: impl Fn(&Sample) -> bool) -> Series {
    samples
        .iter()
        .filter(|s| s.label("app_id") == app_id && keep(s))
        .map(|s| (s.id(), s.value))
        .collect()
}

/// The job, stage and task families of the model (`spark_job*`, `spark_stage*`, `spark_task*`):
/// counters, histograms and gauges, except `spark_stage_stalled_seconds`, which counts seconds
/// since now and so differs between any two reads of an unfinished stage.
pub fn is_job_stage_task(s: &Sample) -> bool {
    (s.name.starts_with("spark_job")
        || s.name.starts_with("spark_stage")
        || s.name.starts_with("spark_task"))
        && !s.name.starts_with("spark_stage_stalled_seconds")
}

/// Counters and histograms (not gauges).
pub fn is_counter(s: &Sample) -> bool {
    s.kind == "counter" || s.kind == "histogram"
}

/// Project `name` of `app_id` onto `keys`, summing what collapses; zeros left out.
pub fn project(samples: &[Sample], name: &str, app_id: &str, keys: &[&str]) -> Series {
    let mut out = Series::new();
    for s in samples
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == app_id)
    {
        let k: BTreeMap<String, String> = keys
            .iter()
            .map(|k| (k.to_string(), s.label(k).to_string()))
            .collect();
        *out.entry(render_labels(&k)).or_default() += s.value;
    }
    out.retain(|_, v| *v != 0.0);
    out
}

/// Panics with the differences unless `want == got`.
pub fn assert_series(what: &str, want: &Series, got: &Series) {
    let mut d = diff(want, got);
    // Counters first, histogram buckets last; at most 40 lines.
    d.sort_by_key(|l| (l.contains("_bucket{"), !l.contains("_total{")));
    let shown = d.len().min(40);
    assert!(
        d.is_empty(),
        "{what}: {} difference(s) (want {} series, got {}):\n{}{}",
        d.len(),
        want.len(),
        got.len(),
        d[..shown].join("\n"),
        if d.len() > shown {
            format!("\n  … {} more", d.len() - shown)
        } else {
            String::new()
        }
    );
}
