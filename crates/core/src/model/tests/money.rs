//! Memory held (GiB-seconds) and money: Spark's memory rule, both sources, the price periods,
//! retention and name mode keeping money, a price change that never makes a counter fall.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::{CostConfig, Price};
use crate::model::testkit::*;

/// [`APP`] named `money`, started 100 s before [`T0`], ended at `end` if given.
fn money_app(end: Option<i64>) -> AppObs {
    app(APP).name("money").started(T0 - 100_000).ended_at(end)
}

/// The application's Spark properties, as the environment gives them.
fn props(pairs: &[(&str, &str)]) -> AppPropsObs {
    AppPropsObs::from_properties(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// Resource profile `id`: heap and off-heap MiB, the overhead when set.
fn profile(id: u64, heap: u64, overhead: Option<u64>, off_heap: u64) -> AppPropsObs {
    AppPropsObs::from_profile(ResourceProfileObs {
        id,
        memory_mib: Some(heap),
        overhead_mib: overhead,
        off_heap_mib: Some(off_heap),
        pyspark_mib: None,
    })
}

/// A price from `since` (ms) on.
fn price(core_hour: f64, gib_hour: f64, since: Option<i64>) -> Price {
    Price {
        core_hour,
        gib_hour,
        since,
        value: None,
    }
}

/// Prices in EUR.
fn priced(prices: Vec<Price>) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.cost = CostConfig {
            currency: Some("EUR".into()),
            property: None,
            prices,
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A standalone application: default profile 512 MiB heap (Spark's overhead rule: 384 MiB),
/// profile 1 with 4 GiB heap, 1 GiB overhead set and 2 GiB off-heap; executor 1 (profile 0,
/// 1 core) from -100 s to -40 s, executor 2 (profile 1, 2 cores) from -30 s on.
fn standalone(o: &ModelObserver, end: Option<i64>) {
    o.upsert_app(&money_app(end));
    o.set_app_props(APP, &profile(0, 512, None, 0));
    o.set_app_props(APP, &profile(1, 4096, Some(1024), 2048));
    o.set_app_props(APP, &props(&[("spark.master", "spark://m:7077")]));
    o.upsert_executor(
        APP,
        &executor("1")
            .cores(1)
            .added(T0 - 100_000)
            .removed(T0 - 40_000),
    );
    let mut two = executor("2").cores(2).added(T0 - 30_000);
    two.resource_profile_id = Some(1);
    o.upsert_executor(APP, &two);
}

#[test]
fn memory_held_is_each_profiles_container_times_lifetime_from_both_sources() {
    for sources in [&["log"][..], &["rest"], &["rest", "log", "rest"]] {
        let m = TestModel::new();
        for s in sources {
            standalone(&if *s == "log" { m.log() } else { m.rest() }, Some(T0));
        }
        let c = m.app(APP).cost;
        // 60 s × (512 + 384) MiB + 30 s × (4096 + 1024 + 2048) MiB.
        assert_eq!(
            c.allocated_mib_ms,
            60_000 * 896 + 30_000 * 7168,
            "{sources:?}"
        );
        assert!(close(c.memory_gib_seconds(), 52.5 + 210.0));
        assert_eq!(c.allocated_core_seconds(), 60.0 + 60.0);
        assert_eq!(c.money, None, "no prices, no money");
    }
}

#[test]
fn memory_waits_for_the_properties_and_local_mode_counts_the_driver_memory() {
    let m = TestModel::new();
    let o = m.log();
    o.upsert_app(&money_app(Some(T0)));
    o.set_app_props(APP, &profile(0, 1024, None, 0));
    o.upsert_executor(APP, &executor("driver").cores(2).added(T0 - 10_000));
    assert_eq!(
        m.app(APP).cost.allocated_mib_ms,
        0,
        "the rule needs the master"
    );
    // local[2]: the driver is the executor, with spark.driver.memory, no overhead.
    o.set_app_props(
        APP,
        &props(&[("spark.master", "local[2]"), ("spark.driver.memory", "2g")]),
    );
    assert_eq!(m.app(APP).cost.memory_gib_seconds(), 20.0);
    // Properties said again (REST after the log) change nothing.
    m.rest()
        .set_app_props(APP, &props(&[("spark.master", "yarn")]));
    assert_eq!(m.app(APP).cost.memory_gib_seconds(), 20.0);
    // Unset: 1 GiB.
    let m = TestModel::new();
    m.log().upsert_app(&money_app(Some(T0)));
    m.log()
        .set_app_props(APP, &props(&[("spark.master", "local")]));
    m.log()
        .upsert_executor(APP, &executor("driver").cores(1).added(T0 - 10_000));
    assert_eq!(m.app(APP).cost.memory_gib_seconds(), 10.0);
}

#[test]
fn money_is_each_part_of_a_lifetime_at_the_price_in_effect_then() {
    // 3.6 a core-hour (0.001 a core-second), 0.36 a GiB-hour; from -50 s on, twice that.
    let prices = vec![price(3.6, 0.36, None), price(7.2, 0.72, Some(T0 - 50_000))];
    let m = TestModel::with(priced(prices));
    standalone(&m.log(), Some(T0));
    let money = m.app(APP).cost.money.expect("priced");
    // Executor 1: 50 s before, 10 s after (1 core, 0.875 GiB); executor 2: 30 s after
    // (2 cores, 7 GiB).
    let cores = 50.0 * 0.001 + 10.0 * 0.002 + 2.0 * 30.0 * 0.002;
    let memory = 0.875 * (50.0 * 0.0001 + 10.0 * 0.0002) + 7.0 * 30.0 * 0.0002;
    assert!(close(money.cores, cores), "{money:?}");
    assert!(close(money.memory, memory), "{money:?}");
    // At one price, money is core-seconds and GiB-seconds × the price / 3600.
    let m = TestModel::with(priced(vec![price(3.6, 0.36, None)]));
    standalone(&m.log(), Some(T0));
    let c = m.app(APP).cost;
    let money = c.money.unwrap();
    assert!(close(
        money.cores,
        c.allocated_core_seconds() * 3.6 / 3600.0
    ));
    assert!(close(money.memory, c.memory_gib_seconds() * 0.36 / 3600.0));
    // Before the first price's since, nothing is priced.
    let m = TestModel::with(priced(vec![price(3.6, 0.36, Some(T0))]));
    standalone(&m.log(), Some(T0));
    assert_eq!(m.app(APP).cost.money.map(|m| m.cores), Some(0.0));
}

#[test]
fn a_price_added_from_now_on_never_makes_the_money_fall() {
    let old = vec![price(3.6, 0.36, None)];
    let mut new = old.clone();
    new.push(price(0.36, 0.036, Some(T0 + 20_000)));
    // The application runs; both models read the same, up to T0 + 20 s, then on.
    let (a, b) = (TestModel::with(priced(old)), TestModel::with(priced(new)));
    for m in [&a, &b] {
        standalone(&m.rest(), None);
    }
    let mut last = 0.0;
    for t in [T0, T0 + 10_000, T0 + 20_000, T0 + 40_000] {
        let mut got = vec![];
        for m in [&a, &b] {
            m.at(t);
            m.rest().upsert_app(&money_app(None));
            let money = m.app(APP).cost.money.unwrap();
            got.push(money.cores + money.memory);
        }
        if t <= T0 + 20_000 {
            assert!(
                close(got[0], got[1]),
                "{t}: the same until the new price: {got:?}"
            );
        }
        assert!(got[1] >= last, "{t}: never falls: {got:?} after {last}");
        last = got[1];
    }
    assert!(last > 0.0);
}

#[test]
fn a_retired_executor_and_a_summarised_app_keep_their_money() {
    let prices = vec![price(3.6, 0.36, None), price(7.2, 0.72, Some(T0 - 50_000))];
    let m = TestModel::with(|s| {
        priced(prices)(s);
        s.model.dead_executor_retention = Duration::from_secs(60);
    });
    standalone(&m.rest(), None);
    let before = m.app(APP).cost;
    m.at(T0 + 61_000);
    // A poll lists it running: its clock moves to now.
    m.rest().upsert_app(&money_app(None));
    m.expire(m.now_ms());
    let after = m.app(APP);
    assert_eq!(after.executors.len(), 1, "executor 1 left the model");
    let (b, a) = (before.money.unwrap(), after.cost.money.unwrap());
    // Executor 2 grew by 61 s; executor 1's money stayed.
    assert!(close(a.cores, b.cores + 2.0 * 61.0 * 0.002), "{a:?} {b:?}");
    assert!(
        close(a.memory, b.memory + 7.0 * 61.0 * 0.0002),
        "{a:?} {b:?}"
    );
    assert_eq!(
        after.cost.allocated_mib_ms,
        before.allocated_mib_ms + 61_000 * 7168
    );
    // Ended and summarised: everything stays.
    m.rest().upsert_app(&money_app(Some(T0 + 61_000)));
    let ended = m.app(APP).cost;
    m.at(T0 + 61_000 + 3_600_000 - 1);
    m.expire(m.now_ms());
    let summarised = m.app(APP);
    assert!(summarised.executors.is_empty());
    assert_eq!(summarised.cost.money, ended.money);
    assert_eq!(summarised.cost.allocated_mib_ms, ended.allocated_mib_ms);
}

#[test]
fn name_mode_folds_the_money_of_each_run_and_keeps_the_last() {
    let m = TestModel::with(|s| {
        priced(vec![price(3.6, 0.36, None)])(s);
        s.model.aggregate_by = AggregateBy::AppName;
    });
    for (id, cores, end) in [("r1", 2u64, T0 + 10_001), ("r2", 3, T0 + 20_001)] {
        let o = m.log();
        o.upsert_app(
            &app(id)
                .name("nightly")
                .started(T0 + 1)
                .ended_at(end)
                .exit(0),
        );
        o.set_app_props(id, &props(&[("spark.master", "local[2]")]));
        o.upsert_executor(id, &executor("driver").cores(cores).added(T0 + 1));
    }
    let names = m.names();
    let c = names[0].cost;
    // 10 s × 2 cores + 20 s × 3 cores; 10 s + 20 s × 1 GiB.
    assert_eq!(c.allocated_core_seconds(), 80.0);
    assert_eq!(c.memory_gib_seconds(), 30.0);
    let money = c.money.unwrap();
    assert!(
        close(money.cores, 0.08) && close(money.memory, 0.003),
        "{money:?}"
    );
    let last = names[0].last_run.unwrap().money.unwrap();
    assert!(close(last, 0.06 + 0.002), "{last}");
    // Without prices, no money.
    let m = TestModel::with(|s| s.model.aggregate_by = AggregateBy::AppName);
    m.log()
        .upsert_app(&app("r1").name("n").started(T0).ended_at(T0 + 1).exit(0));
    assert_eq!(m.names()[0].cost.money, None);
}

#[test]
fn the_property_value_picks_its_prices() {
    let m = TestModel::with(|s| {
        s.cost = CostConfig {
            currency: Some("EUR".into()),
            property: Some("spark.kubernetes.namespace".into()),
            prices: vec![
                price(3.6, 0.0, None),
                Price {
                    value: Some("etl".into()),
                    ..price(36.0, 0.0, None)
                },
            ],
        }
    });
    for (id, ns) in [("a", "etl"), ("b", "adhoc")] {
        let o = m.log();
        o.upsert_app(&app(id).name(id).started(T0).ended_at(T0 + 10_000));
        o.set_app_props(
            id,
            &props(&[
                ("spark.master", "local[1]"),
                ("spark.kubernetes.namespace", ns),
            ]),
        );
        o.upsert_executor(id, &executor("driver").cores(1).added(T0));
    }
    assert!(close(m.app("a").cost.money.unwrap().cores, 0.1));
    assert!(close(m.app("b").cost.money.unwrap().cores, 0.01));
    // Before its properties are known, an application has no price yet.
    m.log().upsert_app(&app("c").name("c").started(T0));
    assert_eq!(m.app("c").cost.money, None);
}
