//! The simulation on runs made by hand: a replay reproduces a run it can know all of, more
//! executors shorten what is parallel and not what is the driver's, dynamic allocation grows
//! for a backlog and lets idle executors go.

use super::plan::Plan;
use super::record::RunRecord;
use super::sim::{simulate, Dynamic, Exec, Pool};
use super::*;

/// A run from 0 to `end`: one job at 1,000 ms of two stages (the second reads the first), each
/// of `tasks` tasks of `ms`, on `execs` one-core executors up at 500 ms; the driver's gaps as
/// given.
fn run(tasks: usize, ms: i64, execs: usize, end_gap: i64) -> RunRecord {
    let mut r = RunRecord {
        start_ms: Some(0),
        ..RunRecord::default()
    };
    for e in 0..execs {
        let x = r.executor(&e.to_string());
        x.add_ms = Some(500);
        x.cores = Some(1);
    }
    r.parents.insert(1, vec![0]);
    let mut t = 1_000;
    for stage in 0..2u64 {
        let submit = t;
        let waves = tasks.div_ceil(execs);
        for i in 0..tasks {
            let launch = submit + (i / execs) as i64 * ms;
            r.task(stage, 0, &(i % execs).to_string(), launch, launch + ms);
        }
        t = submit + waves as i64 * ms;
        r.stage(stage, 0, Some(submit), Some(t));
        t += 10;
    }
    r.job(0, Some(1_000), Some(t), &[0, 1]);
    r.end_ms = Some(t + end_gap);
    r.run_ms = (2 * tasks) as u64 * ms as u64;
    r
}

#[test]
fn a_replay_reproduces_the_run_and_more_executors_shorten_the_stages() {
    let r = run(8, 1_000, 2, 3_000);
    let w = predict(&r, &Settings::default()).expect("a prediction");
    // 1 s to the job, 4 waves of 1 s twice, 10 ms between and after, 3 s after the job.
    assert_eq!(w.real_seconds, 1.0 + 8.0 + 0.02 + 3.0);
    assert!(w.replay_error < 1e-9, "{w:?}");
    assert!(w.trusted);
    assert_eq!((w.executors, w.cores, w.local), (2, 1, false));
    let at = |n: u64| w.rows.iter().find(|r| r.executors == n).unwrap().seconds;
    // 1 executor: 8 waves; 4: 2 waves; 8: 1 wave. The driver's 4.02 s stay.
    assert!((at(1) - (4.02 + 16.0)).abs() < 1e-9, "{}", at(1));
    assert!((at(4) - (4.02 + 4.0)).abs() < 1e-9, "{}", at(4));
    assert!((at(8) - (4.02 + 2.0)).abs() < 1e-9, "{}", at(8));
    // 6 executors take 8.02 s, 8 take 6.02 s: only 8 is within 10% of the fastest.
    assert_eq!(w.fewest_within_10pct, Some(8));
    // Core-seconds: each executor from 0.5 s to the end.
    let row = w.rows.iter().find(|r| r.executors == 2).unwrap();
    assert!((row.core_seconds - 2.0 * (row.seconds - 0.5)).abs() < 1e-9);
}

#[test]
fn a_target_picks_the_cheapest_count_that_meets_it() {
    let r = run(8, 1_000, 2, 0);
    let w = predict(
        &r,
        &Settings {
            target_seconds: Some(8.0),
            per_core_second: Some(0.01),
            ..Settings::default()
        },
    )
    .unwrap();
    // 2 executors take 9.02 s; 3 take 7.02 s and hold 3 x 6.52 core-seconds; 4 take 5.02 s
    // and hold 4 x 4.52, fewer: the cheapest within 8 s.
    assert_eq!(w.cheapest_within_target, Some(4));
    let row = w.rows.iter().find(|r| r.executors == 4).unwrap();
    assert!((row.money.unwrap() - row.core_seconds * 0.01).abs() < 1e-12);
}

#[test]
fn dynamic_allocation_grows_with_the_backlog_and_lets_idle_executors_go() {
    let plan = Plan::of(&run(16, 2_000, 2, 200_000)).unwrap();
    let d = Dynamic {
        min: 0,
        max: 8,
        initial: 1,
        cores: 1,
        first_up_ms: 500,
        startup_ms: 1_000,
        backlog_ms: 1_000,
        sustained_ms: 1_000,
        idle_ms: 60_000,
        shuffle_tracking: false,
    };
    let o = simulate(&plan, &Pool::Dynamic(d), 1);
    assert_eq!(o.peak_executors, 8, "{o:?}");
    assert!(!o.stalled);
    // All go 60 s after the job: the 200 s after it are not held by 8 executors.
    let fixed = simulate(
        &plan,
        &Pool::Fixed(vec![
            Exec {
                up_ms: 500,
                down_ms: None,
                cores: 1
            };
            8
        ]),
        1,
    );
    assert!(o.core_ms < fixed.core_ms / 2.0, "{o:?} {fixed:?}");
    // With shuffle tracking, the executors that wrote the first stage's shuffle stay.
    let kept = simulate(
        &plan,
        &Pool::Dynamic(Dynamic {
            shuffle_tracking: true,
            ..d
        }),
        1,
    );
    assert!(kept.core_ms > o.core_ms * 2.0, "{kept:?} {o:?}");
}

#[test]
fn what_cannot_be_replayed_says_why() {
    let mut r = run(2, 100, 1, 0);
    r.end_ms = None;
    assert!(predict(&r, &Settings::default()).is_err());
    let mut r = run(2, 100, 1, 0);
    r.streaming = true;
    assert!(predict(&r, &Settings::default()).is_err());
    assert_eq!(predict::millis("60s"), Some(60_000));
    assert_eq!(predict::millis("100ms"), Some(100));
    assert_eq!(predict::millis("2min"), Some(120_000));
    assert_eq!(predict::millis("5"), Some(5_000));
    assert_eq!(predict::millis("soon"), None);
}
