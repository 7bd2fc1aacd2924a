//! Mistakes a new user makes, each answered by a message that says what is wrong and a
//! documented exit code (issue 33; `docs/troubleshooting.md`):
//!
//! - `dump` or `diagnose` of a folder with no application: exit 1, "no application found in",
//!   naming the depth of sub-folders read;
//! - a folder of folders (one prefix per cluster or per day): read down to `event_log.depth`
//!   (3 by default), and not past it;
//! - a named file that is not an event log: exit 1, "not a Spark event log"; in a folder, a
//!   stray file is skipped with a warning, `appstatus_*` and hidden files without one;
//! - a REST target that is not there: the cause in words (connection refused, DNS, TLS, HTTP
//!   status), exit 1.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::command::{exporter_command, Output};

fn run(args: &[&str]) -> Output {
    exporter_command(args, Duration::from_secs(60))
}

/// The recorded Spark 4.1.1 run's rolling log folder.
fn basic_log() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/spark-4.1.1-basic/eventlog");
    std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("eventlog_v2_")
        })
        .expect("the basic run's rolling log")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_folder_without_an_application_is_a_warning_and_exit_1() {
    let d = tempfile::tempdir().unwrap();
    for cmd in ["dump", "diagnose"] {
        let o = run(&[cmd, "--event-log", s(d.path())]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", o.stderr);
        let e = &o.stderr;
        assert!(e.contains("no application found in"), "{cmd}: {e}");
        assert!(e.contains("3 levels of sub-folders deep"), "{cmd}: {e}");
        assert!(e.contains("--event-log.depth"), "{cmd}: {e}");
    }
}

#[test]
fn sub_folders_are_read_to_the_configured_depth() {
    let d = tempfile::tempdir().unwrap();
    let log = basic_log();
    // <cluster>/<year>/<day>/eventlog_v2_...: three levels below the folder named.
    let deep = d
        .path()
        .join("cluster-a/2026/12-01")
        .join(log.file_name().unwrap());
    copy_dir(&log, &deep);
    // Never read: hidden and underscore folders (Hadoop's _temporary, .Trash).
    copy_dir(
        &log,
        &d.path().join(".Trash").join(log.file_name().unwrap()),
    );
    let o = run(&["dump", "--event-log", s(d.path())]);
    assert_eq!(o.status.code(), Some(0), "{}", o.stderr);
    let apps = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("spark_app_info{"))
        .count();
    assert_eq!(apps, 1, "{}", o.stdout);
    assert!(o.stdout.contains("app_name=\"acceptance-basic\""));
    let o = run(&["dump", "--event-log", s(d.path()), "--event-log.depth", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("2 levels of sub-folders deep"),
        "{}",
        o.stderr
    );
    let o = run(&["diagnose", "--event-log", s(d.path())]);
    assert_eq!(o.status.code(), Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("(acceptance-basic), Spark 4.1.1, ended"));
}

#[test]
fn a_named_file_that_is_not_an_event_log_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("notalog.txt");
    std::fs::write(&f, "hello\nthis is not JSON\n").unwrap();
    for cmd in ["dump", "diagnose"] {
        let o = run(&[cmd, "--event-log", s(&f)]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", o.stderr);
        let e = &o.stderr;
        assert!(e.contains("not a Spark event log"), "{cmd}: {e}");
        assert!(e.contains("notalog.txt"), "{cmd}: {e}");
        assert!(!o.stdout.contains("app_id=\"notalog.txt\""), "{cmd}");
        assert!(!o.stdout.contains("== notalog.txt"), "{cmd}");
    }
}

#[test]
fn in_a_folder_stray_files_are_skipped_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let log = basic_log();
    copy_dir(&log, &d.path().join(log.file_name().unwrap()));
    std::fs::write(d.path().join("README.txt"), "what this folder holds\n").unwrap();
    // A name like a log's, content not: read, then skipped as no event log.
    std::fs::write(d.path().join("local-1700000000000"), "not JSON\n").unwrap();
    std::fs::write(d.path().join(".hidden"), "x\n").unwrap();
    let o = run(&["dump", "--event-log", s(d.path())]);
    assert_eq!(o.status.code(), Some(0), "{}", o.stderr);
    let out = o.stdout;
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("spark_app_info{"))
            .count(),
        1,
        "{out}"
    );
    let e = &o.stderr;
    assert!(
        e.contains("Not an event log's name; skipped") && e.contains("README.txt"),
        "{e}"
    );
    assert!(
        e.contains("Not a Spark event log") && e.contains("local-1700000000000"),
        "{e}"
    );
    assert!(!e.contains(".hidden"), "{e}");
    assert!(
        out.contains("spark_exporter_eventlog_errors_total{kind=\"not_event_log\"} 1"),
        "{out}"
    );
}

