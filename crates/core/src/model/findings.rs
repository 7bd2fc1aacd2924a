//! An application's diagnosis findings, as the serving exporter counts them
//! (`spark_diagnosis_*`): the diagnose rules run in the main crate, on this model, and hand their
//! verdicts here.
//!
//! - **Final findings** are counted once: a stage's (skew, spill, GC pressure) when its attempt
//!   settles (`details.rs`), the application's and its descriptions' (executor loss, join
//!   strategy, plan change, partial cache, idle cores) once, when it has ended and every source
//!   has delivered it ([`Findings::closed`]). They are counters: they never go down, they stay
//!   in the summary, and in name mode they fold into the name's series.
//! - **Window findings** (locality and scheduler delay per job group, streaming batches near
//!   their trigger) are ratios over what ran so far: gauges, replaced at each evaluation while
//!   the application runs, its last evaluation once it has ended.
//! - **The join rule's inputs**: a description's join is judged at the end, on its stages' task
//!   time and smallest shuffle write ([`StageDigest`]), gathered as its stages settle, since
//!   the stages themselves are long gone by then.
//!
//! A model that summarises keeps an application's detail until its findings are closed, when
//! anyone takes its settled stages ([`super::Model::keep_settled_stages`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::group::GroupKey;

/// Where a finding is counted: its kind and place (empty where it does not apply).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct FindingKey {
    /// The finding kind's identifier (`skew`, `idle_cores`, ...).
    pub kind: Arc<str>,
    /// Job group label value; `""` for an application-level kind.
    pub job_group: Arc<str>,
    /// Job description label value; `""` for an application-level kind.
    pub job_description: Arc<str>,
    /// Streaming query name; `""` unless the kind is a streaming one.
    pub query: Arc<str>,
}

/// How many findings, and the time they explain.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Findings.
    pub findings: u64,
    /// Their cost, seconds (see each kind's formula in `docs/diagnose.md`).
    #[serde(with = "super::serial::exact")]
    pub cost_seconds: f64,
    /// Their cost in money, an estimate (with prices, see [`Rate`]): each finding's core-seconds
    /// at the core-hour price in effect when it was counted.
    #[serde(default, with = "super::serial::exact")]
    pub money: f64,
}

impl Tally {
    fn add(&mut self, cost_seconds: f64, money: f64) {
        self.findings += 1;
        self.cost_seconds += cost_seconds;
        self.money += money;
    }
}

/// The price of the time findings explain, when they are counted: the core-hour price in effect
/// at the application's end (or its latest time) / 3600 per core-second, and the cores a task
/// holds (`spark.task.cpus`): every kind's cost is task-seconds (× cpus) but `idle_cores`',
/// which is core-seconds already.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    /// Money per core-second (0 without a price).
    pub per_core_second: f64,
    /// `spark.task.cpus`.
    pub task_cpus: u64,
}

impl Rate {
    /// The money of a finding of `kind` that explains `cost_seconds`.
    pub fn money(&self, kind: &str, cost_seconds: f64) -> f64 {
        let cores = if kind == "idle_cores" {
            1.0
        } else {
            self.task_cpus.max(1) as f64
        };
        cost_seconds * cores * self.per_core_second
    }
}

/// What the join rule reads of a description's stages: their task run time and the smallest
/// non-zero shuffle write of any of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageDigest {
    /// Task run time of its stage attempts (ms).
    pub run_time_ms: u64,
    /// The smallest non-zero shuffle write of one of its stage attempts (bytes).
    pub min_shuffle_write_bytes: Option<u64>,
}

impl StageDigest {
    /// Add one stage attempt.
    pub fn add(&mut self, run_time_ms: u64, shuffle_write_bytes: u64) {
        self.run_time_ms = self.run_time_ms.saturating_add(run_time_ms);
        if shuffle_write_bytes > 0 {
            self.min_shuffle_write_bytes = Some(
                self.min_shuffle_write_bytes
                    .map_or(shuffle_write_bytes, |m| m.min(shuffle_write_bytes)),
            );
        }
    }
}

