//! SQL plans: what the model keeps of an execution's final physical plan.
//!
//! Both sources hand over the same [`PlanGraph`]: the plan as Spark's SQL tab draws it, which is
//! what REST `/sql/{id}?details=true` serves (`nodes` and `edges`, without the
//! `WholeStageCodegen` clusters, `InputAdapter`s and query stages, a reused exchange or subquery
//! drawn once), and what the event-log collector builds from a `sparkPlanInfo` tree by the same
//! rules (`src/sources/eventlog/sqlplan.rs`). From it, [`PlanGraph::summarize`] counts, each node
//! once:
//! - joins by strategy ([`STRATEGIES`]: Spark's five, `other` for any other node whose name ends
//!   in `Join`, such as Photon's or Gluten's), and the joins adaptive execution split for skew
//!   (`SortMergeJoin(skew=true)`);
//! - exchanges by kind ([`EXCHANGES`]); a `ReusedExchange` is not a new exchange;
//! - adaptive execution's partition numbers ([`AQE`]), from the `AQEShuffleRead` nodes' metrics
//!   (REST gives their values, the event log their accumulator ids, whose values arrive in
//!   `SparkListenerDriverAccumUpdates`);
//! - a fingerprint of the plan's shape ([`PlanGraph::summarize`]).
//!
//! An execution's plan counts once, when it has ended and its plan is known, into its SQL
//! aggregate (job group and description), whichever source tells first ([`PlanState`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::idset::IdSet;
use crate::clock::EpochMs;

/// The `strategy` label values of joins, in the order of [`PlanSummary::joins`].
pub const STRATEGIES: [&str; 6] = [
    "BroadcastHashJoin",
    "SortMergeJoin",
    "ShuffledHashJoin",
    "BroadcastNestedLoopJoin",
    "CartesianProduct",
    "other",
];

/// The `type` label values of exchanges, in the order of [`PlanSummary::exchanges`].
pub const EXCHANGES: [&str; 2] = ["shuffle", "broadcast"];

/// The `type` label values of adaptive execution's partition numbers, in the order of
/// [`PlanSummary::aqe`].
pub const AQE: [&str; 3] = ["coalesced", "skewed", "skew_splits"];

/// Most ended executions waiting for their plan per application (REST fetches plans a few per
/// poll); past this the oldest are forgotten and their plans, if they come, not counted.
const MAX_WAITING: usize = 4096;

/// Fingerprints keep this many bits, so the value is exact as a double (OTLP, PromQL).
const FINGERPRINT_BITS: u32 = 48;

/// An `AQEShuffleRead` metric the model counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AqeMetric {
    /// `number of coalesced partitions`: partitions read as one of several shuffle partitions.
    Coalesced,
    /// `number of skewed partitions`: shuffle partitions found skewed.
    Skewed,
    /// `number of skewed partition splits`: the partitions the skewed ones were split into.
    SkewSplits,
}

impl AqeMetric {
    /// The metric Spark names `name` (surrounding blanks ignored), if counted.
    /// Every name holds `ed partition`: the event-log reader looks for it before it reads a
    /// node's metrics one by one (`sqlplan.rs`).
    pub fn from_name(name: &str) -> Option<AqeMetric> {
        match name.trim() {
            "number of coalesced partitions" => Some(AqeMetric::Coalesced),
            "number of skewed partitions" => Some(AqeMetric::Skewed),
            "number of skewed partition splits" => Some(AqeMetric::SkewSplits),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One node of a plan graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanNode {
    /// Spark's node name (`SortMergeJoin(skew=true)`, `Exchange`, `AQEShuffleRead`, ...).
    pub name: String,
    /// Its children, as indices into [`PlanGraph::nodes`].
    pub children: Vec<u32>,
    /// Its adaptive-execution metrics: REST gives the value, the event log the accumulator id
    /// (resolved when the execution ends).
    pub aqe: Vec<(AqeMetric, u64)>,
}

/// A plan as Spark's SQL tab draws it: a node reached from two parents (a reused exchange or
/// subquery) is one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanGraph {
    /// The nodes; children refer to them by index.
    pub nodes: Vec<PlanNode>,
}

/// What one execution's final plan adds to its SQL aggregate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlanSummary {
    /// Join nodes by strategy, in [`STRATEGIES`] order.
    pub joins: [u64; 6],
    /// Join nodes adaptive execution split for skew (`(skew=true)`).
    pub skew_joins: u64,
    /// Exchange nodes by kind, in [`EXCHANGES`] order.
    pub exchanges: [u64; 2],
    /// Adaptive execution's partition numbers, in [`AQE`] order.
    pub aqe: [u64; 3],
    /// 48-bit hash of the plan's shape (see [`PlanGraph::summarize`]).
    pub fingerprint: u64,
}

impl PlanSummary {
    /// Add one value of an adaptive-execution metric.
    pub fn add_aqe(&mut self, m: AqeMetric, v: u64) {
        let a = &mut self.aqe[m.index()];
        *a = a.saturating_add(v);
    }
}

/// The name without what varies between runs of one plan: a `*(3) ` codegen prefix, a
/// ` (3)` codegen id, a `(skew=true)` marker.
pub fn clean_name(raw: &str) -> &str {
    let mut s = raw.trim();
    if let Some(rest) = s.strip_prefix("*(") {
        if let Some((id, after)) = rest.split_once(')') {
            if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
                s = after.trim_start();
            }
        }
    } else if let Some(rest) = s.strip_prefix("* ") {
        s = rest.trim_start();
    }
    if let Some(rest) = s.strip_suffix("(skew=true)") {
        s = rest.trim_end();
    }
    if let Some(open) = s.strip_suffix(')').and_then(|r| r.rfind(" (")) {
        let id = &s[open + 2..s.len() - 1];
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            s = s[..open].trim_end();
        }
    }
    s
}