/// A port with nothing listening: bound, then closed.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A server that answers every connection with `answer` (plain HTTP, so a TLS client fails).
fn serve_plain(answer: &'static str) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = c.read(&mut buf);
            let _ = c.write_all(answer.as_bytes());
        }
    });
    port
}

#[test]
fn a_rest_target_that_fails_says_why() {
    let refused = format!("http://127.0.0.1:{}", closed_port());
    let o = run(&["diagnose", "--spark.url", &refused]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr
            .contains("connection refused: nothing listens on 127.0.0.1:"),
        "{}",
        o.stderr
    );

    let o = run(&[
        "diagnose",
        "--spark.url",
        "http://no-such-host.invalid:4040",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr
            .contains("DNS lookup of no-such-host.invalid failed"),
        "{}",
        o.stderr
    );

    let port =
        serve_plain("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let o = run(&[
        "diagnose",
        "--spark.url",
        &format!("https://127.0.0.1:{port}"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.contains("TLS handshake with 127.0.0.1:"),
        "{}",
        o.stderr
    );

    let o = run(&[
        "diagnose",
        "--spark.url",
        &format!("http://127.0.0.1:{port}"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stderr.contains("answered HTTP 404 Not Found"),
        "{}",
        o.stderr
    );
}

/// `scripts/fleet-quickstart.sh` checks each shard's port before it starts the fleet: another
/// process answering there would be counted as the shard.
#[test]
fn the_fleet_quick_start_refuses_a_port_in_use() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = busy.local_addr().unwrap().port();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new("bash")
        .arg(root.join("scripts/fleet-quickstart.sh"))
        .args(["--shards", "2", "--port", &(p - 1).to_string()])
        .env("EXPORTER_BIN", support::EXPORTER)
        .current_dir(&root)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    // Port p - 1 (shard 0) is almost always free; either way a port in use is named.
    assert!(
        e.contains(&format!("port {p} (shard 1) is in use by another process"))
            || e.contains(&format!("port {} (shard 0) is in use", p - 1)),
        "{e}"
    );
    drop(busy);
}

/// The run command's event-log flag given to `dump` or `diagnose` (which read `--event-log`):
/// refused, exit 64, naming the flag they take; a run flag before a command that does not use
/// it is refused naming the command.
#[test]
fn the_run_commands_flag_on_dump_or_diagnose_names_the_right_one() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        vec!["dump", "--spark.url=", "--event-log.dir", s(d.path())],
        vec!["dump", "--event-log.dir", s(d.path())],
        vec!["diagnose", "--event-log.dir", s(d.path())],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {}", o.stderr);
        let e = &o.stderr;
        assert!(e.contains("unexpected argument '--event-log.dir'"), "{e}");
        assert!(
            e.contains("a similar argument exists: '--event-log'"),
            "{e}"
        );
    }
    let o = run(&[
        "--web.listen-address",
        "127.0.0.1:1",
        "diagnose",
        "--event-log",
        s(d.path()),
    ]);
    assert_eq!(o.status.code(), Some(64), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("--web.listen-address is not a flag of `diagnose`"),
        "{}",
        o.stderr
    );
}
