//! Test support for the REST collector: recorded and generated Spark applications ([`AppData`]),
//! a fake Spark REST server that can misbehave on demand ([`server`]), and an
//! [`Observer`](spark_exporter::model::Observer) that records
//! what the poller reports ([`recorder`]).

pub mod recorder;
pub mod server;

use std::time::Duration;

use serde_json::{json, Value};
use spark_exporter::config::Settings;
use spark_exporter::sources::rest::config::SparkConfig;

// Re-exported for the `rest_*` tests' `use support::rest::*` (unused in the other binaries).
#[allow(unused_imports)]
pub use recorder::*;
pub use server::*;

/// Recorded Spark 4.1.1 snapshots.
pub const SNAPSHOTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/spark-4.1.1-basic/rest-snapshots"
);
/// The recorded application.
pub const APP_ID: &str = "local-1795981136444";

/// One application's entities, as the server holds them.
#[derive(Debug, Clone, Default)]
pub struct AppData {
    pub info: Value,
    pub jobs: Vec<Value>,
    pub stages: Vec<Value>,
    pub sql: Vec<Value>,
    pub executors: Vec<Value>,
    /// Other recorded answers, served verbatim: key is the path after the application id, plus
    /// `?details=<true|false>` when the request says `details` (see [`raw_key`]); for example
    /// `sql/3?details=true`, `storage/rdd`, `environment`, `stages/4/0/taskSummary`. Read from
    /// an optional `raw.json` in a snapshot folder.
    pub raw: std::collections::BTreeMap<String, Value>,
}

/// The [`AppData::raw`] key of a request: `parts` (after the application id) joined by `/`, and
/// `?details=<value, lower case>` when the query names `details`. Other parameters (quantiles,
/// planDescription, status) are not part of the key.
pub fn raw_key(parts: &[&str], query: &str) -> String {
    let mut k = parts.join("/");
    if let Some(d) = query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == "details")
    {
        k.push_str("?details=");
        k.push_str(&d.1.to_ascii_lowercase());
    }
    k
}

fn read_json(dir: &str, file: &str) -> Value {
    let path = format!("{dir}/{file}");
    let s = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        _ => vec![],
    }
}

impl AppData {
    /// Snapshot `n` (0..=9) of the recorded application.
    pub fn snapshot(n: usize) -> AppData {
        AppData::from_dir(&format!("{SNAPSHOTS}/{n:04}"))
    }

    /// A recorded snapshot folder: what a live driver's `/api/v1/applications/<id>` served, one
    /// file per endpoint (`app.json`, `jobs.json`, `stages.json`, `sql__details-false.json`,
    /// `allexecutors.json`), as in `tests/data/spark-4.1.1-basic/rest-snapshots/NNNN/` and
    /// `tests/data/versions/*/rest/`.
    pub fn from_dir(dir: &str) -> AppData {
        AppData {
            info: read_json(dir, "app.json"),
            jobs: array(read_json(dir, "jobs.json")),
            stages: array(read_json(dir, "stages.json")),
            sql: array(read_json(dir, "sql__details-false.json")),
            executors: array(read_json(dir, "allexecutors.json")),
            raw: match std::path::Path::new(&format!("{dir}/raw.json")).exists() {
                true => match read_json(dir, "raw.json") {
                    Value::Object(m) => m.into_iter().collect(),
                    _ => Default::default(),
                },
                false => Default::default(),
            },
        }
    }

    /// A generated application with `finished` finished jobs (two stages each, one skipped) and
    /// SQL executions, plus one running job (a pending and an active stage) and one running SQL
    /// execution.
    /// Entities are cloned from the recorded snapshot so they have Spark's real size and shape.
    pub fn generated(id: &str, finished: u64) -> AppData {
        let base = AppData::snapshot(9);
        let job_t = base
            .jobs
            .iter()
            .find(|j| j["jobId"] == 13)
            .cloned()
            .unwrap();
        let stage_t = base
            .stages
            .iter()
            .find(|s| s["stageId"] == 18)
            .cloned()
            .unwrap();
        let sql_t = base.sql[1].clone();
        let mut d = AppData {
            info: base.info.clone(),
            executors: base.executors.clone(),
            ..Default::default()
        };
        d.info["id"] = json!(id);
        for j in 0..=finished {
            let running = j == finished;
            let mut job = job_t.clone();
            job["jobId"] = json!(j);
            job["stageIds"] = json!([2 * j, 2 * j + 1]);
            job["status"] = json!(if running { "RUNNING" } else { "SUCCEEDED" });
            d.jobs.push(job);
            let statuses = if running {
                ["PENDING", "ACTIVE"]
            } else {
                ["SKIPPED", "COMPLETE"]
            };
            for (k, status) in [(2 * j, statuses[0]), (2 * j + 1, statuses[1])] {
                let mut st = stage_t.clone();
                st["stageId"] = json!(k);
                st["status"] = json!(status);
                match status {
                    "ACTIVE" => st["numCompleteTasks"] = json!(1),
                    "PENDING" | "SKIPPED" => st["numCompleteTasks"] = json!(0),
                    _ => {}
                }
                d.stages.push(st);
            }
            let mut e = sql_t.clone();
            e["id"] = json!(j);
            e["status"] = json!(if running { "RUNNING" } else { "COMPLETED" });
            d.sql.push(e);
        }
        d.jobs.reverse();
        d.stages.reverse();
        d
    }

    pub fn id(&self) -> String {
        self.info["id"].as_str().unwrap_or_default().to_string()
    }

    /// Mark the newest attempt completed at `end` with `last_updated`.
    pub fn complete(&mut self, end: i64, last_updated: i64) {
        let a = &mut self.info["attempts"][0];
        a["completed"] = json!(true);
        a["endTimeEpoch"] = json!(end);
        a["lastUpdatedEpoch"] = json!(last_updated);
    }
}

/// Default settings pointed at `urls`, polling every 100 ms.
pub fn settings(urls: &[&str]) -> Settings {
    let mut s = Settings::default();
    SparkConfig::of_mut(&mut s).urls = urls.iter().map(|u| u.to_string()).collect();
    SparkConfig::of_mut(&mut s).poll_interval = Duration::from_millis(100);
    s
}
