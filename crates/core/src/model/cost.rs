//! What an application's executors cost, in core-seconds:
//! - **Allocated**: every executor's lifetime × its cores. The lifetime runs from its add time
//!   to its removal, else to the application's end, else (both still going on) to the
//!   application's clock: the latest time it is known to have run, that is the newest event time
//!   read from its log and the wall clock of every REST poll that lists it running. So the value
//!   follows the wall clock while executors live (at each poll, or as the log's events arrive),
//!   and it never goes back: an application read from an old log counts to its last event, not
//!   to today, and its end (Spark's clock) is never before the times already counted (a removal
//!   or an end that Spark dates before a REST poll that still saw the executor or the
//!   application alive, a clock skew, counts to that poll). Only executors with cores count: a
//!   cluster-mode driver runs no task, and Spark reports it so (REST `totalCores` 0, no
//!   `SparkListenerExecutorAdded` in the event log); in local mode the driver *is* the executor,
//!   and both sources report it with its cores (`local[N]`: N), so it counts.
//! - **Used**: tasks' executor run time × `spark.task.cpus`, per job group (the group sums of
//!   `spark_task_run_time_seconds_total`, so both sources agree exactly).
//! - **Idle**: allocated − used, at least 0: cores held and paid for while no task ran on them.
//!
//! - **Memory held**: every executor's lifetime × the memory its container holds, MiB: its
//!   resource profile's heap (`memory`) + `memoryOverhead` + `offHeap` + `pyspark.memory`. Spark
//!   lists `memoryOverhead` only when it is set; otherwise Spark's own rule gives it,
//!   max(`spark.executor.minMemoryOverhead` (384 MiB), `spark.executor.memoryOverheadFactor`
//!   (0.10) × heap). In local mode (`spark.master` `local…`) the one executor is the driver:
//!   `spark.driver.memory` (1 GiB), no overhead (no container). Counted once the application's
//!   properties are known (the rule depends on them).
//! - **Money** (with `cost.prices`): each executor's lifetime cut at the prices' `since`, each
//!   part at the price in effect then (core-hours and GiB-hours), so the value is a function of
//!   Spark's times and the price list alone.
//!
//! An executor that leaves the model (`model.dead_executor_retention`, or the application's
//! summary) leaves its core-milliseconds in [`Cost::retired_core_ms`] and its id in a retired
//! set, so the counter never goes back, and a source that lists the executor again (REST keeps
//! dead executors for a while) neither counts its cores twice nor counts it as removed again.

use std::collections::{BTreeMap, HashSet};

use super::executor::ExecutorState;
use super::idset::IdSet;
use super::obs::EpochMs;
use super::obs::ResourceProfileObs;
use crate::config::Price;

/// Non-numeric executor ids remembered as retired, at most (Spark's executor ids are numbers,
/// but for `driver`); past it, such an executor listed again would be counted again.
const MAX_RETIRED_NAMED: usize = 1024;

/// The cost state of one application (or, in name mode, of a name's ended runs).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    /// `spark.task.cpus`, once a source said; in name mode the largest of the runs.
    pub(super) task_cpus: Option<u64>,
    /// The application's clock: the latest time it is known to have run (event times of its
    /// log, the wall clock of REST polls listing it running); frozen once it ended.
    pub(super) seen_ms: EpochMs,
    /// Core-milliseconds of executors that left the model (and, in name mode, of the runs
    /// folded into the name).
    pub(super) retired_core_ms: u64,
    /// Numeric ids of executors whose core-milliseconds are in `retired_core_ms`.
    retired_ids: IdSet,
    /// Other ids of such executors (bounded by [`MAX_RETIRED_NAMED`]).
    #[serde(with = "crate::model::serial::sorted")]
    retired_named: HashSet<Box<str>>,
    /// MiB-milliseconds of memory held by executors that left the model (and, in name mode,
    /// by the runs folded into the name).
    #[serde(default)]
    pub(super) retired_mib_ms: u64,
    /// Money of executors that left the model (and of the runs folded into a name), counted
    /// with the prices of when they left.
    #[serde(default)]
    pub(super) retired_money: Money,
    /// The application's resource profiles, by id.
    #[serde(default, with = "crate::model::serial::pairs")]
    pub(super) profiles: BTreeMap<u64, Profile>,
    /// What the memory rule reads of the application's properties; `None` until they are
    /// known.
    #[serde(default)]
    pub(super) rule: Option<MemoryRule>,
    /// The value of `cost.property` in the application's properties, once known.
    #[serde(default)]
    pub(super) property: Option<Box<str>>,
}

