//! Which stage attempts have per-stage series: every active one, and at most
//! `model.max_finished_stages` finished ones per application that are worth a look (failed,
//! skewed, or among the application's longest). Their totals stay in their job group's series
//! whatever happens to their own.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::model::testkit::*;

fn model(cap: usize) -> TestModel {
    TestModel::with(|s| s.model.max_finished_stages = cap)
}

/// The stages of [`APP`] with a skew ratio of their own.
fn skewed(m: &TestModel) -> BTreeSet<u64> {
    m.app(APP).stage_ids(|s| s.skew_ratio.is_some())
}

/// The stages of [`APP`] with running tasks of their own (active ones).
fn active(m: &TestModel) -> BTreeSet<u64> {
    m.app(APP).stage_ids(|s| s.active)
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
fn start(m: &TestModel, id: u64) -> StageObs {
    let now = m.now_ms();
    m.rest().upsert_job(
        APP,
        &job(id).group("g").desc("d").stages([id]).submitted(now),
    );
    let st = stage(id)
        .active_tasks(4)
        .submitted(now)
        .counts(TaskCounts::default());
    m.rest().upsert_stage(APP, &st);
    st
}

fn finish(m: &TestModel, st: StageObs, end: End) {
    let o = m.rest();
    let ended = st.submission_ms.map(|s| s + end.dur_ms);
    let st = st
        .status(end.status)
        .ended_at(ended)
        .active_tasks(0)
        .counts(counts(4, 0, 0))
        .run_time(400);
    o.upsert_stage(APP, &st);
    if let Some((median_ms, max_ms)) = end.summary {
        o.set_task_summary(APP, st.stage_id, 0, summary(median_ms, max_ms));
    }
    let status = if end.status == StageStatus::Failed {
        JobStatus::Failed
    } else {
        JobStatus::Succeeded
    };
    let j = job(st.stage_id)
        .group("g")
        .desc("d")
        .stages([st.stage_id])
        .status(status)
        .submitted(st.submission_ms)
        .ended_at(st.completion_ms);
    o.upsert_job(APP, &j);
}

fn run(m: &TestModel, id: u64, end: End) {
    let st = start(m, id);
    finish(m, st, end);
}

#[test]
fn a_finished_stage_has_no_running_task_series_and_its_tasks_stay_counted() {
    let m = model(20);
    let st = start(&m, 1);
    let a = m.app(APP);
    let s = a.stage(1).expect("stage 1");
    assert!(s.active);
    assert_eq!(s.running_tasks, 4);
    assert!(s.stalled_seconds.is_some());
    finish(&m, st, PLAIN);
    let a = m.app(APP);
    assert!(a.stage_ids(|s| s.active).is_empty());
    assert!(a.stage_ids(|s| s.stalled_seconds.is_some()).is_empty());
    // Among the application's 20 longest (it is the only one): its skew stays.
    assert_eq!(a.stage_ids(|s| s.skew_ratio.is_some()), BTreeSet::from([1]));
    assert_eq!(a.group("g").tasks.succeeded, 4);
}

#[test]
fn only_the_longest_failed_and_skewed_finished_stages_keep_series_up_to_the_cap() {
    let m = model(3);
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
    assert_eq!(skewed(&m), BTreeSet::from([10, 11, 12]));
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
    let a = m.app(APP);
    assert_eq!(
        a.stage_ids(|s| s.skew_ratio.is_some()),
        BTreeSet::from([10, 14, 15]),
        "failed, then skewed, then the longest, three at most"
    );
    assert_eq!(a.stage(14).and_then(|s| s.skew_ratio), Some(12.0));
    // Every stage still counts in its group.
    let g = a.group("g");
    assert_eq!(g.stages["complete"], 15);
    assert_eq!(g.stages["failed"], 1);
    assert_eq!(g.tasks.succeeded, 64);
    assert_eq!(g.totals.run_time_ms, 6_400);
    let counted = |g: &Group| {
        (
            g.stages["complete"],
            g.tasks.succeeded,
            g.totals.run_time_ms,
        )
    };
    let before = counted(g);

    // Past `model.stage_retention` every finished stage's series go; the counts stay.
    m.advance(301_000);
    m.expire(m.now_ms());
    let after = m.app(APP);
    assert!(after.stage_ids(|s| s.skew_ratio.is_some()).is_empty());
    assert_eq!(counted(after.group("g")), before);
}

/// A stream of equal micro-batches: the first `cap` are the longest so far and keep their
/// series; an equal one never displaces them, so no new `stage_id` series appear after them.
/// A longer one displaces the shortest of them for good.
#[test]
fn equal_micro_batches_create_no_new_series() {
    let m = model(5);
    let mut seen = BTreeSet::new();
    for id in 0..200 {
        run(&m, id, PLAIN);
        m.advance(500);
        m.expire(m.now_ms());
        let kept = skewed(&m);
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
    assert_eq!(
        skewed(&m),
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
        skewed(&m),
        BTreeSet::from([0, 1, 2, 200, 201]),
        "stage 4 is not among the longest any more, and never comes back"
    );
}

#[test]
fn with_no_finished_stages_allowed_only_active_stages_have_series() {
    let m = model(0);
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
    assert_eq!(skewed(&m), BTreeSet::new());
    assert_eq!(active(&m), BTreeSet::from([3]));
    finish(&m, st, PLAIN);
    assert!(active(&m).is_empty());
}

#[test]
fn the_cap_and_skew_rule_are_configurable() {
    let m = TestModel::with(|s| {
        s.model.max_finished_stages = 1;
        s.model.stage_skew_ratio = 2.0;
        s.model.stage_skew_min_duration = Duration::from_millis(20);
    });
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
        skewed(&m),
        BTreeSet::from([2]),
        "skewed under the lowered thresholds, ahead of the longest"
    );
}
