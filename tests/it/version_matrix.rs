//! The Spark version matrix: one run of the same small PySpark application on each supported
//! Spark minor version (`tests/data/versions/spark-<version>/`, written by
//! `scripts/fixtures-versions.sh` with real PySpark; replayed here, never regenerated), each with
//! its event log and the REST API its live driver served once every job had ended.
//!
//! For every fixture, Spark's own numbers (the REST snapshot: jobs by status per `jobGroup`,
//! stage attempts by status and their task counts per job group, SQL executions by status) must
//! equal, exactly,
//! - `dump --event-log` of the run's event log, and
//! - `dump --spark.url` against the fake Spark REST server serving the snapshot.
//!
//! A job's group is its job group, else the user's job tag (on 3.5+, the jobs under the tag
//! `nightly_etl`, which have no job group), else its call site (`count at
//! versions_workload.py:142`): `labels.job_group_from`'s default (`tests/support/groups.rs`).
//! Except a broadcast exchange's job on Spark 3.0-3.4: Spark runs it under
//! `setJobGroup(<runId>, "broadcast exchange (runId <runId>)")`, replacing the user's group, so
//! the truth gives it the job group and description of the other jobs of its SQL execution (the
//! REST `/sql` execution whose job ids list it), as the user set them (the `broadcast_join`
//! step). On 3.5+ Spark keeps the user's group and marks the job with a
//! `broadcast exchange (runId <runId>)` job tag instead.
//!
//! Two Spark Connect logs (`tests/data/connect/`, 4.0.5 and 4.3.0) are checked for totals only.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use support::command::exporter_command;
use support::exposition::{diff, parse_exposition, Sample, Series};
use support::groups::{job_group, rest_job_group};
use support::rest::{AppData, FakeSpark};

/// The minor versions the README says are supported and tested.
const MINORS: [&str; 7] = ["3.3", "3.4", "3.5", "4.0", "4.1", "4.2", "4.3"];

/// One `tests/data/versions/spark-<version>/` folder.
struct Fixture {
    name: String,
    /// The event-log file.
    log: PathBuf,
    /// The REST snapshot folder.
    rest: PathBuf,
    meta: Value,
}

fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/versions");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let read = |f: &str| -> Value {
                let p = dir.join(f);
                serde_json::from_slice(
                    &std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
                )
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            };
            let meta = read("meta.json");
            let app_id = meta["app_id"].as_str().expect("meta.json app_id");
            let log = dir.join(format!("{app_id}.zstd"));
            assert!(log.is_file(), "{}: no event log", log.display());
            Fixture {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                log,
                rest: dir.join("rest"),
                meta,
            }
        })
        .collect()
}

/// A rendered label set, as [`diff`] prints it.
fn key(labels: &[(&str, &str)]) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(","))
}

fn add(m: &mut Series, k: String, v: f64) {
    *m.entry(k).or_default() += v;
}

/// One family per group and status: the named job groups exactly, and everything summed over
/// all groups under `job_group="*"`.
fn grouped(per_group: &BTreeMap<(String, String), f64>, named: &BTreeSet<String>) -> Series {
    let mut out = Series::new();
    for ((group, status), v) in per_group {
        if named.contains(group) {
            add(
                &mut out,
                key(&[("job_group", group), ("status", status)]),
                *v,
            );
        }
        add(&mut out, key(&[("job_group", "*"), ("status", status)]), *v);
    }
    out.retain(|_, v| *v != 0.0);
    out
}

