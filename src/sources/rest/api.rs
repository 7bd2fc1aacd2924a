//! Serde types of the Spark monitoring REST API (`/api/v1`), decoded tolerantly.
//!
//! Only the fields the exporter uses are declared; unknown fields are ignored, every field has a
//! default, and numbers also accept `null`, floats and numeric strings, so a Spark version that
//! adds, drops or retypes a field degrades one value instead of failing the whole poll.
//! Statuses stay strings here; [`super::convert`] maps them.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One application of `/applications` (`ApplicationInfo`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ApplicationInfo {
    /// Application id.
    #[serde(deserialize_with = "lenient::or_default")]
    pub id: String,
    /// Application name.
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: Option<String>,
    /// Attempts, newest first. A malformed attempt is dropped, not the whole listing.
    #[serde(deserialize_with = "lenient::items")]
    pub attempts: Vec<ApplicationAttemptInfo>,
}

/// One attempt of an application (`ApplicationAttemptInfo`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ApplicationAttemptInfo {
    /// Attempt id; only set on cluster managers that retry drivers (YARN).
    #[serde(deserialize_with = "lenient::or_default")]
    pub attempt_id: Option<String>,
    /// Start time, epoch ms.
    #[serde(deserialize_with = "lenient::i64")]
    pub start_time_epoch: i64,
    /// End time, epoch ms; `-1` while running.
    #[serde(deserialize_with = "lenient::i64")]
    pub end_time_epoch: i64,
    /// Last change of the event log (History Server), epoch ms.
    #[serde(deserialize_with = "lenient::i64")]
    pub last_updated_epoch: i64,
    /// User running the application.
    #[serde(deserialize_with = "lenient::or_default")]
    pub spark_user: Option<String>,
    /// True once the attempt has ended.
    #[serde(deserialize_with = "lenient::or_default")]
    pub completed: bool,
    /// Spark version of the application.
    #[serde(deserialize_with = "lenient::or_default")]
    pub app_spark_version: Option<String>,
}

/// A job (`JobData`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobData {
    /// Job id.
    #[serde(deserialize_with = "lenient::u64")]
    pub job_id: u64,
    /// Job description (`setJobDescription` / `setJobGroup`).
    #[serde(deserialize_with = "lenient::or_default")]
    pub description: Option<String>,
    /// Submission time, `2026-11-29T19:39:20.198GMT`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub submission_time: Option<String>,
    /// Completion time, same format.
    #[serde(deserialize_with = "lenient::or_default")]
    pub completion_time: Option<String>,
    /// Stages of the job.
    #[serde(deserialize_with = "lenient::u64_vec")]
    pub stage_ids: Vec<u64>,
    /// Job group (`setJobGroup`).
    #[serde(deserialize_with = "lenient::or_default")]
    pub job_group: Option<String>,
    /// Job tags (Spark 3.5+), internal ones included.
    #[serde(deserialize_with = "lenient::or_default")]
    pub job_tags: Vec<String>,
    /// The job's name: the call site of its last stage.
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: Option<String>,
    /// `RUNNING`, `SUCCEEDED`, `FAILED` or `UNKNOWN`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub status: String,
}

/// A stage attempt (`StageData`), as listed with `details=false`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[allow(missing_docs)] // Field names are Spark's own; see the conversion for units.
pub struct StageData {
    /// `ACTIVE`, `COMPLETE`, `FAILED`, `PENDING` or `SKIPPED`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub status: String,
    #[serde(deserialize_with = "lenient::u64")]
    pub stage_id: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub attempt_id: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_active_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_complete_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_failed_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_killed_tasks: u64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub submission_time: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub completion_time: Option<String>,
    /// Milliseconds.
    #[serde(deserialize_with = "lenient::u64")]
    pub executor_run_time: u64,
    /// Nanoseconds.
    #[serde(deserialize_with = "lenient::u64")]
    pub executor_cpu_time: u64,
    /// Milliseconds.
    #[serde(deserialize_with = "lenient::u64")]
    pub jvm_gc_time: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub input_bytes: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub output_bytes: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub shuffle_read_bytes: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub shuffle_write_bytes: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub memory_bytes_spilled: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub disk_bytes_spilled: u64,
    /// Milliseconds, summed over tasks.
    #[serde(deserialize_with = "lenient::u64")]
    pub executor_deserialize_time: u64,
    /// Milliseconds, summed over tasks.
    #[serde(deserialize_with = "lenient::u64")]
    pub shuffle_fetch_wait_time: u64,
    /// Bytes: the tasks' peak execution memory, summed over tasks.
    #[serde(deserialize_with = "lenient::u64")]
    pub peak_execution_memory: u64,
    /// Call site, e.g. `count at job.py:12`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: Option<String>,
    /// Job description of the job that submitted the stage.
    #[serde(deserialize_with = "lenient::or_default")]
    pub description: Option<String>,
}

