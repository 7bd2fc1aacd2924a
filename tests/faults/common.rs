//! Helpers shared by the fault-injection tests (`tests/faults_*.rs`): child processes that never
//! outlive a test, a minimal HTTP/1.0 client (so timings are the test's own, not a connection
//! pool's), an exposition parser, a background `/metrics` watcher that records every answer's
//! status and latency during a fault, and series comparison with readable diffs.
//!
//! Everything here talks to real processes over loopback only.

#![allow(dead_code)] // Each test binary uses its own subset.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

#[allow(unused_imports)] // each test uses a subset
pub use crate::support_command::{exporter_command, Output};

/// The exporter under test.
pub const EXPORTER: &str = env!("CARGO_BIN_EXE_spark-exporter");

/// What every fault must leave intact: `/metrics` answers 200 within this.
pub const SCRAPE_BUDGET: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------------
// Artefacts and small utilities
// ---------------------------------------------------------------------------------------------

/// A fresh folder `target/tmp/faults-<name>-<pid>/` for a test's artefacts (logs, scrapes); runs
/// older than an hour are removed.
pub fn artefact_dir(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if let Ok(entries) = fs::read_dir(&root) {
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > Duration::from_secs(3600));
            if old && e.file_name().to_string_lossy().starts_with("faults-") {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = root.join(format!("faults-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The last `n` lines of a file (for failure messages).
pub fn tail_file(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| format!("<{}: {e}>", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Poll `f` every `every` until it returns `Some`, or give up after `limit`.
pub fn wait_for<T>(
    limit: Duration,
    every: Duration,
    mut f: impl FnMut() -> Option<T>,
) -> Option<T> {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(every);
    }
}

/// Print to the real stderr (not captured by the test harness), with the test's elapsed time.
pub fn say(t0: Instant, what: &str, msg: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "[{what} {:>6.1}s] {msg}",
        t0.elapsed().as_secs_f64()
    );
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/// A child process killed (with its whole process group) when dropped, so a failing assertion
/// never leaves an exporter or a Spark JVM behind.
pub struct Guard {
    pub name: String,
    pub child: Child,
}

impl Guard {
    /// Start `cmd` in its own process group, stdout and stderr to `log`.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path) -> Guard {
        use std::os::unix::process::CommandExt;
        let out = fs::File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        let err = out.try_clone().expect("dup log handle");
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name}: {e}"));
        Guard {
            name: name.to_string(),
            child,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM, then wait up to `grace`.
    pub fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        signal(self.child.id(), "TERM");
        wait_for(grace, Duration::from_millis(50), || self.exited())
    }

    /// SIGKILL to the whole process group, and reap.
    pub fn kill_group(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// Send `SIG<sig>` to one process.
pub fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether a process exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

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
            // lets a body be up to 1 s old, README `web.max_staleness`).
            cmd.args(["--web.listen-address", &addr, "--log.level", "debug"])
                .args(["--web.max-staleness", "0s"])
                .args(args)
                .envs(envs.iter().copied());
            let mut guard = Guard::spawn(name, cmd, &log);
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
// HTTP
// ---------------------------------------------------------------------------------------------

/// GET `path` from `addr` with HTTP/1.0 (no keep-alive, no chunking), everything within
/// `limit`. Returns status and body.
pub fn http_get(addr: &str, path: &str, limit: Duration) -> Result<(u16, Vec<u8>), String> {
    http_get_full(addr, path, limit).map(|(code, _, body)| (code, body))
}

/// [`http_get`], also returning the response head (status line and headers).
pub fn http_get_full(
    addr: &str,
    path: &str,
    limit: Duration,
) -> Result<(u16, String, Vec<u8>), String> {
    let end = Instant::now() + limit;
    let sock = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("{addr}: no address"))?;
    let mut s =
        TcpStream::connect_timeout(&sock, limit).map_err(|e| format!("connect {addr}: {e}"))?;
    let left = |what: &str| {
        end.checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("GET {addr}{path}: no answer within {limit:?} ({what})"))
    };
    s.set_write_timeout(Some(left("write")?)).ok();
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: */*\r\nUser-Agent: faults-test\r\n\r\n"
    )
    .map_err(|e| format!("GET {addr}{path}: {e}"))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        s.set_read_timeout(Some(left("read")?)).ok();
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("GET {addr}{path}: read: {e}")),
        }
    }
    let head_end =
        find(&buf, b"\r\n\r\n").ok_or_else(|| format!("GET {addr}{path}: no header end"))?;
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("GET {addr}{path}: bad status line {head:?}"))?;
    let mut body = buf[head_end + 4..].to_vec();
    if head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:")
            && l.to_ascii_lowercase().contains("chunked")
    }) {
        body = dechunk(&body).ok_or_else(|| format!("GET {addr}{path}: bad chunked body"))?;
    }
    Ok((code, head, body))
}

/// GET and decode JSON (status 200 only).
pub fn get_json(addr: &str, path: &str) -> Result<serde_json::Value, String> {
    let (code, body) = http_get(addr, path, Duration::from_secs(10))?;
    if code != 200 {
        return Err(format!("GET {addr}{path}: HTTP {code}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("GET {addr}{path}: {e}"))
}

/// Position of `needle` in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(b, b"\r\n")?;
        let size_text = std::str::from_utf8(&b[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        b = &b[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
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

/// One sample of the classic text format; `kind` is the family's `# TYPE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    pub kind: String,
}

impl Sample {
    pub fn label(&self, k: &str) -> &str {
        self.labels.get(k).map(String::as_str).unwrap_or("")
    }

    /// `name{k="v",...}` with labels sorted.
    pub fn key(&self) -> String {
        format!("{}{}", self.name, render_labels(&self.labels))
    }
}

pub fn render_labels(labels: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(","))
}

/// Parse the classic text format (what `/metrics` and `dump` print without an Accept header).
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split_whitespace();
            if let (Some(n), Some(t)) = (it.next(), it.next()) {
                types.insert(n.to_string(), t.to_string());
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (name, labels, rest) = match line.find('{') {
            Some(i) if line[..i].find(' ').is_none() => {
                let (labels, after) = parse_labels(&line[i + 1..]);
                (&line[..i], labels, after)
            }
            _ => {
                let (n, r) = line.split_once(' ').unwrap_or((line, ""));
                (n, BTreeMap::new(), r)
            }
        };
        let value = match rest.split_whitespace().next() {
            Some("+Inf") => f64::INFINITY,
            Some("-Inf") => f64::NEG_INFINITY,
            Some(v) => v.parse().unwrap_or(f64::NAN),
            None => f64::NAN,
        };
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
            })
            .unwrap_or(name);
        out.push(Sample {
            name: name.to_string(),
            labels,
            value,
            kind: types.get(family).cloned().unwrap_or_default(),
        });
    }
    out
}

/// Labels from just after `{`; returns them and the text after `}`.
fn parse_labels(s: &str) -> (BTreeMap<String, String>, &str) {
    let mut labels = BTreeMap::new();
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b',' || b[i] == b' ') {
            i += 1;
        }
        if i >= b.len() || b[i] == b'}' {
            return (labels, s.get(i + 1..).unwrap_or(""));
        }
        let eq = s[i..].find('=').map(|j| i + j).unwrap_or(b.len());
        let key = s[i..eq].to_string();
        i = eq + 2; // past `="`
        let mut val = String::new();
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' && i + 1 < b.len() {
                val.push(match b[i + 1] {
                    b'n' => '\n',
                    c => c as char,
                });
                i += 2;
            } else {
                let c = s[i..].chars().next().unwrap_or('?');
                val.push(c);
                i += c.len_utf8();
            }
        }
        i += 1;
        labels.insert(key, val);
    }
}

/// The value of the one sample named `name` whose labels include every `(k, v)` of `with`.
pub fn value(samples: &[Sample], name: &str, with: &[(&str, &str)]) -> Option<f64> {
    let mut it = samples
        .iter()
        .filter(|s| s.name == name && with.iter().all(|(k, v)| s.label(k) == *v));
    let first = it.next()?;
    assert!(it.next().is_none(), "more than one {name} matches {with:?}");
    Some(first.value)
}

/// `spark_exporter_eventlog_errors_total` by kind (absent kinds are 0 and left out).
pub fn eventlog_errors(samples: &[Sample]) -> BTreeMap<String, f64> {
    samples
        .iter()
        .filter(|s| s.name == "spark_exporter_eventlog_errors_total" && s.value != 0.0)
        .map(|s| (s.label("kind").to_string(), s.value))
        .collect()
}

/// `spark_exporter_scrape_errors_total` of `target` by kind (absent kinds are 0, left out).
pub fn scrape_errors(samples: &[Sample], target: &str) -> BTreeMap<String, f64> {
    samples
        .iter()
        .filter(|s| {
            s.name == "spark_exporter_scrape_errors_total"
                && s.label("target") == target
                && s.value != 0.0
        })
        .map(|s| (s.label("kind").to_string(), s.value))
        .collect()
}

/// Values keyed by a rendered label set.
pub type Series = BTreeMap<String, f64>;

/// Every sample of `app_id` (all families), keyed by `name{labels}`.
pub fn app_samples(samples: &[Sample], app_id: &str, keep: impl Fn(&Sample) -> bool) -> Series {
    samples
        .iter()
        .filter(|s| s.label("app_id") == app_id && keep(s))
        .map(|s| (s.key(), s.value))
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

/// The differences between two series, one line each (empty when equal). Values are compared
/// to 1e-9 relative (sums of seconds print with float noise).
pub fn diff(want: &Series, got: &Series) -> Vec<String> {
    let keys: BTreeSet<&String> = want.keys().chain(got.keys()).collect();
    let mut out = vec![];
    for k in keys {
        match (want.get(k), got.get(k)) {
            (Some(a), Some(b)) if close(*a, *b) => {}
            (Some(a), Some(b)) => out.push(format!("  ✗ {k}: want {a}, got {b}")),
            (Some(a), None) => out.push(format!("  ✗ {k}: want {a}, missing")),
            (None, Some(b)) => out.push(format!("  ✗ {k}: unexpected, got {b}")),
            (None, None) => {}
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
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