/// What the exporter must show, from the REST snapshot alone (Spark's own bookkeeping).
struct Expected {
    app_id: String,
    spark_version: String,
    /// The job groups set with `setJobGroup` (none of them has a digit, so no rewriting).
    named: BTreeSet<String>,
    jobs: Series,
    stages: Series,
    tasks: Series,
    sql: Series,
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn lower(v: &Value) -> String {
    v.as_str().unwrap_or("").to_ascii_lowercase()
}

/// The job ids of REST SQL execution `e` (running, succeeded and failed).
fn execution_jobs(e: &Value) -> BTreeSet<u64> {
    ["runningJobIds", "successJobIds", "failedJobIds"]
        .iter()
        .flat_map(|k| arr(&e[*k]))
        .filter_map(Value::as_u64)
        .collect()
}

/// The `runId` of a broadcast exchange's job on Spark 3.0-3.4: REST job `j` whose description is
/// `broadcast exchange (runId <runId>)` and whose job group is that runId.
fn broadcast_run_id(j: &Value) -> Option<&str> {
    let run_id = j["description"]
        .as_str()?
        .strip_prefix("broadcast exchange (runId ")?
        .strip_suffix(')')?;
    (j["jobGroup"].as_str() == Some(run_id)).then_some(run_id)
}

/// Spark 3.0-3.4's broadcast jobs of snapshot `d`, each with the job group and description of
/// the other jobs of its SQL execution (they must agree): job id -> (group, description).
fn broadcast_owners(name: &str, d: &AppData) -> BTreeMap<u64, (Value, Value)> {
    let by_id: BTreeMap<u64, &Value> = d
        .jobs
        .iter()
        .map(|j| (j["jobId"].as_u64().unwrap(), j))
        .collect();
    let mut out = BTreeMap::new();
    for (&id, j) in &by_id {
        if broadcast_run_id(j).is_none() {
            continue;
        }
        let e = d
            .sql
            .iter()
            .find(|e| execution_jobs(e).contains(&id))
            .unwrap_or_else(|| panic!("{name}: broadcast job {id} is in no SQL execution"));
        let owners: Vec<(Value, Value)> = execution_jobs(e)
            .iter()
            .filter_map(|o| by_id.get(o))
            .filter(|o| broadcast_run_id(o).is_none())
            .map(|o| (o["jobGroup"].clone(), o["description"].clone()))
            .collect();
        assert!(
            !owners.is_empty() && owners.iter().all(|o| *o == owners[0]),
            "{name}: broadcast job {id}: the other jobs of SQL execution {}: {owners:?}",
            e["id"]
        );
        out.insert(id, owners[0].clone());
    }
    out
}

/// The REST jobs of `d`, each broadcast job of Spark 3.0-3.4 with its SQL execution's job group
/// and description ([`broadcast_owners`]).
fn attributed_jobs(name: &str, d: &AppData) -> Vec<Value> {
    let owners = broadcast_owners(name, d);
    d.jobs
        .iter()
        .map(|j| {
            let mut j = j.clone();
            if let Some((group, desc)) = owners.get(&j["jobId"].as_u64().unwrap()) {
                j["jobGroup"] = group.clone();
                j["description"] = desc.clone();
            }
            j
        })
        .collect()
}

fn expected(f: &Fixture) -> Expected {
    let d = AppData::from_dir(f.rest.to_str().unwrap());
    let all_jobs = attributed_jobs(&f.name, &d);
    let mut named = BTreeSet::new();
    let (mut jobs, mut stages, mut tasks) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    // A stage belongs to the group of the lowest job id that lists it.
    let mut sorted: Vec<&Value> = all_jobs.iter().collect();
    sorted.sort_by_key(|j| j["jobId"].as_u64());
    let mut stage_group: BTreeMap<u64, String> = BTreeMap::new();
    for j in sorted {
        let group = rest_job_group(j, |g| {
            assert!(
                !g.bytes().any(|b| b.is_ascii_digit()),
                "{}: group {g} would be rewritten",
                f.name
            );
            g.to_string()
        });
        if !group.is_empty() {
            named.insert(group.clone());
        }
        let status = lower(&j["status"]);
        assert!(
            ["succeeded", "failed"].contains(&status.as_str()),
            "{}: job {} is {status}",
            f.name,
            j["jobId"]
        );
        *jobs.entry((group.clone(), status)).or_default() += 1.0;
        for id in arr(&j["stageIds"]) {
            stage_group
                .entry(id.as_u64().unwrap())
                .or_insert_with(|| group.clone());
        }
    }
    for s in &d.stages {
        let id = s["stageId"].as_u64().unwrap();
        let group = stage_group
            .get(&id)
            .unwrap_or_else(|| panic!("{}: stage {id} is in no job", f.name))
            .clone();
        let status = lower(&s["status"]);
        assert!(
            ["complete", "failed", "skipped"].contains(&status.as_str()),
            "{}: stage {id} is {status}",
            f.name
        );
        *stages.entry((group.clone(), status)).or_default() += 1.0;
        for (field, status) in [
            ("numCompleteTasks", "succeeded"),
            ("numFailedTasks", "failed"),
            ("numKilledTasks", "killed"),
        ] {
            *tasks
                .entry((group.clone(), status.to_string()))
                .or_default() += s[field].as_f64().unwrap_or(0.0);
        }
    }
    // A SQL execution counts under its lowest job's group (REST `/sql` has no group).
    let job_group: BTreeMap<u64, String> = all_jobs
        .iter()
        .map(|j| {
            (
                j["jobId"].as_u64().unwrap(),
                rest_job_group(j, str::to_string),
            )
        })
        .collect();
    let mut sql = BTreeMap::new();
    for e in &d.sql {
        let status = lower(&e["status"]);
        assert!(
            ["completed", "failed"].contains(&status.as_str()),
            "{}: SQL execution {} is {status}",
            f.name,
            e["id"]
        );
        let group = execution_jobs(e)
            .first()
            .and_then(|j| job_group.get(j).cloned())
            .unwrap_or_default();
        *sql.entry((group, status)).or_default() += 1.0;
    }
    Expected {
        app_id: d.id(),
        spark_version: d.info["attempts"][0]["appSparkVersion"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        jobs: grouped(&jobs, &named),
        stages: grouped(&stages, &named),
        tasks: grouped(&tasks, &named),
        sql: grouped(&sql, &named),
        named,
    }
}

/// The exporter's samples of `name` for `app_id`, per group and status as in [`grouped`].
fn got_grouped(samples: &[Sample], name: &str, e: &Expected) -> Series {
    let mut per = BTreeMap::new();
    for s in samples
        .iter()
        .filter(|s| s.name == name && s.label("app_id") == e.app_id)
    {
        *per.entry((
            s.label("job_group").to_string(),
            s.label("status").to_string(),
        ))
        .or_default() += s.value;
    }
    grouped(&per, &e.named)
}

/// Every difference between the exporter's `text` and `e`, each line prefixed with `what`.
fn compare(what: &str, text: &str, e: &Expected) -> Vec<String> {
    let samples = parse_exposition(text);
    let mut out = vec![];
    let mut cmp = |family: &str, want: &Series, got: &Series| {
        let d = diff(want, got);
        if !d.is_empty() {
            out.push(format!("{what}: {family}\n{}", d.join("\n")));
        }
    };
    for (family, want) in [
        ("spark_jobs_total", &e.jobs),
        ("spark_stages_total", &e.stages),
        ("spark_tasks_total", &e.tasks),
    ] {
        cmp(family, want, &got_grouped(&samples, family, e));
    }
    let sql = got_grouped(&samples, "spark_sql_executions_total", e);
    cmp("spark_sql_executions_total", &e.sql, &sql);
    let versions: BTreeSet<&str> = samples
        .iter()
        .filter(|s| s.name == "spark_app_info" && s.label("app_id") == e.app_id)
        .map(|s| s.label("spark_version"))
        .collect();
    if versions != BTreeSet::from([e.spark_version.as_str()]) {
        out.push(format!(
            "{what}: spark_app_info spark_version {versions:?}, want {:?}",
            e.spark_version
        ));
    }
    out
}

fn dump(args: &[&str]) -> Result<String, String> {
    let out = exporter_command(args, Duration::from_secs(60));
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "dump {args:?} exited {}: {}",
            out.status, out.stderr
        ))
    }
}

