//! What the exporter should export, computed from the Spark REST API alone; the label rewriting
//! it applies; the HTTP helpers that read the API.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::report::Failures;

/// GET `url`: status and body.
pub async fn get(http: &reqwest::Client, url: &str) -> Result<(u16, String), String> {
    let r = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let code = r.status().as_u16();
    let body = r
        .text()
        .await
        .map_err(|e| format!("GET {url}: body: {e}"))?;
    Ok((code, body))
}

/// GET `url`, keep the body in `dir/file` for post-mortems, and decode it (200 only).
pub async fn get_json(
    http: &reqwest::Client,
    url: &str,
    dir: &Path,
    file: &str,
) -> Result<Value, String> {
    let (code, body) = get(http, url).await?;
    fs::write(dir.join(file), &body).ok();
    if code != 200 {
        return Err(format!("GET {url}: HTTP {code}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("GET {url}: {e}"))
}

/// Values keyed by a rendered label set such as `{job_group="a",status="failed"}`; zeros are
/// left out, so an absent series and a series at 0 are the same.
pub type Series = BTreeMap<String, f64>;

/// What the exporter should export, computed from the REST API alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    pub app_id: String,
    pub app_name: String,
    pub app_info: Series,
    pub jobs: Series,
    pub stages: Series,
    pub tasks: Series,
    pub run_time: Series,
    pub gc_time: Series,
    pub executor_tasks: Series,
    /// Per executor: the sum over stage attempts of `executorSummary[id].taskTime`, i.e. of the
    /// durations of the executor's tasks (what `/allexecutors` reports for executors other
    /// than the live driver).
    pub executor_task_sum: Series,
    pub sql: Series,
}

/// Executor GC and task time as one `/allexecutors` response gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecTimes {
    pub gc: Series,
    pub task_time: Series,
}

/// Executor times of one `/allexecutors` response.
pub fn exec_times(execs: &Value) -> ExecTimes {
    let (mut gc, mut task_time) = (Series::new(), Series::new());
    for e in arr(execs) {
        let k = key(&[("executor_id", s(&e["id"]))]);
        gc.insert(k.clone(), n(&e["totalGCTime"]) / 1000.0);
        task_time.insert(k, n(&e["totalDuration"]) / 1000.0);
    }
    ExecTimes {
        gc: nonzero(gc),
        task_time: nonzero(task_time),
    }
}

impl Truth {
    /// What changed from `self` to `other`, one line per value.
    pub fn diff(&self, other: &Truth) -> String {
        let mut f = Failures::default();
        for (name, a, b) in [
            ("app_info", &self.app_info, &other.app_info),
            ("jobs", &self.jobs, &other.jobs),
            ("stages", &self.stages, &other.stages),
            ("tasks", &self.tasks, &other.tasks),
            ("run_time", &self.run_time, &other.run_time),
            ("gc_time", &self.gc_time, &other.gc_time),
            (
                "executor_tasks",
                &self.executor_tasks,
                &other.executor_tasks,
            ),
            (
                "executor_task_sum",
                &self.executor_task_sum,
                &other.executor_task_sum,
            ),
            ("sql", &self.sql, &other.sql),
        ] {
            f.compare(name, a, b);
        }
        f.0.join("\n")
    }
}

/// Read the REST API straight from Spark and compute the expected values.
pub async fn fetch_rest(
    http: &reqwest::Client,
    url: &str,
    app_id: &str,
    dir: &Path,
) -> Result<Truth, String> {
    let api = format!("{url}/api/v1/applications");
    let apps = get_json(http, &api, dir, "rest-applications.json").await?;
    let base = format!("{api}/{app_id}");
    let jobs = get_json(http, &format!("{base}/jobs"), dir, "rest-jobs.json").await?;
    let stages = get_json(
        http,
        &format!("{base}/stages?details=false"),
        dir,
        "rest-stages.json",
    )
    .await?;
    let detailed = get_json(
        http,
        &format!("{base}/stages?details=true"),
        dir,
        "rest-stages-details.json",
    )
    .await?;
    let execs = get_json(
        http,
        &format!("{base}/allexecutors"),
        dir,
        "rest-allexecutors.json",
    )
    .await?;
    let sql = get_json(
        http,
        &format!("{base}/sql?details=false"),
        dir,
        "rest-sql.json",
    )
    .await?;
    truth(app_id, &apps, &jobs, &stages, &detailed, &execs, &sql)
}

/// A JSON array as a slice (empty for anything else).
pub fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}
/// A JSON string (empty for anything else).
pub fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}
/// A JSON number (0 for anything else).
pub fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Add `v` to the series at `k`.
pub fn add(m: &mut Series, k: String, v: f64) {
    *m.entry(k).or_default() += v;
}

