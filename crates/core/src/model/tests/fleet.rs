//! What a fleet of applications keeps: summary levels, filters, shards by name, and series per
//! application name across runs (with an exporter restart).

use std::time::Duration;

use crate::model::testkit::*;

/// One run of `name`: two jobs in group `g` (one stage of two tasks each, with a task summary,
/// so each finished stage has a skew ratio of its own while the model holds its detail) on
/// executor 1, started at `start`; ended at `end` with exit code 0 when `end` is given.
fn run(m: &TestModel, id: &str, name: &str, start: i64, end: Option<i64>) {
    let o = m.log();
    o.upsert_app(&app(id).name(name).started(start));
    o.upsert_executor(id, &executor("1"));
    for j in 0..2u64 {
        let jo = job(j)
            .group("g")
            .desc("d")
            .stages([j])
            .submitted(start + 1000);
        o.upsert_job(id, &jo);
        let st = stage(j).tasks(2).submitted(start + 1000);
        o.upsert_stage(id, &st);
        for t in 0..2u64 {
            let te = task_end(j * 2 + t, j)
                .launched(start + 1000)
                .finished(start + 2000)
                .run_time(1000);
            o.task_end(id, &te);
        }
        o.upsert_stage(id, &st.status(StageStatus::Complete).ended_at(start + 2000));
        // As the REST poller reports a just-finished stage's task summary.
        o.set_task_summary(id, j, 0, summary(1000.0, 1000.0));
        o.upsert_job(id, &jo.status(JobStatus::Succeeded).ended_at(start + 3000));
    }
    if let Some(e) = end {
        end_run(m, id, e);
    }
    // As the tailer does at the end of the log.
    o.app_delivered(id);
}

fn end_run(m: &TestModel, id: &str, end: i64) {
    m.log().upsert_app(&app(id).ended_at(end).exit(0));
    m.log().app_delivered(id);
}

/// Jobs of group `g` succeeded in `a`.
fn jobs(a: &App) -> u64 {
    a.group("g").jobs["succeeded"]
}

/// Stages of `a` with a skew ratio of their own.
fn skewed(a: &App) -> usize {
    a.stage_ids(|s| s.skew_ratio.is_some()).len()
}

#[test]
fn an_ended_app_keeps_its_groups_and_drops_its_detail_after_summary_after() {
    let m = TestModel::new();
    run(&m, "a", "etl", T0 - 60_000, Some(T0));
    let full = m.app("a");
    assert_eq!(jobs(&full), 2);
    assert_eq!(full.executors.len(), 1);
    assert_eq!(skewed(&full), 2);
    assert!(
        full.stage_ids(|s| s.active).is_empty(),
        "finished stages have no running-task series"
    );
    assert_eq!(full.runs["succeeded"], 1);

    // Within `summary_after` (5 min by default): everything stays.
    m.at(T0 + 299_000);
    m.expire(m.now_ms());
    assert_eq!(m.app("a").executors.len(), 1);

    m.at(T0 + 301_000);
    m.expire(m.now_ms());
    let sum = m.app("a");
    assert!(sum.executors.is_empty(), "executors dropped");
    assert_eq!(skewed(&sum), 0, "per-stage values dropped");
    let kept = |a: &App| {
        let g = a.group("g");
        (
            g.jobs["succeeded"],
            g.tasks.succeeded,
            g.totals.run_time_ms,
            g.stages["complete"],
            g.job_duration.get("succeeded").map(|h| h.count),
            a.runs["succeeded"],
            a.end_ms,
        )
    };
    assert_eq!(kept(&sum), kept(&full));
    assert_eq!(sum.group("g").tasks.succeeded, 4);
    assert_eq!(full.group("g").job_duration["failed"].count, 0);
    assert!(
        !sum.group("g").job_duration.contains_key("failed"),
        "an empty histogram of an ended application goes"
    );
    let g = full.group("g");
    assert!(!g.stage_duration.is_empty());
    assert!(g.task_duration.is_some());
    assert!(g.skew_ratio.is_some());
    for g in &sum.groups {
        // Per run, a summary keeps job durations only.
        assert!(g.stage_duration.is_empty(), "{g:?}");
        assert!(g.task_duration.is_none(), "{g:?}");
        assert!(g.skew_ratio.is_none(), "{g:?}");
    }
    assert_eq!(sum.executor_states["dead"], 1, "the executor count stays");

    // A late or repeated observation of the dropped detail counts nothing twice.
    run(&m, "a", "etl", T0 - 60_000, Some(T0));
    m.log()
        .task_end("a", &task_end(99, 0).launched(0).finished(1));
    let again = m.app("a");
    assert_eq!(again.group("g").tasks.succeeded, 4);
    assert_eq!(jobs(&again), 2);
    assert_eq!(skewed(&again), 0);
}

