//! `/healthz` and `/readyz` as the Kubernetes manifests rely on them: ready once every source has
//! made its first attempt, even a failed one (a driver UI that is not up yet), and never back
//! until the drain; the drain after SIGTERM (docs/internals.md "The application's end").

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::files::free_port;
use support::http::http_get;
use support::proc::Guard;
use support::EXPORTER;

/// The exporter on `port` with `args`, killed on drop.
fn start(port: u16, args: &[&str]) -> Guard {
    let mut cmd = Command::new(EXPORTER);
    cmd.args(["--web.listen-address", &format!("127.0.0.1:{port}")])
        .args(args);
    Guard::quiet("exporter", cmd)
}

/// Wait up to 15 s for `path` to answer 200.
fn wait_ok(port: u16, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while status(port, path) != Some(200) {
        assert!(Instant::now() < deadline, "{path} never answered 200");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The status of `GET path` (`None` if there is no answer within 2 s).
fn status(port: u16, path: &str) -> Option<u16> {
    http_get(&format!("127.0.0.1:{port}"), path, Duration::from_secs(2))
        .ok()
        .map(|(code, _)| code)
}

#[test]
fn readyz_turns_ready_after_the_first_failed_poll_and_stays_ready() {
    let (port, dead) = (free_port(), free_port());
    let dir = tempfile::tempdir().expect("tempdir");
    let _p = start(
        port,
        &[
            "--spark.url",
            &format!("http://127.0.0.1:{dead}"),
            "--spark.poll-interval",
            "1s",
            "--event-log.dir",
            dir.path().to_str().expect("utf-8"),
        ],
    );
    wait_ok(port, "/readyz");
    assert_eq!(status(port, "/healthz"), Some(200));
    // The target stays down for several more polls: still ready.
    for _ in 0..30 {
        assert_eq!(status(port, "/readyz"), Some(200));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status(port, "/nope"), Some(404));
}

/// One raw HTTP/1.1 exchange: status, headers (lower-case names) and body bytes.
fn exchange(port: u16, request: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(request.as_bytes()).expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Series lines that do not move with the wall clock (or the process's CPU and memory).
fn steady(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            !l.starts_with("spark_exporter_eventlog_lag_seconds") && !l.starts_with("process_")
        })
        .collect()
}

#[test]
fn metrics_gzip_plain_head_and_openmetrics_agree() {
    let port = free_port();
    let dir = tempfile::tempdir().expect("tempdir");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/eventlogs/spark-4.1.1-zstd-rolling");
    for entry in std::fs::read_dir(&src).expect("fixture") {
        let entry = entry.expect("entry");
        if !entry.path().is_dir() {
            continue; // counts.json
        }
        let to = dir.path().join(entry.file_name());
        std::fs::create_dir_all(&to).expect("mkdir");
        for f in std::fs::read_dir(entry.path()).expect("log dir") {
            let f = f.expect("file");
            std::fs::copy(f.path(), to.join(f.file_name())).expect("copy");
        }
    }
    let _p = start(
        port,
        &[
            "--spark.url=",
            "--event-log.dir",
            dir.path().to_str().expect("utf-8"),
        ],
    );
    wait_ok(port, "/readyz");
    let get = move |extra: &str| {
        exchange(
            port,
            &format!("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n"),
        )
    };

    let (code, h, plain) = get("");
    assert_eq!(code, 200);
    assert_eq!(header(&h, "content-encoding"), None);
    assert_eq!(
        header(&h, "content-length").and_then(|v| v.parse().ok()),
        Some(plain.len())
    );
    let plain = String::from_utf8(plain).expect("utf-8");
    assert!(
        plain.contains("spark_jobs_total{"),
        "no jobs from the log:\n{plain}"
    );

    let (code, h, gz) = get("Accept-Encoding: deflate, gzip\r\n");
    assert_eq!(code, 200);
    assert_eq!(header(&h, "content-encoding"), Some("gzip"));
    assert!(
        gz.len() * 4 < plain.len(),
        "{} vs {}",
        gz.len(),
        plain.len()
    );
    let mut unpacked = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut unpacked)
        .expect("gunzip");
    assert_eq!(steady(&unpacked), steady(&plain));

    let (code, h, om) = get("Accept: application/openmetrics-text;version=1.0.0\r\n");
    assert_eq!(code, 200);
    assert!(
        header(&h, "content-type").is_some_and(|c| c.starts_with("application/openmetrics-text"))
    );
    assert!(String::from_utf8_lossy(&om).ends_with("# EOF\n"));

    let (code, h, body) = exchange(
        port,
        "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(code, 200);
    assert!(body.is_empty());
    assert_eq!(
        header(&h, "content-length").and_then(|v| v.parse().ok()),
        Some(plain.len())
    );

    // Concurrent scrapes all get whole bodies.
    let bodies: Vec<_> = (0..32)
        .map(|_| std::thread::spawn(move || get("Accept-Encoding: gzip\r\n")))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    for (code, _, gz) in bodies {
        assert_eq!(code, 200);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text)
            .expect("gunzip");
        assert_eq!(steady(&text), steady(&plain));
    }
}

#[test]
fn connection_flood_and_slow_clients_are_cut_off_and_counted() {
    use std::io::{Read, Write};
    let port = free_port();
    let _p = start(port, &["--spark.url="]);
    wait_ok(port, "/healthz");
    // 256 connections that send nothing hold every slot (the server's limit)...
    let idle: Vec<_> = (0..256)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    // ...so the next one is closed at once, without an answer.
    let mut extra = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    extra
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let _ = extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut buf = [0u8; 64];
    let t = Instant::now();
    let n = extra.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "over the limit, yet answered");
    assert!(t.elapsed() < Duration::from_secs(4), "not closed at once");
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    let (code, _, body) = exchange(
        port,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(code, 200);
    let text = String::from_utf8(body).expect("utf-8");
    let refused: f64 = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("spark_exporter_http_errors_total{kind=\"connection_limit\"} ")
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(refused >= 1.0, "not counted:\n{text}");

    // A request head over 16 KiB is refused (hyper answers 431) without holding its bytes.
    let big = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Junk: {}\r\nConnection: close\r\n\r\n",
        "j".repeat(64 * 1024)
    );
    let mut junk = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    junk.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let _ = junk.write_all(big.as_bytes());
    let mut answer = Vec::new();
    let _ = junk.read_to_end(&mut answer);
    assert!(
        answer.is_empty() || answer.starts_with(b"HTTP/1.1 431"),
        "{}",
        String::from_utf8_lossy(&answer[..answer.len().min(200)])
    );
    assert_eq!(status(port, "/healthz"), Some(200));

    // A client that never finishes its headers is disconnected after 10 s.
    let mut slow = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .expect("write");
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let t = Instant::now();
    let n = slow.read(&mut buf).unwrap_or(usize::MAX);
    assert!(
        n == 0 || n == usize::MAX || buf.starts_with(b"HTTP/1.1 408"),
        "{n}"
    );
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(15)).contains(&t.elapsed()),
        "cut after {:?}",
        t.elapsed()
    );
    assert_eq!(status(port, "/healthz"), Some(200));
}