/// Drop the zeros: absent and 0 are the same.
pub fn nonzero(mut m: Series) -> Series {
    m.retain(|_, v| *v != 0.0);
    m
}

/// Expected values from the REST responses. Spark must be idle: a running job or an active stage
/// is an error, not something to compare.
pub fn truth(
    app_id: &str,
    apps: &Value,
    jobs: &Value,
    stages: &Value,
    detailed: &Value,
    execs: &Value,
    sql: &Value,
) -> Result<Truth, String> {
    let app = arr(apps)
        .iter()
        .find(|a| s(&a["id"]) == app_id)
        .ok_or_else(|| format!("{app_id} not in /applications"))?;
    let attempt = &app["attempts"][0];
    let app_name = s(&app["name"]).to_string();
    let app_info = Series::from([(
        key(&[
            ("app_id", app_id),
            ("app_name", &app_name),
            ("spark_version", s(&attempt["appSparkVersion"])),
            ("user", s(&attempt["sparkUser"])),
        ]),
        1.0,
    )]);

    let (t_jobs, stage_group) = job_truth(jobs)?;
    let StageTruth {
        stages: t_stages,
        tasks: t_tasks,
        run_time: t_run,
        gc_time: t_gc,
    } = stage_truth(stages, &stage_group)?;
    let (tasks, task_sum) = executor_truth(detailed, execs);
    let t_sql = sql_truth(sql)?;

    Ok(Truth {
        app_id: app_id.to_string(),
        app_name,
        app_info,
        jobs: nonzero(t_jobs),
        stages: nonzero(t_stages),
        tasks: nonzero(t_tasks),
        run_time: nonzero(t_run),
        gc_time: nonzero(t_gc),
        executor_tasks: nonzero(tasks),
        executor_task_sum: nonzero(task_sum),
        sql: nonzero(t_sql),
    })
}

/// Jobs per group, description and status, and the job group of each stage: that of the first
/// (lowest id) job listing it.
fn job_truth(jobs: &Value) -> Result<(Series, BTreeMap<u64, String>), String> {
    let mut t_jobs = Series::new();
    let mut stage_group: BTreeMap<u64, String> = BTreeMap::new();
    let mut sorted: Vec<&Value> = arr(jobs).iter().collect();
    sorted.sort_by_key(|j| j["jobId"].as_u64());
    for j in sorted {
        let group = crate::support::groups::rest_job_group(j, rewrite);
        let status = match s(&j["status"]) {
            "SUCCEEDED" => "succeeded",
            "FAILED" => "failed",
            other => return Err(format!("job {} is {other}: Spark is not idle", j["jobId"])),
        };
        add(
            &mut t_jobs,
            key(&[
                ("job_group", &group),
                ("job_description", &rewrite(s(&j["description"]))),
                ("status", status),
            ]),
            1.0,
        );
        for id in arr(&j["stageIds"]) {
            stage_group
                .entry(id.as_u64().unwrap_or(u64::MAX))
                .or_insert_with(|| group.clone());
        }
    }
    Ok((t_jobs, stage_group))
}

/// The per-job-group series computed from `/stages` (not yet stripped of zeros).
struct StageTruth {
    stages: Series,
    tasks: Series,
    run_time: Series,
    gc_time: Series,
}

