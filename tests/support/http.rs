//! A minimal HTTP/1.0 client (no keep-alive, no pool: timings are the test's own) for the
//! exporter's, Spark's and Prometheus's HTTP APIs on loopback.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The limit of the URL forms ([`get_url`], [`get_ok`], [`get_url_json`]).
pub const URL_LIMIT: Duration = Duration::from_secs(20);

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
    http_get_accepting(addr, path, "*/*", limit)
}

/// [`http_get_full`] with `accept` as the `Accept` header (`application/openmetrics-text;
/// version=1.0.0` for OpenMetrics).
pub fn http_get_accepting(
    addr: &str,
    path: &str,
    accept: &str,
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
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {accept}\r\nUser-Agent: \
            spark-exporter-tests\r\n\r\n"
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

/// Split `http://host:port/path` into `host:port` and `/path`.
fn split_url(url: &str) -> Result<(&str, &str), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: not http://"))?;
    Ok(match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    })
}

/// GET `url` (`http://host:port/path`) within [`URL_LIMIT`]: status and body.
pub fn get_url(url: &str) -> Result<(u16, String), String> {
    let (addr, path) = split_url(url)?;
    let (code, body) = http_get(addr, path, URL_LIMIT)?;
    Ok((code, String::from_utf8_lossy(&body).into_owned()))
}

/// GET `url`: the body of a 200 answer, an error otherwise.
pub fn get_ok(url: &str) -> Result<String, String> {
    match get_url(url)? {
        (200, body) => Ok(body),
        (code, _) => Err(format!("GET {url}: HTTP {code}")),
    }
}

/// GET `url` and decode JSON (status 200 only).
pub fn get_url_json(url: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(&get_ok(url)?).map_err(|e| format!("GET {url}: {e}"))
}
