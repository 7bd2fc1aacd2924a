//! Cached datasets of one application (Spark's Storage tab): per dataset, the fraction of its
//! partitions cached, and the bytes cached in memory and on disk.
//!
//! - REST: `/storage/rdd` lists Spark's own totals; each list replaces the previous one.
//! - Event log: the totals are rebuilt as Spark's status store (`AppStatusListener`) builds
//!   them. An RDD is tracked from the first stage that computes it with a storage level that
//!   uses memory or disk (`SparkListenerStageSubmitted` `RDD Info`) until
//!   `SparkListenerUnpersistRDD`. Each of its blocks (`rdd_<rdd>_<partition>` on one executor,
//!   `SparkListenerBlockUpdated`) keeps its last reported sizes: memory when the level uses
//!   memory, disk when it uses disk; a level with neither removes the block, and so does the
//!   removal of its executor. A dataset's memory and disk are the sums over its blocks (every
//!   replica), its cached partitions those with a block somewhere. Blocks are states, not deltas,
//!   so a log read twice gives the same numbers. Spark logs block updates only with
//!   `spark.eventLog.logBlockUpdates.enabled`; without them no dataset shows from the log.
//! - A dataset has series while at least one of its partitions is cached (REST lists only
//!   those), so an unpersisted dataset's series go.
//! - Both sources: once REST has listed the application's storage, its list is shown (the
//!   driver's own accounting); the event log's until then.
//! - Bounded: at most [`MAX_DATASETS`] datasets per source (REST: the largest; event log: RDDs
//!   with no cached block make room first) and [`MAX_BLOCKS`] blocks per application. A
//!   dataset's name is its first line (a cached DataFrame's RDD name is its whole physical plan),
//!   length-capped and counted like every label value.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::obs::{BlockObs, RddInfoObs, RddObs};
use crate::hash::{Map, Set};
use crate::telemetry::Telemetry;

/// Datasets per application and source, at most.
pub const MAX_DATASETS: usize = 256;
/// Cached blocks (partition × executor) tracked per application from the event log, at most.
pub const MAX_BLOCKS: usize = 100_000;

/// One cached dataset's numbers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dataset {
    /// Name label value (first line, capped).
    pub(super) name: Arc<str>,
    /// Partitions of the RDD.
    pub(super) partitions: u64,
    /// Partitions with at least one cached block.
    pub(super) cached_partitions: u64,
    /// Bytes in memory, every replica.
    pub(super) memory_bytes: u64,
    /// Bytes on disk, every replica.
    pub(super) disk_bytes: u64,
}

impl Dataset {
    /// Cached partitions / partitions (1 when Spark says more are cached than exist).
    pub fn cached_fraction(&self) -> f64 {
        if self.partitions == 0 {
            return 1.0;
        }
        (self.cached_partitions as f64 / self.partitions as f64).min(1.0)
    }
}

/// A persisted RDD known from the event log, with its cached blocks.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct LogRdd {
    name: Arc<str>,
    partitions: u64,
    /// `(partition, executor)` -> `(memory, disk)` bytes.
    #[serde(with = "crate::model::serial::pairs")]
    blocks: Map<(u64, Arc<str>), (u64, u64)>,
    /// Partition -> executors holding a block of it.
    #[serde(with = "crate::model::serial::pairs")]
    parts: Map<u64, u32>,
    memory: u64,
    disk: u64,
}

impl LogRdd {
    fn dataset(&self) -> Dataset {
        Dataset {
            name: self.name.clone(),
            partitions: self.partitions,
            cached_partitions: self.parts.len() as u64,
            memory_bytes: self.memory,
            disk_bytes: self.disk,
        }
    }

    /// Set block `key` to `v` (`None`: removed); returns the change in the number of blocks.
    fn set(&mut self, key: (u64, Arc<str>), v: Option<(u64, u64)>) -> isize {
        let part = key.0;
        let old = match v {
            Some(v) => self.blocks.insert(key, v),
            None => self.blocks.remove(&key),
        };
        if let Some((m, d)) = old {
            self.memory = self.memory.saturating_sub(m);
            self.disk = self.disk.saturating_sub(d);
        }
        if let Some((m, d)) = v {
            self.memory = self.memory.saturating_add(m);
            self.disk = self.disk.saturating_add(d);
        }
        match (old.is_some(), v.is_some()) {
            (false, true) => {
                *self.parts.entry(part).or_default() += 1;
                1
            }
            (true, false) => {
                if let Some(n) = self.parts.get_mut(&part) {
                    *n -= 1;
                    if *n == 0 {
                        self.parts.remove(&part);
                    }
                }
                -1
            }
            _ => 0,
        }
    }
}

/// What one application has cached, per source.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CacheState {
    /// The last `/storage/rdd` list, by RDD id; `None` until REST answered.
    rest: Option<BTreeMap<u64, Dataset>>,
    /// Persisted RDDs from the event log, by RDD id.
    log: BTreeMap<u64, LogRdd>,
    /// Blocks held in `log`.
    blocks: usize,
    /// Executor ids of the blocks, shared.
    #[serde(with = "crate::model::serial::sorted")]
    executors: Set<Arc<str>>,
}