#[test]
fn an_app_that_ended_long_ago_is_summarised_as_it_is_read() {
    let m = TestModel::with(|s| s.model.summary_level = SummaryLevel::App);
    run(&m, "old", "etl", T0 - 7_200_000, Some(T0 - 3_600_000));
    run(&m, "live", "etl", T0 - 60_000, None);
    let old = m.app("old");
    assert!(old.groups.is_empty());
    assert_eq!(old.runs["succeeded"], 1);
    assert!(old.end_ms.is_some());
    let live = m.app("live");
    assert_eq!(jobs(&live), 2, "a running application keeps everything");
    assert_eq!(skewed(&live), 2);
}

#[test]
fn a_diagnosis_summarises_nothing_whatever_the_summary_level() {
    let m = TestModel::with(|s| s.model.summary_level = SummaryLevel::App);
    m.model.keep_every_detail();
    run(&m, "old", "etl", T0 - 7_200_000, Some(T0 - 3_600_000));
    m.expire(m.now_ms());
    let old = m.app("old");
    assert_eq!(jobs(&old), 2, "the detail stays");
    assert_eq!(skewed(&old), 2);
    assert_eq!(old.executors.len(), 1);
}

#[test]
fn full_keeps_everything_until_app_retention() {
    let m = TestModel::with(|s| s.model.summary_level = SummaryLevel::Full);
    run(&m, "old", "etl", T0 - 7_200_000, Some(T0 - 3_600_000));
    m.at(T0 + 600_000);
    m.expire(m.now_ms());
    assert_eq!(m.app("old").executors.len(), 1);
}

#[test]
fn filters_drop_applications_by_name_and_by_age_for_good() {
    let m = TestModel::with(|s| {
        s.model.app_name_filter = crate::config::Pattern::new("^etl").ok();
        s.model.max_app_age = Some(Duration::from_secs(3600));
    });
    run(&m, "a", "etl-daily", T0 - 60_000, None);
    run(&m, "b", "adhoc", T0 - 60_000, None);
    run(&m, "c", "etl-old", T0 - 7_200_000, None);
    assert_eq!(m.keys(), ["a"]);
    // Their later events make no stub application reappear.
    m.log().upsert_executor("b", &executor("2").active(None));
    assert!(m.find_app("b").is_none());
    // The window moves on: `a` ages out.
    m.at(T0 + 3_600_000);
    m.expire(m.now_ms());
    assert!(m.apps().is_empty());
}

