//! Artefact folders, log tails and free ports.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A fresh folder `target/tmp/<name>-<pid>/` for one run's artefacts (logs, scrapes, JSON), kept
/// after the test for post-mortems; folders of earlier runs of `name` older than an hour are
/// removed.
pub fn artefact_dir(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let earlier = format!("{name}-");
    if let Ok(entries) = fs::read_dir(&root) {
        for e in entries.flatten() {
            let file_name = e.file_name();
            let of_name = file_name
                .to_string_lossy()
                .strip_prefix(&earlier)
                .is_some_and(|pid| pid.bytes().all(|b| b.is_ascii_digit()));
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > Duration::from_secs(3600));
            if of_name && old {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = root.join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last `n` lines of a file (for failure messages).
pub fn tail_file(path: &Path, n: usize) -> String {
    match fs::read_to_string(path) {
        Ok(text) => tail(&text, n),
        Err(e) => format!("<{}: {e}>", path.display()),
    }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
