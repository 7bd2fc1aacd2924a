//! What a fleet of applications keeps: summary levels, filters, shards by name, and series per
//! application name across runs (with an exporter restart).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::config::{AggregateBy, Settings, SummaryLevel};
use crate::export::families::{collect, Family, Value};
use crate::telemetry::Telemetry;

const T0: i64 = 1_000_000_000;

fn model_at(clock: &Arc<AtomicI64>, settings: &Settings) -> Arc<Model> {
    let c = clock.clone();
    Model::with_clock(
        settings,
        Arc::new(Telemetry::default()),
        Arc::new(move || c.load(Ordering::SeqCst)),
    )
}

/// Samples of `name` whose labels include all of `want`: (labels, value).
fn samples(f: &[Family], name: &str, want: &[(&str, &str)]) -> Vec<(Vec<String>, f64)> {
    let Some(fam) = f.iter().find(|x| x.name == name) else {
        return vec![];
    };
    fam.samples
        .iter()
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && &**lv == *v))
        })
        .map(|s| {
            let l = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let v = match &s.value {
                Value::Hist(_, _, n) => *n as f64,
                v => v.as_f64(),
            };
            (l, v)
        })
        .collect()
}

/// The one value of `name` with `want`, `None` if absent.
fn val(f: &[Family], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let s = samples(f, name, want);
    assert!(s.len() <= 1, "{name} {want:?}: {s:?}");
    s.first().map(|x| x.1)
}

/// One run of `name`: two jobs in group `g` (one stage of two tasks each, with a task summary,
/// so each finished stage has a `spark_stage_task_skew_ratio` while the model holds its detail)
/// on executor 1, started at `start`; ended at `end` with exit code 0 when `end` is given.
fn run(m: &Arc<Model>, id: &str, name: &str, start: i64, end: Option<i64>) {
    let o = m.observer(Source::EventLog);
    o.upsert_app(&AppObs {
        app_id: id.into(),
        name: Some(name.into()),
        start_ms: Some(start),
        ..Default::default()
    });
    o.upsert_executor(
        id,
        &ExecutorObs {
            executor_id: "1".into(),
            active: Some(true),
            ..Default::default()
        },
    );
    for j in 0..2u64 {
        let mut job = JobObs {
            job_id: j,
            job_group: Some("g".into()),
            description: Some("d".into()),
            status: JobStatus::Running,
            submission_ms: Some(start + 1000),
            completion_ms: None,
            stage_ids: vec![j],
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        };
        o.upsert_job(id, &job);
        let mut st = StageObs {
            stage_id: j,
            attempt: 0,
            status: StageStatus::Active,
            name: Some(format!("stage {j}")),
            job_group: None,
            description: None,
            num_tasks: Some(2),
            active_tasks: None,
            submission_ms: Some(start + 1000),
            completion_ms: None,
            task_counts: None,
            totals: None,
        };
        o.upsert_stage(id, &st);
        for t in 0..2u64 {
            o.task_end(
                id,
                &TaskEndObs {
                    stage_id: j,
                    attempt: 0,
                    task_id: j * 2 + t,
                    executor_id: "1".into(),
                    outcome: TaskOutcome::Succeeded,
                    launch_ms: start + 1000,
                    finish_ms: start + 2000,
                    metrics: TaskTotals {
                        run_time_ms: 1000,
                        ..Default::default()
                    },
                    locality: None,
                },
            );
        }
        st.status = StageStatus::Complete;
        st.completion_ms = Some(start + 2000);
        o.upsert_stage(id, &st);
        // As the REST poller reports a just-finished stage's task summary.
        o.set_task_summary(
            id,
            j,
            0,
            TaskSummaryObs {
                median_ms: 1000.0,
                max_ms: 1000.0,
                ended: true,
                of_duration: true,
            },
        );
        job.status = JobStatus::Succeeded;
        job.completion_ms = Some(start + 3000);
        o.upsert_job(id, &job);
    }
    if let Some(e) = end {
        end_run(m, id, e);
    }
    // As the tailer does at the end of the log.
    o.app_delivered(id);
}

fn end_run(m: &Arc<Model>, id: &str, end: i64) {
    m.observer(Source::EventLog).upsert_app(&AppObs {
        app_id: id.into(),
        end_ms: Some(end),
        exit_code: Some(0),
        ..Default::default()
    });
    m.observer(Source::EventLog).app_delivered(id);
}

const G: [(&str, &str); 2] = [("job_group", "g"), ("status", "succeeded")];