/// The join strategy (index into [`STRATEGIES`]) of a cleaned node name; `None` if not a join.
pub fn strategy(clean: &str) -> Option<usize> {
    match clean {
        "BroadcastHashJoin" => Some(0),
        "SortMergeJoin" => Some(1),
        "ShuffledHashJoin" => Some(2),
        "BroadcastNestedLoopJoin" => Some(3),
        "CartesianProduct" => Some(4),
        s if s.ends_with("Join") => Some(5),
        _ => None,
    }
}

/// The exchange kind (index into [`EXCHANGES`]) of a cleaned node name; `None` if not an
/// exchange. A `ReusedExchange` is not one: it reads an exchange counted where it runs.
pub fn exchange(clean: &str) -> Option<usize> {
    if !clean.contains("Exchange") || clean.starts_with("Reused") {
        return None;
    }
    Some(usize::from(clean.contains("Broadcast")))
}

/// Nodes the fingerprint passes through to their children: codegen and adaptive-execution
/// wrappers, and reuse markers (what they wrap is fingerprinted in their place).
pub fn is_wrapper(clean: &str) -> bool {
    clean.starts_with("WholeStageCodegen")
        || clean.ends_with("QueryStage")
        || matches!(
            clean,
            "InputAdapter"
                | "AQEShuffleRead"
                | "CustomShuffleReader"
                | "ReusedExchange"
                | "ReusedSubquery"
                | "AdaptiveSparkPlan"
        )
}

/// FNV-1a, 64 bits: a fixed, documented hash, so fingerprints stay equal across versions and
/// machines.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(mut self, b: &[u8]) -> Fnv {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
}

/// The hash of a node named `name` whose children hash to `children` (sorted here).
fn node_hash(name: &str, children: &mut [u64]) -> u64 {
    children.sort_unstable();
    let mut h = Fnv::new().bytes(name.as_bytes()).bytes(&[0]);
    for c in children.iter() {
        h = h.bytes(&c.to_le_bytes());
    }
    h.bytes(&[1]).0
}

impl PlanGraph {
    /// The plan's summary, with adaptive-execution numbers at zero, and the adaptive-execution
    /// metrics of its nodes (values or accumulator ids, see [`PlanNode::aqe`]) for the caller to
    /// resolve and [`PlanSummary::add_aqe`].
    ///
    /// The fingerprint hashes the plan's shape: each node's cleaned name ([`clean_name`]) and
    /// its children's hashes in sorted order (so the order in which a source lists children
    /// does not matter), with [`is_wrapper`] nodes replaced by their children, a node reached
    /// from two parents hashed under both, and an `AdaptiveSparkPlan` root passed through to its
    /// plan; several roots hash as the children of one unnamed node. FNV-1a 64, folded to 48 bits.
    pub fn summarize(&self) -> (PlanSummary, Vec<(AqeMetric, u64)>) {
        let mut s = PlanSummary::default();
        let mut aqe = Vec::new();
        for n in &self.nodes {
            let clean = clean_name(&n.name);
            if let Some(i) = strategy(clean) {
                s.joins[i] += 1;
                if n.name.contains("skew=true") {
                    s.skew_joins += 1;
                }
            }
            if let Some(i) = exchange(clean) {
                s.exchanges[i] += 1;
            }
            aqe.extend_from_slice(&n.aqe);
        }
        s.fingerprint = self.fingerprint();
        (s, aqe)
    }

