//! Model behaviour: idempotence, source merging, retention, label control.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::*;
use crate::config::Settings;
use crate::export::families::{collect, Family, Value};
use crate::telemetry::Telemetry;

const APP: &str = "app-1";

fn model_at(clock: Arc<AtomicI64>, settings: &Settings) -> Arc<Model> {
    Model::with_clock(
        settings,
        Arc::new(Telemetry::default()),
        Arc::new(move || clock.load(Ordering::SeqCst)),
    )
}

fn model() -> (Arc<Model>, Arc<AtomicI64>) {
    let c = Arc::new(AtomicI64::new(1_000_000));
    (model_at(c.clone(), &Settings::default()), c)
}

/// Value of the one sample of `name` whose labels include all of `want`.
fn val(f: &[Family], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let fam = f.iter().find(|x| x.name == name)?;
    let m: Vec<_> = fam
        .samples
        .iter()
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && &**lv == *v))
        })
        .collect();
    assert!(m.len() <= 1, "{name} {want:?} matches {} samples", m.len());
    m.first().map(|s| s.value.as_f64())
}

fn job(id: u64, status: JobStatus, group: &str, stages: Vec<u64>) -> JobObs {
    JobObs {
        job_id: id,
        job_group: Some(group.into()),
        description: Some(format!("{group} desc")),
        status,
        submission_ms: Some(1000),
        completion_ms: status.is_terminal().then_some(3000),
        stage_ids: stages,
        sql_execution_id: None,
        tags: vec![],
        name: None,
        client_app: None,
    }
}

fn stage(id: u64, status: StageStatus, counts: Option<TaskCounts>, run_ms: u64) -> StageObs {
    StageObs {
        stage_id: id,
        attempt: 0,
        status,
        name: Some(format!("stage {id}")),
        job_group: None,
        description: None,
        num_tasks: Some(4),
        active_tasks: Some(0),
        submission_ms: Some(1000),
        completion_ms: status.is_terminal().then_some(2000),
        task_counts: counts,
        totals: counts.map(|_| TaskTotals {
            run_time_ms: run_ms,
            ..Default::default()
        }),
    }
}

fn task(id: u64, stage_id: u64, ms: u64) -> TaskEndObs {
    TaskEndObs {
        stage_id,
        attempt: 0,
        task_id: id,
        executor_id: "1".into(),
        outcome: TaskOutcome::Succeeded,
        launch_ms: 1000,
        finish_ms: 1000 + ms as i64,
        metrics: TaskTotals {
            run_time_ms: ms,
            gc_time_ms: 10,
            ..Default::default()
        },
        locality: None,
    }
}

#[test]
fn a_job_seen_twice_or_by_two_sources_counts_once() {
    let (m, _) = model();
    let j = job(0, JobStatus::Succeeded, "g", vec![0]);
    m.observer(Source::Rest).upsert_job(APP, &j);
    m.observer(Source::Rest).upsert_job(APP, &j);
    m.observer(Source::EventLog).upsert_job(APP, &j);
    let f = collect(&m);
    let g = [("job_group", "g"), ("status", "succeeded")];
    assert_eq!(val(&f, "spark_jobs", &g), Some(1.0));
    assert_eq!(
        val(
            &f,
            "spark_jobs",
            &[("job_group", "g"), ("status", "failed")]
        ),
        Some(0.0)
    );
    assert_eq!(
        val(&f, "spark_job_duration_seconds", &g),
        Some(1.0),
        "one observation"
    );
}

#[test]
fn running_then_ended_job_keeps_its_labels_and_duration() {
    let (m, _) = model();
    m.observer(Source::EventLog)
        .upsert_job(APP, &job(3, JobStatus::Running, "etl", vec![]));
    assert_eq!(
        val(&collect(&m), "spark_jobs_active", &[("job_group", "etl")]),
        Some(1.0)
    );
    // The event log's JobEnd carries neither group nor description.
    let mut end = job(3, JobStatus::Failed, "ignored", vec![]);
    end.job_group = None;
    end.description = None;
    end.submission_ms = None;
    m.observer(Source::EventLog).upsert_job(APP, &end);
    let f = collect(&m);
    assert_eq!(
        val(&f, "spark_jobs_active", &[("job_group", "etl")]),
        Some(0.0)
    );
    assert_eq!(
        val(
            &f,
            "spark_jobs",
            &[("job_group", "etl"), ("status", "failed")]
        ),
        Some(1.0)
    );
    assert_eq!(
        val(
            &f,
            "spark_job_duration_seconds",
            &[("job_group", "etl"), ("status", "failed")]
        ),
        Some(1.0)
    );
}