#[test]
fn an_ended_app_keeps_its_groups_and_drops_its_detail_after_summary_after() {
    let clock = Arc::new(AtomicI64::new(T0));
    let m = model_at(&clock, &Settings::default());
    run(&m, "a", "etl", T0 - 60_000, Some(T0));
    let full = collect(&m);
    assert_eq!(val(&full, "spark_jobs", &G), Some(2.0));
    assert!(val(&full, "spark_executor_task_time_seconds", &[]).is_some());
    assert_eq!(samples(&full, "spark_stage_task_skew_ratio", &[]).len(), 2);
    assert!(
        samples(&full, "spark_stage_tasks_active", &[]).is_empty(),
        "finished stages have no running-task series"
    );
    assert_eq!(
        val(&full, "spark_app_runs", &[("status", "succeeded")]),
        Some(1.0)
    );

    // Within `summary_after` (5 min by default): everything stays.
    clock.store(T0 + 299_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    assert!(val(&collect(&m), "spark_executor_task_time_seconds", &[]).is_some());

    clock.store(T0 + 301_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    let sum = collect(&m);
    for f in [
        "spark_executor_task_time_seconds",
        "spark_stage_task_skew_ratio",
        "spark_executor_tasks",
    ] {
        assert!(samples(&sum, f, &[]).is_empty(), "{f} dropped");
    }
    for (f, l) in [
        ("spark_jobs", G.to_vec()),
        ("spark_tasks", G.to_vec()),
        ("spark_task_run_time_seconds", vec![("job_group", "g")]),
        ("spark_stages", vec![("status", "complete")]),
        ("spark_job_duration_seconds", G.to_vec()),
        ("spark_app_runs", vec![("status", "succeeded")]),
        ("spark_app_end_time_seconds", vec![]),
    ] {
        assert_eq!(val(&sum, f, &l), val(&full, f, &l), "{f} {l:?} kept");
    }
    assert_eq!(val(&sum, "spark_tasks", &G), Some(4.0));
    assert_eq!(
        val(&full, "spark_job_duration_seconds", &[("status", "failed")]),
        Some(0.0)
    );
    assert_eq!(
        val(&sum, "spark_job_duration_seconds", &[("status", "failed")]),
        None,
        "an empty histogram of an ended application goes"
    );
    for f in [
        "spark_stage_duration_seconds",
        "spark_task_duration_seconds",
        "spark_stage_skew_ratio",
    ] {
        assert!(!samples(&full, f, &[("job_group", "g")]).is_empty(), "{f}");
        assert!(
            samples(&sum, f, &[]).is_empty(),
            "{f}: per run, a summary keeps job durations only"
        );
    }
    assert_eq!(
        val(&sum, "spark_executors", &[("state", "dead")]),
        Some(1.0),
        "the executor count stays"
    );

    // A late or repeated observation of the dropped detail counts nothing twice.
    run(&m, "a", "etl", T0 - 60_000, Some(T0));
    m.observer(Source::EventLog).task_end(
        "a",
        &TaskEndObs {
            stage_id: 0,
            attempt: 0,
            task_id: 99,
            executor_id: "1".into(),
            outcome: TaskOutcome::Succeeded,
            launch_ms: 0,
            finish_ms: 1,
            metrics: TaskTotals::default(),
            locality: None,
        },
    );
    let again = collect(&m);
    assert_eq!(val(&again, "spark_tasks", &G), Some(4.0));
    assert_eq!(val(&again, "spark_jobs", &G), Some(2.0));
    assert!(samples(&again, "spark_stage_task_skew_ratio", &[]).is_empty());
}

#[test]
fn an_app_that_ended_long_ago_is_summarised_as_it_is_read() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.summary_level = SummaryLevel::App;
    let m = model_at(&clock, &s);
    run(&m, "old", "etl", T0 - 7_200_000, Some(T0 - 3_600_000));
    run(&m, "live", "etl", T0 - 60_000, None);
    let f = collect(&m);
    assert!(samples(&f, "spark_jobs", &[("app_id", "old")]).is_empty());
    assert_eq!(
        val(
            &f,
            "spark_app_runs",
            &[("app_id", "old"), ("status", "succeeded")]
        ),
        Some(1.0)
    );
    assert!(val(&f, "spark_app_end_time_seconds", &[("app_id", "old")]).is_some());
    assert_eq!(
        val(&f, "spark_jobs", &[("app_id", "live"), G[0], G[1]]),
        Some(2.0),
        "a running application keeps everything"
    );
    assert_eq!(
        samples(&f, "spark_stage_task_skew_ratio", &[("app_id", "live")]).len(),
        2
    );
}

#[test]
fn full_keeps_everything_until_app_retention() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.summary_level = SummaryLevel::Full;
    let m = model_at(&clock, &s);
    run(&m, "old", "etl", T0 - 7_200_000, Some(T0 - 3_600_000));
    clock.store(T0 + 600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    assert!(val(&collect(&m), "spark_executor_task_time_seconds", &[]).is_some());
}

#[test]
fn filters_drop_applications_by_name_and_by_age_for_good() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.app_name_filter = Some("^etl".into());
    s.model.max_app_age = Some(Duration::from_secs(3600));
    let m = model_at(&clock, &s);
    run(&m, "a", "etl-daily", T0 - 60_000, None);
    run(&m, "b", "adhoc", T0 - 60_000, None);
    run(&m, "c", "etl-old", T0 - 7_200_000, None);
    let f = collect(&m);
    let ids: Vec<_> = samples(&f, "spark_app", &[]);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(ids[0].0.contains(&"app_id=a".to_string()));
    // Their later events make no stub application reappear.
    m.observer(Source::EventLog).upsert_executor(
        "b",
        &ExecutorObs {
            executor_id: "2".into(),
            ..Default::default()
        },
    );
    assert!(samples(&collect(&m), "spark_executors", &[("app_id", "b")]).is_empty());
    // The window moves on: `a` ages out.
    clock.store(T0 + 3_600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    assert!(samples(&collect(&m), "spark_app", &[]).is_empty());
}

#[test]
fn name_mode_counts_the_runs_that_end_after_the_start_once_each() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.aggregate_by = AggregateBy::AppName;
    let m = model_at(&clock, &s);
    let name = [("app_name", "daily")];
    // A run that ended before this exporter started: its series exist, at zero.
    run(&m, "r1", "daily", T0 - 90_000_000, Some(T0 - 86_400_000));
    let f = collect(&m);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(0.0));
    assert_eq!(
        val(&f, "spark_app_runs", &[name[0], ("status", "succeeded")]),
        Some(0.0)
    );
    assert_eq!(val(&f, "spark_app_run_duration_seconds", &name), Some(0.0));
    for fam in &f {
        for smp in &fam.samples {
            assert!(
                smp.labels.iter().all(|(k, _)| *k != "app_id"),
                "{}: no app_id in name mode",
                fam.name
            );
        }
    }
    // A run under way is not counted until it ends.
    clock.store(T0 + 10_000, Ordering::SeqCst);
    run(&m, "r2", "daily", T0 + 1_000, None);
    assert_eq!(
        val(&collect(&m), "spark_jobs", &[name[0], G[0], G[1]]),
        Some(0.0)
    );
    end_run(&m, "r2", T0 + 20_000);
    let f = collect(&m);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(2.0));
    assert_eq!(val(&f, "spark_tasks", &[name[0], G[0], G[1]]), Some(4.0));
    assert_eq!(
        val(&f, "spark_stage_skew_ratio", &[name[0], G[0]]),
        Some(2.0),
        "each stage once, though both sources report it"
    );
    assert_eq!(
        val(&f, "spark_app_runs", &[name[0], ("status", "succeeded")]),
        Some(1.0)
    );
    assert_eq!(val(&f, "spark_app_run_duration_seconds", &name), Some(1.0));
    assert_eq!(
        samples(&f, "spark_app", &[]).len(),
        1,
        "one series per name"
    );
    // The run leaves the model (app_retention): its counts stay with its name.
    clock.store(T0 + 20_000 + 3_600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    let f = collect(&m);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(2.0));
    // The next run adds to them.
    let t = T0 + 4_000_000;
    clock.store(t, Ordering::SeqCst);
    run(&m, "r3", "daily", t - 5_000, Some(t));
    let f = collect(&m);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(4.0));
    assert_eq!(
        val(&f, "spark_stage_skew_ratio", &[name[0], G[0]]),
        Some(4.0)
    );
    assert_eq!(
        val(&f, "spark_app_runs", &[name[0], ("status", "succeeded")]),
        Some(2.0)
    );
    assert_eq!(val(&f, "spark_app_run_duration_seconds", &name), Some(2.0));
    // And it survives its own summary.
    clock.store(t + 600_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    assert_eq!(
        val(&collect(&m), "spark_jobs", &[name[0], G[0], G[1]]),
        Some(4.0)
    );

    // A restarted exporter reads the same logs: the runs its predecessor counted ended before
    // it started, so it starts from zero (a new `_created`) and counts the next run only.
    let later = t + 700_000;
    clock.store(later, Ordering::SeqCst);
    let m2 = model_at(&clock, &s);
    run(&m2, "r1", "daily", T0 - 90_000_000, Some(T0 - 86_400_000));
    run(&m2, "r2", "daily", T0 + 1_000, Some(T0 + 20_000));
    run(&m2, "r3", "daily", t - 5_000, Some(t));
    let f = collect(&m2);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(0.0));
    let created = f
        .iter()
        .find(|x| x.name == "spark_jobs")
        .and_then(|x| x.samples.first())
        .map(|x| x.created_ms);
    assert!(created.is_some_and(|c| c >= later), "{created:?}");
    clock.store(later + 60_000, Ordering::SeqCst);
    run(&m2, "r4", "daily", later + 1_000, Some(later + 50_000));
    let f = collect(&m2);
    assert_eq!(val(&f, "spark_jobs", &[name[0], G[0], G[1]]), Some(2.0));
    assert_eq!(
        val(&f, "spark_app_runs", &[name[0], ("status", "succeeded")]),
        Some(1.0)
    );
}

