//! The `diagnose` section: what `spark-exporter diagnose` counts as a finding (skew, spill, GC,
//! low utilisation, ...), with documented defaults, optionally overridden per job group under
//! `diagnose.groups.<job group>`. Each threshold is one key declaration.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// Longest / median task duration from which a stage counts as skewed.
pub const DEFAULT_SKEW_RATIO: f64 = 5.0;
/// ... when its longest task ran at least this much longer than its median one.
pub const DEFAULT_SKEW_MIN_EXCESS: Duration = Duration::from_secs(2);
/// Bytes spilled to disk from which a stage counts as spilling.
pub const DEFAULT_SPILL_MIN_BYTES: u64 = 1024 * 1024;
/// GC time / task run time from which a stage counts as under GC pressure.
pub const DEFAULT_GC_RATIO: f64 = 0.1;
/// ... when its tasks spent at least this long in GC.
pub const DEFAULT_GC_MIN: Duration = Duration::from_secs(1);
/// A shuffled join whose smaller side wrote at most this much shuffle data could have been a
/// broadcast (Spark's default `spark.sql.autoBroadcastJoinThreshold`, 10 MiB).
pub const DEFAULT_BROADCAST_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// Used / allocated core time under which an application's cores count as mostly idle.
pub const DEFAULT_MIN_CORE_UTILIZATION: f64 = 0.5;
/// ... once at least this much core time was allocated (core-seconds).
pub const DEFAULT_UTILIZATION_MIN_CORE_TIME: Duration = Duration::from_secs(60);
/// Scheduler delay / task run time from which a job group counts as scheduler-bound.
pub const DEFAULT_SCHEDULER_DELAY_RATIO: f64 = 0.1;
/// ... when its tasks waited at least this long in total.
pub const DEFAULT_SCHEDULER_DELAY_MIN: Duration = Duration::from_secs(5);
/// Share of a job group's tasks that ran rack-local or anywhere from which locality counts as
/// poor.
pub const DEFAULT_LOCALITY_REMOTE_RATIO: f64 = 0.5;
/// ... among at least this many tasks with a locality other than `NO_PREF`.
pub const DEFAULT_LOCALITY_MIN_TASKS: u64 = 100;
/// A streaming batch longer than this share of its trigger interval is near its budget.
pub const DEFAULT_TRIGGER_RATIO: f64 = 0.8;
/// A query counts when at least this share of its recent batches are near their budget.
pub const DEFAULT_TRIGGER_OVER_FRACTION: f64 = 0.25;
/// Findings that explain less task time than this are left out (plan changes and partly
/// cached datasets, which have no cost, are always reported).
pub const DEFAULT_MIN_COST: Duration = Duration::from_secs(1);

