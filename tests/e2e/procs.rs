//! Child processes that cannot outlive a failed test, and one-shot exporter commands.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub use crate::support_command::{exporter_command, Output};

/// A child process that is killed (with its process group, for the JVM under PySpark) when the
/// guard is dropped, so a failed assertion or a panic never leaves Spark running.
pub struct Guard {
    pub name: &'static str,
    pub child: Child,
    pub group: bool,
}

impl Guard {
    pub fn spawn(
        name: &'static str,
        mut cmd: Command,
        log: &Path,
        own_group: bool,
    ) -> Result<Guard, String> {
        let out = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        if own_group {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the {name}: {e}"))?;
        Ok(Guard {
            name,
            child,
            group: own_group,
        })
    }
    pub fn id(&self) -> u32 {
        self.child.id()
    }
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
    /// SIGTERM, then wait up to `grace`; `None` if it did not exit in time.
    pub fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let end = Instant::now() + grace;
        while Instant::now() < end {
            if let Some(s) = self.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let running = self.try_wait().is_none();
        if self.group {
            // The group id is the child's pid (process_group(0)); this reaches the JVM too,
            // should it outlive the Python driver.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
        }
        if running {
            let _ = self.child.kill();
            let _ = self.child.wait();
            eprintln!(
                "[e2e] {} (pid {}) killed by its guard.",
                self.name,
                self.child.id()
            );
        }
    }
}