#[test]
fn stage_totals_from_rest_and_event_log_merge_not_add() {
    let (m, _) = model();
    m.observer(Source::Rest)
        .upsert_job(APP, &job(0, JobStatus::Running, "g", vec![7]));
    let c = TaskCounts {
        succeeded: 2,
        failed: 0,
        killed: 0,
    };
    m.observer(Source::Rest)
        .upsert_stage(APP, &stage(7, StageStatus::Active, Some(c), 200));
    m.observer(Source::EventLog)
        .upsert_stage(APP, &stage(7, StageStatus::Active, None, 0));
    m.observer(Source::EventLog).task_end(APP, &task(1, 7, 100));
    m.observer(Source::EventLog).task_end(APP, &task(2, 7, 100));
    m.observer(Source::EventLog).task_end(APP, &task(3, 7, 100));
    // The same log read again (truncation, retried step): no double count.
    m.observer(Source::EventLog).task_end(APP, &task(3, 7, 100));
    let f = collect(&m);
    let g = [("job_group", "g"), ("status", "succeeded")];
    assert_eq!(
        val(&f, "spark_tasks", &g),
        Some(3.0),
        "max(2 from REST, 3 from log)"
    );
    assert_eq!(
        val(&f, "spark_task_run_time_seconds", &[("job_group", "g")]),
        Some(0.3)
    );
    assert_eq!(
        val(
            &f,
            "spark_executor_task_time_seconds",
            &[("executor_id", "1")]
        ),
        Some(0.3)
    );
    assert_eq!(
        val(&f, "spark_stages_active", &[("job_group", "g")]),
        Some(1.0)
    );
    assert_eq!(
        val(&f, "spark_task_duration_seconds", &[("job_group", "g")]),
        Some(3.0)
    );
}

#[test]
fn counters_survive_stage_retirement_and_ui_retention() {
    let (m, clock) = model();
    m.observer(Source::Rest)
        .upsert_job(APP, &job(0, JobStatus::Succeeded, "g", vec![1]));
    let c = TaskCounts {
        succeeded: 4,
        failed: 1,
        killed: 0,
    };
    m.observer(Source::Rest)
        .upsert_stage(APP, &stage(1, StageStatus::Complete, Some(c), 400));
    let before = collect(&m);
    // Retention window passes: the stage's own series go, its totals stay in the group.
    clock.fetch_add(3_600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    // Spark dropped the stage from its UI, then a stale or repeated observation arrives.
    m.observer(Source::Rest)
        .upsert_stage(APP, &stage(1, StageStatus::Complete, Some(c), 400));
    m.observer(Source::Rest)
        .upsert_job(APP, &job(0, JobStatus::Succeeded, "g", vec![1]));
    let after = collect(&m);
    for (name, lab) in [
        (
            "spark_tasks",
            vec![("job_group", "g"), ("status", "succeeded")],
        ),
        (
            "spark_tasks",
            vec![("job_group", "g"), ("status", "failed")],
        ),
        (
            "spark_stages",
            vec![("job_group", "g"), ("status", "complete")],
        ),
        (
            "spark_jobs",
            vec![("job_group", "g"), ("status", "succeeded")],
        ),
        ("spark_task_run_time_seconds", vec![("job_group", "g")]),
    ] {
        assert_eq!(
            val(&before, name, &lab),
            val(&after, name, &lab),
            "{name} {lab:?}"
        );
    }
    assert_eq!(
        val(
            &after,
            "spark_tasks",
            &[("job_group", "g"), ("status", "succeeded")]
        ),
        Some(4.0)
    );
    assert_eq!(
        val(&after, "spark_stage_tasks_active", &[("stage_id", "1")]),
        None
    );
}

#[test]
fn event_log_job_end_infers_skipped_stages_once() {
    let (m, _) = model();
    m.observer(Source::EventLog)
        .upsert_job(APP, &job(0, JobStatus::Running, "g", vec![1, 2]));
    m.observer(Source::EventLog)
        .upsert_stage(APP, &stage(2, StageStatus::Active, None, 0));
    m.observer(Source::EventLog)
        .upsert_stage(APP, &stage(2, StageStatus::Complete, None, 0));
    m.observer(Source::EventLog)
        .upsert_job(APP, &job(0, JobStatus::Succeeded, "g", vec![]));
    // REST later reports the same stage as skipped: no double count.
    m.observer(Source::Rest)
        .upsert_stage(APP, &stage(1, StageStatus::Skipped, None, 0));
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_stages",
            &[("job_group", "g"), ("status", "skipped")]
        ),
        Some(1.0)
    );
    assert_eq!(
        val(
            &f,
            "spark_stages",
            &[("job_group", "g"), ("status", "complete")]
        ),
        Some(1.0)
    );
}

