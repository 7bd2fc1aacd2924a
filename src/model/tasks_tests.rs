//! The skew-ratio histogram, locality counts and the diagnosis sums through the model: once per
//! stage attempt or task, whichever source reports first.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::config::Settings;
use crate::export::families::{collect, Family, Value};
use crate::model::*;
use crate::telemetry::Telemetry;

const APP: &str = "app-t";

fn model() -> Arc<Model> {
    let clock = Arc::new(AtomicI64::new(1_000_000));
    Model::with_clock(
        &Settings::default(),
        Arc::new(Telemetry::default()),
        Arc::new(move || clock.load(Ordering::SeqCst)),
    )
}

fn samples<'a>(f: &'a [Family], name: &str, want: &[(&str, &str)]) -> Vec<&'a Value> {
    f.iter()
        .filter(|x| x.name == name)
        .flat_map(|x| &x.samples)
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && &**lv == *v))
        })
        .map(|s| &s.value)
        .collect()
}

/// `(count, sum)` of group `g`'s skew-ratio histogram.
fn skew(m: &Model, g: &str) -> (u64, f64) {
    let f = collect(m);
    match samples(&f, "spark_stage_skew_ratio", &[("job_group", g)])[..] {
        [Value::Hist(_, sum, count)] => (*count, *sum),
        ref v => panic!("one histogram expected: {v:?}"),
    }
}

/// The one value of `name` for group `g` (and more labels), if any.
fn val(m: &Model, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let f = collect(m);
    let v = samples(&f, name, want);
    assert!(v.len() <= 1, "{name} {want:?}: {v:?}");
    v.first().map(|v| v.as_f64())
}

fn job(group: &str, stages: Vec<u64>) -> JobObs {
    JobObs {
        job_id: stages[0],
        job_group: Some(group.into()),
        description: None,
        status: JobStatus::Running,
        submission_ms: Some(1000),
        completion_ms: None,
        stage_ids: stages,
        sql_execution_id: None,
        tags: vec![],
        name: None,
        client_app: None,
    }
}

fn stage(id: u64, status: StageStatus, totals: Option<TaskTotals>) -> StageObs {
    StageObs {
        stage_id: id,
        attempt: 0,
        status,
        name: Some(format!("stage {id}")),
        job_group: None,
        description: None,
        num_tasks: Some(4),
        active_tasks: None,
        submission_ms: Some(1000),
        completion_ms: status.is_terminal().then_some(9000),
        task_counts: None,
        totals,
    }
}

fn task(id: u64, stage_id: u64, ms: i64, outcome: TaskOutcome, loc: Locality) -> TaskEndObs {
    TaskEndObs {
        stage_id,
        attempt: 0,
        task_id: id,
        executor_id: "1".into(),
        outcome,
        launch_ms: 1000,
        finish_ms: 1000 + ms,
        metrics: TaskTotals {
            deserialize_ms: 3,
            fetch_wait_ms: 5,
            peak_execution_memory_bytes: 100,
            scheduler_delay_ms: 2,
            ..Default::default()
        },
        locality: Some(loc),
    }
}

fn summary(median_ms: f64, max_ms: f64, ended: bool) -> TaskSummaryObs {
    TaskSummaryObs {
        median_ms,
        max_ms,
        ended,
        of_duration: true,
    }
}

/// Stage `id` of group `g` submitted in the event log, with successful tasks of `durations`
/// and one failed task of 10 s (not a successful task: not in the ratio).
fn log_stage_with_tasks(m: &Arc<Model>, g: &str, id: u64, durations: &[i64]) {
    let log = m.observer(Source::EventLog);
    log.upsert_job(APP, &job(g, vec![id]));
    log.upsert_stage(APP, &stage(id, StageStatus::Active, None));
    for (i, d) in durations.iter().enumerate() {
        let t = task(
            id * 100 + i as u64,
            id,
            *d,
            TaskOutcome::Succeeded,
            Locality::NodeLocal,
        );
        log.task_end(APP, &t);
        log.task_end(APP, &t);
    }
    let failed = task(
        id * 100 + 99,
        id,
        10_000,
        TaskOutcome::Failed,
        Locality::Any,
    );
    log.task_end(APP, &failed);
}