/// Stages, tasks, run and GC time per job group, from `/stages`.
fn stage_truth(stages: &Value, stage_group: &BTreeMap<u64, String>) -> Result<StageTruth, String> {
    let (mut t_stages, mut t_tasks, mut t_run, mut t_gc) =
        (Series::new(), Series::new(), Series::new(), Series::new());
    for st in arr(stages) {
        let id = st["stageId"].as_u64().unwrap_or(u64::MAX);
        let group = stage_group
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("<stage {id} is in no job>"));
        let status = match s(&st["status"]) {
            "COMPLETE" => "complete",
            "FAILED" => "failed",
            "SKIPPED" => "skipped",
            other => return Err(format!("stage {id} is {other}: Spark is not idle")),
        };
        add(
            &mut t_stages,
            key(&[("job_group", &group), ("status", status)]),
            1.0,
        );
        for (field, status) in [
            ("numCompleteTasks", "succeeded"),
            ("numFailedTasks", "failed"),
            ("numKilledTasks", "killed"),
        ] {
            add(
                &mut t_tasks,
                key(&[("job_group", &group), ("status", status)]),
                n(&st[field]),
            );
        }
        add(
            &mut t_run,
            key(&[("job_group", &group)]),
            n(&st["executorRunTime"]) / 1000.0,
        );
        add(
            &mut t_gc,
            key(&[("job_group", &group)]),
            n(&st["jvmGcTime"]) / 1000.0,
        );
    }
    Ok(StageTruth {
        stages: t_stages,
        tasks: t_tasks,
        run_time: t_run,
        gc_time: t_gc,
    })
}

/// Per executor: tasks by status (`/allexecutors`), and the summed task time of the detailed
/// stage attempts.
fn executor_truth(detailed: &Value, execs: &Value) -> (Series, Series) {
    let mut task_sum = Series::new();
    for st in arr(detailed) {
        for (id, summary) in st["executorSummary"].as_object().into_iter().flatten() {
            add(
                &mut task_sum,
                key(&[("executor_id", id)]),
                n(&summary["taskTime"]) / 1000.0,
            );
        }
    }

    let mut tasks = Series::new();
    for e in arr(execs) {
        let id = s(&e["id"]);
        tasks.insert(
            key(&[("executor_id", id), ("status", "completed")]),
            n(&e["completedTasks"]),
        );
        tasks.insert(
            key(&[("executor_id", id), ("status", "failed")]),
            n(&e["failedTasks"]),
        );
    }
    (tasks, task_sum)
}

/// SQL executions per description and status.
fn sql_truth(sql: &Value) -> Result<Series, String> {
    let mut t_sql = Series::new();
    for x in arr(sql) {
        let status = match s(&x["status"]) {
            "COMPLETED" => "completed",
            "FAILED" => "failed",
            other => {
                return Err(format!(
                    "SQL execution {} is {other}: Spark is not idle",
                    x["id"]
                ))
            }
        };
        add(
            &mut t_sql,
            key(&[
                ("description", &rewrite(s(&x["description"]))),
                ("status", status),
            ]),
            1.0,
        );
    }
    Ok(t_sql)
}

/// The exporter's documented default label rewriting (docs/configuration.md: application ids,
/// UUIDs, dates, times, runs of 5+ digits, hex runs, then numbers standing alone; a number of up
/// to four digits inside a word stays), written out here so the test does not trust the code it
/// checks: the rules with a look-ahead are applied here until nothing changes instead. Values
/// are trimmed and cut to 120 characters.
pub fn rewrite(raw: &str) -> String {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (
                r"(?:app|driver)-\d{14}-\d{4,}|application_\d{10,}_\d{4,}|local-\d{10,}",
                "{app_id}",
            ),
            (
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                "{uuid}",
            ),
            (
                r"\d{4}(?:-\d{2}-\d{2}|_\d{2}_\d{2}|/\d{2}/\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
                "{date}",
            ),
            (
                r"(^|[^0-9])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?($|[^0-9])",
                "${1}{time}${2}",
            ),
            (r"\d{5,}", "{n}"),
            (
                r"(^|[^0-9A-Za-z])(?:0x)?[0-9a-fA-F]{8,}($|[^0-9A-Za-z])",
                "${1}{hex}${2}",
            ),
            (
                r"(^|[^A-Za-z0-9_-])[0-9_-]*[0-9][0-9_-]*($|[^A-Za-z0-9_-])",
                "${1}{n}${2}",
            ),
        ]
        .into_iter()
        .map(|(p, r)| (Regex::new(p).unwrap(), r))
        .collect()
    });
    let mut v = raw.trim().to_string();
    for (re, rep) in rules {
        loop {
            let next = re.replace_all(&v, *rep).into_owned();
            if next == v {
                break;
            }
            v = next;
        }
    }
    if v.chars().count() > 120 {
        v = v.chars().take(119).chain(['…']).collect();
    }
    v
}