#[test]
fn every_supported_minor_version_has_a_fixture() {
    let fixtures = fixtures();
    let minors: BTreeSet<String> = fixtures
        .iter()
        .map(|f| {
            let v = f.meta["spark_version"].as_str().unwrap();
            assert_eq!(f.name, format!("spark-{v}"), "folder and meta.json agree");
            assert_eq!(f.meta["pyspark_version"].as_str(), Some(v), "{}", f.name);
            v.splitn(3, '.').take(2).collect::<Vec<_>>().join(".")
        })
        .collect();
    let want: BTreeSet<String> = MINORS.iter().map(|s| s.to_string()).collect();
    assert_eq!(minors, want);
}

/// The snapshot shows what the workload did (its own bookkeeping in meta.json: Spark's status
/// tracker's job ids per group), so the REST side of the comparison is the whole run. The
/// broadcast jobs of Spark 3.0-3.4, under their runId group, are the jobs meta.json lists as
/// `broadcast_join`'s `other_group_job_ids` (its SQL executions' jobs of another group), and
/// count here under the group of their SQL execution ([`attributed_jobs`]); on 3.5+ there are
/// none, and `broadcast_join`'s own jobs include one job tagged `broadcast exchange (runId …)`
/// per join.
#[test]
fn rest_snapshots_hold_the_whole_workload() {
    for f in fixtures() {
        let d = AppData::from_dir(f.rest.to_str().unwrap());
        let spark35 = !f.name.starts_with("spark-3.3") && !f.name.starts_with("spark-3.4");
        let broadcast: BTreeSet<u64> = d
            .jobs
            .iter()
            .filter(|j| broadcast_run_id(j).is_some())
            .map(|j| j["jobId"].as_u64().unwrap())
            .collect();
        let bj = &f.meta["groups"]["broadcast_join"];
        let other: BTreeSet<u64> = arr(&bj["other_group_job_ids"])
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(broadcast, other, "{}: broadcast jobs under a runId", f.name);
        assert_eq!(broadcast.len(), if spark35 { 0 } else { 3 }, "{}", f.name);
        assert_eq!(arr(&bj["sql_executions"]).len(), 3, "{}", f.name);
        let mut tagged_broadcast = BTreeSet::new();
        let mut by_group: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
        let mut by_tag: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
        for j in &attributed_jobs(&f.name, &d) {
            let id = j["jobId"].as_u64().unwrap();
            let g = j["jobGroup"].as_str().unwrap_or("").to_string();
            by_group.entry(g).or_default().insert(id);
            // Spark 4.0+ also tags SQL jobs with its own `spark-session-<uuid>` and
            // `spark-session-<uuid>-execution-root-id-<n>`, and 3.5+ a broadcast exchange's
            // job with `broadcast exchange (runId <uuid>)`: not the workload's.
            for t in arr(&j["jobTags"]).iter().map(|t| t.as_str().unwrap()) {
                if t.starts_with("broadcast exchange (runId ") {
                    assert_eq!(j["jobGroup"], "broadcast_join", "{}: job {id}", f.name);
                    tagged_broadcast.insert(id);
                }
            }
            for t in arr(&j["jobTags"]).iter().filter(|t| {
                let t = t.as_str().unwrap();
                !t.starts_with("spark-session-") && !t.starts_with("broadcast exchange (runId ")
            }) {
                by_tag
                    .entry(t.as_str().unwrap().to_string())
                    .or_default()
                    .insert(id);
            }
        }
        let ids = |v: &Value| -> BTreeSet<u64> {
            arr(&v["job_ids"])
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect()
        };
        let want: BTreeMap<String, BTreeSet<u64>> = f.meta["groups"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(g, v)| {
                let mut ids = ids(v);
                ids.extend(
                    arr(&v["other_group_job_ids"])
                        .iter()
                        .map(|x| x.as_u64().unwrap()),
                );
                (g.clone(), ids)
            })
            .collect();
        assert_eq!(by_group, want, "{}: jobs per group", f.name);
        assert_eq!(
            tagged_broadcast.len(),
            if spark35 { 3 } else { 0 },
            "{}: jobs tagged as a broadcast exchange's",
            f.name
        );
        let tags: BTreeMap<String, BTreeSet<u64>> = f.meta["job_tags"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(t, v)| (t.clone(), ids(v)))
            .collect();
        assert_eq!(by_tag, tags, "{}: jobs per tag", f.name);
        assert_eq!(tags.contains_key("nightly_etl"), spark35, "{}", f.name);
    }
}