#[test]
fn name_mode_shards_by_name() {
    let clock = Arc::new(AtomicI64::new(T0));
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let mut seen = std::collections::BTreeMap::new();
    for index in 0..3 {
        let mut s = Settings::default();
        s.model.aggregate_by = AggregateBy::AppName;
        s.shard = crate::shard::Shard { index, count: 3 };
        let m = model_at(&clock, &s);
        for (i, n) in names.iter().enumerate() {
            // Two runs of each name: both land on the name's shard.
            run(&m, &format!("{n}-1"), n, T0 - 1000, Some(T0 + i as i64));
            run(&m, &format!("{n}-2"), n, T0 - 1000, Some(T0 + i as i64));
        }
        for (l, v) in samples(&collect(&m), "spark_app_runs", &[("status", "succeeded")]) {
            let name = l.iter().find(|x| x.starts_with("app_name=")).cloned();
            assert!(
                seen.insert(name.clone(), (index, v)).is_none(),
                "{name:?} twice"
            );
            assert_eq!(v, 2.0, "{name:?}");
        }
    }
    assert_eq!(seen.len(), names.len(), "{seen:?}");
    for (n, (i, _)) in &seen {
        let n = n
            .as_deref()
            .and_then(|x| x.strip_prefix("app_name="))
            .unwrap_or("");
        assert_eq!(crate::shard::shard_of(n, 3), *i);
    }
}

