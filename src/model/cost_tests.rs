//! Cost (core-seconds allocated, used, idle) and cached data: both sources, idempotence, the
//! driver rule, retention and summary, unpersist.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::config::{AggregateBy, Settings};
use crate::export::families::{collect, Family};
use crate::telemetry::Telemetry;

const APP: &str = "app-1";
const T0: i64 = 1_000_000_000;

fn model_with(settings: &Settings) -> (Arc<Model>, Arc<AtomicI64>) {
    let clock = Arc::new(AtomicI64::new(T0));
    let c = clock.clone();
    let m = Model::with_clock(
        settings,
        Arc::new(Telemetry::default()),
        Arc::new(move || c.load(Ordering::SeqCst)),
    );
    (m, clock)
}

fn model() -> (Arc<Model>, Arc<AtomicI64>) {
    model_with(&Settings::default())
}

/// Every sample of `name` whose labels include all of `want`.
fn all(f: &[Family], name: &str, want: &[(&str, &str)]) -> Vec<f64> {
    let Some(fam) = f.iter().find(|x| x.name == name) else {
        return vec![];
    };
    fam.samples
        .iter()
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && &**lv == *v))
        })
        .map(|s| s.value.as_f64())
        .collect()
}

fn val(f: &[Family], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let v = all(f, name, want);
    assert!(v.len() <= 1, "{name} {want:?}: {v:?}");
    v.first().copied()
}

fn allocated(m: &Model) -> f64 {
    val(&collect(m), "spark_executor_core_seconds_allocated", &[]).unwrap()
}

/// An executor as REST's `/allexecutors` or the event log's add/remove report it.
fn exec(id: &str, cores: u64, add: i64, remove: Option<i64>) -> ExecutorObs {
    ExecutorObs {
        executor_id: id.into(),
        active: Some(remove.is_none()),
        total_cores: Some(cores),
        add_ms: Some(add),
        remove_ms: remove,
        ..Default::default()
    }
}

fn app(end: Option<i64>) -> AppObs {
    AppObs {
        app_id: APP.into(),
        name: Some("cost".into()),
        start_ms: Some(T0 - 100_000),
        end_ms: end,
        ..Default::default()
    }
}

#[test]
fn allocated_is_lifetime_times_cores_counted_once_from_both_sources() {
    let (m, clock) = model();
    for src in [Source::Rest, Source::EventLog, Source::Rest] {
        let o = m.observer(src);
        o.upsert_app(&app(None));
        // Cluster mode: REST lists the driver with 0 cores (the event log never adds it).
        o.upsert_executor(APP, &exec("driver", 0, T0 - 100_000, None));
        o.upsert_executor(APP, &exec("1", 2, T0 - 90_000, Some(T0 - 80_000)));
        o.upsert_executor(APP, &exec("2", 1, T0 - 90_000, None));
    }
    // Executor 1: 10 s × 2 cores; executor 2: 90 s so far (REST listed the application
    // running at T0) × 1 core.
    assert_eq!(allocated(&m), 20.0 + 90.0);
    // While it lives, executor 2 follows the wall clock of the polls...
    clock.store(T0 + 4_000, Ordering::SeqCst);
    assert_eq!(allocated(&m), 20.0 + 90.0, "between polls");
    m.observer(Source::Rest).upsert_app(&app(None));
    assert_eq!(allocated(&m), 20.0 + 94.0);
    // ...until the application ends.
    m.observer(Source::EventLog)
        .upsert_app(&app(Some(T0 + 5_000)));
    clock.store(T0 + 60_000, Ordering::SeqCst);
    m.observer(Source::Rest).upsert_app(&app(None));
    assert_eq!(allocated(&m), 20.0 + 95.0);
}