#[test]
fn executor_removal_counts_once_and_never_for_the_driver() {
    let (m, _) = model();
    let mut e = ExecutorObs {
        executor_id: "3".into(),
        active: Some(true),
        ..Default::default()
    };
    m.observer(Source::Rest).upsert_executor(APP, &e);
    e.active = Some(false);
    e.remove_reason = Some("Executor heartbeat timed out after 120000 ms".into());
    m.observer(Source::EventLog).upsert_executor(APP, &e);
    m.observer(Source::Rest).upsert_executor(APP, &e);
    e.active = Some(true); // a stale REST answer must not revive it
    m.observer(Source::Rest).upsert_executor(APP, &e);
    m.observer(Source::Rest).upsert_executor(
        APP,
        &ExecutorObs {
            executor_id: "driver".into(),
            active: Some(false),
            ..Default::default()
        },
    );
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_executor_removed",
            &[("reason", "heartbeat_timeout")]
        ),
        Some(1.0)
    );
    assert_eq!(
        val(&f, "spark_executor_removed", &[("reason", "other")]),
        None
    );
    assert_eq!(val(&f, "spark_executors", &[("state", "dead")]), Some(2.0));
    assert_eq!(
        val(&f, "spark_executors", &[("state", "active")]),
        Some(0.0)
    );
}

#[test]
fn stalled_seconds_count_from_the_last_task_end() {
    let (m, clock) = model();
    clock.store(10_000, Ordering::SeqCst);
    m.observer(Source::EventLog)
        .upsert_job(APP, &job(0, JobStatus::Running, "g", vec![5]));
    let mut s = stage(5, StageStatus::Active, None, 0);
    s.submission_ms = Some(10_000);
    m.observer(Source::EventLog).upsert_stage(APP, &s);
    clock.store(70_000, Ordering::SeqCst);
    assert_eq!(
        val(
            &collect(&m),
            "spark_stage_stalled_seconds",
            &[("stage_id", "5")]
        ),
        Some(60.0)
    );
    let mut t = task(1, 5, 0);
    t.finish_ms = 40_000;
    m.observer(Source::EventLog).task_end(APP, &t);
    assert_eq!(
        val(
            &collect(&m),
            "spark_stage_stalled_seconds",
            &[("stage_id", "5")]
        ),
        Some(30.0)
    );
}

#[test]
fn descriptions_fold_by_rules_then_by_cap() {
    let mut settings = Settings::default();
    settings.labels.max_values_per_label = 3;
    let m = model_at(Arc::new(AtomicI64::new(0)), &settings);
    for (i, day) in ["2026-11-01", "2026-11-02", "2026-11-03"]
        .iter()
        .enumerate()
    {
        let mut j = job(i as u64, JobStatus::Succeeded, "report", vec![]);
        j.description = Some(format!("revenue for {day}"));
        m.observer(Source::Rest).upsert_job(APP, &j);
    }
    for i in 0..5u64 {
        let mut j = job(10 + i, JobStatus::Succeeded, "adhoc", vec![]);
        j.description = Some(format!("query {}", ["a", "b", "c", "d", "e"][i as usize]));
        m.observer(Source::Rest).upsert_job(APP, &j);
    }
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_jobs",
            &[
                ("job_description", "revenue for {date}"),
                ("status", "succeeded")
            ]
        ),
        Some(3.0)
    );
    assert_eq!(
        val(
            &f,
            "spark_jobs",
            &[("job_description", "__other__"), ("status", "succeeded")]
        ),
        Some(3.0)
    );
    assert_eq!(
        m.telemetry()
            .snapshot()
            .label_overflow
            .get("job_description"),
        Some(&3)
    );
}

