//! The model's tests, through the read view with one test kit (`testkit.rs`): here idempotence,
//! source merging, retention and label control; in the files beside this one, cost and cached
//! data (`cost.rs`), memory held and money (`money.rs`), fleets (`fleet.rs`), runs that regress
//! (`runs.rs`), stages (`stage.rs`)
//! and task rules (`tasks.rs`).

mod cost;
mod findings;
mod fleet;
mod money;
mod runs;
mod stage;
mod tasks;

use crate::model::testkit::*;

#[test]
fn a_job_seen_twice_or_by_two_sources_counts_once() {
    let m = TestModel::new();
    let j = job(0).group("g").stages([0]).status(JobStatus::Succeeded);
    m.rest().upsert_job(APP, &j);
    m.rest().upsert_job(APP, &j);
    m.log().upsert_job(APP, &j);
    let a = m.app(APP);
    let g = a.group("g");
    assert_eq!(g.jobs["succeeded"], 1);
    assert_eq!(g.jobs["failed"], 0);
    assert_eq!(g.job_duration["succeeded"].count, 1, "one observation");
}

#[test]
fn running_then_ended_job_keeps_its_labels_and_duration() {
    let m = TestModel::new();
    m.log()
        .upsert_job(APP, &job(3).group("etl").desc("etl desc"));
    assert_eq!(m.app(APP).group("etl").active_jobs, 1);
    // The event log's JobEnd carries neither group nor description.
    m.log()
        .upsert_job(APP, &job(3).status(JobStatus::Failed).submitted(None));
    let a = m.app(APP);
    let g = a.group("etl");
    assert_eq!(g.desc, "etl desc");
    assert_eq!(g.active_jobs, 0);
    assert_eq!(g.jobs["failed"], 1);
    assert_eq!(g.job_duration["failed"].count, 1);
}

#[test]
fn stage_totals_from_rest_and_event_log_merge_not_add() {
    let m = TestModel::new();
    m.rest().upsert_job(APP, &job(0).group("g").stages([7]));
    m.rest()
        .upsert_stage(APP, &stage(7).counts(counts(2, 0, 0)).run_time(200));
    m.log().upsert_stage(APP, &stage(7));
    let task = |id| task_end(id, 7).duration(100).run_time(100);
    m.log().task_end(APP, &task(1));
    m.log().task_end(APP, &task(2));
    m.log().task_end(APP, &task(3));
    // The same log read again (truncation, retried step): no double count.
    m.log().task_end(APP, &task(3));
    let a = m.app(APP);
    let g = a.group("g");
    assert_eq!(g.tasks.succeeded, 3, "max(2 from REST, 3 from log)");
    assert_eq!(g.totals.run_time_ms, 300);
    assert_eq!(a.executor("1").unwrap().totals.task_time_ms, 300);
    assert_eq!(g.active_stages, 1);
    assert_eq!(g.task_duration.as_ref().map(|h| h.count), Some(3));
}

#[test]
fn counters_survive_stage_retirement_and_ui_retention() {
    let m = TestModel::new();
    let j = job(0).group("g").stages([1]).status(JobStatus::Succeeded);
    let s = stage(1)
        .status(StageStatus::Complete)
        .counts(counts(4, 1, 0))
        .run_time(400);
    m.rest().upsert_job(APP, &j);
    m.rest().upsert_stage(APP, &s);
    let counted = |a: &App| {
        let g = a.group("g");
        (
            g.tasks.succeeded,
            g.tasks.failed,
            g.stages["complete"],
            g.jobs["succeeded"],
            g.totals.run_time_ms,
        )
    };
    let before = counted(&m.app(APP));
    // Retention window passes: the stage's own values go, its totals stay in the group.
    m.advance(3_600_000);
    m.expire(m.now_ms());
    // Spark dropped the stage from its UI, then a stale or repeated observation arrives.
    m.rest().upsert_stage(APP, &s);
    m.rest().upsert_job(APP, &j);
    let after = m.app(APP);
    assert_eq!(counted(&after), before);
    assert_eq!(after.group("g").tasks.succeeded, 4);
    assert!(
        !after.stage_ids(|s| s.active).contains(&1),
        "no running tasks"
    );
}

#[test]
fn event_log_job_end_infers_skipped_stages_once() {
    let m = TestModel::new();
    m.log().upsert_job(APP, &job(0).group("g").stages([1, 2]));
    m.log().upsert_stage(APP, &stage(2));
    m.log()
        .upsert_stage(APP, &stage(2).status(StageStatus::Complete));
    m.log()
        .upsert_job(APP, &job(0).group("g").status(JobStatus::Succeeded));
    // REST later reports the same stage as skipped: no double count.
    m.rest()
        .upsert_stage(APP, &stage(1).status(StageStatus::Skipped));
    let a = m.app(APP);
    assert_eq!(a.group("g").stages["skipped"], 1);
    assert_eq!(a.group("g").stages["complete"], 1);
}

