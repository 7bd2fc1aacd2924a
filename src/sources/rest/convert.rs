//! Turns REST API values ([`super::api`]) into model observations ([`crate::model::obs`]).
//!
//! Pure functions, so every mapping (statuses, units, the `-1` and `1969` "not yet" times) is
//! tested without a server.

use crate::model::obs::{
    AppObs, AppPropsObs, EpochMs, ExecutorObs, JobObs, JobStatus, RddObs, ResourceProfileObs,
    SqlObs, SqlPlanObs, SqlStatus, StageObs, StageStatus, TaskCounts, TaskSummaryObs, TaskTotals,
};
use crate::model::plan::{AqeMetric, PlanGraph, PlanNode};

use super::api::{
    ApplicationEnvironmentInfo, ApplicationInfo, ExecutionData, ExecutionPlan, ExecutorSummary,
    JobData, RddStorageInfo, StageData, TaskMetricDistributions,
};

/// Parses Spark's REST time format, `2026-11-29T19:39:20.198GMT`, into epoch milliseconds.
///
/// Also takes a `Z` or `+00:00` suffix and a missing fraction. Times at or before the epoch
/// (Spark writes `1969-12-31T23:59:59.999GMT` for "not ended") and anything malformed give `None`.
pub fn parse_time(s: &str) -> Option<EpochMs> {
    let s = s.trim();
    let body = ["GMT", "Z", "+00:00", "UTC"]
        .iter()
        .find_map(|suffix| s.strip_suffix(suffix))
        .unwrap_or(s);
    let (date, time) = body.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let year: i64 = num(d.next()?, 4)?;
    let month: i64 = num(d.next()?, 2)?;
    let day: i64 = num(d.next()?, 2)?;
    let (hms, frac) = match time.split_once('.') {
        Some((hms, frac)) => (hms, frac),
        None => (time, ""),
    };
    let mut t = hms.splitn(3, ':');
    let hour: i64 = num(t.next()?, 2)?;
    let minute: i64 = num(t.next()?, 2)?;
    let second: i64 = num(t.next()?, 2)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Second 60 is a leap second; Java never prints one, but accept it rather than fail.
    if second > 60 || !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let millis = frac.bytes().take(3).enumerate().fold(0i64, |acc, (i, b)| {
        acc + i64::from(b - b'0') * [100, 10, 1][i]
    });
    let days = days_from_civil(year, month, day);
    let ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis;
    (ms > 0).then_some(ms)
}

