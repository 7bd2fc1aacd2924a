//! Executors of one application: totals per source (merged with `max`), running tasks, memory,
//! and the normalised reasons they were removed for.

use std::collections::BTreeMap;

use super::obs::{EpochMs, ExecutorObs};

/// Cumulative executor values from one source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExecutorTotals {
    /// Sum of task durations, ms.
    pub(super) task_time_ms: u64,
    /// GC time, ms.
    pub(super) gc_time_ms: u64,
    /// Tasks completed.
    pub(super) completed_tasks: u64,
    /// Tasks failed.
    pub(super) failed_tasks: u64,
    /// Input bytes.
    pub(super) input_bytes: u64,
    /// Shuffle bytes read.
    pub(super) shuffle_read_bytes: u64,
    /// Shuffle bytes written.
    pub(super) shuffle_write_bytes: u64,
}

impl ExecutorTotals {
    /// Sum of task durations, ms.
    pub fn task_time_ms(&self) -> u64 {
        self.task_time_ms
    }
    /// JVM GC time, ms.
    pub fn gc_time_ms(&self) -> u64 {
        self.gc_time_ms
    }
    /// Tasks completed.
    pub fn completed_tasks(&self) -> u64 {
        self.completed_tasks
    }
    /// Tasks failed.
    pub fn failed_tasks(&self) -> u64 {
        self.failed_tasks
    }
    /// Bytes read from input sources.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }
    /// Shuffle bytes read.
    pub fn shuffle_read_bytes(&self) -> u64 {
        self.shuffle_read_bytes
    }
    /// Shuffle bytes written.
    pub fn shuffle_write_bytes(&self) -> u64 {
        self.shuffle_write_bytes
    }
    /// Field-wise maximum (source merge).
    pub fn max(&self, o: &ExecutorTotals) -> ExecutorTotals {
        ExecutorTotals {
            task_time_ms: self.task_time_ms.max(o.task_time_ms),
            gc_time_ms: self.gc_time_ms.max(o.gc_time_ms),
            completed_tasks: self.completed_tasks.max(o.completed_tasks),
            failed_tasks: self.failed_tasks.max(o.failed_tasks),
            input_bytes: self.input_bytes.max(o.input_bytes),
            shuffle_read_bytes: self.shuffle_read_bytes.max(o.shuffle_read_bytes),
            shuffle_write_bytes: self.shuffle_write_bytes.max(o.shuffle_write_bytes),
        }
    }
}

/// A normalised removal reason ([`normalise_reason`]). A name of its own, so serde does not
/// read `Option<&'static str>` as a string to borrow from its input.
pub(super) type Reason = &'static str;

/// One executor.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ExecutorState {
    /// Still running.
    pub(super) active: bool,
    /// Normalised removal reason, once removed.
    #[serde(deserialize_with = "crate::model::serial::opt_static")]
    pub(super) remove_reason: Option<Reason>,
    /// When the model saw it die (wall clock), for retention.
    pub(super) dead_seen_ms: Option<EpochMs>,
    /// Task slots.
    pub(super) max_tasks: Option<u64>,
    /// Running tasks (REST).
    pub(super) active_tasks: Option<u64>,
    /// Running tasks from the event log (starts minus ends).
    pub(super) log_running: u64,
    /// Storage memory used.
    pub(super) storage_memory_used_bytes: Option<u64>,
    /// Storage memory available.
    pub(super) max_memory_bytes: Option<u64>,
    /// Disk used.
    pub(super) disk_used_bytes: Option<u64>,
    /// Totals from REST.
    pub(super) rest: ExecutorTotals,
    /// Totals summed from event-log task ends.
    pub(super) log: ExecutorTotals,
    /// Peak memory by type (max ever seen).
    pub(super) peak_memory: BTreeMap<String, u64>,
    /// Cores, when a source said (the largest said: a cluster-mode driver's REST 0 never hides
    /// another source's count).
    pub(super) cores: Option<u64>,
    /// When it was added (Spark's clock).
    pub(super) add_ms: Option<EpochMs>,
    /// When it was removed (Spark's clock).
    pub(super) remove_ms: Option<EpochMs>,
    /// The application's clock when its removal was first seen, if it was counted live until
    /// then (see `cost.rs`): its allocation never goes back below that.
    pub(super) alive_until_ms: Option<EpochMs>,
    /// Its resource profile, when a source said (the memory it holds, `cost.rs`).
    #[serde(default)]
    pub(super) profile_id: Option<u64>,
}