#[test]
fn the_event_log_observes_a_complete_stage_once() {
    let m = model();
    log_stage_with_tasks(&m, "g", 5, &[10, 40, 20, 30]);
    assert_eq!(skew(&m, "g"), (0, 0.0), "not before the stage completes");
    let log = m.observer(Source::EventLog);
    log.upsert_stage(APP, &stage(5, StageStatus::Complete, None));
    // The median of 4 is the 3rd shortest (Spark's taskSummary): 40 / 30.
    assert_eq!(skew(&m, "g"), (1, 40.0 / 30.0));
    // Seen again, by REST's final summary, or completed again: still one observation.
    log.upsert_stage(APP, &stage(5, StageStatus::Complete, None));
    let rest = m.observer(Source::Rest);
    rest.upsert_stage(APP, &stage(5, StageStatus::Complete, None));
    rest.set_task_summary(APP, 5, 0, summary(30.0, 40.0, true));
    assert_eq!(skew(&m, "g"), (1, 40.0 / 30.0));
}

#[test]
fn rest_first_then_the_event_log_counts_once() {
    let m = model();
    log_stage_with_tasks(&m, "g", 6, &[10, 10, 10, 90]);
    let rest = m.observer(Source::Rest);
    rest.upsert_job(APP, &job("g", vec![6]));
    // An active stage's summary is partial: never observed.
    rest.set_task_summary(APP, 6, 0, summary(10.0, 20.0, false));
    assert_eq!(skew(&m, "g").0, 0);
    rest.upsert_stage(APP, &stage(6, StageStatus::Complete, None));
    rest.set_task_summary(APP, 6, 0, summary(10.0, 90.0, true));
    assert_eq!(skew(&m, "g"), (1, 9.0));
    m.observer(Source::EventLog)
        .upsert_stage(APP, &stage(6, StageStatus::Complete, None));
    assert_eq!(skew(&m, "g"), (1, 9.0), "the log's completion adds nothing");
}

#[test]
fn stages_without_a_ratio_are_not_observed() {
    let m = model();
    let log = m.observer(Source::EventLog);
    // Failed attempt.
    log_stage_with_tasks(&m, "g", 1, &[10, 20]);
    log.upsert_stage(APP, &stage(1, StageStatus::Failed, None));
    // Median 0 ms.
    log_stage_with_tasks(&m, "g", 2, &[0, 0, 5]);
    log.upsert_stage(APP, &stage(2, StageStatus::Complete, None));
    // A log read from the middle: its submission unseen, so its durations are partial.
    let rest = m.observer(Source::Rest);
    rest.upsert_job(APP, &job("g", vec![3]));
    rest.upsert_stage(APP, &stage(3, StageStatus::Active, None));
    log.task_end(
        APP,
        &task(301, 3, 10, TaskOutcome::Succeeded, Locality::Any),
    );
    log.upsert_stage(APP, &stage(3, StageStatus::Complete, None));
    // REST's executor-run-time fallback (Spark before 3.1) measures something else.
    let mut old = summary(10.0, 50.0, true);
    old.of_duration = false;
    rest.set_task_summary(APP, 3, 0, old);
    assert_eq!(skew(&m, "g").0, 0);
    // REST's final summary still gives stage 3 its ratio.
    rest.set_task_summary(APP, 3, 0, summary(10.0, 50.0, true));
    assert_eq!(skew(&m, "g"), (1, 5.0));
}