/// Money, in the configured currency, by resource.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Money {
    /// Cores held.
    #[serde(with = "crate::model::serial::exact")]
    pub cores: f64,
    /// Memory held.
    #[serde(with = "crate::model::serial::exact")]
    pub memory: f64,
}

impl Money {
    /// The sum of both.
    pub fn plus(self, o: Money) -> Money {
        Money {
            cores: self.cores + o.cores,
            memory: self.memory + o.memory,
        }
    }
}

/// The memory an executor of one resource profile asks for, MiB (see [`ResourceProfileObs`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    /// Heap.
    memory_mib: Option<u64>,
    /// `memoryOverhead`, when set.
    overhead_mib: Option<u64>,
    /// Off-heap.
    off_heap_mib: Option<u64>,
    /// PySpark workers' memory, when set.
    pyspark_mib: Option<u64>,
}

impl From<&ResourceProfileObs> for Profile {
    fn from(p: &ResourceProfileObs) -> Profile {
        Profile {
            memory_mib: p.memory_mib,
            overhead_mib: p.overhead_mib,
            off_heap_mib: p.off_heap_mib,
            pyspark_mib: p.pyspark_mib,
        }
    }
}

/// Spark's default overhead factor (`spark.executor.memoryOverheadFactor`).
pub const DEFAULT_OVERHEAD_FACTOR: f64 = 0.10;
/// Spark's default least overhead, MiB (`spark.executor.minMemoryOverhead`, Spark 4.0+; a
/// constant before).
pub const DEFAULT_MIN_OVERHEAD_MIB: u64 = 384;
/// Spark's default `spark.driver.memory`, MiB.
pub const DEFAULT_DRIVER_MIB: u64 = 1024;

/// What the memory rule reads of the application's properties.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryRule {
    /// `spark.master` is `local` or `local[…]`: the driver is the only executor.
    pub(super) local: bool,
    /// `spark.driver.memory`, MiB.
    pub(super) driver_mib: u64,
    /// `spark.executor.memoryOverheadFactor`.
    #[serde(with = "crate::model::serial::exact")]
    pub(super) factor: f64,
    /// `spark.executor.minMemoryOverhead`, MiB.
    pub(super) min_overhead_mib: u64,
}

impl MemoryRule {
    /// The rule of an application with these Spark properties (a value Spark would refuse
    /// leaves the default).
    pub fn from_properties(p: &BTreeMap<String, String>) -> MemoryRule {
        let get = |k: &str| p.get(k).map(|v| v.trim());
        let master = get("spark.master").unwrap_or("");
        MemoryRule {
            local: master == "local" || master.starts_with("local["),
            driver_mib: get("spark.driver.memory")
                .and_then(mib)
                .unwrap_or(DEFAULT_DRIVER_MIB),
            factor: get("spark.executor.memoryOverheadFactor")
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|f| f.is_finite() && *f > 0.0)
                .unwrap_or(DEFAULT_OVERHEAD_FACTOR),
            min_overhead_mib: get("spark.executor.minMemoryOverhead")
                .and_then(mib)
                .unwrap_or(DEFAULT_MIN_OVERHEAD_MIB),
        }
    }

    /// MiB held by an executor of profile `p` (`None` without its heap), as Spark sizes its
    /// container: heap + overhead (the profile's, else max(least, factor × heap)) + off-heap
    /// + PySpark memory. In local mode the driver's memory, whatever the profile.
    pub fn executor_mib(&self, p: Option<&Profile>) -> Option<u64> {
        if self.local {
            return Some(self.driver_mib);
        }
        let p = p?;
        let heap = p.memory_mib?;
        let overhead = p
            .overhead_mib
            .unwrap_or_else(|| ((self.factor * heap as f64) as u64).max(self.min_overhead_mib));
        Some(
            heap.saturating_add(overhead)
                .saturating_add(p.off_heap_mib.unwrap_or(0))
                .saturating_add(p.pyspark_mib.unwrap_or(0)),
        )
    }
}

/// A size in MiB as Spark reads `spark.driver.memory` (`2g`, `512m`, `1024`: MiB without a
/// unit).
fn mib(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let v = v.strip_suffix('b').unwrap_or(&v);
    let (num, mult): (&str, f64) = match v.chars().last()? {
        'k' => (&v[..v.len() - 1], 1.0 / 1024.0),
        'm' => (&v[..v.len() - 1], 1.0),
        'g' => (&v[..v.len() - 1], 1024.0),
        't' => (&v[..v.len() - 1], 1024.0 * 1024.0),
        'p' => (&v[..v.len() - 1], 1024.0 * 1024.0 * 1024.0),
        _ => (v, 1.0),
    };
    let n = num.trim().parse::<u64>().ok()?;
    Some((n as f64 * mult) as u64)
}