#[test]
fn finished_apps_expire_and_a_restarted_driver_is_a_new_app() {
    let (m, clock) = model();
    m.observer(Source::Rest).upsert_app(&AppObs {
        app_id: "old".into(),
        name: Some("n".into()),
        ..Default::default()
    });
    m.observer(Source::Rest).upsert_app(&AppObs {
        app_id: "new".into(),
        name: Some("n".into()),
        ..Default::default()
    });
    m.observer(Source::Rest).app_gone("old", m.now_ms());
    let f = collect(&m);
    assert!(val(&f, "spark_app_end_time_seconds", &[("app_id", "old")]).is_some());
    assert!(val(&f, "spark_app_end_time_seconds", &[("app_id", "new")]).is_none());
    clock.fetch_add(2 * 3_600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    let f = collect(&m);
    assert!(val(&f, "spark_app", &[("app_id", "old")]).is_none());
    assert_eq!(val(&f, "spark_app", &[("app_id", "new")]), Some(1.0));
}

#[test]
fn streaming_batches_count_once_per_batch_id() {
    let (m, _) = model();
    let p = |b| StreamingProgressObs {
        query_id: "q-1".into(),
        name: Some("events".into()),
        batch_id: b,
        num_input_rows: 10,
        input_rows_per_second: 5.0,
        processed_rows_per_second: 7.0,
        batch_duration_ms: 500,
        ..Default::default()
    };
    for b in [0, 1, 1, 2] {
        m.observer(Source::EventLog).streaming_progress(APP, &p(b));
    }
    let f = collect(&m);
    assert_eq!(
        val(&f, "spark_streaming_batches", &[("query", "events")]),
        Some(3.0)
    );
    assert_eq!(
        val(&f, "spark_streaming_input_rows", &[("query", "events")]),
        Some(30.0)
    );
    let Some(Value::Hist(_, sum, _)) = f
        .iter()
        .find(|x| x.name == "spark_streaming_batch_duration_seconds")
        .map(|x| x.samples[0].value.clone())
    else {
        panic!("no batch histogram")
    };
    assert_eq!(sum, 1.5);
}

#[test]
fn a_rest_stage_seen_before_its_job_waits_for_the_job_labels() {
    let (m, clock) = model();
    let c = TaskCounts {
        succeeded: 1,
        failed: 0,
        killed: 0,
    };
    m.observer(Source::Rest)
        .upsert_stage(APP, &stage(4, StageStatus::Complete, Some(c), 10));
    assert_eq!(
        val(&collect(&m), "spark_stages", &[("status", "complete")]),
        None
    );
    m.observer(Source::Rest)
        .upsert_job(APP, &job(2, JobStatus::Succeeded, "late", vec![4]));
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_stages",
            &[("job_group", "late"), ("status", "complete")]
        ),
        Some(1.0)
    );
    // A stage whose job never shows up is applied after the wait, with fallback labels.
    let mut o = stage(9, StageStatus::Complete, Some(c), 10);
    o.description = Some("orphan".into());
    m.observer(Source::Rest).upsert_stage(APP, &o);
    clock.fetch_add(app::ORPHAN_WAIT_MS, Ordering::SeqCst);
    m.expire(m.now_ms());
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_stages",
            &[("job_description", "orphan"), ("status", "complete")]
        ),
        Some(1.0)
    );
}

#[test]
fn running_tasks_from_the_event_log_are_starts_minus_ends() {
    let (m, _) = model();
    m.observer(Source::EventLog)
        .upsert_job(APP, &job(0, JobStatus::Running, "g", vec![3]));
    let mut st = stage(3, StageStatus::Active, None, 0);
    st.active_tasks = None; // the event log does not say
    m.observer(Source::EventLog).upsert_stage(APP, &st);
    for id in [10, 11, 12] {
        let s = TaskStartObs {
            stage_id: 3,
            attempt: 0,
            task_id: id,
            executor_id: "1".into(),
        };
        m.observer(Source::EventLog).task_start(APP, &s);
        m.observer(Source::EventLog).task_start(APP, &s); // read twice
    }
    m.observer(Source::EventLog).task_end(APP, &task(11, 3, 5));
    m.observer(Source::EventLog).task_end(APP, &task(11, 3, 5));
    let f = collect(&m);
    assert_eq!(
        val(&f, "spark_stage_tasks_active", &[("stage_id", "3")]),
        Some(2.0)
    );
    assert_eq!(
        val(&f, "spark_executor_active_tasks", &[("executor_id", "1")]),
        Some(2.0)
    );
}

