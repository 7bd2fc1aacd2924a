//! Which stage attempts have per-stage series: every active one, and at most
//! `model.max_finished_stages` finished ones per application that are worth a look (failed,
//! skewed, or among the application's longest). Their totals stay in their job group's series
//! whatever happens to their own.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::config::Settings;
use crate::export::families::{collect, Family};
use crate::telemetry::Telemetry;

const APP: &str = "app-1";
const T0: i64 = 1_000_000_000;

fn model(cap: usize) -> (Arc<Model>, Arc<AtomicI64>) {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.max_finished_stages = cap;
    let c = clock.clone();
    let m = Model::with_clock(
        &s,
        Arc::new(Telemetry::default()),
        Arc::new(move || c.load(Ordering::SeqCst)),
    );
    (m, clock)
}

/// The `stage_id`s of `family`'s samples.
fn ids(f: &[Family], family: &str) -> BTreeSet<u64> {
    f.iter()
        .find(|x| x.name == family)
        .map(|fam| {
            fam.samples
                .iter()
                .filter_map(|s| s.labels.iter().find(|(k, _)| *k == "stage_id"))
                .map(|(_, v)| v.parse().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// The value of the one sample of `family` with `label=value`.
fn val(f: &[Family], family: &str, label: &str, value: &str) -> Option<f64> {
    let fam = f.iter().find(|x| x.name == family)?;
    let m: Vec<_> = fam
        .samples
        .iter()
        .filter(|s| s.labels.iter().any(|(k, v)| *k == label && &**v == value))
        .collect();
    assert!(
        m.len() <= 1,
        "{family} {label}={value}: {} samples",
        m.len()
    );
    m.first().map(|s| s.value.as_f64())
}

/// How a test stage ends.
#[derive(Clone, Copy)]
struct End {
    status: StageStatus,
    /// Submission to completion.
    dur_ms: i64,
    /// Task summary `(median, max)` in ms, as REST reports it after the stage ends.
    summary: Option<(f64, f64)>,
}

const PLAIN: End = End {
    status: StageStatus::Complete,
    dur_ms: 100,
    summary: Some((10.0, 12.0)),
};

/// Job `id` in group `g` runs stage `id` (four tasks, REST's view) to `end`. Returns the stage
/// observation while it was active (to report it active first, as `start` does).
fn start(m: &Arc<Model>, id: u64) -> StageObs {
    let now = m.now_ms();
    let job = JobObs {
        job_id: id,
        job_group: Some("g".into()),
        description: Some("d".into()),
        status: JobStatus::Running,
        submission_ms: Some(now),
        completion_ms: None,
        stage_ids: vec![id],
        sql_execution_id: None,
        tags: vec![],
        name: None,
        client_app: None,
    };
    let o = m.observer(Source::Rest);
    o.upsert_job(APP, &job);
    let st = StageObs {
        stage_id: id,
        attempt: 0,
        status: StageStatus::Active,
        name: Some(format!("stage {id}")),
        job_group: None,
        description: None,
        num_tasks: Some(4),
        active_tasks: Some(4),
        submission_ms: Some(now),
        completion_ms: None,
        task_counts: Some(TaskCounts::default()),
        totals: None,
    };
    o.upsert_stage(APP, &st);
    st
}

fn finish(m: &Arc<Model>, mut st: StageObs, end: End) {
    let o = m.observer(Source::Rest);
    st.status = end.status;
    st.active_tasks = Some(0);
    st.completion_ms = st.submission_ms.map(|s| s + end.dur_ms);
    st.task_counts = Some(TaskCounts {
        succeeded: 4,
        ..Default::default()
    });
    st.totals = Some(TaskTotals {
        run_time_ms: 400,
        ..Default::default()
    });
    o.upsert_stage(APP, &st);
    if let Some((median_ms, max_ms)) = end.summary {
        o.set_task_summary(
            APP,
            st.stage_id,
            0,
            TaskSummaryObs {
                median_ms,
                max_ms,
                ended: true,
                of_duration: true,
            },
        );
    }
    let status = if end.status == StageStatus::Failed {
        JobStatus::Failed
    } else {
        JobStatus::Succeeded
    };
    o.upsert_job(
        APP,
        &JobObs {
            job_id: st.stage_id,
            job_group: Some("g".into()),
            description: Some("d".into()),
            status,
            submission_ms: st.submission_ms,
            completion_ms: st.completion_ms,
            stage_ids: vec![st.stage_id],
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        },
    );
}

fn run(m: &Arc<Model>, id: u64, end: End) {
    let st = start(m, id);
    finish(m, st, end);
}

#[test]
fn a_finished_stage_has_no_running_task_series_and_its_tasks_stay_counted() {
    let (m, _) = model(20);
    let st = start(&m, 1);
    let f = collect(&m);
    assert_eq!(
        val(&f, "spark_stage_tasks_active", "stage_id", "1"),
        Some(4.0)
    );
    assert!(val(&f, "spark_stage_stalled_seconds", "stage_id", "1").is_some());
    finish(&m, st, PLAIN);
    let f = collect(&m);
    assert!(ids(&f, "spark_stage_tasks_active").is_empty());
    assert!(ids(&f, "spark_stage_stalled_seconds").is_empty());
    // Among the application's 20 longest (it is the only one): its skew stays.
    assert_eq!(ids(&f, "spark_stage_task_skew_ratio"), BTreeSet::from([1]));
    assert_eq!(val(&f, "spark_tasks", "status", "succeeded"), Some(4.0));
}

#[test]
fn only_the_longest_failed_and_skewed_finished_stages_keep_series_up_to_the_cap() {
    let (m, clock) = model(3);
    // Ten equal stages, then three longer ones.
    for id in 0..10 {
        run(&m, id, PLAIN);
    }
    for (id, ms) in [(10, 900), (11, 700), (12, 800)] {
        run(
            &m,
            id,
            End {
                dur_ms: ms,
                ..PLAIN
            },
        );
    }
    let f = collect(&m);
    assert_eq!(
        ids(&f, "spark_stage_task_skew_ratio"),
        BTreeSet::from([10, 11, 12])
    );
    // Skewed in ratio only (a 50 ms straggler): not worth a look.
    run(
        &m,
        13,
        End {
            summary: Some((5.0, 50.0)),
            ..PLAIN
        },
    );
    // Skewed: 12 s against a 1 s median.
    run(
        &m,
        14,
        End {
            summary: Some((1000.0, 12_000.0)),
            ..PLAIN
        },
    );
    // Failed, as short as the rest.
    run(
        &m,
        15,
        End {
            status: StageStatus::Failed,
            ..PLAIN
        },
    );
    let f = collect(&m);
    assert_eq!(
        ids(&f, "spark_stage_task_skew_ratio"),
        BTreeSet::from([10, 14, 15]),
        "failed, then skewed, then the longest, three at most"
    );
    assert_eq!(
        val(&f, "spark_stage_task_skew_ratio", "stage_id", "14"),
        Some(12.0)
    );
    // Every stage still counts in its group.
    assert_eq!(val(&f, "spark_stages", "status", "complete"), Some(15.0));
    assert_eq!(val(&f, "spark_stages", "status", "failed"), Some(1.0));
    assert_eq!(val(&f, "spark_tasks", "status", "succeeded"), Some(64.0));
    assert_eq!(
        val(&f, "spark_task_run_time_seconds", "job_group", "g"),
        Some(6.4)
    );

    // Past `model.stage_retention` every finished stage's series go; the counts stay.
    clock.fetch_add(301_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    let after = collect(&m);
    assert!(ids(&after, "spark_stage_task_skew_ratio").is_empty());
    for (fam, l, v) in [
        ("spark_stages", "status", "complete"),
        ("spark_tasks", "status", "succeeded"),
        ("spark_task_run_time_seconds", "job_group", "g"),
    ] {
        assert_eq!(val(&after, fam, l, v), val(&f, fam, l, v), "{fam}");
    }
}

/// A stream of equal micro-batches: the first `cap` are the longest so far and keep their
/// series; an equal one never displaces them, so no new `stage_id` series appear after them.
/// A longer one displaces the shortest of them for good.
#[test]
fn equal_micro_batches_create_no_new_series() {
    let (m, clock) = model(5);
    let mut seen = BTreeSet::new();
    for id in 0..200 {
        run(&m, id, PLAIN);
        clock.fetch_add(500, Ordering::SeqCst);
        m.expire(m.now_ms());
        let f = collect(&m);
        let kept = ids(&f, "spark_stage_task_skew_ratio");
        assert!(kept.len() <= 5, "{kept:?}");
        seen.extend(kept);
    }
    assert_eq!(seen, BTreeSet::from([0, 1, 2, 3, 4]));
    run(
        &m,
        200,
        End {
            dur_ms: 101,
            ..PLAIN
        },
    );
    let f = collect(&m);
    assert_eq!(
        ids(&f, "spark_stage_task_skew_ratio"),
        BTreeSet::from([0, 1, 2, 3, 200]),
        "the longer one takes the last place among the longest"
    );
    run(
        &m,
        201,
        End {
            dur_ms: 101,
            ..PLAIN
        },
    );
    assert_eq!(
        ids(&collect(&m), "spark_stage_task_skew_ratio"),
        BTreeSet::from([0, 1, 2, 200, 201]),
        "stage 4 is not among the longest any more, and never comes back"
    );
}

#[test]
fn with_no_finished_stages_allowed_only_active_stages_have_series() {
    let (m, _) = model(0);
    run(
        &m,
        1,
        End {
            status: StageStatus::Failed,
            ..PLAIN
        },
    );
    run(
        &m,
        2,
        End {
            summary: Some((1000.0, 60_000.0)),
            ..PLAIN
        },
    );
    let st = start(&m, 3);
    let f = collect(&m);
    assert_eq!(ids(&f, "spark_stage_task_skew_ratio"), BTreeSet::new());
    assert_eq!(ids(&f, "spark_stage_tasks_active"), BTreeSet::from([3]));
    finish(&m, st, PLAIN);
    assert!(ids(&collect(&m), "spark_stage_tasks_active").is_empty());
}

#[test]
fn the_cap_and_skew_rule_are_configurable() {
    let clock = Arc::new(AtomicI64::new(T0));
    let mut s = Settings::default();
    s.model.max_finished_stages = 1;
    s.model.stage_skew_ratio = 2.0;
    s.model.stage_skew_min_duration = Duration::from_millis(20);
    let c = clock.clone();
    let m = Model::with_clock(
        &s,
        Arc::new(Telemetry::default()),
        Arc::new(move || c.load(Ordering::SeqCst)),
    );
    run(
        &m,
        1,
        End {
            dur_ms: 500,
            ..PLAIN
        },
    );
    run(
        &m,
        2,
        End {
            summary: Some((10.0, 25.0)),
            ..PLAIN
        },
    );
    assert_eq!(
        ids(&collect(&m), "spark_stage_task_skew_ratio"),
        BTreeSet::from([2]),
        "skewed under the lowered thresholds, ahead of the longest"
    );
}