impl CacheState {
    /// Cached datasets (at least one partition cached), by RDD id: REST's once it answered.
    pub fn datasets(&self) -> Vec<(u64, Dataset)> {
        match &self.rest {
            Some(r) => r
                .iter()
                .filter(|(_, d)| d.cached_partitions > 0)
                .map(|(id, d)| (*id, d.clone()))
                .collect(),
            None => self
                .log
                .iter()
                .filter(|(_, r)| !r.parts.is_empty())
                .map(|(id, r)| (*id, r.dataset()))
                .collect(),
        }
    }

    /// REST: the application's cached datasets now (the largest [`MAX_DATASETS`]).
    pub(super) fn set_rest(
        &mut self,
        rdds: &[RddObs],
        t: &Telemetry,
        mut name: impl FnMut(&str) -> Arc<str>,
    ) {
        let mut cached: Vec<&RddObs> = rdds.iter().filter(|r| r.cached_partitions > 0).collect();
        if cached.len() > MAX_DATASETS {
            cached.sort_by_key(|r| std::cmp::Reverse(r.memory_bytes.saturating_add(r.disk_bytes)));
            for _ in MAX_DATASETS..cached.len() {
                t.label_overflow("rdd_id");
            }
            cached.truncate(MAX_DATASETS);
        }
        self.rest = Some(
            cached
                .into_iter()
                .map(|r| {
                    let d = Dataset {
                        name: name(&r.name),
                        partitions: r.partitions,
                        cached_partitions: r.cached_partitions,
                        memory_bytes: r.memory_bytes,
                        disk_bytes: r.disk_bytes,
                    };
                    (r.rdd_id, d)
                })
                .collect(),
        );
    }

    /// Event log: a stage computes persisted RDD `obs` (the first report makes it known).
    pub(super) fn persisted(
        &mut self,
        obs: &RddInfoObs,
        t: &Telemetry,
        name: impl FnOnce(&str) -> Arc<str>,
    ) {
        if self.log.contains_key(&obs.rdd_id) {
            return;
        }
        if self.log.len() >= MAX_DATASETS {
            // Room first from an RDD with nothing cached (the oldest).
            let idle = self
                .log
                .iter()
                .find(|(_, r)| r.blocks.is_empty())
                .map(|(id, _)| *id);
            match idle {
                Some(id) => {
                    self.log.remove(&id);
                }
                None => {
                    t.label_overflow("rdd_id");
                    return;
                }
            }
        }
        self.log.insert(
            obs.rdd_id,
            LogRdd {
                name: name(&obs.name),
                partitions: obs.partitions,
                blocks: Map::default(),
                parts: Map::default(),
                memory: 0,
                disk: 0,
            },
        );
    }

    /// Event log: a block of a tracked RDD changed (blocks of other RDDs are ignored, as Spark
    /// ignores them).
    pub(super) fn block(&mut self, obs: &BlockObs, t: &Telemetry) {
        let Some(rdd) = self.log.get_mut(&obs.rdd_id) else {
            return;
        };
        let exec = match self.executors.get(obs.executor_id.as_str()) {
            Some(e) => e.clone(),
            None if !obs.stored => return,
            None => {
                let e: Arc<str> = Arc::from(obs.executor_id.as_str());
                self.executors.insert(e.clone());
                e
            }
        };
        let key = (obs.partition, exec);
        if obs.stored && self.blocks >= MAX_BLOCKS && !rdd.blocks.contains_key(&key) {
            t.eventlog_error("cache_block_cap");
            return;
        }
        let v = obs.stored.then_some((obs.memory_bytes, obs.disk_bytes));
        let delta = rdd.set(key, v);
        self.blocks = self.blocks.saturating_add_signed(delta);
    }

    /// Event log: RDD `rdd_id` was unpersisted.
    pub(super) fn unpersisted(&mut self, rdd_id: u64) {
        if let Some(r) = self.log.remove(&rdd_id) {
            self.blocks = self.blocks.saturating_sub(r.blocks.len());
        }
    }

    /// Executor `id` was removed: its blocks are gone (what Spark's status store does).
    pub(super) fn executor_removed(&mut self, id: &str) {
        let Some(exec) = self.executors.take(id) else {
            return;
        };
        for rdd in self.log.values_mut() {
            let parts: Vec<u64> = rdd
                .blocks
                .keys()
                .filter(|(_, e)| Arc::ptr_eq(e, &exec))
                .map(|(p, _)| *p)
                .collect();
            for p in parts {
                let delta = rdd.set((p, exec.clone()), None);
                self.blocks = self.blocks.saturating_add_signed(delta);
            }
        }
    }
}

/// A dataset's name as a label value: its first line, trimmed.
pub(super) fn first_line(name: &str) -> &str {
    name.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}