/// An executor (`ExecutorSummary`) from `/allexecutors`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[allow(missing_docs)] // Field names are Spark's own; see the conversion for units.
pub struct ExecutorSummary {
    #[serde(deserialize_with = "lenient::or_default")]
    pub id: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub is_active: Option<bool>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub remove_reason: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub add_time: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub remove_time: Option<String>,
    #[serde(deserialize_with = "lenient::u64")]
    pub max_tasks: u64,
    /// Cores; absent before Spark 2.x's `totalCores`, 0 for a cluster-mode driver.
    #[serde(deserialize_with = "lenient::or_default")]
    pub total_cores: Option<u64>,
    #[serde(deserialize_with = "lenient::u64")]
    pub active_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub completed_tasks: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub failed_tasks: u64,
    /// Sum of task durations, milliseconds.
    #[serde(deserialize_with = "lenient::u64")]
    pub total_duration: u64,
    /// Milliseconds.
    #[serde(rename = "totalGCTime", deserialize_with = "lenient::u64")]
    pub total_gc_time: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub total_input_bytes: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub total_shuffle_read: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub total_shuffle_write: u64,
    /// Storage memory used.
    #[serde(deserialize_with = "lenient::u64")]
    pub memory_used: u64,
    /// Storage memory available.
    #[serde(deserialize_with = "lenient::u64")]
    pub max_memory: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub disk_used: u64,
    /// Peak values of executor metrics (`JVMHeapMemory`, ...); absent before the first heartbeat.
    #[serde(deserialize_with = "lenient::u64_map")]
    pub peak_memory_metrics: BTreeMap<String, u64>,
    /// Its resource profile (Spark 3.1+).
    #[serde(deserialize_with = "lenient::or_default")]
    pub resource_profile_id: Option<u64>,
}

/// A SQL execution (`ExecutionData`), fetched with `details=false&planDescription=false`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutionData {
    /// Execution id.
    #[serde(deserialize_with = "lenient::u64")]
    pub id: u64,
    /// `RUNNING`, `COMPLETED` or `FAILED`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub status: String,
    /// Description (query text or job description).
    #[serde(deserialize_with = "lenient::or_default")]
    pub description: Option<String>,
    /// Submission time.
    #[serde(deserialize_with = "lenient::or_default")]
    pub submission_time: Option<String>,
    /// Milliseconds since submission (running) or total duration (ended).
    #[serde(deserialize_with = "lenient::u64")]
    pub duration: u64,
    /// Its running jobs.
    #[serde(deserialize_with = "lenient::items")]
    pub running_job_ids: Vec<u64>,
    /// Its succeeded jobs.
    #[serde(deserialize_with = "lenient::items")]
    pub success_job_ids: Vec<u64>,
    /// Its failed jobs.
    #[serde(deserialize_with = "lenient::items")]
    pub failed_job_ids: Vec<u64>,
}

/// A SQL execution's plan graph: `ExecutionData` fetched with
/// `details=true&planDescription=false` (`nodes` and `edges` of Spark's `SparkPlanGraph`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutionPlan {
    /// Execution id.
    #[serde(deserialize_with = "lenient::u64")]
    pub id: u64,
    /// The graph's nodes, `WholeStageCodegen` clusters included (they have no edges).
    #[serde(deserialize_with = "lenient::items")]
    pub nodes: Vec<PlanNodeData>,
    /// The graph's edges, child to parent.
    #[serde(deserialize_with = "lenient::items")]
    pub edges: Vec<PlanEdgeData>,
}

/// A plan node (`Node`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlanNodeData {
    /// Node id within the graph.
    #[serde(deserialize_with = "lenient::u64")]
    pub node_id: u64,
    /// Spark's node name (`SortMergeJoin(skew=true)`, `Exchange`, ...).
    #[serde(deserialize_with = "lenient::or_default")]
    pub node_name: String,
    /// The metrics that have a value, formatted (`1,234`, `12 ms`, ...).
    #[serde(deserialize_with = "lenient::items")]
    pub metrics: Vec<PlanMetricData>,
}

/// A plan node's metric (`Metric`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PlanMetricData {
    /// Metric name.
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: String,
    /// Value as Spark formats it.
    #[serde(deserialize_with = "lenient::or_default")]
    pub value: String,
}