/// Every counter and histogram of a job group, SQL description and streaming query exists at
/// zero, for every status, from the moment the key is first seen: a job, an execution or a
/// query starting.
#[test]
fn series_are_born_at_zero_when_their_key_is_first_seen() {
    let (m, _) = model();
    let o = m.observer(Source::EventLog);
    o.upsert_sql(
        APP,
        &SqlObs {
            execution_id: 4,
            description: Some("load".into()),
            status: SqlStatus::Running,
            submission_ms: Some(1_000),
            duration_ms: None,
            job_ids: vec![],
        },
    );
    let mut j = job(1, JobStatus::Running, "etl", vec![]);
    j.sql_execution_id = Some(4);
    o.upsert_job(APP, &j);
    o.streaming_started(
        APP,
        &StreamingStartObs {
            query_id: "q-1".into(),
            name: Some("events".into()),
            run_id: None,
        },
    );
    let f = collect(&m);
    let g = [("job_group", "etl")];
    for status in ["succeeded", "failed"] {
        let with = [g[0], ("status", status)];
        assert_eq!(val(&f, "spark_jobs", &with), Some(0.0), "jobs {status}");
        assert_eq!(
            val(&f, "spark_job_duration_seconds", &with),
            Some(0.0),
            "job hist {status}"
        );
    }
    for status in ["complete", "failed"] {
        let with = [g[0], ("status", status)];
        assert_eq!(val(&f, "spark_stages", &with), Some(0.0), "stages {status}");
        assert_eq!(
            val(&f, "spark_stage_duration_seconds", &with),
            Some(0.0),
            "stage hist {status}"
        );
    }
    for status in ["succeeded", "failed", "killed"] {
        assert_eq!(
            val(&f, "spark_tasks", &[g[0], ("status", status)]),
            Some(0.0)
        );
    }
    assert_eq!(
        val(&f, "spark_task_duration_seconds", &g),
        Some(0.0),
        "event-log task hist"
    );
    assert_eq!(val(&f, "spark_task_run_time_seconds", &g), Some(0.0));
    for status in ["completed", "failed"] {
        let with = [g[0], ("description", "load"), ("status", status)];
        assert_eq!(
            val(&f, "spark_sql_executions", &with),
            Some(0.0),
            "sql {status}"
        );
        assert_eq!(
            val(&f, "spark_sql_execution_duration_seconds", &with),
            Some(0.0),
            "sql hist {status}"
        );
    }
    let q = [("query", "events")];
    assert_eq!(val(&f, "spark_streaming_batches", &q), Some(0.0));
    assert_eq!(val(&f, "spark_streaming_input_rows", &q), Some(0.0));
    assert_eq!(
        val(&f, "spark_streaming_batch_duration_seconds", &q),
        Some(0.0)
    );
    // Every sample of the application starts counting when the model first saw it.
    let created: std::collections::BTreeSet<i64> = f
        .iter()
        .filter(|x| x.name.starts_with("spark_") && !x.name.starts_with("spark_exporter"))
        .flat_map(|x| x.samples.iter().map(|s| s.created_ms))
        .collect();
    assert_eq!(created.into_iter().collect::<Vec<_>>(), vec![1_000_000]);
}

/// Over REST alone task durations are never known: no task-duration histogram at zero.
#[test]
fn rest_alone_has_no_task_duration_histogram() {
    let (m, _) = model();
    m.observer(Source::Rest)
        .upsert_job(APP, &job(1, JobStatus::Running, "etl", vec![]));
    let f = collect(&m);
    assert_eq!(
        val(&f, "spark_task_duration_seconds", &[("job_group", "etl")]),
        None
    );
    assert_eq!(
        val(
            &f,
            "spark_job_duration_seconds",
            &[("job_group", "etl"), ("status", "failed")]
        ),
        Some(0.0)
    );
}

fn sql(id: u64, status: SqlStatus, desc: &str, job_ids: Vec<u64>) -> SqlObs {
    SqlObs {
        execution_id: id,
        description: Some(desc.into()),
        status,
        submission_ms: Some(1_000),
        duration_ms: status.is_terminal().then_some(2_000),
        job_ids,
    }
}

