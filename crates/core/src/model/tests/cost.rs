//! Cost (core-seconds allocated, used, idle) and cached data: both sources, idempotence, the
//! driver rule, retention and summary, unpersist.

use std::time::Duration;

use crate::model::testkit::*;

/// Core-seconds allocated to [`APP`] so far.
fn allocated(m: &TestModel) -> f64 {
    m.app(APP).cost.allocated_core_seconds()
}

/// [`APP`] named `cost`, started 100 s before [`T0`], ended at `end` if given.
fn cost_app(end: Option<i64>) -> AppObs {
    app(APP).name("cost").started(T0 - 100_000).ended_at(end)
}

#[test]
fn allocated_is_lifetime_times_cores_counted_once_from_both_sources() {
    let m = TestModel::new();
    for o in [m.rest(), m.log(), m.rest()] {
        o.upsert_app(&cost_app(None));
        // Cluster mode: REST lists the driver with 0 cores (the event log never adds it).
        o.upsert_executor(APP, &executor("driver").cores(0).added(T0 - 100_000));
        o.upsert_executor(
            APP,
            &executor("1")
                .cores(2)
                .added(T0 - 90_000)
                .removed(T0 - 80_000),
        );
        o.upsert_executor(APP, &executor("2").cores(1).added(T0 - 90_000));
    }
    // Executor 1: 10 s × 2 cores; executor 2: 90 s so far (REST listed the application
    // running at T0) × 1 core.
    assert_eq!(allocated(&m), 20.0 + 90.0);
    // While it lives, executor 2 follows the wall clock of the polls...
    m.at(T0 + 4_000);
    assert_eq!(allocated(&m), 20.0 + 90.0, "between polls");
    m.rest().upsert_app(&cost_app(None));
    assert_eq!(allocated(&m), 20.0 + 94.0);
    // ...until the application ends.
    m.log().upsert_app(&cost_app(Some(T0 + 5_000)));
    m.at(T0 + 60_000);
    m.rest().upsert_app(&cost_app(None));
    assert_eq!(allocated(&m), 20.0 + 95.0);
}

#[test]
fn the_allocation_never_goes_back() {
    // An old event log, read today: the executor counts to the log's newest event, not to now,
    // and the end (later than every event) only adds.
    let m = TestModel::new();
    let old = T0 - 86_400_000;
    let o = m.log();
    o.upsert_app(&cost_app(None).started(old));
    o.upsert_executor(APP, &executor("1").cores(2).added(old + 1_000));
    let mut last = 0.0;
    for finish in [old + 3_000, old + 8_000] {
        o.task_end(
            APP,
            &task_end(finish as u64, 0)
                .launched(old + 2_000)
                .finished(finish),
        );
        let a = allocated(&m);
        assert!(a >= last, "{a} after {last}");
        last = a;
    }
    assert_eq!(last, 14.0, "to the newest event, 7 s × 2 cores");
    o.upsert_app(&cost_app(Some(old + 9_000)));
    assert_eq!(allocated(&m), 16.0);

    // REST saw the application (and its executor) alive at a time Spark's clock later dates
    // after the removal or the end (a clock skew): what was counted stays.
    let m = TestModel::new();
    let r = m.rest();
    r.upsert_app(&cost_app(None));
    r.upsert_executor(APP, &executor("1").cores(1).added(T0 - 10_000));
    r.upsert_executor(APP, &executor("2").cores(1).added(T0 - 10_000));
    assert_eq!(allocated(&m), 20.0);
    m.at(T0 + 5_000);
    r.upsert_app(&cost_app(None));
    assert_eq!(allocated(&m), 30.0);
    r.upsert_executor(
        APP,
        &executor("1")
            .cores(1)
            .added(T0 - 10_000)
            .removed(T0 + 1_000),
    );
    r.upsert_app(&cost_app(Some(T0 + 2_000)));
    assert_eq!(allocated(&m), 30.0, "15 s each, as already counted");
    // A dead executor REST lists for the first time counts to its removal only.
    r.upsert_executor(
        APP,
        &executor("3")
            .cores(1)
            .added(T0 - 10_000)
            .removed(T0 - 9_000),
    );
    assert_eq!(allocated(&m), 31.0);
}

#[test]
fn a_local_mode_driver_counts_with_its_cores() {
    // local[2]: both sources report the driver, with 2 cores and the same add time.
    let m = TestModel::new();
    let driver = executor("driver").cores(2).added(T0 - 10_000);
    m.log().upsert_executor(APP, &driver);
    m.rest().upsert_executor(APP, &driver);
    m.rest().upsert_app(&cost_app(Some(T0)));
    assert_eq!(allocated(&m), 20.0);
}