/// Parses exactly `len` ASCII digits.
fn num(s: &str, len: usize) -> Option<i64> {
    if s.len() != len || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of `days` since 1970-01-01 (the inverse of
/// `days_from_civil`).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn time(s: &Option<String>) -> Option<EpochMs> {
    s.as_deref().and_then(parse_time)
}

fn non_empty(s: &Option<String>) -> Option<String> {
    s.as_ref().filter(|s| !s.is_empty()).cloned()
}

/// The application as the model wants it, from its newest attempt.
#[cfg(any(test, feature = "internals"))] // for the tests, benches and fuzz targets
pub fn app_obs(app: &ApplicationInfo) -> AppObs {
    attempt_obs(app, app.attempts.first())
}

/// One attempt `a` of `app`, under its model key (`{id}/{attempt}` when the attempt has an id,
/// see [`crate::model::app_key`]).
pub fn attempt_obs(
    app: &ApplicationInfo,
    a: Option<&super::api::ApplicationAttemptInfo>,
) -> AppObs {
    let attempt = a.and_then(|a| a.attempt_id.as_deref());
    AppObs {
        app_id: crate::model::app_key(&app.id, attempt),
        name: non_empty(&app.name),
        spark_version: a.and_then(|a| non_empty(&a.app_spark_version)),
        user: a.and_then(|a| non_empty(&a.spark_user)),
        start_ms: a.map(|a| a.start_time_epoch).filter(|t| *t > 0),
        end_ms: a
            .filter(|a| a.completed || a.end_time_epoch > 0)
            .map(|a| a.end_time_epoch)
            .filter(|t| *t > 0),
        // The REST API does not say how the driver exited.
        exit_code: None,
    }
}

/// Maps a job status; `UNKNOWN` (and anything unexpected) gives `None`: the model has no such
/// state and guessing would count a job as running or failed when it is neither.
pub fn job_status(s: &str) -> Option<JobStatus> {
    match s.to_ascii_uppercase().as_str() {
        "RUNNING" => Some(JobStatus::Running),
        "SUCCEEDED" => Some(JobStatus::Succeeded),
        "FAILED" => Some(JobStatus::Failed),
        _ => None,
    }
}

/// Maps a stage status; unknown strings give `None`.
pub fn stage_status(s: &str) -> Option<StageStatus> {
    match s.to_ascii_uppercase().as_str() {
        "ACTIVE" => Some(StageStatus::Active),
        "COMPLETE" => Some(StageStatus::Complete),
        "FAILED" => Some(StageStatus::Failed),
        "PENDING" => Some(StageStatus::Pending),
        "SKIPPED" => Some(StageStatus::Skipped),
        _ => None,
    }
}

/// Maps a SQL execution status; unknown strings give `None`.
pub fn sql_status(s: &str) -> Option<SqlStatus> {
    match s.to_ascii_uppercase().as_str() {
        "RUNNING" => Some(SqlStatus::Running),
        "COMPLETED" => Some(SqlStatus::Completed),
        "FAILED" => Some(SqlStatus::Failed),
        _ => None,
    }
}

/// A job observation; `None` when its status is `UNKNOWN` or unrecognised.
pub fn job_obs(j: &JobData) -> Option<JobObs> {
    let status = job_status(&j.status)?;
    Some(JobObs {
        job_id: j.job_id,
        job_group: non_empty(&j.job_group),
        description: non_empty(&j.description),
        status,
        submission_ms: time(&j.submission_time),
        completion_ms: if status.is_terminal() {
            time(&j.completion_time)
        } else {
            None
        },
        stage_ids: j.stage_ids.clone(),
        sql_execution_id: None,
        tags: j.job_tags.clone(),
        name: j.name.clone().filter(|n| !n.is_empty()),
        client_app: None,
    })
}

/// A stage-attempt observation with REST's cumulative totals; `None` for an unknown status.
/// REST stages carry no job group (the model derives it from the job's `stageIds`).
pub fn stage_obs(s: &StageData) -> Option<StageObs> {
    let status = stage_status(&s.status)?;
    Some(StageObs {
        stage_id: s.stage_id,
        attempt: u32::try_from(s.attempt_id).unwrap_or(u32::MAX),
        status,
        name: non_empty(&s.name),
        job_group: None,
        description: non_empty(&s.description),
        num_tasks: Some(s.num_tasks),
        active_tasks: Some(s.num_active_tasks),
        submission_ms: time(&s.submission_time),
        completion_ms: time(&s.completion_time),
        task_counts: Some(TaskCounts {
            succeeded: s.num_complete_tasks,
            failed: s.num_failed_tasks,
            killed: s.num_killed_tasks,
        }),
        totals: Some(TaskTotals {
            run_time_ms: s.executor_run_time,
            cpu_time_ns: s.executor_cpu_time,
            gc_time_ms: s.jvm_gc_time,
            input_bytes: s.input_bytes,
            output_bytes: s.output_bytes,
            shuffle_read_bytes: s.shuffle_read_bytes,
            shuffle_write_bytes: s.shuffle_write_bytes,
            memory_spilled_bytes: s.memory_bytes_spilled,
            disk_spilled_bytes: s.disk_bytes_spilled,
            deserialize_ms: s.executor_deserialize_time,
            fetch_wait_ms: s.shuffle_fetch_wait_time,
            peak_execution_memory_bytes: s.peak_execution_memory,
            // REST has no stage total of it: event logs only.
            scheduler_delay_ms: 0,
        }),
    })
}

/// An executor observation.
pub fn executor_obs(e: &ExecutorSummary) -> ExecutorObs {
    ExecutorObs {
        executor_id: e.id.clone(),
        active: e.is_active,
        remove_reason: non_empty(&e.remove_reason),
        add_ms: time(&e.add_time),
        remove_ms: time(&e.remove_time),
        max_tasks: Some(e.max_tasks),
        total_cores: e.total_cores,
        active_tasks: Some(e.active_tasks),
        completed_tasks: Some(e.completed_tasks),
        failed_tasks: Some(e.failed_tasks),
        task_time_ms: Some(e.total_duration),
        gc_time_ms: Some(e.total_gc_time),
        input_bytes: Some(e.total_input_bytes),
        shuffle_read_bytes: Some(e.total_shuffle_read),
        shuffle_write_bytes: Some(e.total_shuffle_write),
        storage_memory_used_bytes: Some(e.memory_used),
        max_memory_bytes: Some(e.max_memory),
        disk_used_bytes: Some(e.disk_used),
        peak_memory: e
            .peak_memory_metrics
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
        resource_profile_id: e.resource_profile_id,
    }
}

/// The cached datasets of `/storage/rdd`.
pub fn rdd_obs(list: &[RddStorageInfo]) -> Vec<RddObs> {
    list.iter()
        .map(|r| RddObs {
            rdd_id: r.id,
            name: r.name.clone(),
            partitions: r.num_partitions,
            cached_partitions: r.num_cached_partitions,
            memory_bytes: r.memory_used,
            disk_bytes: r.disk_used,
        })
        .collect()
}

/// The application properties the model uses, from `/environment`: every Spark property
/// (`spark.task.cpus` when it is a positive integer) and the resource profiles.
pub fn app_props_obs(env: &ApplicationEnvironmentInfo) -> AppPropsObs {
    let mut p = AppPropsObs::from_properties(env.spark_properties.iter().cloned().collect());
    p.profiles = env
        .resource_profiles
        .iter()
        .map(|r| {
            ResourceProfileObs::from_requests(
                r.id,
                r.executor_resources
                    .iter()
                    .filter_map(|(k, q)| Some((k.as_str(), q.amount?))),
            )
        })
        .collect();
    p
}

/// A SQL execution observation; `None` for an unknown status. A running execution's `duration`
/// is "time so far", so it is only passed on once the execution has ended.
pub fn sql_obs(e: &ExecutionData) -> Option<SqlObs> {
    let status = sql_status(&e.status)?;
    Some(SqlObs {
        execution_id: e.id,
        description: non_empty(&e.description),
        status,
        submission_ms: time(&e.submission_time),
        duration_ms: status.is_terminal().then_some(e.duration),
        job_ids: e
            .running_job_ids
            .iter()
            .chain(&e.success_job_ids)
            .chain(&e.failed_job_ids)
            .copied()
            .collect(),
    })
}

/// The plan graph REST serves for an execution, as the model reads it: the nodes without
/// `WholeStageCodegen` clusters (REST lists them as nodes with no edges), children from the
/// edges (`fromId` child, `toId` parent; edges to unknown nodes dropped), and adaptive
/// execution's metrics with their values (`1,234` reads as 1234).
pub fn plan_graph(p: &ExecutionPlan) -> PlanGraph {
    let mut index: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    let mut g = PlanGraph::default();
    for n in &p.nodes {
        if n.node_name.trim().starts_with("WholeStageCodegen") || index.contains_key(&n.node_id) {
            continue;
        }
        index.insert(n.node_id, g.nodes.len() as u32);
        g.nodes.push(PlanNode {
            name: n.node_name.trim().to_string(),
            children: vec![],
            aqe: n
                .metrics
                .iter()
                .filter_map(|m| {
                    let which = AqeMetric::from_name(&m.name)?;
                    let v: String = m.value.chars().filter(|c| *c != ',').collect();
                    Some((which, v.trim().parse().ok()?))
                })
                .collect(),
        });
    }
    for e in &p.edges {
        if let (Some(&child), Some(&parent)) = (index.get(&e.from_id), index.get(&e.to_id)) {
            g.nodes[parent as usize].children.push(child);
        }
    }
    g
}

/// The final plan of an ended execution (`None` when the answer has no nodes: Spark sent
/// no graph).
pub fn sql_plan_obs(p: &ExecutionPlan) -> Option<SqlPlanObs> {
    let g = plan_graph(p);
    if g.nodes.is_empty() {
        return None;
    }
    let (mut plan, aqe) = g.summarize();
    for (m, v) in aqe {
        plan.add_aqe(m, v);
    }
    Some(SqlPlanObs {
        execution_id: p.id,
        plan,
    })
}

/// Median and maximum task duration from a summary fetched with `quantiles=0.5,1.0`, taken
/// after the stage attempt `ended` or not. Falls back to executor run time where `duration` is
/// missing (Spark before 3.1); `None` if neither is usable.
pub fn task_summary_obs(t: &TaskMetricDistributions, ended: bool) -> Option<TaskSummaryObs> {
    let of_duration = t.duration.len() == t.quantiles.len() && !t.duration.is_empty();
    let series = if of_duration {
        &t.duration
    } else {
        &t.executor_run_time
    };
    let at = |q: f64| {
        let i = t.quantiles.iter().position(|x| (x - q).abs() < 1e-9)?;
        series
            .get(i)
            .copied()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    Some(TaskSummaryObs {
        median_ms: at(0.5)?,
        max_ms: at(1.0)?,
        ended,
        of_duration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAP: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/spark-4.1.1-basic/rest-snapshots/0009"
    );

    fn load<T: serde::de::DeserializeOwned>(file: &str) -> T {
        serde_json::from_str(&std::fs::read_to_string(format!("{SNAP}/{file}")).unwrap()).unwrap()
    }

    #[test]
    fn parses_spark_times() {
        assert_eq!(
            parse_time("2026-11-29T19:38:55.073GMT"),
            Some(1795981135073)
        );
        assert_eq!(parse_time("1970-01-01T00:00:01.000GMT"), Some(1000));
        assert_eq!(parse_time("2000-02-29T00:00:00Z"), Some(951782400000));
        assert_eq!(parse_time("2026-11-29T19:38:55.07GMT"), Some(1795981135070));
        assert_eq!(parse_time("1969-12-31T23:59:59.999GMT"), None);
        for bad in [
            "",
            "2026-11-29",
            "2026-13-01T00:00:00GMT",
            "2026-1-01T00:00:00GMT",
            "x",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        assert_eq!(parse_time("2026-11-29T19:38:55.0a3GMT"), None);
    }

    #[test]
    fn app_from_recorded_snapshot() {
        let app: ApplicationInfo = load("app.json");
        let o = app_obs(&app);
        assert_eq!(o.app_id, "local-1795981136444");
        assert_eq!(o.name.as_deref(), Some("acceptance-basic"));
        assert_eq!(o.spark_version.as_deref(), Some("4.1.1"));
        assert_eq!(o.user.as_deref(), Some("root"));
        assert_eq!(o.start_ms, Some(1795981135073));
        assert_eq!(o.end_ms, None, "endTimeEpoch -1 means running");
        let mut done = app.clone();
        done.attempts[0].completed = true;
        done.attempts[0].end_time_epoch = 1795981170000;
        assert_eq!(app_obs(&done).end_ms, Some(1795981170000));
    }

    #[test]
    fn jobs_from_recorded_snapshot() {
        let jobs: Vec<JobData> = load("jobs.json");
        let obs: Vec<JobObs> = jobs.iter().filter_map(job_obs).collect();
        assert_eq!(obs.len(), 15);
        let j14 = obs.iter().find(|j| j.job_id == 14).unwrap();
        assert_eq!(j14.status, JobStatus::Failed);
        assert_eq!(j14.job_group.as_deref(), Some("failing_job"));
        assert_eq!(
            j14.description.as_deref(),
            Some("This job fails on purpose")
        );
        assert_eq!(j14.submission_ms, parse_time("2026-11-29T19:39:20.198GMT"));
        assert_eq!(j14.completion_ms, parse_time("2026-11-29T19:39:20.814GMT"));
        assert_eq!(j14.stage_ids, vec![19]);
        assert_eq!(j14.sql_execution_id, None);
        let mut unknown = jobs[0].clone();
        unknown.status = "UNKNOWN".into();
        assert!(job_obs(&unknown).is_none());
    }

    #[test]
    fn stages_from_recorded_snapshot() {
        let stages: Vec<StageData> = load("stages.json");
        let s19 = stages
            .iter()
            .find(|s| s.stage_id == 19)
            .and_then(stage_obs)
            .unwrap();
        assert_eq!((s19.status, s19.attempt), (StageStatus::Failed, 0));
        assert_eq!(s19.job_group, None);
        assert_eq!(
            s19.description.as_deref(),
            Some("This job fails on purpose")
        );
        assert_eq!(s19.num_tasks, Some(4));
        assert_eq!(
            s19.task_counts,
            Some(TaskCounts {
                succeeded: 3,
                failed: 2,
                killed: 0
            })
        );
        let t = s19.totals.unwrap();
        assert_eq!((t.run_time_ms, t.cpu_time_ns), (1074, 7958514));
        let skipped = stages
            .iter()
            .find(|s| s.stage_id == 16)
            .and_then(stage_obs)
            .unwrap();
        assert_eq!(skipped.status, StageStatus::Skipped);
        assert_eq!(skipped.completion_ms, None);
        let with_input = stages
            .iter()
            .filter_map(stage_obs)
            .map(|s| s.totals.unwrap());
        assert!(with_input.clone().any(|t| t.input_bytes > 0));
        assert!(with_input.clone().any(|t| t.shuffle_write_bytes > 0));
        assert_eq!(stage_status("pending"), Some(StageStatus::Pending));
        assert_eq!(stage_status("BOGUS"), None);
    }

    #[test]
    fn executors_and_sql_from_recorded_snapshot() {
        let ex: Vec<ExecutorSummary> = load("allexecutors.json");
        let d = executor_obs(&ex[0]);
        assert_eq!(d.executor_id, "driver");
        assert_eq!(d.active, Some(true));
        assert_eq!(d.add_ms, parse_time("2026-11-29T19:38:56.581GMT"));
        assert_eq!((d.completed_tasks, d.failed_tasks), (Some(32), Some(2)));
        assert_eq!((d.task_time_ms, d.gc_time_ms), (Some(28182), Some(373)));
        assert_eq!(d.storage_memory_used_bytes, Some(5187762));
        assert_eq!(d.max_memory_bytes, Some(455501414));
        assert!(d.peak_memory.contains(&("JVMHeapMemory".into(), 285334280)));

        let sql: Vec<ExecutionData> = load("sql__details-false.json");
        let s0 = sql_obs(&sql[0]).unwrap();
        assert_eq!(s0.status, SqlStatus::Completed);
        assert_eq!(s0.description.as_deref(), Some("Load orders for region EU"));
        assert_eq!(s0.submission_ms, parse_time("2026-11-29T19:39:03.730GMT"));
        assert_eq!(s0.duration_ms, Some(4755));
        let mut running = sql[0].clone();
        running.status = "RUNNING".into();
        assert_eq!(sql_obs(&running).unwrap().duration_ms, None);
    }

    #[test]
    fn task_summary_picks_median_and_max() {
        let t: TaskMetricDistributions = serde_json::from_str(
            r#"{"quantiles":[0.5,1.0],"duration":[120.0,900.0],"executorRunTime":[1.0,2.0]}"#,
        )
        .unwrap();
        let s = task_summary_obs(&t, true).unwrap();
        assert_eq!((s.median_ms, s.max_ms), (120.0, 900.0));
        assert!(s.ended && s.of_duration);
        let old: TaskMetricDistributions =
            serde_json::from_str(r#"{"quantiles":[0.5,1.0],"executorRunTime":[10.0,20.0]}"#)
                .unwrap();
        let s = task_summary_obs(&old, false).unwrap();
        assert_eq!((s.median_ms, s.max_ms), (10.0, 20.0));
        assert!(
            !s.ended && !s.of_duration,
            "the fallback never feeds the histogram"
        );
        let wrong: TaskMetricDistributions =
            serde_json::from_str(r#"{"quantiles":[0.25],"duration":[1.0]}"#).unwrap();
        assert!(task_summary_obs(&wrong, true).is_none());
    }
}

#[cfg(test)]
mod connect_tests {
    use super::*;
    use crate::config::Settings;
    use crate::model::attribution::Attribution;

    /// REST `jobs` of a real Spark Connect 4.1.1 server (scripts/connect-fixture.sh): each job's
    /// group comes from the user's tag in `jobTags`, and its description is no plan dump.
    #[test]
    fn rest_connect_jobs_take_the_users_tag() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/connect-4.1.1/rest/jobs.json"
        );
        let jobs: Vec<JobData> =
            serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
        let a = Attribution::new(&Settings::default().labels);
        let mut groups: Vec<String> = jobs
            .iter()
            .filter_map(job_obs)
            .map(|j| {
                let d = crate::model::attribution::readable_description(
                    j.description.as_deref(),
                    j.name.as_deref(),
                );
                assert!(d.as_deref().is_some_and(|d| !d.contains("plan {")), "{d:?}");
                a.group(&j).map(|g| g.into_owned()).unwrap_or_default()
            })
            .collect();
        groups.sort();
        assert_eq!(
            groups,
            [
                "adhoc_report",
                "nightly_etl",
                "nightly_etl",
                "nightly_etl",
                "nightly_etl"
            ]
        );
    }
}

#[cfg(test)]
mod environment_tests {
    use super::*;

    /// `/environment` as Spark 4.1.1 serves it (`tests/data/diagnosis-4.1.1`), and malformed
    /// profiles: never a panic, what makes sense is kept.
    #[test]
    fn environment_gives_every_property_and_the_profiles_memory() {
        let text = r#"{"sparkProperties": [["spark.master", "local-cluster[2,1,1024]"],
            ["spark.task.cpus", "2"], ["odd"]],
            "resourceProfiles": [
              {"id": 0, "executorResources": {
                "memory": {"resourceName": "memory", "amount": 512, "discoveryScript": "", "vendor": ""},
                "offHeap": {"resourceName": "offHeap", "amount": 0, "discoveryScript": "", "vendor": ""}},
               "taskResources": {"cpus": {"resourceName": "cpus", "amount": 1.0}}},
              {"id": 2, "executorResources": {"memory": {"amount": "lots"},
                "memoryOverhead": {"amount": 300}}},
              {"id": 3, "executorResources": {"memory": 7}},
              {"executorResources": {}}]}"#;
        let env: ApplicationEnvironmentInfo = serde_json::from_str(text).expect("lenient");
        let p = app_props_obs(&env);
        assert_eq!(p.task_cpus, Some(2));
        let props = p.properties.expect("properties");
        assert_eq!(props["spark.master"], "local-cluster[2,1,1024]");
        assert_eq!(props.len(), 2, "the malformed pair is dropped");
        assert_eq!(
            p.profiles,
            [
                ResourceProfileObs {
                    id: 0,
                    memory_mib: Some(512),
                    off_heap_mib: Some(0),
                    ..Default::default()
                },
                ResourceProfileObs {
                    id: 2,
                    overhead_mib: Some(300),
                    ..Default::default()
                },
                ResourceProfileObs {
                    id: 3,
                    ..Default::default()
                },
            ],
            "a profile without an id is dropped"
        );
        let ex: ExecutorSummary =
            serde_json::from_str(r#"{"id": "1", "resourceProfileId": 2}"#).expect("executor");
        assert_eq!(executor_obs(&ex).resource_profile_id, Some(2));
        let ex: ExecutorSummary =
            serde_json::from_str(r#"{"id": "1", "resourceProfileId": "x"}"#).expect("lenient");
        assert_eq!(executor_obs(&ex).resource_profile_id, None);
    }
}