    /// See [`Self::summarize`]. Iterative (plans can be deep), and safe on malformed graphs: an
    /// edge back to a node being hashed (a cycle) and edges to missing nodes are ignored.
    fn fingerprint(&self) -> u64 {
        let n = self.nodes.len();
        if n == 0 {
            return 0;
        }
        let mut has_parent = vec![false; n];
        for node in &self.nodes {
            for &c in &node.children {
                if let Some(p) = has_parent.get_mut(c as usize) {
                    *p = true;
                }
            }
        }
        let mut roots: Vec<usize> = (0..n).filter(|i| !has_parent[*i]).collect();
        if roots.is_empty() {
            roots.push(0);
        }
        // What each node stands for in the canonical tree: its own hash, or (a wrapper) its
        // children's. Filled in post-order with an explicit stack; each node's hashes are a
        // range of `pool` (one buffer for the whole plan, not one per node).
        let mut pool: Vec<u64> = Vec::with_capacity(n);
        let mut done: Vec<Option<(usize, usize)>> = vec![None; n];
        let mut open = vec![false; n];
        let mut kids: Vec<u64> = Vec::new();
        let mut stack = Vec::new();
        for &r in &roots {
            stack.push((r, false));
            while let Some((i, children_done)) = stack.pop() {
                if done[i].is_some() {
                    continue;
                }
                let node = &self.nodes[i];
                if !children_done {
                    if open[i] {
                        continue;
                    }
                    open[i] = true;
                    stack.push((i, true));
                    for &c in node.children.iter().rev() {
                        let c = c as usize;
                        if c < n && done[c].is_none() && !open[c] {
                            stack.push((c, false));
                        }
                    }
                    continue;
                }
                kids.clear();
                for &c in &node.children {
                    if let Some(Some((from, to))) = done.get(c as usize) {
                        kids.extend_from_slice(&pool[*from..*to]);
                    }
                }
                let clean = clean_name(&node.name);
                if !is_wrapper(clean) {
                    let h = node_hash(clean, &mut kids);
                    kids.clear();
                    kids.push(h);
                }
                done[i] = Some((pool.len(), pool.len() + kids.len()));
                pool.extend_from_slice(&kids);
                open[i] = false;
            }
        }
        let mut top: Vec<u64> = roots
            .iter()
            .filter_map(|&r| done[r])
            .flat_map(|(from, to)| pool[from..to].iter().copied())
            .collect();
        let h = match top.as_slice() {
            [one] => *one,
            _ => node_hash("", &mut top),
        };
        (h ^ (h >> FINGERPRINT_BITS)) & ((1 << FINGERPRINT_BITS) - 1)
    }
}

/// The plan of the latest ended execution of a SQL aggregate.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Latest {
    /// When the execution ended (Spark's clock), when known.
    pub(super) end_ms: Option<EpochMs>,
    /// The execution.
    pub(super) execution_id: u64,
    /// Its plan's fingerprint.
    pub(super) fingerprint: u64,
    /// Its query ([`query_id`]; 0 in checkpoints written before queries were told apart).
    #[serde(default)]
    pub(super) query: u64,
}

impl Latest {
    /// When the execution ended (Spark's clock), when known.
    pub fn end_ms(&self) -> Option<EpochMs> {
        self.end_ms
    }
    /// The execution.
    pub fn execution_id(&self) -> u64 {
        self.execution_id
    }
    /// Its plan's fingerprint.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
    /// Its query ([`query_id`]).
    pub fn query(&self) -> u64 {
        self.query
    }
}

/// A query's identity as Spark gave it: a hash of the raw job group and description of its
/// executions, before any rewrite rule or cap, so two queries whose labels fold into one series
/// (`__other__`, or a rule of the user's own) are still two queries. Both are [`raw_hash`]es.
pub fn query_id(group: u64, description: u64) -> u64 {
    Fnv::new()
        .bytes(&group.to_le_bytes())
        .bytes(&description.to_le_bytes())
        .0
}

/// The hash of a raw label value (a job group), for [`query_id`]: 0 for none.
pub fn raw_hash(v: Option<&str>) -> u64 {
    v.map_or(0, |v| Fnv::new().bytes(v.as_bytes()).bytes(&[0]).0)
}

/// One query's plans within a SQL aggregate: the ended executions of one raw job group and
/// description ([`query_id`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QueryPlans {
    /// The query.
    pub(super) query: u64,
    /// Its ended executions whose plan was counted.
    pub(super) plans: u64,
    /// Each distinct fingerprint, with the first execution that had it; at most
    /// [`MAX_SHAPES`].
    pub(super) shapes: Vec<(u64, u64)>,
    /// Its latest ended execution.
    pub(super) latest: Latest,
}