impl ExecutorState {
    /// Totals, sources merged.
    pub fn totals(&self) -> ExecutorTotals {
        self.rest.max(&self.log)
    }

    /// Merge a REST or event-log observation (except removal, handled by the model).
    pub fn merge(&mut self, o: &ExecutorObs) {
        fn set(dst: &mut Option<u64>, v: Option<u64>) {
            if v.is_some() {
                *dst = v;
            }
        }
        set(&mut self.max_tasks, o.max_tasks);
        set(&mut self.active_tasks, o.active_tasks);
        set(
            &mut self.storage_memory_used_bytes,
            o.storage_memory_used_bytes,
        );
        set(&mut self.max_memory_bytes, o.max_memory_bytes);
        set(&mut self.disk_used_bytes, o.disk_used_bytes);
        let r = &mut self.rest;
        let up = |dst: &mut u64, v: Option<u64>| *dst = (*dst).max(v.unwrap_or(0));
        up(&mut r.task_time_ms, o.task_time_ms);
        up(&mut r.gc_time_ms, o.gc_time_ms);
        up(&mut r.completed_tasks, o.completed_tasks);
        up(&mut r.failed_tasks, o.failed_tasks);
        up(&mut r.input_bytes, o.input_bytes);
        up(&mut r.shuffle_read_bytes, o.shuffle_read_bytes);
        up(&mut r.shuffle_write_bytes, o.shuffle_write_bytes);
        self.merge_lifetime(o);
        for (k, v) in &o.peak_memory {
            // Only memory sizes: peakMemoryMetrics also holds GC counts and times.
            if k.ends_with("Memory") {
                let e = self.peak_memory.entry(k.clone()).or_default();
                *e = (*e).max(*v);
            }
        }
    }
}

impl ExecutorState {
    /// Cores and lifetime (the cost rules, `cost.rs`): both sources report the same times, so
    /// the earliest add and the latest removal are kept, whatever the order of the reports.
    fn merge_lifetime(&mut self, o: &ExecutorObs) {
        if o.resource_profile_id.is_some() {
            self.profile_id = o.resource_profile_id;
        }
        if let Some(c) = o.total_cores {
            self.cores = Some(self.cores.map_or(c, |x| x.max(c)));
        }
        if let Some(a) = o.add_ms.filter(|a| *a > 0) {
            self.add_ms = Some(self.add_ms.map_or(a, |x| x.min(a)));
        }
        if let Some(r) = o.remove_ms.filter(|r| *r > 0) {
            self.remove_ms = Some(self.remove_ms.map_or(r, |x| x.max(r)));
        }
    }
}

/// Normalise Spark's free-text executor removal reason to a small set.
pub fn normalise_reason(reason: Option<&str>) -> &'static str {
    let r = reason.unwrap_or("").to_ascii_lowercase();
    if r.contains("decommission") {
        "decommissioned"
    } else if r.contains("heartbeat") {
        "heartbeat_timeout"
    } else if r.contains("killed by driver")
        || r.contains("requested by driver")
        || r.contains("idle")
        || r.contains("killed")
    {
        "killed_by_driver"
    } else if r.contains("exit") || r.contains("oom") || r.contains("out of memory") {
        "exited"
    } else if r.contains("lost") || r.contains("disconnected") || r.contains("unreachable") {
        "lost"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_fold_into_a_small_set() {
        assert_eq!(
            normalise_reason(Some("Executor heartbeat timed out after 120000 ms")),
            "heartbeat_timeout"
        );
        assert_eq!(
            normalise_reason(Some("Executor killed by driver.")),
            "killed_by_driver"
        );
        assert_eq!(
            normalise_reason(Some("Command exited with code 137")),
            "exited"
        );
        assert_eq!(
            normalise_reason(Some("Executor decommission.")),
            "decommissioned"
        );
        assert_eq!(normalise_reason(None), "other");
    }
}
