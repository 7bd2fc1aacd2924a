//! A fake Spark REST server on 127.0.0.1: answers like `/api/v1` from [`AppData`], logs every
//! request, and misbehaves on demand ([`FaultKind`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::AppData;

/// How the server misbehaves, on requests whose path contains the string given to
/// [`FakeSpark::set_fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// A 200 HTML page (a login proxy).
    Html,
    /// HTTP 500.
    Status500,
    /// `200 application/json` that is not JSON.
    Garbage,
    /// Headers promise more bytes than are sent, then the connection closes.
    CloseMidBody,
    /// Wait this long before answering.
    Slow(Duration),
    /// A `Content-Length` far above any cap.
    Huge,
}

#[derive(Debug, Default)]
pub struct ServerState {
    pub apps: Vec<AppData>,
    pub fault: Option<(FaultKind, String)>,
    /// Every request path (with query), in order.
    pub log: Vec<String>,
}

/// A fake Spark REST server on 127.0.0.1.
pub struct FakeSpark {
    pub url: String,
    pub state: Arc<Mutex<ServerState>>,
}

impl FakeSpark {
    pub async fn start(apps: Vec<AppData>) -> FakeSpark {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(ServerState {
            apps,
            ..Default::default()
        }));
        let st = state.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve_conn(sock, st.clone()));
            }
        });
        FakeSpark { url, state }
    }
    pub fn set_apps(&self, apps: Vec<AppData>) {
        self.state.lock().unwrap().apps = apps;
    }
    pub fn with_apps<R>(&self, f: impl FnOnce(&mut Vec<AppData>) -> R) -> R {
        f(&mut self.state.lock().unwrap().apps)
    }
    pub fn set_fault(&self, kind: FaultKind, on: &str) {
        self.state.lock().unwrap().fault = Some((kind, on.to_string()));
    }
    pub fn clear_fault(&self) {
        self.state.lock().unwrap().fault = None;
    }
    /// Take the request log.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().unwrap().log)
    }
}

async fn serve_conn(mut sock: TcpStream, state: Arc<Mutex<ServerState>>) {
    let _ = sock.set_nodelay(true);
    let mut buf = Vec::new();
    loop {
        // Read one request head (GETs have no body).
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        buf.drain(..end);
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (reply, fault) = {
            let mut s = state.lock().unwrap();
            s.log.push(target.clone());
            let fault = s
                .fault
                .clone()
                .filter(|(_, on)| target.contains(on.as_str()));
            (route(&s.apps, &target), fault.map(|f| f.0))
        };
        let (status, ctype, body) = match fault {
            Some(FaultKind::Html) => (
                200,
                "text/html",
                b"<html><body>Sign in</body></html>".to_vec(),
            ),
            Some(FaultKind::Status500) => (500, "text/plain", b"Internal Server Error".to_vec()),
            Some(FaultKind::Garbage) => (200, "application/json", b"{\"jobId\": 1, [[[".to_vec()),
            Some(FaultKind::CloseMidBody) => {
                let body = reply.2;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \
                        {}\r\n\r\n",
                    body.len() + 1000
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body[..body.len() / 2]).await;
                return;
            }
            Some(FaultKind::Huge) => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \
                    999999999999\r\n\r\n[";
                let _ = sock.write_all(head.as_bytes()).await;
                return;
            }
            Some(FaultKind::Slow(d)) => {
                tokio::time::sleep(d).await;
                reply
            }
            None => reply,
        };
        let reason = if status == 200 { "OK" } else { "Error" };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut out = head.into_bytes();
        out.extend_from_slice(&body);
        if sock.write_all(&out).await.is_err() {
            return;
        }
    }
}

type Reply = (u16, &'static str, Vec<u8>);

fn ok(v: &Value) -> Reply {
    (
        200,
        "application/json",
        serde_json::to_vec_pretty(v).unwrap(),
    )
}

fn not_found(what: &str) -> Reply {
    (404, "text/plain", format!("unknown {what}").into_bytes())
}

/// Answers like Spark's `/api/v1`, from `apps`.
fn route(apps: &[AppData], target: &str) -> Reply {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let params: Vec<(&str, &str)> = query.split('&').filter_map(|p| p.split_once('=')).collect();
    let Some(rest) = path.strip_prefix("/api/v1/applications") else {
        return not_found("path");
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return list_apps(apps, &params);
    }
    let Some(app) = apps.iter().find(|a| a.id() == parts[0]) else {
        return not_found("app");
    };
    if let Some(v) = app.raw.get(&super::raw_key(&parts[1..], query)) {
        return ok(v);
    }
    route_app(app, &parts[1..], &params)
}

/// The values of query parameter `k`, upper-cased.
fn param(params: &[(&str, &str)], k: &str) -> Vec<String> {
    params
        .iter()
        .filter(|(pk, _)| *pk == k)
        .map(|(_, v)| v.to_ascii_uppercase())
        .collect()
}

/// `/applications`: filtered by `status`, newest end first, at most `limit`.
fn list_apps(apps: &[AppData], params: &[(&str, &str)]) -> Reply {
    let statuses: Vec<String> = param(params, "status");
    let completed = |a: &AppData| {
        a.info["attempts"][0]["completed"]
            .as_bool()
            .unwrap_or(false)
    };
    let mut list: Vec<&AppData> = apps
        .iter()
        .filter(|a| {
            statuses.is_empty()
                || statuses
                    .contains(&if completed(a) { "COMPLETED" } else { "RUNNING" }.to_string())
        })
        .collect();
    // `minEndDate` / `maxEndDate` (inclusive), as Spark's ApplicationListResource filters.
    let date = |k: &str| {
        param(params, k)
            .first()
            .and_then(|d| spark_exporter::sources::rest::convert::parse_time(d))
    };
    let (min_end, max_end) = (date("minEndDate"), date("maxEndDate"));
    let end = |a: &AppData| a.info["attempts"][0]["endTimeEpoch"].as_i64().unwrap_or(-1);
    list.retain(|a| {
        (min_end.is_none() || !completed(a) || min_end.is_some_and(|m| end(a) >= m))
            && (max_end.is_none() || !completed(a) || max_end.is_some_and(|m| end(a) <= m))
    });
    list.sort_by_key(|a| std::cmp::Reverse(a.info["attempts"][0]["endTimeEpoch"].as_i64()));
    let limit = param(params, "limit")
        .first()
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX);
    ok(&Value::Array(
        list.iter().take(limit).map(|a| a.info.clone()).collect(),
    ))
}