#[test]
fn name_mode_counts_the_runs_that_end_after_the_start_once_each() {
    let by_name = |s: &mut Settings| s.model.aggregate_by = AggregateBy::AppName;
    let m = TestModel::with(by_name);
    // A run that ended before this exporter started: its series exist, at zero.
    run(&m, "r1", "daily", T0 - 90_000_000, Some(T0 - 86_400_000));
    let d = m.name("daily");
    assert_eq!(jobs(&d), 0);
    assert_eq!(d.runs["succeeded"], 0);
    assert_eq!(d.run_duration.as_ref().map(|h| h.count), Some(0));
    // Read by name: one state per name, none per run (no `app_id`).
    assert!(m.names().iter().all(|n| n.by_name && n.id.is_empty()));
    // A run under way is not counted until it ends.
    m.at(T0 + 10_000);
    run(&m, "r2", "daily", T0 + 1_000, None);
    assert_eq!(jobs(&m.name("daily")), 0);
    end_run(&m, "r2", T0 + 20_000);
    let d = m.name("daily");
    assert_eq!(jobs(&d), 2);
    assert_eq!(d.group("g").tasks.succeeded, 4);
    assert_eq!(
        d.group("g").skew_ratio.as_ref().map(|h| h.count),
        Some(2),
        "each stage once, though both sources report it"
    );
    assert_eq!(d.runs["succeeded"], 1);
    assert_eq!(d.run_duration.as_ref().map(|h| h.count), Some(1));
    assert_eq!(m.names().len(), 1, "one state per name");
    // The run leaves the model (app_retention): its counts stay with its name.
    m.at(T0 + 20_000 + 3_600_000);
    m.expire(m.now_ms());
    assert_eq!(jobs(&m.name("daily")), 2);
    // The next run adds to them.
    let t = T0 + 4_000_000;
    m.at(t);
    run(&m, "r3", "daily", t - 5_000, Some(t));
    let d = m.name("daily");
    assert_eq!(jobs(&d), 4);
    assert_eq!(d.group("g").skew_ratio.as_ref().map(|h| h.count), Some(4));
    assert_eq!(d.runs["succeeded"], 2);
    assert_eq!(d.run_duration.as_ref().map(|h| h.count), Some(2));
    // And it survives its own summary.
    m.at(t + 600_000);
    m.expire(m.now_ms());
    assert_eq!(jobs(&m.name("daily")), 4);

    // A restarted exporter reads the same logs: the runs its predecessor counted ended before
    // it started, so it starts from zero (a new `_created`) and counts the next run only.
    let later = t + 700_000;
    m.at(later);
    let m2 = m.restarted(by_name);
    run(&m2, "r1", "daily", T0 - 90_000_000, Some(T0 - 86_400_000));
    run(&m2, "r2", "daily", T0 + 1_000, Some(T0 + 20_000));
    run(&m2, "r3", "daily", t - 5_000, Some(t));
    let d = m2.name("daily");
    assert_eq!(jobs(&d), 0);
    assert!(d.created_ms >= later, "{}", d.created_ms);
    m2.at(later + 60_000);
    run(&m2, "r4", "daily", later + 1_000, Some(later + 50_000));
    let d = m2.name("daily");
    assert_eq!(jobs(&d), 2);
    assert_eq!(d.runs["succeeded"], 1);
}

#[test]
fn name_mode_shards_by_name() {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let mut seen = std::collections::BTreeMap::new();
    for index in 0..3 {
        let m = TestModel::with(|s| {
            s.model.aggregate_by = AggregateBy::AppName;
            s.shard = crate::shard::Shard { index, count: 3 };
        });
        for (i, n) in names.iter().enumerate() {
            // Two runs of each name: both land on the name's shard.
            run(&m, &format!("{n}-1"), n, T0 - 1000, Some(T0 + i as i64));
            run(&m, &format!("{n}-2"), n, T0 - 1000, Some(T0 + i as i64));
        }
        for s in m.names() {
            let runs = s.runs["succeeded"];
            assert!(
                seen.insert(s.name.clone(), (index, runs)).is_none(),
                "{} twice",
                s.name
            );
            assert_eq!(runs, 2, "{}", s.name);
        }
    }
    assert_eq!(seen.len(), names.len(), "{seen:?}");
    for (n, (i, _)) in &seen {
        assert_eq!(crate::shard::shard_of(n, 3), *i);
    }
}

/// A History Server's order: the application with its end (long ago) first, then its jobs and
/// stages. The summary waits for the end of the delivery, so the groups keep every count.
#[test]
fn rest_order_app_end_before_jobs_counts_every_job_at_the_groups_level() {
    let m = TestModel::new();
    assert_eq!(
        Settings::default().model.summary_level,
        SummaryLevel::Groups
    );
    let o = m.rest();
    o.upsert_app(
        &app("hs")
            .name("etl")
            .started(T0 - 7_200_000)
            .ended_at(T0 - 3_600_000),
    );
    for j in 0..3u64 {
        let jo = job(j)
            .group("g")
            .desc("d")
            .stages([j])
            .status(JobStatus::Succeeded)
            .submitted(T0 - 7_000_000)
            .ended_at(T0 - 6_900_000);
        o.upsert_job("hs", &jo);
    }
    // A periodic pass in the middle of the delivery does not summarise it.
    m.expire(m.now_ms());
    assert_eq!(jobs(&m.app("hs")), 3);
    o.app_delivered("hs");
    m.expire(m.now_ms());
    assert_eq!(jobs(&m.app("hs")), 3, "kept by the summary");
}