/// What counts as a finding. Every field has a default; `diagnose.groups.<job group>` overrides
/// any of them for one job group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// Longest / median task duration from which a complete stage counts as skewed.
    pub skew_ratio: f64,
    /// ... when its longest task also ran at least this much longer than its median one.
    #[serde(with = "humantime_serde")]
    pub skew_min_excess: Duration,
    /// Bytes spilled to disk from which a stage counts as spilling.
    pub spill_min_bytes: u64,
    /// GC time / task run time from which a stage counts as under GC pressure.
    pub gc_ratio: f64,
    /// ... when its tasks spent at least this long in GC.
    #[serde(with = "humantime_serde")]
    pub gc_min: Duration,
    /// A sort-merge or shuffled-hash join whose smaller side wrote at most this many shuffle
    /// bytes is reported as a broadcast candidate.
    pub broadcast_max_bytes: u64,
    /// Used / allocated core time under which the application's cores count as mostly idle.
    pub min_core_utilization: f64,
    /// ... once at least this much core time (core-seconds, as a duration) was allocated.
    #[serde(with = "humantime_serde")]
    pub utilization_min_core_time: Duration,
    /// Scheduler delay / task run time from which a job group counts as scheduler-bound.
    pub scheduler_delay_ratio: f64,
    /// ... when its tasks' scheduler delay adds up to at least this.
    #[serde(with = "humantime_serde")]
    pub scheduler_delay_min: Duration,
    /// Share of tasks that ran `RACK_LOCAL` or `ANY` from which locality counts as poor.
    pub locality_remote_ratio: f64,
    /// ... among at least this many tasks with a locality other than `NO_PREF`.
    pub locality_min_tasks: u64,
    /// A streaming batch longer than this share of its trigger interval is near its budget.
    pub trigger_ratio: f64,
    /// A query is reported when at least this share of its recent batches are near their budget.
    pub trigger_over_fraction: f64,
    /// Findings that explain less time than this are left out.
    #[serde(with = "humantime_serde")]
    pub min_cost: Duration,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            skew_ratio: DEFAULT_SKEW_RATIO,
            skew_min_excess: DEFAULT_SKEW_MIN_EXCESS,
            spill_min_bytes: DEFAULT_SPILL_MIN_BYTES,
            gc_ratio: DEFAULT_GC_RATIO,
            gc_min: DEFAULT_GC_MIN,
            broadcast_max_bytes: DEFAULT_BROADCAST_MAX_BYTES,
            min_core_utilization: DEFAULT_MIN_CORE_UTILIZATION,
            utilization_min_core_time: DEFAULT_UTILIZATION_MIN_CORE_TIME,
            scheduler_delay_ratio: DEFAULT_SCHEDULER_DELAY_RATIO,
            scheduler_delay_min: DEFAULT_SCHEDULER_DELAY_MIN,
            locality_remote_ratio: DEFAULT_LOCALITY_REMOTE_RATIO,
            locality_min_tasks: DEFAULT_LOCALITY_MIN_TASKS,
            trigger_ratio: DEFAULT_TRIGGER_RATIO,
            trigger_over_fraction: DEFAULT_TRIGGER_OVER_FRACTION,
            min_cost: DEFAULT_MIN_COST,
        }
    }
}

/// The `diagnose` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DiagnoseConfig {
    /// The thresholds of every job group not listed in `groups`.
    #[serde(flatten)]
    pub defaults: Thresholds,
    /// Per job group (its `job_group` label value): the defaults with these fields replaced.
    pub groups: BTreeMap<String, Thresholds>,
}

impl DiagnoseConfig {
    /// The thresholds of job group `group`.
    pub fn for_group(&self, group: &str) -> &Thresholds {
        self.groups.get(group).unwrap_or(&self.defaults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_group_overrides() {
        let s = crate::config::from_value(&json!({"diagnose": {
            "skew_ratio": "3", "spill_min_bytes": "10MiB",
            "groups": {"etl.daily": {"gc_ratio": 0.3}}
        }}))
        .expect("valid");
        let d = &s.diagnose;
        assert_eq!(d.defaults.skew_ratio, 3.0);
        assert_eq!(d.defaults.spill_min_bytes, 10 * 1024 * 1024);
        let g = d.for_group("etl.daily");
        assert_eq!(g.gc_ratio, 0.3);
        assert_eq!(g.skew_ratio, 3.0, "a group starts from the defaults");
        assert_eq!(d.for_group("other").gc_ratio, DEFAULT_GC_RATIO);
    }

    #[test]
    fn every_wrong_threshold_is_named() {
        let e = crate::config::from_value(&json!({"diagnose": {
            "skew_ratio": "-1", "gc_min": "soon", "spill_min_bytes": "10 parsecs",
            "nonsense": 1,
            "groups": {"g": {"gc_ratio": 2, "typo": 1}, "h": 3}
        }}))
        .expect_err("invalid")
        .to_string();
        for k in [
            "diagnose.skew_ratio",
            "diagnose.gc_min",
            "diagnose.spill_min_bytes",
            "diagnose.nonsense: unknown field",
            "diagnose.groups.g.gc_ratio",
            "diagnose.groups.g.typo: unknown field",
            "diagnose.groups.h",
        ] {
            assert!(e.contains(k), "{k} missing from {e}");
        }
    }
}