/// `/applications/{id}/...`: `parts` is what follows the id.
fn route_app(app: &AppData, parts: &[&str], params: &[(&str, &str)]) -> Reply {
    let statuses: Vec<String> = param(params, "status");
    let by_status = |items: &[Value]| -> Value {
        Value::Array(
            items
                .iter()
                .filter(|v| {
                    statuses.is_empty()
                        || statuses.contains(&v["status"].as_str().unwrap_or("").to_string())
                })
                .cloned()
                .collect(),
        )
    };
    let num = |s: &str| s.parse::<u64>().ok();
    let strip_plan = || {
        param(params, "planDescription")
            .iter()
            .any(|v| v == "FALSE")
    };
    match parts {
        [] => ok(&app.info),
        ["jobs"] => ok(&by_status(&app.jobs)),
        ["jobs", id] => match app
            .jobs
            .iter()
            .find(|j| Some(j["jobId"].as_u64().unwrap()) == num(id))
        {
            Some(j) => ok(j),
            None => not_found("job"),
        },
        ["stages"] => ok(&by_status(&app.stages)),
        ["stages", id] => {
            let attempts: Vec<Value> = app
                .stages
                .iter()
                .filter(|s| s["stageId"].as_u64() == num(id))
                .cloned()
                .collect();
            if attempts.is_empty() {
                not_found("stage")
            } else {
                ok(&Value::Array(attempts))
            }
        }
        ["stages", id, attempt, "taskSummary"] => {
            let stage = app.stages.iter().find(|s| {
                s["stageId"].as_u64() == num(id) && s["attemptId"].as_u64() == num(attempt)
            });
            // Like Spark: 404 until a task has finished.
            let done = |s: &Value| s["numCompleteTasks"].as_u64().unwrap_or(0);
            match stage {
                Some(s) if done(s) > 0 => ok(&task_summary(num(id).unwrap_or(0), done(s))),
                _ => not_found("summary"),
            }
        }
        ["sql"] => {
            // Spark's SqlResource pages the list: `offset` 0 and `length` 20 unless asked.
            let at = |k: &str, default: usize| {
                param(params, k)
                    .first()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(default)
            };
            let strip = strip_plan();
            ok(&Value::Array(
                app.sql
                    .iter()
                    .skip(at("offset", 0))
                    .take(at("length", 20))
                    .map(|e| sql_view(e, strip))
                    .collect(),
            ))
        }
        ["sql", id] => match app.sql.iter().find(|e| e["id"].as_u64() == num(id)) {
            Some(e) => ok(&sql_view(e, strip_plan())),
            None => not_found("sql"),
        },
        ["allexecutors"] => ok(&Value::Array(app.executors.clone())),
        _ => not_found("path"),
    }
}

fn sql_view(e: &Value, strip_plan: bool) -> Value {
    let mut e = e.clone();
    if strip_plan {
        e["planDescription"] = json!("");
    }
    e
}

/// Median task duration of the fake's summary: changes with progress, so a summary fetched
/// while a stage ran differs from the final one.
pub fn summary_median(stage_id: u64, complete_tasks: u64) -> f64 {
    100.0 * (stage_id as f64 + 1.0) + complete_tasks as f64
}

/// A deterministic summary: median [`summary_median`] ms, max three times that.
pub fn task_summary(stage_id: u64, complete_tasks: u64) -> Value {
    let m = summary_median(stage_id, complete_tasks);
    json!({"quantiles": [0.5, 1.0], "duration": [m, 3.0 * m], "executorRunTime": [1.0, 2.0],
           "jvmGcTime": [0.0, 0.0], "inputMetrics": {"bytesRead": [0.0, 0.0]}})
}
