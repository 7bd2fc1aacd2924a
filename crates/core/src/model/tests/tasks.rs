//! The skew-ratio histogram, locality counts and the diagnosis sums through the model: once per
//! stage attempt or task, whichever source reports first.

use crate::model::testkit::*;

/// `(count, sum)` of group `g`'s skew-ratio histogram in [`APP`].
fn skew(m: &TestModel, g: &str) -> (u64, f64) {
    let a = m.app(APP);
    let h = a
        .group(g)
        .skew_ratio
        .as_ref()
        .expect("a skew-ratio histogram");
    (h.count, h.sum)
}

/// A task end of `ms` with the diagnosis metrics (3 ms deserializing, 5 ms fetch wait, 100 B
/// peak execution memory, 2 ms scheduler delay).
fn task(id: u64, stage_id: u64, ms: i64, outcome: TaskOutcome, loc: Locality) -> TaskEndObs {
    task_end(id, stage_id)
        .outcome(outcome)
        .duration(ms)
        .locality(loc)
        .metrics(TaskTotals {
            deserialize_ms: 3,
            fetch_wait_ms: 5,
            peak_execution_memory_bytes: 100,
            scheduler_delay_ms: 2,
            ..Default::default()
        })
}

/// Stage `id` of group `g` submitted in the event log, with successful tasks of `durations`
/// and one failed task of 10 s (not a successful task: not in the ratio).
fn log_stage_with_tasks(m: &TestModel, g: &str, id: u64, durations: &[i64]) {
    let log = m.log();
    log.upsert_job(APP, &job(id).group(g).stages([id]));
    log.upsert_stage(APP, &stage(id));
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
    let m = TestModel::new();
    log_stage_with_tasks(&m, "g", 5, &[10, 40, 20, 30]);
    assert_eq!(skew(&m, "g"), (0, 0.0), "not before the stage completes");
    let log = m.log();
    log.upsert_stage(APP, &stage(5).status(StageStatus::Complete));
    // The median of 4 is the 3rd shortest (Spark's taskSummary): 40 / 30.
    assert_eq!(skew(&m, "g"), (1, 40.0 / 30.0));
    // Seen again, by REST's final summary, or completed again: still one observation.
    log.upsert_stage(APP, &stage(5).status(StageStatus::Complete));
    let rest = m.rest();
    rest.upsert_stage(APP, &stage(5).status(StageStatus::Complete));
    rest.set_task_summary(APP, 5, 0, summary(30.0, 40.0));
    assert_eq!(skew(&m, "g"), (1, 40.0 / 30.0));
}

#[test]
fn rest_first_then_the_event_log_counts_once() {
    let m = TestModel::new();
    log_stage_with_tasks(&m, "g", 6, &[10, 10, 10, 90]);
    let rest = m.rest();
    rest.upsert_job(APP, &job(6).group("g").stages([6]));
    // An active stage's summary is partial: never observed.
    rest.set_task_summary(APP, 6, 0, summary(10.0, 20.0).ended(false));
    assert_eq!(skew(&m, "g").0, 0);
    rest.upsert_stage(APP, &stage(6).status(StageStatus::Complete));
    rest.set_task_summary(APP, 6, 0, summary(10.0, 90.0));
    assert_eq!(skew(&m, "g"), (1, 9.0));
    m.log()
        .upsert_stage(APP, &stage(6).status(StageStatus::Complete));
    assert_eq!(skew(&m, "g"), (1, 9.0), "the log's completion adds nothing");
}