impl QueryPlans {
    /// The query ([`query_id`]).
    pub fn query(&self) -> u64 {
        self.query
    }
    /// Its ended executions whose plan was counted.
    pub fn plans(&self) -> u64 {
        self.plans
    }
    /// Each distinct fingerprint, with the first execution that had it.
    pub fn shapes(&self) -> &[(u64, u64)] {
        &self.shapes
    }
    /// Its latest ended execution.
    pub fn latest(&self) -> Latest {
        self.latest
    }
}

/// Most queries told apart per SQL aggregate; the executions of more count in the aggregate's
/// totals only.
pub const MAX_QUERIES: usize = 64;

/// The fingerprint of one label set's latest plans, `queries` (one latest execution per query):
/// their one shape's fingerprint when they all have the same (one query, or several that plan
/// alike, such as one report run for several dates), else a hash of their distinct shapes. It
/// changes when a query's plan does, not when another query of the same labels ran last, and
/// not with which queries (which dates) ran. With the newest execution (for ranking across
/// runs).
pub fn latest_fingerprint(queries: &[Latest]) -> Option<(Latest, u64)> {
    let newest = *queries.iter().max_by_key(|l| (l.end_ms, l.execution_id))?;
    let mut shapes: Vec<u64> = queries.iter().map(|l| l.fingerprint).collect();
    shapes.sort_unstable();
    shapes.dedup();
    if let [one] = shapes.as_slice() {
        return Some((newest, *one));
    }
    let mut h = Fnv::new();
    for f in shapes {
        h = h.bytes(&f.to_le_bytes());
    }
    let h = h.0;
    Some((
        newest,
        (h ^ (h >> FINGERPRINT_BITS)) & ((1 << FINGERPRINT_BITS) - 1),
    ))
}

/// The latest execution of each query of one label set in a name's latest run (the run with
/// the newest execution of these labels).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct ByQuery(pub(super) Vec<Latest>);

impl ByQuery {
    /// A run's latest executions of these labels, one per query: they replace the ones held if
    /// the run's newest execution is newer.
    pub fn fold_run(&mut self, run: Vec<Latest>) {
        let newest = |v: &[Latest]| v.iter().map(|l| (l.end_ms, l.execution_id)).max();
        if self.0.is_empty() || newest(&run) > newest(&self.0) {
            self.0 = run;
        }
    }
    /// One latest execution per query.
    pub fn latest(&self) -> &[Latest] {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for ByQuery {
    /// A list, or (checkpoints written before queries were told apart) one [`Latest`].
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Either {
            Many(Vec<Latest>),
            One(Latest),
        }
        Ok(match Either::deserialize(d)? {
            Either::Many(v) => ByQuery(v),
            Either::One(l) => ByQuery(vec![l]),
        })
    }
}

/// The plans counted into one SQL aggregate (job group and description).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PlanAgg {
    /// Ended executions whose plan was counted.
    pub(super) plans: u64,
    /// Join nodes by strategy, in [`STRATEGIES`] order.
    pub(super) joins: [u64; 6],
    /// Join nodes split for skew.
    pub(super) skew_joins: u64,
    /// Exchange nodes by kind, in [`EXCHANGES`] order.
    pub(super) exchanges: [u64; 2],
    /// Adaptive execution's partition numbers, in [`AQE`] order.
    pub(super) aqe: [u64; 3],
    /// The latest ended execution's fingerprint (by end time, then execution id).
    pub(super) latest: Option<Latest>,
    /// The plans by query, in the order first counted; at most [`MAX_QUERIES`] (a diagnosis:
    /// did one query's plan change within the run). Empty in checkpoints written before.
    #[serde(default)]
    pub(super) queries: Vec<QueryPlans>,
}

/// Most distinct plan shapes kept per SQL aggregate.
pub const MAX_SHAPES: usize = 16;

fn add_all<const N: usize>(into: &mut [u64; N], from: &[u64; N]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = a.saturating_add(*b);
    }
}