/// Two attempts of one YARN application: two runs, each with its jobs (job 0 of both counts),
/// under `attempt_id`; the first, whose log never ended, ends when the second starts.
#[test]
fn attempts_are_runs_of_their_own_with_an_attempt_label() {
    let m = TestModel::with(|s| s.model.summary_level = SummaryLevel::Full);
    let id = "application_1_0001";
    let k2 = app_key(id, Some("2"));
    let k1 = app_key(id, Some("1"));
    // The second attempt's log read first.
    run(&m, &k2, "etl", T0 - 30_000, Some(T0 - 10_000));
    run(&m, &k1, "etl", T0 - 60_000, None);
    for (k, a) in [(&k1, "1"), (&k2, "2")] {
        let at = m.app(k);
        assert_eq!((at.id.as_str(), at.attempt.as_deref()), (id, Some(a)));
        assert_eq!(jobs(&at), 2, "attempt {a}");
    }
    assert_eq!(m.app(&k1).end_ms, Some(T0 - 30_000), "ended by attempt 2");
    assert_eq!(m.app(&k2).end_ms, Some(T0 - 10_000));
    // An application without attempts has no attempt label.
    run(&m, "local-1", "etl", T0 - 60_000, Some(T0 - 1_000));
    assert_eq!(m.app("local-1").attempt, None);
    assert!(m.view(|v| v
        .app(id)
        .is_some_and(|a| a.attempt().map(|x| &**x) == Some("2"))));
}

/// After a start, with both sources running (a sidecar): an application is served only once
/// its log is read to its end and REST has given its state (its poll of it, or its first poll
/// without it); then for good.
#[test]
fn a_started_exporter_serves_an_application_once_every_source_gave_its_state() {
    let m = TestModel::new();
    m.expect_sources(&[REST, LOG]);
    // The log, read to its end (`run` ends with the tailer's delivery).
    run(&m, "a", "etl", T0 - 60_000, None);
    assert!(m.keys().is_empty(), "REST has not polled yet");
    assert!(!m.view(|v| v.startup_complete()));
    // REST polls it: served.
    let rest = m.rest();
    rest.upsert_app(&app("a"));
    assert!(m.keys().is_empty(), "in the middle of the REST poll");
    rest.app_delivered("a");
    assert_eq!(m.keys(), ["a"]);
    // Another log, half read: absent until its end, or until both start-up reads are done.
    let log = m.log();
    log.upsert_app(&app("b"));
    rest.startup_done();
    assert_eq!(m.keys(), ["a"]);
    log.startup_done();
    assert!(m.view(|v| v.startup_complete()));
    assert_eq!(m.keys(), ["a", "b"]);
    assert!(
        !m.telemetry().snapshot().startup_pending,
        "spark_exporter_startup_complete is 1"
    );
}

/// In name mode an attempt is a run of its name: no attempt label, both attempts counted.
#[test]
fn by_name_each_attempt_is_a_run_of_the_name() {
    let m = TestModel::with(|s| s.model.aggregate_by = AggregateBy::AppName);
    run(
        &m,
        &app_key("application_1_0001", Some("1")),
        "etl",
        T0 + 1_000,
        None,
    );
    run(
        &m,
        &app_key("application_1_0001", Some("2")),
        "etl",
        T0 + 9_000,
        Some(T0 + 20_000),
    );
    let names = m.names();
    let [etl] = &names[..] else {
        panic!("one state per name: {names:?}")
    };
    // Attempt 1 never said it ended: it ended when attempt 2 started.
    assert_eq!(etl.runs["unknown"], 1);
    assert_eq!(etl.runs["succeeded"], 1);
    assert_eq!(jobs(etl), 4, "both attempts' two jobs");
    // A name's state: neither `app_id` nor `attempt_id`.
    assert!(etl.by_name && etl.id.is_empty() && etl.attempt.is_none());
}