/// A plan edge (`SparkPlanGraphEdge`): `fromId` is the child, `toId` the parent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlanEdgeData {
    /// Child node id.
    #[serde(deserialize_with = "lenient::u64")]
    pub from_id: u64,
    /// Parent node id.
    #[serde(deserialize_with = "lenient::u64")]
    pub to_id: u64,
}

/// Quantiles of a stage attempt's task metrics (`TaskMetricDistributions`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskMetricDistributions {
    /// The quantiles asked for, in order.
    #[serde(deserialize_with = "lenient::f64_vec")]
    pub quantiles: Vec<f64>,
    /// Task durations (ms) at those quantiles (Spark 3.1+).
    #[serde(deserialize_with = "lenient::f64_vec")]
    pub duration: Vec<f64>,
    /// Executor run times (ms) at those quantiles; the fallback for older Sparks.
    #[serde(deserialize_with = "lenient::f64_vec")]
    pub executor_run_time: Vec<f64>,
}

/// A cached dataset of `/storage/rdd` (`RDDStorageInfo`, listed without distributions).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[allow(missing_docs)] // Field names are Spark's own.
pub struct RddStorageInfo {
    #[serde(deserialize_with = "lenient::u64")]
    pub id: u64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: String,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_partitions: u64,
    #[serde(deserialize_with = "lenient::u64")]
    pub num_cached_partitions: u64,
    /// Bytes in memory.
    #[serde(deserialize_with = "lenient::u64")]
    pub memory_used: u64,
    /// Bytes on disk.
    #[serde(deserialize_with = "lenient::u64")]
    pub disk_used: u64,
}

/// `/environment` (`ApplicationEnvironmentInfo`): only the Spark properties, `[key, value]`
/// pairs, and the resource profiles; a pair or profile of another shape is dropped.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ApplicationEnvironmentInfo {
    /// `sparkProperties`.
    #[serde(deserialize_with = "lenient::items")]
    pub spark_properties: Vec<(String, String)>,
    /// `resourceProfiles` (Spark 3.1+).
    #[serde(deserialize_with = "lenient::items")]
    pub resource_profiles: Vec<ResourceProfileInfo>,
}

/// One of `/environment`'s `resourceProfiles`: its id and executor requests.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceProfileInfo {
    /// Resource profile id.
    pub id: u64,
    /// `executorResources`: resource name to request (a map of another shape reads as empty,
    /// an amount that is not a number as none).
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub executor_resources: BTreeMap<String, ExecutorResourceRequest>,
}

/// One executor resource request (`{resourceName, amount, discoveryScript, vendor}`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutorResourceRequest {
    /// The amount (MiB for the memory resources).
    #[serde(deserialize_with = "lenient::or_default")]
    pub amount: Option<f64>,
}