#[test]
fn executor_removal_counts_once_and_never_for_the_driver() {
    let m = TestModel::new();
    let mut e = executor("3");
    m.rest().upsert_executor(APP, &e);
    e = e
        .active(false)
        .reason("Executor heartbeat timed out after 120000 ms");
    m.log().upsert_executor(APP, &e);
    m.rest().upsert_executor(APP, &e);
    e.active = Some(true); // a stale REST answer must not revive it
    m.rest().upsert_executor(APP, &e);
    m.rest()
        .upsert_executor(APP, &executor("driver").active(false));
    let a = m.app(APP);
    assert_eq!(a.executors_removed.get("heartbeat_timeout"), Some(&1));
    assert_eq!(a.executors_removed.get("other"), None);
    assert_eq!(a.executor_states["dead"], 2);
    assert_eq!(a.executor_states["active"], 0);
}

#[test]
fn stalled_seconds_count_from_the_last_task_end() {
    let m = TestModel::new();
    m.at(10_000);
    m.log().upsert_job(APP, &job(0).group("g").stages([5]));
    m.log().upsert_stage(APP, &stage(5).submitted(10_000));
    m.at(70_000);
    let stalled = |m: &TestModel| m.app(APP).stage(5).and_then(|s| s.stalled_seconds);
    assert_eq!(stalled(&m), Some(60.0));
    m.log().task_end(APP, &task_end(1, 5).finished(40_000));
    assert_eq!(stalled(&m), Some(30.0));
}

#[test]
fn descriptions_fold_by_rules_then_by_cap() {
    let m = TestModel::with(|s| s.labels.max_values_per_label = 3);
    for (i, day) in ["2026-11-01", "2026-11-02", "2026-11-03"]
        .iter()
        .enumerate()
    {
        let j = job(i as u64)
            .group("report")
            .desc(&format!("revenue for {day}"))
            .status(JobStatus::Succeeded);
        m.rest().upsert_job(APP, &j);
    }
    for (i, q) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        let j = job(10 + i as u64)
            .group("adhoc")
            .desc(&format!("query {q}"))
            .status(JobStatus::Succeeded);
        m.rest().upsert_job(APP, &j);
    }
    let a = m.app(APP);
    assert_eq!(a.group(Desc("revenue for {date}")).jobs["succeeded"], 3);
    assert_eq!(a.group(Desc("__other__")).jobs["succeeded"], 3);
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
    let m = TestModel::new();
    m.rest().upsert_app(&app("old").name("n"));
    m.rest().upsert_app(&app("new").name("n"));
    m.rest().app_gone("old", m.now_ms());
    assert!(m.app("old").end_ms.is_some());
    assert!(m.app("new").end_ms.is_none());
    m.advance(2 * 3_600_000);
    m.expire(m.now_ms());
    assert!(m.find_app("old").is_none());
    assert_eq!(m.keys(), ["new"]);
}

#[test]
fn streaming_batches_count_once_per_batch_id() {
    let m = TestModel::new();
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
        m.log().streaming_progress(APP, &p(b));
    }
    let a = m.app(APP);
    let q = &a.streams["events"];
    assert_eq!(q.batches, 3);
    assert_eq!(q.input_rows, 30);
    assert_eq!(q.batch_duration.sum, 1.5);
}

#[test]
fn a_rest_stage_seen_before_its_job_waits_for_the_job_labels() {
    let m = TestModel::new();
    let done = |id| {
        stage(id)
            .status(StageStatus::Complete)
            .counts(counts(1, 0, 0))
            .run_time(10)
    };
    m.rest().upsert_stage(APP, &done(4));
    assert!(
        m.apps().iter().all(|a| a.groups.is_empty()),
        "no group counts it yet"
    );
    m.rest().upsert_job(
        APP,
        &job(2)
            .group("late")
            .stages([4])
            .status(JobStatus::Succeeded),
    );
    assert_eq!(m.app(APP).group("late").stages["complete"], 1);
    // A stage whose job never shows up is applied after the wait, with fallback labels.
    m.rest().upsert_stage(APP, &done(9).desc("orphan"));
    m.advance(ORPHAN_WAIT_MS);
    m.expire(m.now_ms());
    assert_eq!(m.app(APP).group(Desc("orphan")).stages["complete"], 1);
}