/// One application's findings (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Findings {
    /// Final findings, counted.
    #[serde(with = "super::serial::pairs")]
    pub(super) total: BTreeMap<FindingKey, Tally>,
    /// Window findings of the latest evaluation.
    #[serde(with = "super::serial::pairs")]
    pub(super) window: BTreeMap<FindingKey, Tally>,
    /// The join rule's inputs per job group and description.
    #[serde(with = "super::serial::pairs")]
    pub(super) digest: BTreeMap<GroupKey, StageDigest>,
    /// The stage attempts whose findings are counted: as they settled, or, for those still
    /// held when the application's end findings were counted, then.
    #[serde(with = "super::serial::sorted")]
    pub(super) stages: BTreeSet<(u64, u32)>,
    /// The application's end findings are counted.
    pub(super) closed: bool,
}

impl Findings {
    /// Final findings, by place.
    pub fn total(&self) -> &BTreeMap<FindingKey, Tally> {
        &self.total
    }
    /// Window findings of the latest evaluation, by place.
    pub fn window(&self) -> &BTreeMap<FindingKey, Tally> {
        &self.window
    }
    /// The join rule's inputs per job group and description.
    pub fn digest(&self) -> &BTreeMap<GroupKey, StageDigest> {
        &self.digest
    }
    /// True once the application's end findings are counted.
    pub fn closed(&self) -> bool {
        self.closed
    }
    /// True once stage attempt `(stage_id, attempt)`'s findings are counted.
    pub fn stage_counted(&self, stage_id: u64, attempt: u32) -> bool {
        self.stages.contains(&(stage_id, attempt))
    }
    /// Count the findings of a stage attempt, once, and add it to its description's join
    /// inputs.
    pub(super) fn count_stage(
        &mut self,
        stage: &super::details::StageDetail,
        found: Vec<Found>,
        rate: Rate,
    ) {
        if !self.stages.insert((stage.stage_id, stage.attempt)) {
            return;
        }
        self.digest
            .entry(stage.group.clone())
            .or_default()
            .add(stage.totals.run_time_ms, stage.totals.shuffle_write_bytes);
        self.count(found, rate);
    }
    pub(super) fn count(&mut self, found: impl IntoIterator<Item = (FindingKey, f64)>, rate: Rate) {
        for (k, cost) in found {
            let money = rate.money(&k.kind, cost);
            self.total.entry(k).or_default().add(cost, money);
        }
    }
    /// Add a run's final findings to its name's (name mode), each place's job group and
    /// description as `keep` caps them.
    pub(super) fn fold_into(
        &self,
        into: &mut Findings,
        mut keep: impl FnMut(&Arc<str>, &Arc<str>) -> GroupKey,
    ) {
        for (k, t) in &self.total {
            let (job_group, job_description) =
                if k.job_group.is_empty() && k.job_description.is_empty() {
                    (k.job_group.clone(), k.job_description.clone())
                } else {
                    keep(&k.job_group, &k.job_description)
                };
            let key = FindingKey {
                job_group,
                job_description,
                ..k.clone()
            };
            let e = into.total.entry(key).or_default();
            e.findings += t.findings;
            e.cost_seconds += t.cost_seconds;
            e.money += t.money;
        }
    }
}

/// A finding the rules made: its place and cost.
pub type Found = (FindingKey, f64);

/// Findings summed per place.
pub(super) fn tally(found: Vec<Found>) -> BTreeMap<FindingKey, Tally> {
    let mut m: BTreeMap<FindingKey, Tally> = BTreeMap::new();
    for (k, cost) in found {
        m.entry(k).or_default().add(cost, 0.0);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::Rate;

    #[test]
    fn a_findings_money_is_its_core_time_at_the_price() {
        let r = Rate {
            per_core_second: 0.01,
            task_cpus: 2,
        };
        // Task-seconds hold spark.task.cpus cores each; idle core-seconds are cores already.
        assert!((r.money("spill", 100.0) - 2.0).abs() < 1e-12);
        assert!((r.money("idle_cores", 100.0) - 1.0).abs() < 1e-12);
        assert_eq!(Rate::default().money("skew", 100.0), 0.0);
    }
}
