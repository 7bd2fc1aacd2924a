//! Child processes that never outlive a test, and waiting for things.

use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A child process that is killed when the guard is dropped, so a failed assertion or a panic
/// never leaves an exporter, a Prometheus or a Spark JVM behind. Started in its own process group
/// (`group`), the whole group is killed: that reaches the JVM under PySpark, its executors and
/// Python workers, should they outlive the driver.
pub struct Guard {
    pub name: String,
    child: Child,
    group: bool,
    /// The child's stderr, line by line, when captured ([`Guard::capture`]).
    lines: Option<Arc<Mutex<Vec<String>>>>,
}

impl Guard {
    /// Start `cmd` with stdout and stderr appended to `log`; in its own process group when
    /// `group`.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path, group: bool) -> Guard {
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        let err = out.try_clone().expect("clone a file handle");
        cmd.stdout(out).stderr(err);
        Guard::start(name, cmd, group, false)
    }

    /// Start `cmd` with stdout discarded and stderr kept in memory line by line ([`Guard::lines`])
    /// and, with `log`, written to that file too.
    pub fn capture(name: &str, mut cmd: Command, log: Option<&Path>) -> Guard {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut g = Guard::start(name, cmd, false, true);
        let stderr = g.child.stderr.take().expect("piped stderr");
        let mut file =
            log.map(|p| fs::File::create(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())));
        let lines = g.lines.clone().expect("captured");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(f) = file.as_mut() {
                    let _ = writeln!(f, "{line}");
                }
                lines.lock().unwrap().push(line);
            }
        });
        g
    }

    /// Start `cmd` with its output discarded.
    pub fn quiet(name: &str, mut cmd: Command) -> Guard {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        Guard::start(name, cmd, false, false)
    }

    fn start(name: &str, mut cmd: Command, group: bool, capture: bool) -> Guard {
        cmd.stdin(Stdio::null());
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
            lines: capture.then(Arc::default),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        self.exited().is_none()
    }

    /// Wait up to `limit` for it to exit by itself.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        wait_for(limit, Duration::from_millis(20), || self.exited())
    }

    /// SIGTERM, then wait up to `grace`; `None` if it did not exit in time.
    pub fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        signal(self.child.id(), "TERM");
        self.wait_exit(grace)
    }

    /// SIGTERM to an exporter, then GET `url` (its `/metrics`) every 100 ms until it exits, up
    /// to `grace`: the exporter drains until a scrape shows its final state (docs/internals.md
    /// "The application's end"), and this is that scrape. `None` if it did not exit in time.
    pub fn terminate_scraped(&mut self, grace: Duration, url: &str) -> Option<ExitStatus> {
        signal(self.child.id(), "TERM");
        wait_for(grace, Duration::from_millis(100), || {
            let exited = self.exited();
            if exited.is_none() {
                let _ = super::http::get_url(url);
            }
            exited
        })
    }

    /// SIGKILL to the process alone (no chance to flush or clean up), and reap it.
    pub fn kill9(&mut self) {
        signal(self.child.id(), "KILL");
        let _ = self.child.wait();
    }

    /// SIGKILL to its process group (to the process alone if it has none of its own), and reap.
    pub fn kill_group(&mut self) {
        if self.group {
            // process_group(0): the group id is the child's pid.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The captured stderr lines so far (none unless started with [`Guard::capture`]).
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .as_ref()
            .map(|l| l.lock().unwrap().clone())
            .unwrap_or_default()
    }

    /// Captured stderr lines containing `needle`.
    pub fn count_lines(&self, needle: &str) -> usize {
        self.lines().iter().filter(|l| l.contains(needle)).count()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let running = self.running();
        self.kill_group();
        if running {
            eprintln!(
                "[guard] {} (pid {}) killed by its guard",
                self.name,
                self.child.id()
            );
        }
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

/// [`wait_for`] every 250 ms, panicking after `limit` with what it waited for.
pub fn must_wait_for<T>(what: &str, limit: Duration, f: impl FnMut() -> Option<T>) -> T {
    wait_for(limit, Duration::from_millis(250), f)
        .unwrap_or_else(|| panic!("timed out after {limit:?} waiting for {what}"))
}

/// Print to the real stderr (not captured by the test harness), with the test's elapsed time.
pub fn say(t0: Instant, what: &str, msg: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "[{what} {:>6.1}s] {msg}",
        t0.elapsed().as_secs_f64()
    );
}

/// The exporter (REST off) on a free port with `--web.config.file web_config`, once it listens.
pub fn start_with_web_config(web_config: &Path) -> (Guard, u16) {
    let port = super::files::free_port();
    let mut cmd = Command::new(super::EXPORTER);
    cmd.args([
        "--spark.url=",
        "--web.listen-address",
        &format!("127.0.0.1:{port}"),
        "--web.config.file",
        web_config.to_str().expect("utf-8 path"),
    ]);
    let exporter = Guard::quiet("exporter", cmd);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "exporter did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (exporter, port)
}

/// The exporter on `port` with `args`, its stderr captured, once `/readyz?complete` answers 200
/// (every source read once).
pub fn start_ready(port: u16, args: &[&str]) -> Guard {
    let mut cmd = Command::new(super::EXPORTER);
    cmd.args(["--web.listen-address", &format!("127.0.0.1:{port}")])
        .args(args);
    let g = Guard::capture("exporter", cmd, None);
    must_wait_for("the exporter ready", Duration::from_secs(30), || {
        let r = super::http::http_get(
            &format!("127.0.0.1:{port}"),
            "/readyz?complete",
            Duration::from_secs(5),
        );
        matches!(r, Ok((200, _))).then_some(())
    });
    g
}