/// A History Server's order: the application with its end (long ago) first, then its jobs and
/// stages. The summary waits for the end of the delivery, so the groups keep every count.
#[test]
fn rest_order_app_end_before_jobs_counts_every_job_at_the_groups_level() {
    let clock = Arc::new(AtomicI64::new(T0));
    let s = Settings::default();
    assert_eq!(s.model.summary_level, SummaryLevel::Groups);
    let m = model_at(&clock, &s);
    let o = m.observer(Source::Rest);
    o.upsert_app(&AppObs {
        app_id: "hs".into(),
        name: Some("etl".into()),
        start_ms: Some(T0 - 7_200_000),
        end_ms: Some(T0 - 3_600_000),
        ..Default::default()
    });
    for j in 0..3u64 {
        o.upsert_job(
            "hs",
            &JobObs {
                job_id: j,
                job_group: Some("g".into()),
                description: Some("d".into()),
                status: JobStatus::Succeeded,
                submission_ms: Some(T0 - 7_000_000),
                completion_ms: Some(T0 - 6_900_000),
                stage_ids: vec![j],
                sql_execution_id: None,
                tags: vec![],
                name: None,
                client_app: None,
            },
        );
    }
    // A periodic pass in the middle of the delivery does not summarise it.
    m.expire(m.now_ms());
    assert_eq!(val(&collect(&m), "spark_jobs", &G), Some(3.0));
    o.app_delivered("hs");
    m.expire(m.now_ms());
    assert_eq!(
        val(&collect(&m), "spark_jobs", &G),
        Some(3.0),
        "kept by the summary"
    );
}