#[test]
fn locality_counts_each_task_once_and_only_from_the_log() {
    let m = model();
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    let l = |loc: &str| {
        val(
            &m,
            "spark_task_locality",
            &[("job_group", "g"), ("locality", loc)],
        )
    };
    assert_eq!(
        l("NODE_LOCAL"),
        Some(2.0),
        "each task once, though seen twice"
    );
    assert_eq!(l("ANY"), Some(1.0), "failed tasks count too");
    assert_eq!(l("PROCESS_LOCAL"), Some(0.0), "every level exists, at zero");
    assert_eq!(l("other"), Some(0.0));
    // An application only REST reports on has no locality series, and no scheduler delay.
    let rest = m.observer(Source::Rest);
    rest.upsert_job("rest-only", &job("r", vec![1]));
    rest.upsert_stage("rest-only", &stage(1, StageStatus::Active, None));
    let f = collect(&m);
    assert!(samples(&f, "spark_task_locality", &[("app_id", "rest-only")]).is_empty());
    assert!(samples(
        &f,
        "spark_task_scheduler_delay_seconds",
        &[("app_id", "rest-only")]
    )
    .is_empty());
    assert_eq!(
        samples(&f, "spark_stage_skew_ratio", &[("app_id", "rest-only")]).len(),
        1,
        "the histogram exists for both sources"
    );
}

#[test]
fn diagnosis_sums_merge_rest_and_log_by_max() {
    let m = model();
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    let g = [("job_group", "g")];
    // Three task ends: 3 × (3 ms, 5 ms, 100 B, 2 ms).
    assert_eq!(
        val(&m, "spark_task_deserialize_time_seconds", &g),
        Some(0.009)
    );
    assert_eq!(
        val(&m, "spark_task_shuffle_fetch_wait_seconds", &g),
        Some(0.015)
    );
    assert_eq!(
        val(&m, "spark_task_peak_execution_memory_bytes", &g),
        Some(300.0)
    );
    assert_eq!(
        val(&m, "spark_task_scheduler_delay_seconds", &g),
        Some(0.006)
    );
    // REST's stage totals (larger: a task the log has not reached yet) win, field by field;
    // REST has no scheduler delay, so the log's stays.
    let rest = m.observer(Source::Rest);
    rest.upsert_job(APP, &job("g", vec![5]));
    let totals = TaskTotals {
        deserialize_ms: 12,
        fetch_wait_ms: 1,
        peak_execution_memory_bytes: 400,
        ..Default::default()
    };
    rest.upsert_stage(APP, &stage(5, StageStatus::Complete, Some(totals)));
    assert_eq!(
        val(&m, "spark_task_deserialize_time_seconds", &g),
        Some(0.012)
    );
    assert_eq!(
        val(&m, "spark_task_shuffle_fetch_wait_seconds", &g),
        Some(0.015)
    );
    assert_eq!(
        val(&m, "spark_task_peak_execution_memory_bytes", &g),
        Some(400.0)
    );
    assert_eq!(
        val(&m, "spark_task_scheduler_delay_seconds", &g),
        Some(0.006)
    );
}

#[test]
fn a_retired_stage_keeps_its_observation_and_sums() {
    let clock = Arc::new(AtomicI64::new(1_000_000));
    let c = clock.clone();
    let m = Model::with_clock(
        &Settings::default(),
        Arc::new(Telemetry::default()),
        Arc::new(move || c.load(Ordering::SeqCst)),
    );
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    m.observer(Source::EventLog)
        .upsert_stage(APP, &stage(5, StageStatus::Complete, None));
    let later = clock.fetch_add(3_600_000, Ordering::SeqCst) + 3_600_000;
    m.expire(later);
    assert_eq!(m.view(|v| v.app(APP).map(|a| a.stage_count())), Some(0));
    // Of 2 tasks, Spark's median is the longer one (index floor(2 / 2) = 1).
    assert_eq!(skew(&m, "g"), (1, 1.0));
    let g = [("job_group", "g")];
    assert_eq!(
        val(&m, "spark_task_peak_execution_memory_bytes", &g),
        Some(300.0)
    );
    assert_eq!(skew(&m, "g").0, 1);
}