/// A copy of the real Spark 4.1.1 fixture's event log (a finished application) in a new folder.
fn finished_log() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/spark-4.1.1-basic/eventlog/eventlog_v2_local-1795981136444");
    let dst = dir.path().join("eventlog_v2_local-1795981136444");
    std::fs::create_dir(&dst).expect("mkdir");
    for f in std::fs::read_dir(&src).expect("fixture") {
        let f = f.expect("entry");
        std::fs::copy(f.path(), dst.join(f.file_name())).expect("copy");
    }
    dir
}

/// The body of `GET path`.
fn body(port: u16, path: &str) -> (u16, String) {
    let (code, b) = http_get(&format!("127.0.0.1:{port}"), path, Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    (code, String::from_utf8_lossy(&b).into_owned())
}

#[test]
fn sigterm_drains_until_the_final_state_is_scraped() {
    let port = free_port();
    let logs = finished_log();
    let mut cmd = Command::new(EXPORTER);
    cmd.args(["--web.listen-address", &format!("127.0.0.1:{port}")])
        .args([
            "--spark.url=",
            "--event-log.dir",
            logs.path().to_str().expect("utf-8"),
            "--lifecycle.drain-scrapes",
            "2",
        ]);
    // stderr kept: the drain logs when it reaches the final state.
    let mut p = Guard::capture("exporter", cmd, None);
    wait_ok(port, "/readyz");
    assert!(support::proc::signal(p.pid(), "TERM"));
    let t0 = Instant::now();
    // Probes say so at once: alive, not ready.
    // Generous bounds: a loaded CI machine is slow; the drain itself is bounded by its
    // grace period (25 s).
    let deadline = t0 + Duration::from_secs(15);
    while body(port, "/readyz") != (503, "draining\n".into()) {
        assert!(Instant::now() < deadline, "/readyz never said draining");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(body(port, "/healthz"), (200, "draining\n".into()));
    // A HEAD is not a scrape: it does not end the drain.
    let (code, _, _) = exchange(
        port,
        "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(code, 200);
    // Only scrapes answered once the sources' last reads are done count (the final state): on
    // a loaded machine those reads can outlast the probes above, and a scrape before them
    // would not count.
    while p.count_lines("Final state reached") == 0 {
        assert!(Instant::now() < deadline, "the final state never reached");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Two scrapes of the final state (drain_scrapes 2): the first leaves it running.
    let (code, text) = body(port, "/metrics");
    assert_eq!(code, 200);
    assert!(
        text.contains("spark_app_end_time_seconds{app_id=\"local-1795981136444\""),
        "the final state shows the application's end:\n{text}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(p.running(), "one scrape of two ended the drain");
    assert_eq!(body(port, "/metrics").0, 200);
    let exit = p
        .wait_exit(Duration::from_secs(15))
        .expect("exited after the second scrape");
    assert!(exit.success(), "{exit}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn without_scrapes_the_grace_period_ends_the_drain() {
    let port = free_port();
    let mut p = start(port, &["--spark.url=", "--lifecycle.grace-period", "2s"]);
    wait_ok(port, "/healthz");
    let t0 = Instant::now();
    let exit = p.terminate(Duration::from_secs(10)).expect("exited");
    assert!(exit.success(), "{exit}");
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn an_old_finished_log_does_not_end_a_classic_exporter() {
    // The fixture's application started and ended long before this exporter: it is not the
    // application this sidecar follows, so its ApplicationEnd must not end the exporter.
    let port = free_port();
    let logs = finished_log();
    let mut p = start(
        port,
        &[
            "--spark.url=",
            "--event-log.dir",
            logs.path().to_str().expect("utf-8"),
            "--lifecycle.exit-when-app-ends",
        ],
    );
    wait_ok(port, "/readyz");
    let (_, text) = body(port, "/metrics");
    assert!(
        text.contains("spark_app_end_time_seconds{"),
        "the log was read"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(p.running(), "an old application's end ended the exporter");
    assert_eq!(body(port, "/readyz"), (200, "ready\n".into()));
}

/// The exporter's `process_*` series say what Linux says of the same process (`/proc/<pid>`),
/// and `spark_exporter_build_info` names the version, revision and compiler.
#[test]
fn process_metrics_are_what_proc_says_of_the_exporter() {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return;
    }
    let port = free_port();
    let dir = tempfile::tempdir().expect("tempdir");
    let p = start(
        port,
        &[
            "--spark.url=",
            "--event-log.dir",
            dir.path().to_str().expect("utf-8"),
        ],
    );
    wait_ok(port, "/readyz");
    let (_, body) = http_get(
        &format!("127.0.0.1:{port}"),
        "/metrics",
        Duration::from_secs(5),
    )
    .expect("scrape");
    let text = String::from_utf8_lossy(&body).into_owned();
    let value = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name}"))
            .parse()
            .expect("number")
    };
    let proc_ = |f: &str| std::fs::read_to_string(format!("/proc/{}/{f}", p.pid())).expect("proc");
    let status = proc_("status");
    let kb = |k: &str| -> f64 {
        let l = status.lines().find(|l| l.starts_with(k)).expect(k);
        l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() * 1024.0
    };
    let rss = value("process_resident_memory_bytes");
    assert!(
        (rss - kb("VmRSS:")).abs() <= 0.25 * kb("VmRSS:"),
        "{rss} vs {}",
        kb("VmRSS:")
    );
    let vsz = value("process_virtual_memory_bytes");
    assert!((vsz - kb("VmSize:")).abs() <= 0.25 * kb("VmSize:"), "{vsz}");
    let threads: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!((value("process_threads") - threads).abs() <= 2.0);
    let fds = std::fs::read_dir(format!("/proc/{}/fd", p.pid()))
        .unwrap()
        .count() as f64;
    assert!((value("process_open_fds") - fds).abs() <= 3.0, "{fds}");
    assert!(value("process_max_fds") >= fds);
    // Started within the last minute, by the machine's clock.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start_s = value("process_start_time_seconds");
    assert!(
        start_s <= now + 1.0 && start_s >= now - 60.0,
        "{start_s} vs {now}"
    );
    assert!(value("process_cpu_seconds_total") >= 0.0);
    let build = text
        .lines()
        .find(|l| l.starts_with("spark_exporter_build_info{"))
        .expect("build info");
    assert!(
        build.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{build}"
    );
    assert!(
        build.contains("revision=\"") && build.contains("rust_version=\"rustc "),
        "{build}"
    );
}

/// The status page at `/` (issue 33): the exporter's build and state, each source with its state
/// (a REST target nobody answers: down, with the cause; the event-log folder: up; a folder that
/// is not there: down), each as `spark_exporter_source_up` too (issue 53: every source has it), the
/// application read, the configuration with its secrets redacted, and links to the
/// documentation, dashboards and rules the binary serves.
#[test]
fn the_status_page_lists_sources_their_state_and_the_applications() {
    let logs = finished_log();
    let port = free_port();
    let refused = format!("http://127.0.0.1:{}", free_port());
    let missing = logs.path().join("not-there").to_str().unwrap().to_string();
    let mut cmd = Command::new(EXPORTER);
    cmd.args(["--web.listen-address", &format!("127.0.0.1:{port}")])
        .args(["--spark.url", &refused, "--spark.poll-interval", "500ms"])
        .args(["--event-log.dir", logs.path().to_str().unwrap()])
        .args(["--event-log.dir", &missing])
        // A secret has no flag: the environment.
        .env("SPARK_EXPORTER_SPARK__AUTH__BEARER_TOKEN", "s3cr3t-t0ken")
        // The log's job groups are more than 3: the cap folds some, and the page says so.
        .env("SPARK_EXPORTER_LABELS__MAX_VALUES_PER_LABEL", "3");
    let _e = Guard::quiet("exporter", cmd);
    wait_ok(port, "/readyz");
    let deadline = Instant::now() + Duration::from_secs(15);
    let page = loop {
        let (code, page) = body(port, "/");
        assert_eq!(code, 200);
        if page.contains("local-1795981136444") || Instant::now() > deadline {
            break page;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let row = |needle: &str| {
        page.split("<tr class=\"source\">")
            .find(|r| r.contains(needle))
            .unwrap_or_else(|| panic!("no source row for {needle}:\n{page}"))
            .split("</tr>")
            .next()
            .unwrap()
            .to_string()
    };
    let rest = row(&refused);
    assert!(rest.contains("class=\"down\">down"), "{rest}");
    assert!(rest.contains("connection refused"), "{rest}");
    let folder = row(&format!("<td>{}</td>", logs.path().to_str().unwrap()));
    assert!(folder.contains("class=\"up\">up"), "{folder}");
    let gone = row(&missing);
    assert!(gone.contains("class=\"down\">down"), "{gone}");
    assert!(gone.contains("No such file"), "{gone}");
    let (_, metrics) = body(port, "/metrics");
    for (source, place, up) in [
        ("rest", refused.as_str(), 0),
        ("event_log", logs.path().to_str().unwrap(), 1),
        ("event_log", missing.as_str(), 0),
    ] {
        let line =
            format!("spark_exporter_source_up{{source=\"{source}\",place=\"{place}\"}} {up}");
        assert!(metrics.contains(&line), "{line} not in\n{metrics}");
    }
    for source in ["rest", "event_log"] {
        let line = format!("spark_exporter_source_ready{{source=\"{source}\"}} 1");
        assert!(metrics.contains(&line), "{line}");
    }
    // The outputs: the exposition, up once scraped (OTLP is off: not listed).
    let (_, page2) = body(port, "/");
    let sink = page2
        .split("<tr class=\"sink\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no output row:\n{page2}"));
    assert!(sink.starts_with("<td>Prometheus exposition</td>"), "{sink}");
    assert!(
        sink.contains(&format!("127.0.0.1:{port}/metrics")),
        "{sink}"
    );
    assert!(sink.contains("class=\"up\">up"), "{sink}");
    assert!(!page2.contains("OTLP push"), "{page2}");
    let app = page
        .split("<tr class=\"app\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no application row:\n{page}"));
    assert!(
        app.contains("local-1795981136444") && app.contains("acceptance-basic"),
        "{app}"
    );
    assert!(app.contains("4.1.1") && app.contains("succeeded"), "{app}");
    assert!(page.contains("<pre id=\"config\">"), "{page}");
    let labels = page
        .split("<table id=\"labels\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no label overflow table:\n{page}"));
    assert!(labels.contains("<tr><td>job_group</td><td>"), "{labels}");
    assert!(
        !page.contains("s3cr3t-t0ken"),
        "the bearer token is on the page"
    );
    assert!(page.contains("spark-exporter 0.2.0"), "{page}");
    for link in [
        "/docs/metrics.md",
        "/dashboards/spark-jobs.json",
        "/alerts/spark-exporter.rules.yml",
    ] {
        assert!(page.contains(&format!("href=\"{link}\"")), "{link}");
        let (code, b) = body(port, link);
        assert_eq!(code, 200, "{link}");
        assert!(b.len() > 1000, "{link}");
    }
    assert_eq!(status(port, "/dashboards/nope.json"), Some(404));
}