#[test]
fn stages_without_a_ratio_are_not_observed() {
    let m = TestModel::new();
    let log = m.log();
    // Failed attempt.
    log_stage_with_tasks(&m, "g", 1, &[10, 20]);
    log.upsert_stage(APP, &stage(1).status(StageStatus::Failed));
    // Median 0 ms.
    log_stage_with_tasks(&m, "g", 2, &[0, 0, 5]);
    log.upsert_stage(APP, &stage(2).status(StageStatus::Complete));
    // A log read from the middle: its submission unseen, so its durations are partial.
    let rest = m.rest();
    rest.upsert_job(APP, &job(3).group("g").stages([3]));
    rest.upsert_stage(APP, &stage(3));
    log.task_end(
        APP,
        &task(301, 3, 10, TaskOutcome::Succeeded, Locality::Any),
    );
    log.upsert_stage(APP, &stage(3).status(StageStatus::Complete));
    // REST's executor-run-time fallback (Spark before 3.1) measures something else.
    rest.set_task_summary(APP, 3, 0, summary(10.0, 50.0).of_duration(false));
    assert_eq!(skew(&m, "g").0, 0);
    // REST's final summary still gives stage 3 its ratio.
    rest.set_task_summary(APP, 3, 0, summary(10.0, 50.0));
    assert_eq!(skew(&m, "g"), (1, 5.0));
}

#[test]
fn locality_counts_each_task_once_and_only_from_the_log() {
    let m = TestModel::new();
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    let a = m.app(APP);
    let l = &a.group("g").locality;
    assert_eq!(l["NODE_LOCAL"], 2, "each task once, though seen twice");
    assert_eq!(l["ANY"], 1, "failed tasks count too");
    assert_eq!(l["PROCESS_LOCAL"], 0, "every level exists, at zero");
    assert_eq!(l["other"], 0);
    // An application only REST reports on has no locality counts, and no scheduler delay.
    let rest = m.rest();
    rest.upsert_job("rest-only", &job(1).group("r").stages([1]));
    rest.upsert_stage("rest-only", &stage(1));
    let r = m.app("rest-only");
    assert!(r.groups.iter().all(|g| g.locality.is_empty()));
    assert!(r
        .groups
        .iter()
        .all(|g| !g.from_log && g.totals.scheduler_delay_ms == 0));
    assert_eq!(
        r.groups.iter().filter(|g| g.skew_ratio.is_some()).count(),
        1,
        "the histogram exists for both sources"
    );
}

#[test]
fn diagnosis_sums_merge_rest_and_log_by_max() {
    let m = TestModel::new();
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    let totals = |m: &TestModel| m.app(APP).group("g").totals;
    // Three task ends: 3 × (3 ms, 5 ms, 100 B, 2 ms).
    let t = totals(&m);
    assert_eq!(t.deserialize_ms, 9);
    assert_eq!(t.fetch_wait_ms, 15);
    assert_eq!(t.peak_execution_memory_bytes, 300);
    assert_eq!(t.scheduler_delay_ms, 6);
    // REST's stage totals (larger: a task the log has not reached yet) win, field by field;
    // REST has no scheduler delay, so the log's stays.
    let rest = m.rest();
    rest.upsert_job(APP, &job(5).group("g").stages([5]));
    let rest_totals = TaskTotals {
        deserialize_ms: 12,
        fetch_wait_ms: 1,
        peak_execution_memory_bytes: 400,
        ..Default::default()
    };
    rest.upsert_stage(
        APP,
        &stage(5).status(StageStatus::Complete).totals(rest_totals),
    );
    let t = totals(&m);
    assert_eq!(t.deserialize_ms, 12);
    assert_eq!(t.fetch_wait_ms, 15);
    assert_eq!(t.peak_execution_memory_bytes, 400);
    assert_eq!(t.scheduler_delay_ms, 6);
}

#[test]
fn a_retired_stage_keeps_its_observation_and_sums() {
    let m = TestModel::new();
    log_stage_with_tasks(&m, "g", 5, &[10, 40]);
    m.log()
        .upsert_stage(APP, &stage(5).status(StageStatus::Complete));
    let later = m.advance(3_600_000);
    m.expire(later);
    assert_eq!(m.app(APP).stage_count, 0);
    // Of 2 tasks, Spark's median is the longer one (index floor(2 / 2) = 1).
    assert_eq!(skew(&m, "g"), (1, 1.0));
    assert_eq!(
        m.app(APP).group("g").totals.peak_execution_memory_bytes,
        300
    );
    assert_eq!(skew(&m, "g").0, 1);
}
