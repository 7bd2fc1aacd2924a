//! `/healthz` and `/readyz` as the Kubernetes manifests rely on them: ready once every source has
//! made its first attempt, even a failed one (a driver UI that is not up yet), and never back.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn status(port: u16, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    buf.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn readyz_turns_ready_after_the_first_failed_poll_and_stays_ready() {
    let (port, dead) = (free_port(), free_port());
    let dir = tempfile::tempdir().expect("tempdir");
    let _p = Proc(
        Command::new(env!("CARGO_BIN_EXE_spark-exporter"))
            .args([
                "--web.listen-address",
                &format!("127.0.0.1:{port}"),
                "--spark.url",
                &format!("http://127.0.0.1:{dead}"),
                "--spark.poll-interval",
                "1s",
                "--event-log.dir",
                dir.path().to_str().expect("utf-8"),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start"),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if status(port, "/readyz") == Some(200) {
            break;
        }
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status(port, "/healthz"), Some(200));
    // The target stays down for several more polls: still ready.
    for _ in 0..30 {
        assert_eq!(status(port, "/readyz"), Some(200));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status(port, "/nope"), Some(404));
}