#[test]
fn event_log_dump_equals_the_rest_snapshot() {
    let mut failures = vec![];
    for f in fixtures() {
        let e = expected(&f);
        let log = f.log.to_str().unwrap();
        let args = [
            "dump",
            "--model.summary-level",
            "full",
            "--spark.url=",
            "--event-log",
            log,
        ];
        match dump(&args) {
            Ok(text) => failures.extend(compare(&format!("{} event log", f.name), &text, &e)),
            Err(err) => failures.push(format!("{}: {err}", f.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_replay_dump_equals_the_rest_snapshot() {
    let mut failures = vec![];
    for f in fixtures() {
        let e = expected(&f);
        let server = FakeSpark::start(vec![AppData::from_dir(f.rest.to_str().unwrap())]).await;
        let url = server.url.clone();
        let out = tokio::task::spawn_blocking(move || {
            dump(&[
                "dump",
                "--model.summary-level",
                "full",
                "--spark.url",
                url.as_str(),
            ])
        })
        .await
        .expect("dump");
        match out {
            Ok(text) => failures.extend(compare(&format!("{} REST replay", f.name), &text, &e)),
            Err(err) => failures.push(format!("{}: {err}", f.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What the exporter's `text` gets wrong about the broadcast joins of fixture `f`: a job group
/// label that is a broadcast runId (a UUID, or the default rewrite's `{uuid}`), a job description
/// of Spark 3.0-3.4's broadcast jobs (`broadcast exchange (runId …)`), or `broadcast_join`
/// jobs other than the jobs Spark's status tracker gave the group plus its SQL executions' jobs
/// of another group (meta.json `job_ids` and `other_group_job_ids`; on 3.3 and 3.4: 6 + the
/// 3 broadcast jobs), all succeeded, all described `Join with a broadcast`.
fn broadcast_mistakes(what: &str, text: &str, f: &Fixture) -> Vec<String> {
    let uuid = regex::Regex::new(
        r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\{uuid\}",
    )
    .unwrap();
    let app_id = f.meta["app_id"].as_str().unwrap();
    let samples = parse_exposition(text);
    let mut out = vec![];
    // Bad label value -> the families showing it.
    let mut bad_groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut bad_descriptions: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.label("app_id") == app_id) {
        let (group, desc) = (s.label("job_group"), s.label("job_description"));
        if uuid.is_match(group) {
            bad_groups.entry(group).or_default().insert(&s.name);
        }
        if desc.starts_with("broadcast exchange") {
            bad_descriptions.entry(desc).or_default().insert(&s.name);
        }
    }
    for (label, bad) in [
        ("job_group", bad_groups),
        ("job_description", bad_descriptions),
    ] {
        for (value, families) in bad {
            let some: Vec<&str> = families.iter().copied().take(3).collect();
            out.push(format!(
                "{what}: {label}={value:?} in {} families ({}, ...)",
                families.len(),
                some.join(", ")
            ));
        }
    }
    let bj = &f.meta["groups"]["broadcast_join"];
    let want_jobs = arr(&bj["job_ids"]).len() + arr(&bj["other_group_job_ids"]).len();
    let mut got = Series::new();
    for s in samples.iter().filter(|s| {
        s.name == "spark_jobs_total"
            && s.label("app_id") == app_id
            && s.label("job_group") == "broadcast_join"
    }) {
        add(
            &mut got,
            key(&[
                ("job_description", s.label("job_description")),
                ("status", s.label("status")),
            ]),
            s.value,
        );
    }
    got.retain(|_, v| *v != 0.0);
    let want = Series::from([(
        key(&[
            ("job_description", "Join with a broadcast"),
            ("status", "succeeded"),
        ]),
        want_jobs as f64,
    )]);
    let d = diff(&want, &got);
    if !d.is_empty() {
        out.push(format!(
            "{what}: spark_jobs_total{{job_group=\"broadcast_join\"}}\n{}",
            d.join("\n")
        ));
    }
    out
}

/// Spark 3.0-3.4 runs a broadcast exchange's job under its own runId job group
/// (`broadcast exchange (runId <uuid>)`); the exporter counts it under the job group and
/// description of its SQL execution, from the event log (the job's `spark.sql.execution.id`)
/// and from REST (`/sql`'s job ids), so no group is a UUID and `broadcast_join` has all its
/// jobs ([`broadcast_mistakes`]). Checked on every fixture; 3.5+ keeps the user's group itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broadcast_jobs_count_under_their_sql_executions_group() {
    let mut failures = vec![];
    for f in fixtures() {
        let log = f.log.to_str().unwrap().to_string();
        match dump(&[
            "dump",
            "--model.summary-level",
            "full",
            "--spark.url=",
            "--event-log",
            &log,
        ]) {
            Ok(text) => failures.extend(broadcast_mistakes(
                &format!("{} event log", f.name),
                &text,
                &f,
            )),
            Err(err) => failures.push(format!("{}: {err}", f.name)),
        }
        let server = FakeSpark::start(vec![AppData::from_dir(f.rest.to_str().unwrap())]).await;
        let url = server.url.clone();
        let out = tokio::task::spawn_blocking(move || {
            dump(&[
                "dump",
                "--model.summary-level",
                "full",
                "--spark.url",
                url.as_str(),
            ])
        })
        .await
        .expect("dump");
        match out {
            Ok(text) => failures.extend(broadcast_mistakes(
                &format!("{} REST replay", f.name),
                &text,
                &f,
            )),
            Err(err) => failures.push(format!("{}: {err}", f.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The Spark Connect logs (`tests/data/connect/`, `scripts/connect_probe.py`: jobs with no job
/// group, tagged by Connect): read without errors, every job and task counted once. Spark's own
/// count is the log's `SparkListenerJobEnd` and `SparkListenerTaskEnd` events.
/// Their jobs count under the user's tag (`nightly_etl`), as the log's job tags say.
#[test]
fn connect_logs_count_every_job_and_task() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/connect");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let mut failures = vec![];
    for log in logs {
        let text = zstd::decode_all(&std::fs::read(&log).unwrap()[..]).unwrap();
        let (mut want, mut connect_ops) = (Series::new(), 0);
        for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let e: Value = serde_json::from_slice(line).unwrap();
            match e["Event"].as_str().unwrap() {
                // Each job under the user's tag (`spark.addTag`), as Spark records it, else
                // under its call site: the last stage's name.
                "SparkListenerJobStart" => {
                    let tags = e["Properties"]["spark.job.tags"].as_str().unwrap_or("");
                    let tags: Vec<&str> = tags.split(',').collect();
                    let name = arr(&e["Stage Infos"])
                        .iter()
                        .max_by_key(|s| s["Stage ID"].as_u64())
                        .and_then(|s| s["Stage Name"].as_str());
                    let group = job_group(None, &tags, name, str::to_string);
                    add(&mut want, key(&[("jobs_of_group", &group)]), 1.0);
                }
                "SparkListenerJobEnd" => {
                    let ok = e["Job Result"]["Result"] == "JobSucceeded";
                    let status = if ok { "succeeded" } else { "failed" };
                    add(&mut want, key(&[("jobs", status)]), 1.0);
                }
                "SparkListenerTaskEnd" => {
                    let status = match e["Task End Reason"]["Reason"].as_str() {
                        Some("Success") => "succeeded",
                        Some("TaskKilled") => "killed",
                        _ => "failed",
                    };
                    add(&mut want, key(&[("tasks", status)]), 1.0);
                }
                n if n.ends_with(".SparkListenerConnectOperationStarted") => connect_ops += 1,
                _ => {}
            }
        }
        assert_eq!(connect_ops, 2, "{}: a Connect log", log.display());
        let what = log.display().to_string();
        let text = match dump(&[
            "dump",
            "--model.summary-level",
            "full",
            "--spark.url=",
            "--event-log",
            &what,
        ]) {
            Ok(t) => t,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let mut got = Series::new();
        for s in parse_exposition(&text) {
            if s.name == "spark_jobs_total" {
                add(
                    &mut got,
                    key(&[("jobs_of_group", s.label("job_group"))]),
                    s.value,
                );
            }
            let kind = match s.name.as_str() {
                "spark_jobs_total" => "jobs",
                "spark_tasks_total" => "tasks",
                "spark_exporter_eventlog_errors_total" => "errors",
                _ => continue,
            };
            add(&mut got, key(&[(kind, s.label("status"))]), s.value);
        }
        got.retain(|_, v| *v != 0.0);
        let d = diff(&want, &got);
        if !d.is_empty() {
            failures.push(format!("{what}\n{}", d.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