#[test]
fn running_tasks_from_the_event_log_are_starts_minus_ends() {
    let m = TestModel::new();
    m.log().upsert_job(APP, &job(0).group("g").stages([3]));
    // The event log does not say how many tasks run.
    m.log().upsert_stage(APP, &stage(3).active_tasks(None));
    for id in [10, 11, 12] {
        m.log().task_start(APP, &task_start(id, 3));
        m.log().task_start(APP, &task_start(id, 3)); // read twice
    }
    m.log().task_end(APP, &task_end(11, 3).duration(5));
    m.log().task_end(APP, &task_end(11, 3).duration(5));
    let a = m.app(APP);
    let s = a.stage(3).unwrap();
    assert!(s.active);
    assert_eq!(s.running_tasks, 2);
    assert_eq!(a.executor("1").unwrap().running_tasks, 2);
}

/// A reader's batch ([`Observer::batch`]: one take of the model's lock) leaves the model as the
/// same calls made one at a time do, and a render sees the batch whole or not at all.
#[test]
fn a_batch_is_its_calls_made_one_at_a_time() {
    let calls = |o: &dyn Observer| {
        o.upsert_app(&app(APP));
        o.upsert_job(APP, &job(0).group("g").stages([3]));
        o.upsert_stage(APP, &stage(3).active_tasks(None));
        for id in [10, 11, 12] {
            o.task_start(APP, &task_start(id, 3));
        }
        o.task_end(APP, &task_end(11, 3).duration(5));
        o.upsert_stage(APP, &stage(3).status(StageStatus::Complete));
        o.upsert_job(APP, &job(0).status(JobStatus::Succeeded));
        o.app_delivered(APP);
    };
    let one = TestModel::new();
    calls(&one.log());
    let batched = TestModel::new();
    let before = batched.model.generation();
    batched.log().batch(&mut |o| calls(o));
    assert_eq!(batched.model.generation(), before + 1, "one write");
    assert_eq!(format!("{:?}", batched.apps()), format!("{:?}", one.apps()));
    assert_eq!(batched.app(APP).group("g").jobs["succeeded"], 1);
}

/// A reader's try ([`Observer::try_batch`]) while another holds the model's lock applies
/// nothing and says so; once the lock is free it applies its calls in one write.
#[test]
fn a_try_at_a_taken_lock_applies_nothing() {
    let m = TestModel::new();
    let obs = m.log();
    let calls = |o: &dyn Observer| {
        o.upsert_app(&app(APP));
        o.app_delivered(APP);
    };
    let mut called = false;
    let took = m.model.view(|_| {
        obs.try_batch(&mut |o| {
            called = true;
            calls(o);
        })
    });
    assert!(!took && !called, "the lock was held by the view");
    assert!(m.find_app(APP).is_none());
    let before = m.model.generation();
    assert!(obs.try_batch(&mut |o| calls(o)));
    assert_eq!(m.model.generation(), before + 1, "one write");
    assert!(m.find_app(APP).is_some());
}

/// Every counter and histogram of a job group, SQL description and streaming query exists at
/// zero, for every status, from the moment the key is first seen: a job, an execution or a
/// query starting.
#[test]
fn series_are_born_at_zero_when_their_key_is_first_seen() {
    let m = TestModel::new();
    let o = m.log();
    o.upsert_sql(APP, &sql(4).desc("load"));
    o.upsert_job(APP, &job(1).group("etl").sql(4));
    o.streaming_started(APP, &query_started("q-1").name("events"));
    let a = m.app(APP);
    let g = a.group("etl");
    for status in ["succeeded", "failed"] {
        assert_eq!(g.jobs[status], 0, "jobs {status}");
        assert_eq!(g.job_duration[status].count, 0, "job hist {status}");
    }
    for status in ["complete", "failed"] {
        assert_eq!(g.stages[status], 0, "stages {status}");
        assert_eq!(g.stage_duration[status].count, 0, "stage hist {status}");
    }
    assert_eq!(g.tasks, counts(0, 0, 0));
    assert_eq!(
        g.task_duration.as_ref().map(|h| h.count),
        Some(0),
        "event-log task hist"
    );
    assert_eq!(g.totals.run_time_ms, 0);
    let q = a.sql_desc("etl", "load").expect("etl/load");
    let hists = q.duration.as_ref().expect("counters of its own");
    for status in ["completed", "failed"] {
        assert_eq!(q.ended[status], 0, "sql {status}");
        assert_eq!(hists[status].count, 0, "sql hist {status}");
    }
    let s = &a.streams["events"];
    assert_eq!(s.batches, 0);
    assert_eq!(s.input_rows, 0);
    assert_eq!(s.batch_duration.count, 0);
    // Everything of the application counts from when the model first saw it.
    assert!(m.apps().iter().all(|a| a.created_ms == T0));
}