impl PlanAgg {
    /// Ended executions whose plan was counted.
    pub fn plans(&self) -> u64 {
        self.plans
    }
    /// Join nodes by strategy, in [`STRATEGIES`] order.
    pub fn joins(&self) -> [u64; 6] {
        self.joins
    }
    /// Join nodes split for skew.
    pub fn skew_joins(&self) -> u64 {
        self.skew_joins
    }
    /// Exchange nodes by kind, in [`EXCHANGES`] order.
    pub fn exchanges(&self) -> [u64; 2] {
        self.exchanges
    }
    /// Adaptive execution's partition numbers, in [`AQE`] order.
    pub fn aqe(&self) -> [u64; 3] {
        self.aqe
    }
    /// The latest ended execution's fingerprint.
    pub fn latest(&self) -> Option<Latest> {
        self.latest
    }
    /// Each distinct fingerprint of its queries' plans, with the first execution that had it
    /// (of the executions told apart by query).
    pub fn shapes(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = vec![];
        for &(fp, first) in self.queries.iter().flat_map(|q| &q.shapes) {
            match out.iter_mut().find(|x| x.0 == fp) {
                Some(x) => x.1 = x.1.min(first),
                None => out.push((fp, first)),
            }
        }
        out
    }
    /// The plans by query ([`query_id`]).
    pub fn queries(&self) -> &[QueryPlans] {
        &self.queries
    }
    /// The latest execution of each query, for [`latest_fingerprint`] (the aggregate's latest
    /// alone in checkpoints written before queries were told apart).
    pub fn latest_by_query(&self) -> Vec<Latest> {
        if self.queries.is_empty() {
            return self.latest.into_iter().collect();
        }
        self.queries.iter().map(|q| q.latest).collect()
    }
}

impl PlanAgg {
    /// Count the plan `s` of execution `execution_id` of query `query` ([`query_id`]), which
    /// ended at `end_ms`.
    pub fn add(&mut self, s: &PlanSummary, execution_id: u64, end_ms: Option<EpochMs>, query: u64) {
        self.plans += 1;
        add_all(&mut self.joins, &s.joins);
        self.skew_joins = self.skew_joins.saturating_add(s.skew_joins);
        add_all(&mut self.exchanges, &s.exchanges);
        add_all(&mut self.aqe, &s.aqe);
        let l = Latest {
            end_ms,
            execution_id,
            fingerprint: s.fingerprint,
            query,
        };
        if self
            .latest
            .is_none_or(|old| (l.end_ms, l.execution_id) > (old.end_ms, old.execution_id))
        {
            self.latest = Some(l);
        }
        let at = self.queries.iter().position(|q| q.query == query);
        let q = match at {
            Some(i) => &mut self.queries[i],
            None if self.queries.len() < MAX_QUERIES => {
                self.queries.push(QueryPlans {
                    query,
                    plans: 0,
                    shapes: vec![],
                    latest: l,
                });
                let last = self.queries.len() - 1;
                &mut self.queries[last]
            }
            None => return,
        };
        q.plans += 1;
        if q.shapes.len() < MAX_SHAPES && q.shapes.iter().all(|x| x.0 != s.fingerprint) {
            q.shapes.push((s.fingerprint, execution_id));
        }
        if (l.end_ms, l.execution_id) > (q.latest.end_ms, q.latest.execution_id) {
            q.latest = l;
        }
    }
}

/// What an ended execution's plan needs to count once it arrives.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Ended {
    /// Its SQL aggregate's key (job group and description labels, `sql.rs`'s `SqlKey`).
    pub(super) key: (Arc<str>, Arc<str>),
    /// When it ended (Spark's clock).
    pub(super) end_ms: Option<EpochMs>,
    /// Its query ([`query_id`]; 0 in checkpoints written before).
    #[serde(default)]
    pub(super) query: u64,
}

/// One application's plan bookkeeping: which executions' plans are counted, and the ended
/// executions still waiting for theirs.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PlanState {
    counted: IdSet,
    waiting: BTreeMap<u64, Ended>,
}

impl PlanState {
    /// True once execution `id`'s plan has been counted.
    pub fn counted(&self, id: u64) -> bool {
        self.counted.contains(id)
    }

    /// Execution `id` ended without a plan yet: remember where its plan will count.
    pub fn wait(&mut self, id: u64, ended: Ended) {
        if self.counted.contains(id) {
            return;
        }
        self.waiting.insert(id, ended);
        while self.waiting.len() > MAX_WAITING {
            self.waiting.pop_first();
        }
    }

    /// Execution `id`'s plan arrived after its end: where it counts, once (`None` if already
    /// counted, or the execution's end is not known).
    pub fn take(&mut self, id: u64) -> Option<Ended> {
        let e = self.waiting.remove(&id)?;
        self.counted.insert(id).then_some(e)
    }

    /// Mark execution `id`'s plan counted now (it ended with its plan known); false if it
    /// already was.
    pub fn count(&mut self, id: u64) -> bool {
        self.waiting.remove(&id);
        self.counted.insert(id)
    }

    /// Executions waiting for their plan (memory checks).
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