#[test]
fn the_allocation_never_goes_back() {
    // An old event log, read today: the executor counts to the log's newest event, not to now,
    // and the end (later than every event) only adds.
    let (m, _) = model();
    let old = T0 - 86_400_000;
    let o = m.observer(Source::EventLog);
    o.upsert_app(&AppObs {
        start_ms: Some(old),
        ..app(None)
    });
    o.upsert_executor(APP, &exec("1", 2, old + 1_000, None));
    let mut last = 0.0;
    for finish in [old + 3_000, old + 8_000] {
        o.task_end(
            APP,
            &TaskEndObs {
                stage_id: 0,
                attempt: 0,
                task_id: finish as u64,
                executor_id: "1".into(),
                outcome: TaskOutcome::Succeeded,
                launch_ms: old + 2_000,
                finish_ms: finish,
                metrics: TaskTotals::default(),
                locality: None,
            },
        );
        let a = allocated(&m);
        assert!(a >= last, "{a} after {last}");
        last = a;
    }
    assert_eq!(last, 14.0, "to the newest event, 7 s × 2 cores");
    o.upsert_app(&AppObs {
        end_ms: Some(old + 9_000),
        ..app(None)
    });
    assert_eq!(allocated(&m), 16.0);

    // REST saw the application (and its executor) alive at a time Spark's clock later dates
    // after the removal or the end (a clock skew): what was counted stays.
    let (m, clock) = model();
    let r = m.observer(Source::Rest);
    r.upsert_app(&app(None));
    r.upsert_executor(APP, &exec("1", 1, T0 - 10_000, None));
    r.upsert_executor(APP, &exec("2", 1, T0 - 10_000, None));
    assert_eq!(allocated(&m), 20.0);
    clock.store(T0 + 5_000, Ordering::SeqCst);
    r.upsert_app(&app(None));
    assert_eq!(allocated(&m), 30.0);
    r.upsert_executor(APP, &exec("1", 1, T0 - 10_000, Some(T0 + 1_000)));
    r.upsert_app(&app(Some(T0 + 2_000)));
    assert_eq!(allocated(&m), 30.0, "15 s each, as already counted");
    // A dead executor REST lists for the first time counts to its removal only.
    r.upsert_executor(APP, &exec("3", 1, T0 - 10_000, Some(T0 - 9_000)));
    assert_eq!(allocated(&m), 31.0);
}

#[test]
fn a_local_mode_driver_counts_with_its_cores() {
    // local[2]: both sources report the driver, with 2 cores and the same add time.
    let (m, _) = model();
    m.observer(Source::EventLog)
        .upsert_executor(APP, &exec("driver", 2, T0 - 10_000, None));
    m.observer(Source::Rest)
        .upsert_executor(APP, &exec("driver", 2, T0 - 10_000, None));
    m.observer(Source::Rest).upsert_app(&app(Some(T0)));
    assert_eq!(allocated(&m), 20.0);
}

#[test]
fn used_is_run_time_times_task_cpus_and_idle_the_rest() {
    let (m, _) = model();
    let o = m.observer(Source::EventLog);
    o.upsert_app(&app(Some(T0)));
    o.upsert_executor(APP, &exec("1", 4, T0 - 100_000, None));
    o.upsert_job(
        APP,
        &JobObs {
            job_id: 0,
            job_group: Some("g".into()),
            description: Some("d".into()),
            status: JobStatus::Running,
            submission_ms: Some(T0 - 90_000),
            completion_ms: None,
            stage_ids: vec![0],
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        },
    );
    o.upsert_stage(
        APP,
        &StageObs {
            stage_id: 0,
            attempt: 0,
            status: StageStatus::Active,
            name: None,
            job_group: Some("g".into()),
            description: Some("d".into()),
            num_tasks: Some(2),
            active_tasks: None,
            submission_ms: Some(T0 - 90_000),
            completion_ms: None,
            task_counts: None,
            totals: None,
        },
    );
    for (id, run) in [(0u64, 30_000u64), (1, 20_000)] {
        let t = TaskEndObs {
            stage_id: 0,
            attempt: 0,
            task_id: id,
            executor_id: "1".into(),
            outcome: TaskOutcome::Succeeded,
            launch_ms: T0 - 80_000,
            finish_ms: T0 - 80_000 + run as i64 + 5,
            metrics: TaskTotals {
                run_time_ms: run,
                ..Default::default()
            },
            locality: None,
        };
        o.task_end(APP, &t);
        o.task_end(APP, &t);
    }
    let g = [("job_group", "g")];
    let f = collect(&m);
    assert_eq!(val(&f, "spark_task_core_seconds_used", &g), Some(50.0));
    assert_eq!(
        val(&f, "spark_executor_idle_core_seconds", &[]),
        Some(400.0 - 50.0)
    );
    // spark.task.cpus = 2 (REST's /environment or the log's environment update).
    m.observer(Source::Rest)
        .set_app_props(APP, &AppPropsObs::from_task_cpus(Some("2")));
    let f = collect(&m);
    assert_eq!(val(&f, "spark_task_core_seconds_used", &g), Some(100.0));
    assert_eq!(
        val(&f, "spark_executor_idle_core_seconds", &[]),
        Some(300.0)
    );
    // Nonsense is not a setting.
    assert_eq!(AppPropsObs::from_task_cpus(Some("0")).task_cpus, None);
    assert_eq!(AppPropsObs::from_task_cpus(Some(" 3 ")).task_cpus, Some(3));
    assert_eq!(AppPropsObs::from_task_cpus(Some("x")).task_cpus, None);
}