impl Cost {
    /// Cores a task holds: `spark.task.cpus`, Spark's default 1 until a source says.
    pub fn cpus(&self) -> u64 {
        self.task_cpus.unwrap_or(1).max(1)
    }

    /// True once executor `id` left the model: later reports of it are ignored.
    pub fn is_retired(&self, id: &str) -> bool {
        match id.parse::<u64>() {
            Ok(n) => self.retired_ids.contains(n),
            Err(_) => self.retired_named.contains(id),
        }
    }

    /// MiB executor `ex` holds, once the application's properties are known.
    pub fn executor_mib(&self, ex: &ExecutorState) -> Option<u64> {
        self.rule?
            .executor_mib(self.profiles.get(&ex.profile_id.unwrap_or(0)))
    }

    /// Executor `id` leaves the model, in an application that ended at `app_end`, its money
    /// counted at `prices` (its schedule; `None`: not priced). A dead executor of a running
    /// application counts to its removal, whatever the clock says.
    pub(super) fn retire(
        &mut self,
        id: &str,
        ex: &ExecutorState,
        app_end: Option<EpochMs>,
        prices: Option<&[Price]>,
    ) {
        if self.is_retired(id) {
            return;
        }
        let seen = if app_end.is_some() {
            self.seen_ms
        } else {
            EpochMs::MAX
        };
        let held = Held::of(ex, self.executor_mib(ex), app_end, seen);
        self.retired_core_ms = self.retired_core_ms.saturating_add(held.core_ms());
        self.retired_mib_ms = self.retired_mib_ms.saturating_add(held.mib_ms());
        if let Some(p) = prices {
            self.retired_money = self.retired_money.plus(held.money(p));
        }
        match id.parse::<u64>() {
            Ok(n) => {
                self.retired_ids.insert(n);
            }
            Err(_) if self.retired_named.len() < MAX_RETIRED_NAMED => {
                self.retired_named.insert(id.into());
            }
            Err(_) => {}
        }
    }
}

/// What one executor held: from when to when, how many cores and MiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Add time.
    pub from: EpochMs,
    /// End of its allocation (see [`Held::of`]).
    pub to: EpochMs,
    /// Cores (0: not counted).
    pub cores: u64,
    /// MiB (0 while the memory rule is not known).
    pub mib: u64,
}

impl Held {
    /// What executor `ex` of `mib` MiB held, in an application that ended at `app_end`, whose
    /// clock says `seen`: nothing without cores or an add time. A live executor runs to the
    /// application's end, else to `seen`; a dead one to its removal, but not before the clock
    /// it was still seen alive at, and not past the application's end.
    pub fn of(
        ex: &ExecutorState,
        mib: Option<u64>,
        app_end: Option<EpochMs>,
        seen: EpochMs,
    ) -> Held {
        let (Some(cores), Some(add)) = (ex.cores.filter(|c| *c > 0), ex.add_ms) else {
            return Held::default();
        };
        let live_end = app_end.map_or(seen, |e| e.max(seen));
        let end = if ex.active {
            live_end
        } else {
            let removed = ex
                .remove_ms
                .unwrap_or(0)
                .max(ex.alive_until_ms.unwrap_or(0));
            removed.min(live_end)
        };
        Held {
            from: add,
            to: end.max(add),
            cores,
            mib: mib.unwrap_or(0),
        }
    }

    fn ms(&self) -> u64 {
        u64::try_from(self.to.saturating_sub(self.from)).unwrap_or(0)
    }

    /// Core-milliseconds.
    pub fn core_ms(&self) -> u64 {
        self.ms().saturating_mul(self.cores)
    }

    /// MiB-milliseconds.
    pub fn mib_ms(&self) -> u64 {
        self.ms().saturating_mul(self.mib)
    }

