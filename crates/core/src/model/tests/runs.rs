//! Runs that regress (`model.aggregate_by: app_name`): the name's last counted run (duration,
//! core-seconds, end) and the histogram of its runs' core-seconds, through retention and
//! checkpoints.

use crate::model::hist::Hist;
use crate::model::testkit::*;
use crate::model::view::LastRunView;

fn by_name(s: &mut Settings) {
    s.model.aggregate_by = AggregateBy::AppName;
}

/// Run `id` of `name` from `start` to `end` (Spark's clock) on one executor of `cores` cores,
/// added at the start: `(end - start) × cores` core-milliseconds. Exit code 0, its log read to
/// the end.
fn run(m: &TestModel, id: &str, name: &str, (start, end): (i64, i64), cores: u64) {
    let o = m.log();
    o.upsert_app(&app(id).name(name).started(start));
    o.upsert_executor(id, &executor("1").cores(cores).added(start));
    o.upsert_app(&app(id).ended_at(end).exit(0));
    o.app_delivered(id);
}

/// What the view shows of the last run of `name`, and its run-cost histogram.
fn regress(m: &TestModel, name: &str) -> (Option<LastRunView>, Hist) {
    let n = m.name(name);
    (
        n.last_run,
        n.run_cost.expect("a name has a run-cost histogram"),
    )
}

/// The cumulative count of `h` at its smallest bound of at least `v`.
fn at_most(h: &Hist, v: f64) -> u64 {
    h.cumulative()
        .into_iter()
        .find(|(b, _)| *b >= v)
        .map_or(0, |(_, n)| n)
}

/// The last run of name `daily`: 70 s from T0 + 20 s, 3 cores.
fn last_of_daily() -> Option<LastRunView> {
    Some(LastRunView {
        duration_seconds: Some(70.0),
        core_seconds: 210.0,
        end_seconds: (T0 + 90_000) as f64 / 1000.0,
        money: None,
    })
}

#[test]
fn the_last_run_is_the_one_that_ended_last_and_the_histogram_has_every_run() {
    let m = TestModel::with(by_name);
    m.at(T0 + 100_000);
    // Read in the other order than they ended: the later end wins, not the later read.
    run(&m, "r2", "daily", (T0 + 20_000, T0 + 90_000), 3);
    run(&m, "r1", "daily", (T0 + 1_000, T0 + 61_000), 2);
    // A run under way is nobody's last run yet.
    m.log()
        .upsert_app(&app("r3").name("daily").started(T0 + 95_000));
    let (last, h) = regress(&m, "daily");
    assert_eq!(last, last_of_daily());
    // 120 and 210 core-seconds, each in its bucket (2^6.75 < 120 <= 2^7, 2^7.5 < 210 <= 2^7.75).
    assert_eq!((h.count(), h.sum()), (2, 330.0));
    assert_eq!(at_most(&h, 2f64.powf(6.75)), 0);
    assert_eq!(at_most(&h, 120.0), 1);
    assert_eq!(at_most(&h, 2f64.powf(7.5)), 1);
    assert_eq!(at_most(&h, 210.0), 2);
    // The run-duration histogram counts the same runs.
    assert_eq!(m.name("daily").run_duration.map(|h| h.count()), Some(2));
}

#[test]
fn a_run_that_ended_before_the_exporter_started_does_not_count() {
    let m = TestModel::with(by_name);
    run(&m, "old", "daily", (T0 - 90_000_000, T0 - 86_400_000), 8);
    let (last, h) = regress(&m, "daily");
    assert_eq!(last, None, "no gauge");
    assert_eq!(h.count(), 0, "the histogram at zero");
    m.at(T0 + 100_000);
    run(&m, "r2", "daily", (T0 + 20_000, T0 + 90_000), 3);
    let (last, h) = regress(&m, "daily");
    assert_eq!(last, last_of_daily());
    assert_eq!(h.count(), 1);
}