#[test]
fn idle_is_never_negative() {
    let (m, _) = model();
    m.observer(Source::Rest).upsert_app(&app(Some(T0)));
    // No executor with cores known (yet), but tasks ran.
    m.observer(Source::Rest).upsert_job(
        APP,
        &JobObs {
            job_id: 0,
            job_group: None,
            description: None,
            status: JobStatus::Succeeded,
            submission_ms: None,
            completion_ms: None,
            stage_ids: vec![0],
            sql_execution_id: None,
            tags: vec![],
            name: None,
            client_app: None,
        },
    );
    m.observer(Source::Rest).upsert_stage(
        APP,
        &StageObs {
            stage_id: 0,
            attempt: 0,
            status: StageStatus::Complete,
            name: None,
            job_group: None,
            description: None,
            num_tasks: Some(1),
            active_tasks: Some(0),
            submission_ms: Some(T0 - 10),
            completion_ms: Some(T0),
            task_counts: Some(TaskCounts {
                succeeded: 1,
                ..Default::default()
            }),
            totals: Some(TaskTotals {
                run_time_ms: 5_000,
                ..Default::default()
            }),
        },
    );
    let f = collect(&m);
    assert_eq!(val(&f, "spark_executor_idle_core_seconds", &[]), Some(0.0));
    assert_eq!(
        val(&f, "spark_executor_core_seconds_allocated", &[]),
        Some(0.0)
    );
}

#[test]
fn a_dead_executor_past_retention_keeps_its_core_seconds_and_is_not_counted_again() {
    let mut s = Settings::default();
    s.model.dead_executor_retention = Duration::from_secs(60);
    let (m, clock) = model_with(&s);
    let o = m.observer(Source::Rest);
    o.upsert_app(&app(None));
    let mut dead = exec("7", 3, T0 - 50_000, Some(T0 - 40_000));
    dead.remove_reason = Some("Executor killed by driver.".into());
    o.upsert_executor(APP, &dead);
    let before = collect(&m);
    assert_eq!(
        val(&before, "spark_executor_core_seconds_allocated", &[]),
        Some(30.0)
    );
    clock.store(T0 + 61_000, Ordering::SeqCst);
    m.expire(m.now_ms());
    let after = collect(&m);
    assert!(all(&after, "spark_executor_task_time_seconds", &[]).is_empty());
    assert_eq!(
        val(&after, "spark_executor_core_seconds_allocated", &[]),
        Some(30.0)
    );
    // REST still lists it (Spark keeps dead executors a while): neither its cores nor its
    // removal count again.
    o.upsert_executor(APP, &dead);
    m.observer(Source::EventLog).upsert_executor(APP, &dead);
    let again = collect(&m);
    assert_eq!(
        val(&again, "spark_executor_core_seconds_allocated", &[]),
        Some(30.0)
    );
    assert_eq!(
        val(
            &again,
            "spark_executor_removed",
            &[("reason", "killed_by_driver")]
        ),
        Some(1.0)
    );
}