#[test]
fn used_is_run_time_times_task_cpus_and_idle_the_rest() {
    let m = TestModel::new();
    let o = m.log();
    o.upsert_app(&cost_app(Some(T0)));
    o.upsert_executor(APP, &executor("1").cores(4).added(T0 - 100_000));
    o.upsert_job(
        APP,
        &job(0)
            .group("g")
            .desc("d")
            .stages([0])
            .submitted(T0 - 90_000),
    );
    o.upsert_stage(
        APP,
        &stage(0)
            .name(None)
            .group("g")
            .desc("d")
            .tasks(2)
            .submitted(T0 - 90_000),
    );
    for (id, run) in [(0u64, 30_000u64), (1, 20_000)] {
        let t = task_end(id, 0)
            .launched(T0 - 80_000)
            .duration(run as i64 + 5)
            .run_time(run);
        o.task_end(APP, &t);
        o.task_end(APP, &t);
    }
    // Core-seconds used: the group's run time × spark.task.cpus.
    let used = |a: &App| a.group("g").totals.run_time_ms * a.cost.task_cpus;
    let a = m.app(APP);
    assert_eq!(used(&a), 50_000);
    assert_eq!(a.cost.used_core_seconds(), 50.0);
    assert_eq!(a.cost.idle_core_seconds(), 400.0 - 50.0);
    // spark.task.cpus = 2 (REST's /environment or the log's environment update).
    m.rest()
        .set_app_props(APP, &AppPropsObs::from_task_cpus(Some("2")));
    let a = m.app(APP);
    assert_eq!(used(&a), 100_000);
    assert_eq!(a.cost.used_core_seconds(), 100.0);
    assert_eq!(a.cost.idle_core_seconds(), 300.0);
    // Nonsense is not a setting.
    assert_eq!(AppPropsObs::from_task_cpus(Some("0")).task_cpus, None);
    assert_eq!(AppPropsObs::from_task_cpus(Some(" 3 ")).task_cpus, Some(3));
    assert_eq!(AppPropsObs::from_task_cpus(Some("x")).task_cpus, None);
}

#[test]
fn idle_is_never_negative() {
    let m = TestModel::new();
    m.rest().upsert_app(&cost_app(Some(T0)));
    // No executor with cores known (yet), but tasks ran.
    m.rest().upsert_job(
        APP,
        &job(0)
            .stages([0])
            .status(JobStatus::Succeeded)
            .submitted(None)
            .ended_at(None),
    );
    m.rest().upsert_stage(
        APP,
        &stage(0)
            .status(StageStatus::Complete)
            .name(None)
            .tasks(1)
            .active_tasks(0)
            .submitted(T0 - 10)
            .ended_at(T0)
            .counts(counts(1, 0, 0))
            .run_time(5_000),
    );
    let a = m.app(APP);
    assert_eq!(a.cost.idle_core_seconds(), 0.0);
    assert_eq!(a.cost.allocated_core_seconds(), 0.0);
}

#[test]
fn a_dead_executor_past_retention_keeps_its_core_seconds_and_is_not_counted_again() {
    let m = TestModel::with(|s| s.model.dead_executor_retention = Duration::from_secs(60));
    let o = m.rest();
    o.upsert_app(&cost_app(None));
    let dead = executor("7")
        .cores(3)
        .added(T0 - 50_000)
        .removed(T0 - 40_000)
        .reason("Executor killed by driver.");
    o.upsert_executor(APP, &dead);
    assert_eq!(allocated(&m), 30.0);
    m.at(T0 + 61_000);
    m.expire(m.now_ms());
    let after = m.app(APP);
    assert!(after.executors.is_empty());
    assert_eq!(after.cost.allocated_core_seconds(), 30.0);
    // REST still lists it (Spark keeps dead executors a while): neither its cores nor its
    // removal count again.
    o.upsert_executor(APP, &dead);
    m.log().upsert_executor(APP, &dead);
    let again = m.app(APP);
    assert_eq!(again.cost.allocated_core_seconds(), 30.0);
    assert_eq!(again.executors_removed.get("killed_by_driver"), Some(&1));
}

#[test]
fn a_summarised_app_keeps_its_cost() {
    let m = TestModel::new();
    let o = m.log();
    o.upsert_app(&cost_app(Some(T0)));
    o.upsert_executor(APP, &executor("1").cores(2).added(T0 - 10_000));
    assert_eq!(allocated(&m), 20.0);
    m.at(T0 + 3_600_000 - 1);
    m.expire(m.now_ms());
    let a = m.app(APP);
    assert!(a.executors.is_empty());
    assert_eq!(a.cost.allocated_core_seconds(), 20.0);
}

#[test]
fn name_mode_adds_the_allocation_of_each_ended_run() {
    let m = TestModel::with(|s| s.model.aggregate_by = AggregateBy::AppName);
    for (id, cores) in [("r1", 2u64), ("r2", 3)] {
        let o = m.log();
        o.upsert_app(
            &app(id)
                .name("nightly")
                .started(T0 + 1)
                .ended_at(T0 + 10_001)
                .exit(0),
        );
        o.upsert_executor(id, &executor("1").cores(cores).added(T0 + 1));
    }
    // 10 s × 2 cores + 10 s × 3 cores.
    let names = m.names();
    assert_eq!(names.len(), 1);
    assert_eq!(names[0].cost.allocated_core_seconds(), 50.0);
}