/// A label set rendered the way diffs print it.
pub fn key(labels: &[(&str, &str)]) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_follows_the_documented_defaults() {
        assert_eq!(rewrite("revenue for 2026-11-01"), "revenue for {date}");
        assert_eq!(
            rewrite("Sort wide rows batch 7"),
            "Sort wide rows batch {n}"
        );
        assert_eq!(
            rewrite("run 123e4567-e89b-12d3-a456-426614174000"),
            "run {uuid}"
        );
        assert_eq!(rewrite("sha deadbeef01"), "sha {hex}");
        assert_eq!(rewrite("id 1234567890"), "id {n}");
        assert_eq!(rewrite("q01 1 2"), "q01 {n} {n}");
        assert_eq!(
            rewrite("collect at /tmp/e2e/x.py:42"),
            "collect at /tmp/e2e/x.py:{n}"
        );
        assert_eq!(
            rewrite("  Load orders for region EU "),
            "Load orders for region EU"
        );
    }

    #[test]
    fn truth_from_a_recorded_snapshot() {
        // Spark 4.1.1 REST responses recorded from a similar application (tests/data).
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/spark-4.1.1-basic/rest-snapshots/0009"
        );
        let read = |f: &str| -> Value {
            serde_json::from_str(&fs::read_to_string(format!("{dir}/{f}")).unwrap()).unwrap()
        };
        let apps = Value::Array(vec![read("app.json")]);
        let t = truth(
            "local-1795981136444",
            &apps,
            &read("jobs.json"),
            &read("stages.json"),
            &Value::Array(vec![]),
            &read("allexecutors.json"),
            &read("sql__details-false.json"),
        )
        .unwrap();
        let g = |group: &str, status: &str| key(&[("job_group", group), ("status", status)]);
        let job = |group: &str, desc: &str, status: &str| {
            key(&[
                ("job_group", group),
                ("job_description", desc),
                ("status", status),
            ])
        };
        assert_eq!(
            t.jobs
                .get(&job("daily_report", "revenue for {date}", "succeeded")),
            Some(&6.0)
        );
        assert_eq!(
            t.jobs
                .get(&job("failing_job", "This job fails on purpose", "failed")),
            Some(&1.0)
        );
        assert_eq!(t.jobs.values().sum::<f64>(), 15.0);
        // Stages 4..17 belong to daily_report; 7, 10, 13 and 16 were skipped.
        assert_eq!(t.stages.get(&g("daily_report", "complete")), Some(&10.0));
        assert_eq!(t.stages.get(&g("daily_report", "skipped")), Some(&4.0));
        assert_eq!(t.stages.get(&g("failing_job", "failed")), Some(&1.0));
        assert_eq!(t.tasks.get(&g("failing_job", "failed")), Some(&2.0));
        assert_eq!(t.tasks.get(&g("failing_job", "succeeded")), Some(&3.0));
        assert_eq!(t.tasks.get(&g("failing_job", "killed")), None);
        assert_eq!(
            t.run_time.get(&key(&[("job_group", "ingest_orders")])),
            Some(&1.868)
        );
        assert_eq!(
            t.executor_tasks
                .get(&key(&[("executor_id", "driver"), ("status", "failed")])),
            Some(&2.0)
        );
        assert_eq!(
            t.sql.get(&key(&[
                ("description", "revenue for {date}"),
                ("status", "completed")
            ])),
            Some(&3.0)
        );
        assert_eq!(t.app_info.len(), 1);

        // A mismatch, a missing and an extra series are all reported; equal series are not.
        let mut f = Failures::default();
        let want = Series::from([("a".into(), 1.0), ("b".into(), 0.25)]);
        f.compare("same", &want, &want.clone());
        assert!(f.0.is_empty());
        f.compare(
            "differs",
            &want,
            &Series::from([("a".into(), 2.0), ("c".into(), 1.0)]),
        );
        assert_eq!(f.0.len(), 1);
        assert_eq!(f.0[0].matches('✗').count(), 3, "{}", f.0[0]);
    }
}
