//! The diagnosis fixture (`tests/data/diagnosis-4.1.1`, written by
//! `scripts/diagnosis-fixture.sh` from a real PySpark run of `scripts/diagnosis_workload.py`):
//! its application ids, event logs, recorded REST answers, and a fake driver replaying them.
//! `DIAGNOSIS_FIXTURE=DIR` points every user at another run of the script.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use spark_exporter::diagnose::report::{AppReport, Kind};

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
    super::eventlog::rolling_events(&event_log(app))
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

/// What identifies a finding across sources: kind, job group, description, stage.
pub type FindingKey = (Kind, Option<String>, Option<String>, Option<u64>);

/// The findings of `a` REST can see too (locality and scheduler delay come from event logs
/// only), by [`FindingKey`].
pub fn finding_keys(a: &AppReport) -> BTreeSet<FindingKey> {
    a.findings
        .iter()
        .filter(|f| !matches!(f.kind, Kind::Locality | Kind::SchedulerDelay))
        .map(|f| {
            (
                f.kind,
                f.at.job_group.clone(),
                f.at.description.clone(),
                f.at.stage_id,
            )
        })
        .collect()
}

/// `got` (from one source) has the findings of `want` (from the other) with the same costs,
/// within `rel` of the larger.
pub fn assert_same_findings(got: &AppReport, want: &AppReport, rel: f64, what: &str) {
    assert_eq!(finding_keys(got), finding_keys(want), "{what}");
    for f in &want.findings {
        let Some(g) = got.findings.iter().find(|g| {
            (g.kind, &g.at.job_group, &g.at.description, g.at.stage_id)
                == (f.kind, &f.at.job_group, &f.at.description, f.at.stage_id)
        }) else {
            continue;
        };
        let d = (g.cost_seconds - f.cost_seconds).abs();
        assert!(
            d <= rel * g.cost_seconds.abs().max(f.cost_seconds.abs()).max(1e-9),
            "{what} {:?}: {} vs {}",
            f.kind,
            g.cost_seconds,
            f.cost_seconds
        );
    }
}