#[test]
fn the_last_run_and_the_histogram_stay_when_the_runs_leave_the_model() {
    let m = TestModel::with(by_name);
    m.at(T0 + 100_000);
    run(&m, "r1", "daily", (T0 + 1_000, T0 + 61_000), 2);
    run(&m, "r2", "daily", (T0 + 20_000, T0 + 90_000), 3);
    let before = regress(&m, "daily");
    // Summarised, then retired (`model.app_retention`): folded into the name for good.
    m.at(T0 + 90_000 + 600_000);
    m.expire(m.now_ms());
    assert_eq!(regress(&m, "daily"), before);
    m.at(T0 + 90_000 + 3_700_000);
    m.expire(m.now_ms());
    assert!(
        m.find_app("r2").is_none() && m.apps().is_empty(),
        "both runs left"
    );
    assert_eq!(regress(&m, "daily"), before);
    // A run read late that ended before the last one counts, but is not the last run.
    run(&m, "r0", "daily", (T0 + 1_000, T0 + 5_000), 1);
    let (last, h) = regress(&m, "daily");
    assert_eq!(last, last_of_daily());
    assert_eq!((h.count(), h.sum()), (3, 334.0));
}

#[test]
fn a_checkpoint_keeps_the_last_run_and_the_histogram() {
    let m = TestModel::with(by_name);
    m.at(T0 + 61_000);
    run(&m, "r1", "daily", (T0 + 1_000, T0 + 61_000), 2);
    m.at(T0 + 90_000);
    run(&m, "r2", "daily", (T0 + 20_000, T0 + 90_000), 3);
    // r1 retires, r2 stays: both the accumulator and a held run are written.
    m.at(T0 + 61_000 + 3_610_000);
    m.expire(m.now_ms());
    assert!(m.find_app("r1").is_none() && m.find_app("r2").is_some());
    let before = regress(&m, "daily");
    assert_eq!(before.0, last_of_daily());
    let mut bytes = Vec::new();
    m.save_state(&mut bytes).expect("save");
    let back = m.restarted(by_name);
    back.load_state(bytes.as_slice()).expect("load");
    assert_eq!(regress(&back, "daily"), before);
}

/// A checkpoint written before these values existed loads: the name has no last run and an
/// empty histogram on the run-cost bounds, and counts the next run.
#[test]
fn a_checkpoint_without_them_loads_and_counts_on() {
    let m = TestModel::with(by_name);
    m.at(T0 + 100_000);
    run(&m, "r1", "daily", (T0 + 1_000, T0 + 61_000), 2);
    m.at(T0 + 61_000 + 3_700_000);
    m.expire(m.now_ms());
    let mut bytes = Vec::new();
    m.save_state(&mut bytes).expect("save");
    let mut state: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    for n in state["names"].as_object_mut().expect("names").values_mut() {
        let n = n.as_object_mut().expect("a name");
        assert!(n.remove("run_cost").is_some() && n.remove("last_run").is_some());
    }
    let back = m.restarted(by_name);
    back.load_state(state.to_string().as_bytes())
        .expect("an older checkpoint loads");
    let (last, h) = regress(&back, "daily");
    assert_eq!((last, h.count()), (None, 0));
    assert_eq!(h.cumulative().len(), 95, "the run-cost bounds and +Inf");
    back.at(T0 + 4_000_000);
    run(&back, "r2", "daily", (T0 + 3_900_000, T0 + 3_910_000), 1);
    let (last, h) = regress(&back, "daily");
    assert_eq!(last.map(|l| l.core_seconds), Some(10.0));
    assert_eq!(h.count(), 1);
}

/// A job group value that escapes the rewrite rules (an id of the user's own, `load_r7`) adds
/// a value on every run; in name mode the name's series across runs hold at most
/// `labels.max_values_per_label` of them, and the rest fold into `__other__` (issue 49), with
/// the runs' jobs all counted.
#[test]
fn a_names_label_values_across_runs_are_capped() {
    let m = TestModel::with(|s| {
        by_name(s);
        s.labels.max_values_per_label = 5;
    });
    m.at(T0 + 1_000_000);
    let o = m.log();
    for i in 0..30 {
        let id = format!("r{i}");
        let start = T0 + i * 10_000;
        o.upsert_app(&app(&id).name("daily").started(start));
        o.upsert_job(
            &id,
            &job(1)
                .group(&format!("load_r{i}"))
                .status(JobStatus::Succeeded),
        );
        o.upsert_app(&app(&id).ended_at(start + 5_000).exit(0));
        o.app_delivered(&id);
    }
    let n = m.name("daily");
    let groups: Vec<&str> = n.groups.iter().map(|g| &*g.group).collect();
    assert!(groups.len() <= 6, "{groups:?}");
    assert!(groups.contains(&crate::model::OTHER), "{groups:?}");
    let jobs: u64 = n
        .groups
        .iter()
        .map(|g| g.jobs.get("succeeded").copied().unwrap_or(0))
        .sum();
    assert_eq!(jobs, 30, "every run's job is counted once");
}
