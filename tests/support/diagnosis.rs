//! The diagnosis fixture (`tests/data/diagnosis-4.1.1`, written by
//! `scripts/diagnosis-fixture.sh` from a real PySpark run of `scripts/diagnosis_workload.py`):
//! its application ids, event logs, recorded REST answers, and a fake driver replaying them.
//! `DIAGNOSIS_FIXTURE=DIR` points every user at another run of the script.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::rest::{AppData, FakeSpark};

/// The fixture folder.
pub fn fixture() -> PathBuf {
    match std::env::var_os("DIAGNOSIS_FIXTURE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/diagnosis-4.1.1"),
    }
}

/// A JSON file, or a panic naming it.
pub fn read_json(p: &Path) -> Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The application id of `name` (`meta.json`).
pub fn app_id(name: &str) -> String {
    let m = read_json(&fixture().join("meta.json"));
    m["apps"][name].as_str().expect("app id").to_string()
}

/// Every application of the fixture, in run order.
pub fn apps() -> Vec<String> {
    ["diagnosis", "diagnosis-idle", "diagnosis-busy"]
        .map(app_id)
        .to_vec()
}

/// The rolling event-log folder of application `app`.
pub fn event_log(app: &str) -> PathBuf {
    fixture()
        .join("eventlog")
        .join(format!("eventlog_v2_{app}"))
}

/// REST answer `file` of application `app`.
pub fn rest(app: &str, file: &str) -> Value {
    read_json(&fixture().join("rest").join(app).join(file))
}

/// A recorded verbatim answer (`raw.json`), e.g. `storage/rdd`, `environment`.
pub fn raw(app: &str, key: &str) -> Value {
    rest(app, "raw.json")[key].clone()
}

/// Every event of application `app`'s rolling zstd log, in order.
pub fn events(app: &str) -> Vec<Value> {
    let dir = event_log(app);
    let mut parts: Vec<(u64, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let n = name
                .strip_prefix("events_")?
                .split('_')
                .next()?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    parts.sort();
    assert!(!parts.is_empty(), "no events_ parts in {dir:?}");
    let mut out = vec![];
    for (_, p) in parts {
        let bytes = std::fs::read(&p).expect("read part");
        let text = if p.extension().is_some_and(|e| e == "zstd") {
            zstd::decode_all(&bytes[..]).expect("zstd")
        } else {
            bytes
        };
        for line in String::from_utf8(text).expect("utf-8").lines() {
            if !line.trim().is_empty() {
                out.push(serde_json::from_str(line).expect("json line"));
            }
        }
    }
    out
}

/// `SparkListenerApplicationEnd`'s time.
pub fn app_end(events: &[Value]) -> i64 {
    events
        .iter()
        .find(|e| e["Event"] == "SparkListenerApplicationEnd")
        .and_then(|e| e["Timestamp"].as_i64())
        .expect("the application ended")
}

/// A fake driver serving the recorded REST answers of every application, each completed at its
/// event log's end (the answers were taken from the live drivers just before they stopped).
pub async fn replay() -> FakeSpark {
    let mut data = vec![];
    for app in &apps() {
        let dir = fixture().join("rest").join(app);
        let mut d = AppData::from_dir(dir.to_str().expect("utf-8"));
        let end = app_end(&events(app));
        d.complete(end, end);
        data.push(d);
    }
    FakeSpark::start(data).await
}