/// Deserializers that take whatever JSON is there and keep what makes sense.
mod lenient {
    use std::collections::BTreeMap;

    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// Any type: a value of the wrong shape becomes the type's default.
    pub fn or_default<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
        d: D,
    ) -> Result<T, D::Error> {
        Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
    }

    /// A list whose malformed items are dropped (`null` or a non-list gives an empty list).
    pub fn items<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(a) => a
                .into_iter()
                .filter_map(|v| serde_json::from_value(v).ok())
                .collect(),
            _ => vec![],
        })
    }

    fn to_f64(v: &Value) -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn to_u64(v: &Value) -> Option<u64> {
        match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Non-negative integer; negative, `null` or non-numeric become 0.
    pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(to_u64(&Value::deserialize(d)?).unwrap_or(0))
    }

    /// Signed integer (epochs, where `-1` means "not yet"); non-numeric becomes -1.
    pub fn i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match &v {
            Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
        .unwrap_or(-1))
    }

    /// A list of integers; anything that is not one is dropped.
    pub fn u64_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(a) => a.iter().filter_map(to_u64).collect(),
            _ => vec![],
        })
    }

    /// A list of numbers; non-numbers become NaN so positions still line up with `quantiles`.
    pub fn f64_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(a) => a.iter().map(|v| to_f64(v).unwrap_or(f64::NAN)).collect(),
            _ => vec![],
        })
    }

    /// An object of integers; entries that are not integers are dropped.
    pub fn u64_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, u64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Object(m) => m
                .iter()
                .filter_map(|(k, v)| to_u64(v).map(|n| (k.clone(), n)))
                .collect(),
            _ => BTreeMap::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAP: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/spark-4.1.1-basic/rest-snapshots"
    );

    fn read(snap: &str, file: &str) -> String {
        std::fs::read_to_string(format!("{SNAP}/{snap}/{file}")).expect("fixture")
    }

    #[test]
    fn decodes_recorded_application() {
        let app: ApplicationInfo = serde_json::from_str(&read("0009", "app.json")).unwrap();
        assert_eq!(app.id, "local-1795981136444");
        assert_eq!(app.name.as_deref(), Some("acceptance-basic"));
        let odd: Vec<ApplicationInfo> = serde_json::from_str(
            r#"[{"id":"a","attempts":[1,{"startTimeEpoch":5}]},{"id":"b","attempts":null}]"#,
        )
        .unwrap();
        assert_eq!(odd[0].attempts.len(), 1, "the malformed attempt is dropped");
        assert_eq!(odd[0].attempts[0].start_time_epoch, 5);
        assert!(odd[1].attempts.is_empty());
        let a = &app.attempts[0];
        assert_eq!(a.start_time_epoch, 1795981135073);
        assert_eq!(a.end_time_epoch, -1);
        assert!(!a.completed);
        assert_eq!(a.attempt_id, None);
        assert_eq!(a.app_spark_version.as_deref(), Some("4.1.1"));
        assert_eq!(a.spark_user.as_deref(), Some("root"));
    }

    #[test]
    fn decodes_recorded_jobs_stages_sql_executors() {
        let jobs: Vec<JobData> = serde_json::from_str(&read("0009", "jobs.json")).unwrap();
        assert_eq!(jobs.len(), 15);
        let j14 = jobs.iter().find(|j| j.job_id == 14).unwrap();
        assert_eq!(j14.status, "FAILED");
        assert_eq!(j14.job_group.as_deref(), Some("failing_job"));
        assert_eq!(j14.stage_ids, vec![19]);
        assert_eq!(
            j14.completion_time.as_deref(),
            Some("2026-11-29T19:39:20.814GMT")
        );

        let stages: Vec<StageData> = serde_json::from_str(&read("0009", "stages.json")).unwrap();
        assert_eq!(stages.len(), 20);
        let s19 = stages.iter().find(|s| s.stage_id == 19).unwrap();
        assert_eq!((s19.status.as_str(), s19.attempt_id), ("FAILED", 0));
        assert_eq!((s19.num_complete_tasks, s19.num_failed_tasks), (3, 2));
        assert_eq!(
            (s19.executor_run_time, s19.executor_cpu_time),
            (1074, 7958514)
        );

        let sql: Vec<ExecutionData> =
            serde_json::from_str(&read("0009", "sql__details-false.json")).unwrap();
        assert_eq!(
            sql.iter().map(|e| e.id).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(sql[0].duration, 4755);

        let ex: Vec<ExecutorSummary> =
            serde_json::from_str(&read("0009", "allexecutors.json")).unwrap();
        assert_eq!(ex[0].id, "driver");
        assert_eq!(ex[0].total_gc_time, 373);
        assert_eq!(
            ex[0].peak_memory_metrics.get("JVMHeapMemory"),
            Some(&285334280)
        );
    }

    #[test]
    fn every_recorded_snapshot_decodes() {
        for i in 0..10 {
            let s = format!("{i:04}");
            serde_json::from_str::<Vec<JobData>>(&read(&s, "jobs.json")).unwrap();
            serde_json::from_str::<Vec<StageData>>(&read(&s, "stages.json")).unwrap();
            serde_json::from_str::<Vec<ExecutionData>>(&read(&s, "sql__details-false.json"))
                .unwrap();
            serde_json::from_str::<Vec<ExecutorSummary>>(&read(&s, "allexecutors.json")).unwrap();
        }
    }

    #[test]
    fn odd_values_degrade_instead_of_failing() {
        let j: JobData = serde_json::from_str(
            r#"{"jobId": "7", "stageIds": [1, "x", 2.0, -3], "status": null, "extra": {"a": 1}}"#,
        )
        .unwrap();
        assert_eq!(j.job_id, 7);
        assert_eq!(j.stage_ids, vec![1, 2]);
        let s: StageData =
            serde_json::from_str(r#"{"stageId": 3, "numTasks": -1, "inputBytes": null}"#).unwrap();
        assert_eq!((s.stage_id, s.num_tasks, s.input_bytes), (3, 0, 0));
        let a: ApplicationAttemptInfo = serde_json::from_str(r#"{"endTimeEpoch": null}"#).unwrap();
        assert_eq!(a.end_time_epoch, -1);
        let t: TaskMetricDistributions =
            serde_json::from_str(r#"{"quantiles": [0.5, 1.0], "duration": [3, "NaN?"]}"#).unwrap();
        assert_eq!(t.duration[0], 3.0);
        assert!(t.duration[1].is_nan());
    }
}