    /// Its money at `prices` (a schedule, see [`crate::config::CostConfig::schedule`]): its
    /// lifetime cut at each entry's `since`, each part at its entry's prices; nothing for a
    /// part before the first entry.
    pub fn money(&self, prices: &[Price]) -> Money {
        let (mut core, mut gib) = (0.0, 0.0);
        for (i, p) in prices.iter().enumerate() {
            let start = p.since.unwrap_or(EpochMs::MIN).max(self.from);
            // The next entry ends this one (two without `since`: the later wins).
            let end = prices
                .get(i + 1)
                .map_or(EpochMs::MAX, |n| n.since.unwrap_or(EpochMs::MIN))
                .min(self.to);
            if end > start {
                let hours = (end - start) as f64 / 3_600_000.0;
                core += hours * p.core_hour;
                gib += hours * p.gib_hour;
            }
        }
        Money {
            cores: core * self.cores as f64,
            memory: gib * self.mib as f64 / 1024.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(props: &[(&str, &str)]) -> MemoryRule {
        MemoryRule::from_properties(
            &props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn heap(mib: u64, overhead: Option<u64>) -> Profile {
        Profile {
            memory_mib: Some(mib),
            overhead_mib: overhead,
            off_heap_mib: Some(0),
            pyspark_mib: None,
        }
    }

    #[test]
    fn the_overhead_is_sparks_rule_unless_the_profile_sets_it() {
        let yarn = rule(&[("spark.master", "yarn")]);
        // max(384 MiB, 0.10 × heap).
        assert_eq!(yarn.executor_mib(Some(&heap(512, None))), Some(512 + 384));
        assert_eq!(yarn.executor_mib(Some(&heap(8192, None))), Some(8192 + 819));
        // spark.executor.memoryOverhead set: the profile lists it, and it replaces the rule.
        assert_eq!(yarn.executor_mib(Some(&heap(8192, Some(100)))), Some(8292));
        // The factor and (Spark 4) the least overhead.
        let r = rule(&[
            ("spark.executor.memoryOverheadFactor", "0.4"),
            ("spark.executor.minMemoryOverhead", "1g"),
        ]);
        assert_eq!(r.executor_mib(Some(&heap(2048, None))), Some(2048 + 1024));
        assert_eq!(r.executor_mib(Some(&heap(4096, None))), Some(4096 + 1638));
        // Off-heap and PySpark memory add.
        let p = Profile {
            off_heap_mib: Some(2048),
            pyspark_mib: Some(512),
            ..heap(1024, Some(1024))
        };
        assert_eq!(yarn.executor_mib(Some(&p)), Some(1024 + 1024 + 2048 + 512));
        // No profile, or no heap in it: unknown.
        assert_eq!(yarn.executor_mib(None), None);
        // Nonsense keeps Spark's default.
        let odd = rule(&[("spark.executor.memoryOverheadFactor", "-1")]);
        assert_eq!(odd.factor, DEFAULT_OVERHEAD_FACTOR);
    }

    #[test]
    fn local_mode_holds_the_driver_memory_without_overhead() {
        for (master, local) in [
            ("local", true),
            ("local[4]", true),
            ("local[*, 2]", true),
            ("local-cluster[2,1,1024]", false),
            ("k8s://https://api:6443", false),
        ] {
            assert_eq!(rule(&[("spark.master", master)]).local, local, "{master}");
        }
        let r = rule(&[("spark.master", "local[2]"), ("spark.driver.memory", "3g")]);
        assert_eq!(r.executor_mib(None), Some(3072));
        assert_eq!(
            rule(&[("spark.master", "local")]).executor_mib(None),
            Some(1024)
        );
        for (v, want) in [
            ("512m", 512),
            ("2G", 2048),
            ("1024", 1024),
            ("1t", 1_048_576),
        ] {
            assert_eq!(mib(v), Some(want), "{v}");
        }
        assert_eq!(mib("lots"), None);
    }

    #[test]
    fn a_lifetime_is_priced_in_parts_at_each_since() {
        let p = |core_hour, gib_hour, since| Price {
            core_hour,
            gib_hour,
            since,
            value: None,
        };
        let h = 3_600_000;
        let held = Held {
            from: 0,
            to: 2 * h,
            cores: 2,
            mib: 2048,
        };
        let m = held.money(&[p(1.0, 0.5, None), p(3.0, 1.0, Some(h))]);
        assert_eq!((m.cores, m.memory), (2.0 * (1.0 + 3.0), 2.0 * (0.5 + 1.0)));
        // A price from after the lifetime changes nothing; one before the first since: 0.
        let m = held.money(&[p(1.0, 0.5, None), p(9.0, 9.0, Some(3 * h))]);
        assert_eq!((m.cores, m.memory), (4.0, 2.0));
        let m = held.money(&[p(1.0, 0.5, Some(h))]);
        assert_eq!((m.cores, m.memory), (2.0, 1.0));
        // Two entries from the beginning, or from the same time: the later one applies.
        let m = held.money(&[p(5.0, 5.0, None), p(1.0, 0.5, None)]);
        assert_eq!((m.cores, m.memory), (4.0, 2.0));
        let m = held.money(&[
            p(1.0, 0.5, None),
            p(9.0, 9.0, Some(h)),
            p(3.0, 1.0, Some(h)),
        ]);
        assert_eq!((m.cores, m.memory), (8.0, 3.0));
        assert_eq!(held.core_ms(), 4 * h as u64);
        assert_eq!(held.mib_ms(), 2048 * 2 * h as u64);
    }
}