// --- Cached data ---

/// `(fraction, memory, disk)` of dataset `id` of [`APP`], `None` if not shown.
fn dataset(m: &TestModel, id: u64) -> Option<(f64, u64, u64)> {
    let a = m.app(APP);
    let d = a.dataset(id)?;
    Some((d.cached_fraction, d.memory_bytes, d.disk_bytes))
}

#[test]
fn rest_storage_lists_cached_datasets_with_a_short_name() {
    let m = TestModel::new();
    let o = m.rest();
    let list = [rdd(3).cached(2).memory(1000).disk(10), rdd(5)];
    o.set_rdds(APP, &list);
    o.set_rdds(APP, &list);
    assert_eq!(dataset(&m, 3), Some((0.5, 1000, 10)));
    assert_eq!(dataset(&m, 5), None, "nothing cached: not shown");
    let a = m.app(APP);
    let named: Vec<u64> = a
        .datasets
        .iter()
        .filter(|d| &*d.name == "*(1) Project [k#3L]")
        .map(|d| d.memory_bytes)
        .collect();
    assert_eq!(named, [1000], "the first line of the plan names it");
    // Unpersisted: no longer listed, it goes.
    o.set_rdds(APP, &[]);
    assert_eq!(dataset(&m, 3), None);
}

#[test]
fn the_event_log_rebuilds_spark_storage_totals_from_block_updates() {
    let m = TestModel::new();
    let o = m.log();
    // Blocks of an RDD no stage computed as persisted are not Spark's cached data.
    o.block_updated(APP, &block(9, 0, "1").memory(100));
    o.rdd_persisted(APP, &rdd_info(3, "In-memory table t"));
    assert_eq!(dataset(&m, 3), None, "nothing cached yet");
    for _ in 0..2 {
        // Twice: a log read again changes nothing.
        o.block_updated(APP, &block(3, 0, "1").memory(100));
        o.block_updated(APP, &block(3, 1, "1").memory(200));
        o.block_updated(APP, &block(3, 1, "2").memory(200)); // a replica
        o.block_updated(APP, &block(3, 2, "2").disk(300)); // on disk
    }
    assert_eq!(dataset(&m, 3), Some((0.75, 500, 300)));
    assert_eq!(dataset(&m, 9), None);
    let a = m.app(APP);
    let named: Vec<u64> = a
        .datasets
        .iter()
        .filter(|d| &*d.name == "In-memory table t")
        .map(|d| d.disk_bytes)
        .collect();
    assert_eq!(named, [300]);
    // Partition 0 drops from memory to disk; partition 2 is evicted (a level with neither).
    o.block_updated(APP, &block(3, 0, "1").disk(80));
    o.block_updated(APP, &block(3, 2, "2"));
    assert_eq!(dataset(&m, 3), Some((0.5, 400, 80)));
    // Executor 1 goes: its blocks go with it; partition 1 keeps its replica on executor 2.
    o.upsert_executor(APP, &executor("1").cores(1).added(T0 - 10).removed(T0));
    assert_eq!(dataset(&m, 3), Some((0.25, 200, 0)));
    // Unpersisted: it goes, and later updates of its blocks are ignored.
    o.rdd_unpersisted(APP, 3);
    o.block_updated(APP, &block(3, 1, "2"));
    assert_eq!(dataset(&m, 3), None);
}

#[test]
fn both_sources_show_the_rest_list_once_rest_answered() {
    let m = TestModel::new();
    let log = m.log();
    log.rdd_persisted(APP, &rdd_info(3, "In-memory table t"));
    log.block_updated(APP, &block(3, 0, "1").memory(100));
    assert_eq!(dataset(&m, 3), Some((0.25, 100, 0)));
    m.rest().set_rdds(
        APP,
        &[rdd(3).name("In-memory table t").cached(2).memory(250)],
    );
    assert_eq!(dataset(&m, 3), Some((0.5, 250, 0)));
    assert_eq!(m.app(APP).datasets.len(), 1, "one per dataset");
}

#[test]
fn datasets_are_bounded() {
    let m = TestModel::new();
    let list: Vec<RddObs> = (0..MAX_DATASETS as u64 + 10)
        .map(|i| rdd(i).cached(1).memory(i))
        .collect();
    m.rest().set_rdds(APP, &list);
    assert_eq!(m.app(APP).datasets.len(), MAX_DATASETS);
    assert_eq!(dataset(&m, 0), None, "the smallest go first");
    assert!(dataset(&m, MAX_DATASETS as u64 + 9).is_some());

    // The event log: RDDs with nothing cached make room for new ones.
    let m = TestModel::new();
    let o = m.log();
    for i in 0..MAX_DATASETS as u64 + 10 {
        o.rdd_persisted(APP, &rdd_info(i, "r"));
        o.block_updated(APP, &block(i, 0, "1").memory(1));
        if i % 2 == 0 {
            o.block_updated(APP, &block(i, 0, "1"));
        }
    }
    assert_eq!(m.app(APP).datasets.len(), (MAX_DATASETS + 10) / 2);
}