#[test]
fn a_summarised_app_keeps_its_cost() {
    let (m, clock) = model();
    let o = m.observer(Source::EventLog);
    o.upsert_app(&app(Some(T0)));
    o.upsert_executor(APP, &exec("1", 2, T0 - 10_000, None));
    assert_eq!(allocated(&m), 20.0);
    clock.store(T0 + 3_600_000 - 1, Ordering::SeqCst);
    m.expire(m.now_ms());
    let f = collect(&m);
    assert!(all(&f, "spark_executor_task_time_seconds", &[]).is_empty());
    assert_eq!(
        val(&f, "spark_executor_core_seconds_allocated", &[]),
        Some(20.0)
    );
}

#[test]
fn name_mode_adds_the_allocation_of_each_ended_run() {
    let mut s = Settings::default();
    s.model.aggregate_by = AggregateBy::AppName;
    let (m, _) = model_with(&s);
    for (id, cores) in [("r1", 2u64), ("r2", 3)] {
        let o = m.observer(Source::EventLog);
        o.upsert_app(&AppObs {
            app_id: id.into(),
            name: Some("nightly".into()),
            start_ms: Some(T0 + 1),
            end_ms: Some(T0 + 10_001),
            exit_code: Some(0),
            ..Default::default()
        });
        o.upsert_executor(id, &exec("1", cores, T0 + 1, None));
    }
    // 10 s × 2 cores + 10 s × 3 cores.
    assert_eq!(allocated(&m), 50.0);
}

// --- Cached data ---

fn rdd(id: u64, cached: u64, memory: u64, disk: u64) -> RddObs {
    RddObs {
        rdd_id: id,
        name: format!("*(1) Project [k#{id}L]\n+- *(1) Range (0, 10, step=1, splits=4)\n"),
        partitions: 4,
        cached_partitions: cached,
        memory_bytes: memory,
        disk_bytes: disk,
    }
}

fn block(rdd_id: u64, partition: u64, exec: &str, memory: u64, disk: u64) -> BlockObs {
    BlockObs {
        rdd_id,
        partition,
        executor_id: exec.into(),
        memory_bytes: memory,
        disk_bytes: disk,
        stored: memory > 0 || disk > 0,
    }
}

/// `(fraction, memory, disk)` of dataset `id`, `None` without series.
fn dataset(m: &Model, id: &str) -> Option<(f64, f64, f64)> {
    let f = collect(m);
    let w = [("rdd_id", id)];
    Some((
        val(&f, "spark_rdd_cached_fraction", &w)?,
        val(&f, "spark_rdd_memory_bytes", &w).unwrap(),
        val(&f, "spark_rdd_disk_bytes", &w).unwrap(),
    ))
}

fn persisted(o: &ModelObserver, id: u64, name: &str) {
    o.rdd_persisted(
        APP,
        &RddInfoObs {
            rdd_id: id,
            name: name.into(),
            partitions: 4,
        },
    );
}

#[test]
fn rest_storage_lists_cached_datasets_with_a_short_name() {
    let (m, _) = model();
    let o = m.observer(Source::Rest);
    o.set_rdds(APP, &[rdd(3, 2, 1000, 10), rdd(5, 0, 0, 0)]);
    o.set_rdds(APP, &[rdd(3, 2, 1000, 10), rdd(5, 0, 0, 0)]);
    assert_eq!(dataset(&m, "3"), Some((0.5, 1000.0, 10.0)));
    assert_eq!(dataset(&m, "5"), None, "nothing cached: no series");
    let f = collect(&m);
    assert_eq!(
        all(
            &f,
            "spark_rdd_memory_bytes",
            &[("rdd_name", "*(1) Project [k#3L]")]
        ),
        [1000.0],
        "the first line of the plan names it"
    );
    // Unpersisted: no longer listed, its series go.
    o.set_rdds(APP, &[]);
    assert_eq!(dataset(&m, "3"), None);
}

