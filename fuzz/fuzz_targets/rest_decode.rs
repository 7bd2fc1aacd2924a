//! Any bytes as a Spark REST response body: decoded as the client does (`serde_json::from_slice`
//! into the `api` types) for every endpoint the poller reads, then converted to observations.
//! Nothing may panic, and `parse_time` takes any string.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spark_exporter::sources::rest::api::{
    ApplicationInfo, ExecutionData, ExecutorSummary, JobData, StageData, TaskMetricDistributions,
};
use spark_exporter::sources::rest::convert;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<Vec<ApplicationInfo>>(data) {
        v.iter().for_each(|a| drop(convert::app_obs(a)));
    }
    if let Ok(v) = serde_json::from_slice::<Vec<JobData>>(data) {
        v.iter().for_each(|j| drop(convert::job_obs(j)));
    }
    if let Ok(v) = serde_json::from_slice::<Vec<StageData>>(data) {
        v.iter().for_each(|s| drop(convert::stage_obs(s)));
    }
    if let Ok(v) = serde_json::from_slice::<Vec<ExecutorSummary>>(data) {
        v.iter().for_each(|e| drop(convert::executor_obs(e)));
    }
    if let Ok(v) = serde_json::from_slice::<Vec<ExecutionData>>(data) {
        v.iter().for_each(|e| drop(convert::sql_obs(e)));
    }
    if let Ok(t) = serde_json::from_slice::<TaskMetricDistributions>(data) {
        let _ = convert::task_summary_obs(&t);
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = convert::parse_time(s);
    }
});
