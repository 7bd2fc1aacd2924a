//! Helpers shared by `tests/eventlog_live.rs` and `tests/eventlog_restart.rs`: child processes
//! that die with the test, a small HTTP GET, an exposition parser and series-set views.

#![allow(dead_code)] // each test uses a subset

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[allow(unused_imports)] // each test uses a subset
pub use crate::support_exposition::{parse_line, went_backwards, Sample};

/// The exporter under test.
pub const EXPORTER: &str = env!("CARGO_BIN_EXE_spark-exporter");

/// A folder for one run's artefacts (logs, scrapes, JSON), kept after the test for post-mortems:
/// `target/tmp/<name>-<pid>/`.
pub fn artefact_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the artefact folder");
    dir
}

/// A TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind an ephemeral port")
        .port()
}

/// A child process killed (with its process group when `group`, for the JVM under PySpark) when
/// dropped, so a failed assertion never leaves a process behind.
pub struct Guard {
    pub name: String,
    pub child: Child,
    group: bool,
}

impl Guard {
    /// Start `cmd` with stdout and stderr appended to `log`.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path, group: bool) -> Guard {
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        let err = out.try_clone().expect("clone a file handle");
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        if group {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name}: {e}"));
        Guard {
            name: name.to_string(),
            child,
            group,
        }
    }

    /// The exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Wait up to `limit` for it to exit by itself.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// SIGKILL now (no chance to flush or clean up), and reap it.
    pub fn kill9(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let running = self.exited().is_none();
        if self.group {
            // process_group(0): the group id is the child's pid; reaches the JVM too.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
        }
        if running {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Start the exporter with `args` on `127.0.0.1:port`, logging to `dir/<name>.log`, and wait up
/// to `limit` for its `/healthz`.
pub fn start_exporter(name: &str, port: u16, args: &[&str], dir: &Path, limit: Duration) -> Guard {
    let mut cmd = Command::new(EXPORTER);
    // Exact comparisons: every scrape must show the model as it is now (the default lets a body
    // be up to 1 s old, README `web.max_staleness`).
    cmd.args(["--web.max-staleness", "0s", "--web.listen-address"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args);
    let log = dir.join(format!("{name}.log"));
    let mut g = Guard::spawn(name, cmd, &log, false);
    let end = Instant::now() + limit;
    loop {
        if http_get(&format!("http://127.0.0.1:{port}/healthz")).is_ok() {
            return g;
        }
        if let Some(s) = g.exited() {
            panic!("{name} exited ({s}) at start:\n{}", tail_file(&log, 40));
        }
        assert!(Instant::now() < end, "{name} not healthy within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// GET `url` (`http://host:port/path`), HTTP/1.0, 10 s timeout. The body of a 200 answer.
pub fn http_get(url: &str) -> Result<String, String> {
    let rest = url.strip_prefix("http://").ok_or("not http://")?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = host
        .parse::<std::net::SocketAddr>()
        .map_err(|e| format!("{host}: {e}"))?;
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_secs(3)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: */*\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no header end")?;
    let status = head.lines().next().unwrap_or_default();
    if !status.contains(" 200") {
        return Err(format!("{url}: {status}"));
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Ok(dechunk(body));
    }
    Ok(body.to_string())
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The last `n` lines of a file.
pub fn tail_file(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Parse the classic text format; panics on a line it cannot read (the exporter's output must
/// always parse).
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| parse_line(l).unwrap_or_else(|| panic!("unparsable exposition line: {l}")))
        .collect()
}

/// A set of series: key -> value.
pub type Series = BTreeMap<String, f64>;

/// Sum `name`'s samples of application `app` by the labels `keys` (joined with a tab), leaving
/// out zero sums (the exporter pre-creates zero series per status; the truths have no zeros).
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

/// Lines describing how two series sets differ ("" when equal).
pub fn diff(want: &Series, got: &Series) -> String {
    let mut out = String::new();
    for k in want
        .keys()
        .chain(got.keys().filter(|k| !want.contains_key(*k)))
    {
        let (w, g) = (want.get(k), got.get(k));
        if w != g {
            out.push_str(&format!(
                "    {k:?}: expected {}, got {}\n",
                w.map_or("(none)".into(), |v| v.to_string()),
                g.map_or("(none)".into(), |v| v.to_string())
            ));
        }
    }
    out
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
            self.0.push(format!("{what}:\n{d}"));
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

/// Whether the Python interpreter for the Spark tests is there. When it is not: `None` with a
/// loud message (the test then passes vacuously) unless `SPARK_E2E_REQUIRED` is set, in which
/// case it panics.
pub fn spark_python(test: &str) -> Option<PathBuf> {
    let py = std::env::var_os("SPARK_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    if py.exists() {
        return Some(py);
    }
    let msg = format!(
        "{test}: no Python with pyspark at {} (set SPARK_E2E_PYTHON, or run scripts/test.sh)",
        py.display()
    );
    if std::env::var_os("SPARK_E2E_REQUIRED").is_some() {
        panic!("{msg}; SPARK_E2E_REQUIRED is set, so this is a failure");
    }
    eprintln!("\n!!!!!!!!!!\n!!! SKIPPED {msg}\n!!!!!!!!!!\n");
    None
}