#[test]
fn the_event_log_rebuilds_spark_storage_totals_from_block_updates() {
    let (m, _) = model();
    let o = m.observer(Source::EventLog);
    // Blocks of an RDD no stage computed as persisted are not Spark's cached data.
    o.block_updated(APP, &block(9, 0, "1", 100, 0));
    persisted(&o, 3, "In-memory table t");
    assert_eq!(dataset(&m, "3"), None, "nothing cached yet");
    for _ in 0..2 {
        // Twice: a log read again changes nothing.
        o.block_updated(APP, &block(3, 0, "1", 100, 0));
        o.block_updated(APP, &block(3, 1, "1", 200, 0));
        o.block_updated(APP, &block(3, 1, "2", 200, 0)); // a replica
        o.block_updated(APP, &block(3, 2, "2", 0, 300)); // on disk
    }
    assert_eq!(dataset(&m, "3"), Some((0.75, 500.0, 300.0)));
    assert_eq!(dataset(&m, "9"), None);
    let f = collect(&m);
    assert_eq!(
        all(
            &f,
            "spark_rdd_disk_bytes",
            &[("rdd_name", "In-memory table t")]
        ),
        [300.0]
    );
    // Partition 0 drops from memory to disk; partition 2 is evicted (a level with neither).
    o.block_updated(APP, &block(3, 0, "1", 0, 80));
    o.block_updated(APP, &block(3, 2, "2", 0, 0));
    assert_eq!(dataset(&m, "3"), Some((0.5, 400.0, 80.0)));
    // Executor 1 goes: its blocks go with it; partition 1 keeps its replica on executor 2.
    o.upsert_executor(APP, &exec("1", 1, T0 - 10, Some(T0)));
    assert_eq!(dataset(&m, "3"), Some((0.25, 200.0, 0.0)));
    // Unpersisted: its series go, and later updates of its blocks are ignored.
    o.rdd_unpersisted(APP, 3);
    o.block_updated(APP, &block(3, 1, "2", 0, 0));
    assert_eq!(dataset(&m, "3"), None);
}

#[test]
fn both_sources_show_the_rest_list_once_rest_answered() {
    let (m, _) = model();
    let log = m.observer(Source::EventLog);
    persisted(&log, 3, "In-memory table t");
    log.block_updated(APP, &block(3, 0, "1", 100, 0));
    assert_eq!(dataset(&m, "3"), Some((0.25, 100.0, 0.0)));
    let mut r = rdd(3, 2, 250, 0);
    r.name = "In-memory table t".into();
    m.observer(Source::Rest).set_rdds(APP, &[r]);
    assert_eq!(dataset(&m, "3"), Some((0.5, 250.0, 0.0)));
    assert_eq!(
        all(&collect(&m), "spark_rdd_memory_bytes", &[]).len(),
        1,
        "one series per dataset"
    );
}

#[test]
fn datasets_are_bounded() {
    let (m, _) = model();
    let list: Vec<RddObs> = (0..cache::MAX_DATASETS as u64 + 10)
        .map(|i| rdd(i, 1, i, 0))
        .collect();
    m.observer(Source::Rest).set_rdds(APP, &list);
    let f = collect(&m);
    assert_eq!(
        all(&f, "spark_rdd_memory_bytes", &[]).len(),
        cache::MAX_DATASETS
    );
    assert_eq!(dataset(&m, "0"), None, "the smallest go first");
    assert!(dataset(&m, &(cache::MAX_DATASETS + 9).to_string()).is_some());

    // The event log: RDDs with nothing cached make room for new ones.
    let (m, _) = model();
    let o = m.observer(Source::EventLog);
    for i in 0..cache::MAX_DATASETS as u64 + 10 {
        persisted(&o, i, "r");
        o.block_updated(APP, &block(i, 0, "1", 1, 0));
        if i % 2 == 0 {
            o.block_updated(APP, &block(i, 0, "1", 0, 0));
        }
    }
    let n = all(&collect(&m), "spark_rdd_memory_bytes", &[]).len();
    assert_eq!(n, (cache::MAX_DATASETS + 10) / 2);
}