/// A SQL execution counts under its jobs' group: the event log's jobs name their execution,
/// REST's executions name their jobs. One that runs no job counts under the empty group, from
/// either source (REST cannot tell its group).
#[test]
fn sql_executions_count_under_their_jobs_group() {
    let (m, _) = model();
    let log = m.observer(Source::EventLog);
    // Event log: start (no group known), a job of it, end.
    log.upsert_sql(APP, &sql(1, SqlStatus::Running, "load", vec![]));
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_sql_executions_active",
            &[("job_group", ""), ("description", "load")]
        ),
        Some(1.0),
        "unknown while no job ran"
    );
    assert_eq!(
        val(
            &f,
            "spark_sql_executions",
            &[("job_group", ""), ("description", "load")]
        ),
        None,
        "no counter under a group that is not the execution's"
    );
    let mut j = job(10, JobStatus::Running, "etl", vec![]);
    j.sql_execution_id = Some(1);
    log.upsert_job(APP, &j);
    let f = collect(&m);
    let etl = [("job_group", "etl"), ("description", "load")];
    assert_eq!(val(&f, "spark_sql_executions_active", &etl), Some(1.0));
    assert_eq!(
        val(
            &f,
            "spark_sql_executions",
            &[etl[0], etl[1], ("status", "completed")]
        ),
        Some(0.0),
        "born at zero once the group is known"
    );
    log.upsert_sql(APP, &sql(1, SqlStatus::Completed, "load", vec![]));
    // REST: the jobs first, then an execution naming them.
    let rest = m.observer(Source::Rest);
    rest.upsert_job(APP, &job(20, JobStatus::Succeeded, "report", vec![]));
    rest.upsert_sql(APP, &sql(2, SqlStatus::Completed, "sum", vec![21, 20]));
    // Jobless: the empty group.
    log.upsert_sql(APP, &sql(4, SqlStatus::Completed, "show", vec![]));
    // Seen again by the other source: counted once.
    rest.upsert_sql(APP, &sql(1, SqlStatus::Completed, "load", vec![10]));
    let f = collect(&m);
    for (group, desc) in [("etl", "load"), ("report", "sum"), ("", "show")] {
        assert_eq!(
            val(
                &f,
                "spark_sql_executions",
                &[
                    ("job_group", group),
                    ("description", desc),
                    ("status", "completed")
                ]
            ),
            Some(1.0),
            "{group}/{desc}"
        );
    }
    assert_eq!(
        val(
            &f,
            "spark_sql_executions",
            &[
                ("job_group", ""),
                ("description", "load"),
                ("status", "completed")
            ]
        ),
        None,
        "no series left under the empty group for an execution whose job told its group"
    );
}

/// With no job group and no tag, a job counts under its call site, line number kept (the
/// rewrite rules would fold every line of a file into one group).
#[test]
fn a_job_without_group_or_tag_counts_under_its_call_site() {
    let (m, _) = model();
    let mut j = job(1, JobStatus::Succeeded, "", vec![]);
    j.job_group = None;
    j.name = Some("count at /srv/jobs/etl.py:142".into());
    m.observer(Source::EventLog).upsert_job(APP, &j);
    let f = collect(&m);
    assert_eq!(
        val(
            &f,
            "spark_jobs",
            &[
                ("job_group", "count at etl.py:142"),
                ("status", "succeeded")
            ]
        ),
        Some(1.0)
    );
}

/// A streaming run's jobs whose description user code replaced (`setJobDescription` inside
/// `foreachBatch`) keep the run id as job group: the `QueryStartedEvent` (event log) names the
/// query, so they count under its name, with their own description.
#[test]
fn a_streaming_runs_jobs_count_under_its_query_whatever_their_description() {
    let (m, _) = model();
    let o = m.observer(Source::EventLog);
    const RUN: &str = "05ee1333-6b6a-4ea8-99d9-c7b84cb67ef4";
    o.streaming_started(
        APP,
        &StreamingStartObs {
            query_id: "1a8d25d9-1b6e-4b84-90af-3bc3c0da28ec".into(),
            name: None,
            run_id: Some(RUN.into()),
        },
    );
    let mut j = job(1, JobStatus::Succeeded, RUN, vec![]);
    j.description = Some("merge into target".into());
    o.upsert_job(APP, &j);
    let f = collect(&m);
    let with = [
        ("job_group", "query-1a8d25d9"),
        ("job_description", "merge into target"),
        ("status", "succeeded"),
    ];
    assert_eq!(val(&f, "spark_jobs", &with), Some(1.0));
}