/// Over REST alone task durations are never known: no task-duration histogram at zero.
#[test]
fn rest_alone_has_no_task_duration_histogram() {
    let m = TestModel::new();
    m.rest().upsert_job(APP, &job(1).group("etl"));
    let a = m.app(APP);
    let g = a.group("etl");
    assert!(g.task_duration.is_none());
    assert_eq!(g.job_duration["failed"].count, 0);
}

/// A SQL execution counts under its jobs' group: the event log's jobs name their execution,
/// REST's executions name their jobs. One that runs no job counts under the empty group, from
/// either source (REST cannot tell its group).
#[test]
fn sql_executions_count_under_their_jobs_group() {
    let m = TestModel::new();
    let log = m.log();
    let ended = |id, desc| sql(id).desc(desc).status(SqlStatus::Completed);
    // Event log: start (no group known), a job of it, end.
    log.upsert_sql(APP, &sql(1).desc("load"));
    let a = m.app(APP);
    let q = a.sql_desc("", "load").expect("\"\"/load");
    assert_eq!(q.running, 1, "unknown while no job ran");
    assert!(
        q.duration.is_none(),
        "no counter under a group that is not the execution's"
    );
    log.upsert_job(APP, &job(10).group("etl").sql(1));
    let a = m.app(APP);
    let q = a.sql_desc("etl", "load").expect("etl/load");
    assert_eq!(q.running, 1);
    assert!(q.duration.is_some(), "born at zero once the group is known");
    assert_eq!(q.ended["completed"], 0);
    log.upsert_sql(APP, &ended(1, "load"));
    // REST: the jobs first, then an execution naming them.
    let rest = m.rest();
    rest.upsert_job(APP, &job(20).group("report").status(JobStatus::Succeeded));
    rest.upsert_sql(APP, &ended(2, "sum").jobs([21, 20]));
    // Jobless: the empty group.
    log.upsert_sql(APP, &ended(4, "show"));
    // Seen again by the other source: counted once.
    rest.upsert_sql(APP, &ended(1, "load").jobs([10]));
    let a = m.app(APP);
    for (group, desc) in [("etl", "load"), ("report", "sum"), ("", "show")] {
        let q = a.sql_desc(group, desc).expect(desc);
        assert!(q.duration.is_some(), "{group}/{desc}");
        assert_eq!(q.ended["completed"], 1, "{group}/{desc}");
    }
    assert!(
        a.sql_desc("", "load").is_none_or(|q| q.duration.is_none()),
        "no counter left under the empty group for an execution whose job told its group"
    );
}

/// With no job group and no tag, a job counts under its call site, line number kept (the
/// rewrite rules would fold every line of a file into one group).
#[test]
fn a_job_without_group_or_tag_counts_under_its_call_site() {
    let m = TestModel::new();
    let j = job(1)
        .name("count at /srv/jobs/etl.py:142")
        .status(JobStatus::Succeeded);
    m.log().upsert_job(APP, &j);
    assert_eq!(m.app(APP).group("count at etl.py:142").jobs["succeeded"], 1);
}

/// A streaming run's jobs whose description user code replaced (`setJobDescription` inside
/// `foreachBatch`) keep the run id as job group: the `QueryStartedEvent` (event log) names the
/// query, so they count under its name, with their own description.
#[test]
fn a_streaming_runs_jobs_count_under_its_query_whatever_their_description() {
    let m = TestModel::new();
    const RUN: &str = "05ee1333-6b6a-4ea8-99d9-c7b84cb67ef4";
    m.log().streaming_started(
        APP,
        &query_started("1a8d25d9-1b6e-4b84-90af-3bc3c0da28ec").run(RUN),
    );
    let j = job(1)
        .group(RUN)
        .desc("merge into target")
        .status(JobStatus::Succeeded);
    m.log().upsert_job(APP, &j);
    let a = m.app(APP);
    let g = a.group(("query-1a8d25d9", "merge into target"));
    assert_eq!(g.jobs["succeeded"], 1);
}

/// The applications are held in a hash map (an event's lookup of its application is one hash),
/// but whatever walks them walks them in id order: the read view, and a checkpoint, whose bytes
/// are then the same however the ids hash.
#[test]
fn applications_are_read_and_saved_in_id_order() {
    let m = TestModel::new();
    let o = m.log();
    let ids: Vec<String> = (0..200)
        .map(|i| format!("local-17960{:03}", (i * 37) % 200))
        .collect();
    for id in &ids {
        o.upsert_app(&app(id));
        o.app_delivered(id);
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(m.keys(), sorted, "the read view");
    let mut bytes = Vec::new();
    m.save_state(&mut bytes).expect("save");
    let text = String::from_utf8(bytes).expect("JSON");
    let at: Vec<usize> = sorted
        .iter()
        .map(|id| {
            text.find(&format!("\"{id}\":"))
                .expect("each application saved")
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "the checkpoint");
}