/// Two attempts of one YARN application: two runs, each with its jobs (job 0 of both counts),
/// under `attempt_id`; the first, whose log never ended, ends when the second starts.
#[test]
fn attempts_are_runs_of_their_own_with_an_attempt_label() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.summary_level = SummaryLevel::Full;
    let m = model_at(&clock, &s);
    let id = "application_1_0001";
    let k2 = app_key(id, Some("2"));
    let k1 = app_key(id, Some("1"));
    // The second attempt's log read first.
    run(&m, &k2, "etl", T0 - 30_000, Some(T0 - 10_000));
    run(&m, &k1, "etl", T0 - 60_000, None);
    let f = collect(&m);
    for a in ["1", "2"] {
        assert_eq!(
            val(
                &f,
                "spark_jobs",
                &[("app_id", id), ("attempt_id", a), G[0], G[1]]
            ),
            Some(2.0),
            "attempt {a}"
        );
    }
    let end = |a: &str| {
        val(
            &f,
            "spark_app_end_time_seconds",
            &[("app_id", id), ("attempt_id", a)],
        )
    };
    assert_eq!(
        end("1"),
        Some((T0 - 30_000) as f64 / 1000.0),
        "ended by attempt 2"
    );
    assert_eq!(end("2"), Some((T0 - 10_000) as f64 / 1000.0));
    // An application without attempts has no attempt label.
    run(&m, "local-1", "etl", T0 - 60_000, Some(T0 - 1_000));
    let f = collect(&m);
    let labels = &samples(&f, "spark_jobs", &[("app_id", "local-1"), G[0], G[1]])[0].0;
    assert!(
        labels.iter().all(|l| !l.starts_with("attempt_id=")),
        "{labels:?}"
    );
    assert!(m.view(|v| v
        .app(id)
        .is_some_and(|a| a.attempt().map(|x| &**x) == Some("2"))));
}

/// After a start, with both sources running (a sidecar): an application is served only once
/// its log is read to its end and REST has given its state (its poll of it, or its first poll
/// without it); then for good.
#[test]
fn a_started_exporter_serves_an_application_once_every_source_gave_its_state() {
    let clock = Arc::new(AtomicI64::new(T0));
    let m = model_at(&clock, &Settings::default());
    m.expect_sources(&[Source::Rest, Source::EventLog]);
    let served =
        |m: &Arc<Model>| m.view(|v| v.apps().map(|a| a.id().to_string()).collect::<Vec<_>>());
    // The log, read to its end (`run` ends with the tailer's delivery).
    run(&m, "a", "etl", T0 - 60_000, None);
    assert!(served(&m).is_empty(), "REST has not polled yet");
    assert!(!m.view(|v| v.startup_complete()));
    // REST polls it: served.
    let rest = m.observer(Source::Rest);
    rest.upsert_app(&AppObs {
        app_id: "a".into(),
        ..Default::default()
    });
    assert!(served(&m).is_empty(), "in the middle of the REST poll");
    rest.app_delivered("a");
    assert_eq!(served(&m), ["a"]);
    // Another log, half read: absent until its end, or until both start-up reads are done.
    let log = m.observer(Source::EventLog);
    log.upsert_app(&AppObs {
        app_id: "b".into(),
        ..Default::default()
    });
    rest.startup_done();
    assert_eq!(served(&m), ["a"]);
    log.startup_done();
    assert!(m.view(|v| v.startup_complete()));
    assert_eq!(served(&m), ["a", "b"]);
    assert!(
        !m.telemetry().snapshot().startup_pending,
        "spark_exporter_startup_complete is 1"
    );
}

/// In name mode an attempt is a run of its name: no attempt label, both attempts counted.
#[test]
fn by_name_each_attempt_is_a_run_of_the_name() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.aggregate_by = AggregateBy::AppName;
    let m = model_at(&clock, &s);
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
    let f = collect(&m);
    // Attempt 1 never said it ended: it ended when attempt 2 started.
    assert_eq!(
        val(&f, "spark_app_runs", &[("status", "unknown")]),
        Some(1.0)
    );
    assert_eq!(
        val(&f, "spark_app_runs", &[("status", "succeeded")]),
        Some(1.0)
    );
    assert_eq!(
        val(&f, "spark_jobs", &G),
        Some(4.0),
        "both attempts' two jobs"
    );
    for fam in &f {
        for smp in &fam.samples {
            assert!(smp
                .labels
                .iter()
                .all(|(k, _)| *k != "attempt_id" && *k != "app_id"));
        }
    }
}
