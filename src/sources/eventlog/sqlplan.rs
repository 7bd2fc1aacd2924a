//! SQL plans in event logs: the `sparkPlanInfo` tree of `SparkListenerSQLExecutionStart` and
//! `SparkListenerSQLAdaptiveExecutionUpdate`, and the accumulator values of
//! `SparkListenerDriverAccumUpdates`.
//!
//! These lines are rare but large (a plan and its text can be hundreds of KiB) and deep (a plan
//! nests a few JSON levels per operator, past serde_json's recursion limit), so they are read
//! with the structural scanner, iteratively: no plan text is kept, only node names, a hash of
//! each node's `simpleString`, and the metrics adaptive execution reports. The tree is then
//! built into the graph Spark's SQL tab draws (`SparkPlanGraph.scala`, Spark 4.1): the same
//! graph REST `/sql/{id}?details=true` serves, so both sources count the same nodes:
//! - a `WholeStageCodegen (n)` cluster, `InputAdapter`, `ReusedSubquery` and the query stages
//!   are not nodes: their child hangs from their parent;
//! - an exchange or `Subquery` equal to one already drawn (same name, `simpleString` and
//!   children) is drawn once, with an edge from each parent: a `ReusedExchange` or a query
//!   stage over such an exchange adds only that edge.
//!
//! `SparkListenerSQLAdaptiveSQLMetricUpdates` is not read: it registers the metrics of an
//! adaptive subquery's new nodes, which count only where a plan shows those nodes, and then the
//! plan itself names their accumulators.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use spark_exporter_core::hash::Map;

use crate::model::plan::{AqeMetric, PlanGraph, PlanNode, PlanSummary};

use super::scan::{self, count, members, skip_value, ScanError};

/// Most plan nodes read from one line; a larger plan is refused (memory bound).
const MAX_NODES: usize = 100_000;

/// A plan read from one line, summarised: what it adds to its execution's aggregate once the
/// accumulator values of its adaptive-execution metrics are known.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogPlan {
    /// The summary, with adaptive-execution numbers still at zero.
    pub summary: PlanSummary,
    /// Adaptive-execution metrics and their accumulator ids.
    pub aqe: Vec<(AqeMetric, u64)>,
    /// The root is an `AdaptiveSparkPlan` that says `isFinalPlan=true`.
    pub is_final: bool,
}

impl LogPlan {
    /// The summary with each adaptive-execution metric's value from `value` (accumulator id
    /// to the value Spark last reported).
    pub fn resolve(&self, value: impl Fn(u64) -> Option<u64>) -> PlanSummary {
        let mut s = self.summary;
        for (m, accum) in &self.aqe {
            s.add_aqe(*m, value(*accum).unwrap_or(0));
        }
        s
    }
}

/// One `sparkPlanInfo` node as read.
struct Raw<'a> {
    name: Cow<'a, str>,
    /// Hash of the raw `simpleString` bytes.
    simple: u64,
    /// Its first child, its last, and its next sibling, as indices into the arena (always after
    /// this node: pre-order): a node's children are a list through the arena, so reading a
    /// node allocates nothing for them ([`kids`]).
    first: Option<u32>,
    last: Option<u32>,
    next: Option<u32>,
    aqe: Vec<(AqeMetric, u64)>,
    /// `simpleString` says `isFinalPlan=true`.
    is_final: bool,
}

/// Calls `f` with each element of the JSON array `v` (`null`: none).
fn elements<'a>(
    v: &'a [u8],
    f: impl FnMut(&'a [u8]) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let v = v.trim_ascii();
    if v == b"null" {
        return Ok(());
    }
    if v.first() != Some(&b'[') {
        return Err(ScanError::Type("children", "array"));
    }
    scan::elements(v, f)
}

/// A string member value, borrowed when it has no escapes.
fn text<'a>(name: &'static str, v: &'a [u8]) -> Result<Cow<'a, str>, ScanError> {
    if v.len() >= 2 && v[0] == b'"' && v[v.len() - 1] == b'"' && memchr::memchr(b'\\', v).is_none()
    {
        return std::str::from_utf8(&v[1..v.len() - 1])
            .map(Cow::Borrowed)
            .map_err(|_| ScanError::Type(name, "UTF-8 string"));
    }
    scan::string(name, v).map(Cow::Owned)
}

/// One metric of a node, kept if adaptive execution's.
fn metric(v: &[u8], out: &mut Vec<(AqeMetric, u64)>) -> Result<(), ScanError> {
    let (mut which, mut accum) = (None, None);
    members(v, |k, v| {
        match k {
            b"name" => which = AqeMetric::from_name(&text("name", v)?),
            b"accumulatorId" => accum = Some(count("accumulatorId", v)?),
            _ => {}
        }
        Ok(())
    })?;
    if let (Some(m), Some(a)) = (which, accum) {
        out.push((m, a));
    }
    Ok(())
}

/// Whether a node's `metrics` may hold an adaptive-execution metric: each one's name says
/// `...ed partition...` ([`AqeMetric::from_name`]), written plainly or with escapes. Most nodes'
/// metrics hold neither, and are then not read one by one.
fn may_name_aqe(metrics: &[u8]) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"ed partition"));
    FINDER.find(metrics).is_some() || memchr::memchr(b'\\', metrics).is_some()
}

/// Index of the first non-blank byte at or after `i`.
fn ws(b: &[u8], i: usize) -> usize {
    i + b.get(i..).map_or(0, |r| {
        r.iter().take_while(|c| c.is_ascii_whitespace()).count()
    })
}

/// Where the tree reader is: inside a node's object, or inside its `children` array.
enum At {
    Node(u32),
    Children(u32),
}

/// Read the `sparkPlanInfo` object `b` into an arena, pre-order, in one pass with an explicit
/// stack: a plan nests deeper than serde's recursion limit, and reading each node's members
/// with [`members`] would rescan its subtree at every level.
#[cfg(test)]
fn read_tree(b: &[u8]) -> Result<Vec<Raw<'_>>, ScanError> {
    read_tree_at(b, 0).map(|(arena, _)| arena)
}

/// [`read_tree`] of the object that starts at `b[start]` (after optional whitespace); also the
/// index just past it.
fn read_tree_at(b: &[u8], start: usize) -> Result<(Vec<Raw<'_>>, usize), ScanError> {
    let unexpected = |i: usize| {
        b.get(i)
            .map_or(ScanError::Eof, |&c| ScanError::Unexpected(c as char, i))
    };
    // Room for a typical plan's nodes and depth, so most plans grow neither.
    let mut arena: Vec<Raw> = Vec::with_capacity(64);
    let mut stack: Vec<At> = Vec::with_capacity(32);
    let mut i = ws(b, start);
    if b.get(i) != Some(&b'{') {
        return Err(unexpected(i));
    }
    let open = |arena: &mut Vec<Raw<'_>>, parent: Option<u32>| -> Result<u32, ScanError> {
        if arena.len() >= MAX_NODES {
            return Err(ScanError::Type(
                "sparkPlanInfo",
                "plan of at most 100000 nodes",
            ));
        }
        let idx = arena.len() as u32;
        arena.push(Raw {
            name: Cow::Borrowed(""),
            simple: 0,
            first: None,
            last: None,
            next: None,
            aqe: Vec::new(),
            is_final: false,
        });
        if let Some(p) = parent {
            match arena[p as usize].last {
                Some(l) => arena[l as usize].next = Some(idx),
                None => arena[p as usize].first = Some(idx),
            }
            arena[p as usize].last = Some(idx);
        }
        Ok(idx)
    };
    stack.push(At::Node(open(&mut arena, None)?));
    i += 1;
    while let Some(at) = stack.last() {
        i = ws(b, i);
        match (at, b.get(i)) {
            (_, None) => return Err(ScanError::Eof),
            (_, Some(b',')) => i += 1,
            (At::Node(_), Some(b'}')) | (At::Children(_), Some(b']')) => {
                stack.pop();
                i += 1;
            }
            (At::Children(n), Some(b'{')) => {
                let child = open(&mut arena, Some(*n))?;
                stack.push(At::Node(child));
                i += 1;
            }
            (At::Node(n), Some(b'"')) => {
                let n = *n as usize;
                let key_end = skip_value(b, i)?;
                let key = &b[i + 1..key_end - 1];
                i = ws(b, key_end);
                if b.get(i) != Some(&b':') {
                    return Err(unexpected(i));
                }
                i = ws(b, i + 1);
                if key == b"children" && b.get(i) == Some(&b'[') {
                    stack.push(At::Children(n as u32));
                    i += 1;
                    continue;
                }
                let end = skip_value(b, i)?;
                let v = &b[i..end];
                let raw = &mut arena[n];
                match key {
                    b"nodeName" => raw.name = text("nodeName", v)?,
                    b"simpleString" => {
                        let mut h = spark_exporter_core::hash::hasher();
                        v.hash(&mut h);
                        raw.simple = h.finish();
                        static FINAL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
                            std::sync::LazyLock::new(|| {
                                memchr::memmem::Finder::new(b"isFinalPlan=true")
                            });
                        raw.is_final = FINAL.find(v).is_some();
                    }
                    b"children" if v != b"null" => {
                        return Err(ScanError::Type("children", "array"));
                    }
                    b"metrics" if may_name_aqe(v) => elements(v, |m| metric(m, &mut raw.aqe))?,
                    _ => {}
                }
                i = end;
            }
            _ => return Err(unexpected(i)),
        }
    }
    Ok((arena, i))
}

/// The children of node `i`, in order.
fn kids<'a>(arena: &'a [Raw<'_>], i: u32) -> impl Iterator<Item = u32> + 'a {
    std::iter::successors(arena[i as usize].first, |&c| arena[c as usize].next)
}

/// Spark's plan-reuse key of every node: its name, `simpleString` and children's keys
/// (`SparkPlanInfo.equals`), as a hash.
fn keys(arena: &[Raw]) -> Vec<u64> {
    let mut keys = vec![0u64; arena.len()];
    // Children come after their parent, so a reverse pass sees them first.
    for i in (0..arena.len()).rev() {
        let r = &arena[i];
        let mut h = spark_exporter_core::hash::hasher();
        r.name.hash(&mut h);
        r.simple.hash(&mut h);
        for c in kids(arena, i as u32) {
            keys[c as usize].hash(&mut h);
        }
        keys[i] = h.finish();
    }
    keys
}

/// The graph Spark's SQL tab draws for the tree `arena` (see the module docs).
fn graph(arena: &[Raw]) -> PlanGraph {
    let keys = keys(arena);
    let mut g = PlanGraph::default();
    let mut drawn: Map<u64, u32> = Map::default();
    // (node, parent in the graph, inside a codegen cluster), in Spark's depth-first order.
    let mut stack: Vec<(u32, Option<u32>, bool)> = vec![(0, None, false)];
    let edge = |g: &mut PlanGraph, child: u32, parent: Option<u32>, once: bool| {
        if let Some(p) = parent {
            let kids = &mut g.nodes[p as usize].children;
            if !(once && kids.contains(&child)) {
                kids.push(child);
            }
        }
    };
    while let Some((i, parent, cluster)) = stack.pop() {
        let r = &arena[i as usize];
        let first = r.first;
        let seen = |n: Option<u32>| n.and_then(|n| drawn.get(&keys[n as usize]).copied());
        match r.name.as_ref() {
            n if n.starts_with("WholeStageCodegen") => {
                stack.extend(first.map(|c| (c, parent, true)));
            }
            "InputAdapter" => stack.extend(first.map(|c| (c, parent, false))),
            "BroadcastQueryStage" | "ShuffleQueryStage" => match seen(first) {
                Some(n) => edge(&mut g, n, parent, false),
                None => stack.extend(first.map(|c| (c, parent, false))),
            },
            n if n.ends_with("QueryStage") => stack.extend(first.map(|c| (c, parent, false))),
            "Subquery" if cluster => stack.push((i, parent, false)),
            "Subquery" if seen(Some(i)).is_some() => {
                let n = seen(Some(i)).unwrap_or_default();
                edge(&mut g, n, parent, true);
            }
            "ReusedSubquery" => stack.extend(first.map(|c| (c, parent, cluster))),
            "ReusedExchange" if seen(first).is_some() => {
                let n = seen(first).unwrap_or_default();
                edge(&mut g, n, parent, false);
            }
            name => {
                let id = g.nodes.len() as u32;
                g.nodes.push(PlanNode {
                    name: name.to_string(),
                    children: Vec::new(),
                    aqe: r.aqe.clone(),
                });
                if name.contains("Exchange") || name == "Subquery" {
                    drawn.insert(keys[i as usize], id);
                }
                edge(&mut g, id, parent, false);
                let at = stack.len();
                stack.extend(kids(arena, i).map(|c| (c, Some(id), cluster)));
                stack[at..].reverse();
            }
        }
    }
    g
}

/// The plan in the `sparkPlanInfo` object `v` (lines are read by [`plan_line`]).
#[cfg(test)]
pub fn plan(v: &[u8]) -> Result<LogPlan, ScanError> {
    read_tree(v).map(|arena| summarize(&arena))
}

/// The plan of a tree read by [`read_tree`].
fn summarize(arena: &[Raw]) -> LogPlan {
    let is_final = arena
        .first()
        .is_some_and(|r| r.name == "AdaptiveSparkPlan" && r.is_final);
    let (summary, aqe) = graph(arena).summarize();
    LogPlan {
        summary,
        aqe,
        is_final,
    }
}

/// `executionId` and the plan of a `SparkListenerSQLExecutionStart` or
/// `SparkListenerSQLAdaptiveExecutionUpdate` line (`None`: the line has no plan). The plan is
/// read where it stands in the line, in the one pass over it.
pub fn plan_line(line: &[u8]) -> Result<(u64, Option<LogPlan>), ScanError> {
    let (mut id, mut tree) = (None, None);
    scan::members_at(line, |k, at| {
        if k == b"sparkPlanInfo" && !line[at..].starts_with(b"null") {
            let (arena, end) = read_tree_at(line, at)?;
            tree = Some(arena);
            return Ok(end);
        }
        let end = skip_value(line, at)?;
        if k == b"executionId" {
            id = Some(count("executionId", &line[at..end])?);
        }
        Ok(end)
    })?;
    let id = id.ok_or(ScanError::Missing("executionId"))?;
    Ok((id, tree.as_deref().map(summarize)))
}

/// `executionId` and `accumUpdates` (`[[accumulator id, value], ...]`) of a
/// `SparkListenerDriverAccumUpdates` line; negative values read as 0.
pub fn accum_line(line: &[u8]) -> Result<(u64, Vec<(u64, u64)>), ScanError> {
    let (mut id, mut updates) = (None, Vec::new());
    members(line, |k, v| {
        match k {
            b"executionId" => id = Some(count("executionId", v)?),
            b"accumUpdates" => elements(v, |pair| {
                let mut two = [None, None];
                let mut n = 0;
                elements(pair, |x| {
                    if let Some(slot) = two.get_mut(n) {
                        *slot = Some(count("accumUpdates", x)?);
                    }
                    n += 1;
                    Ok(())
                })?;
                if let [Some(a), Some(v)] = two {
                    updates.push((a, v));
                }
                Ok(())
            })?,
            _ => {}
        }
        Ok(())
    })?;
    Ok((id.ok_or(ScanError::Missing("executionId"))?, updates))
}

#[cfg(test)]
#[path = "sqlplan_tests.rs"]
mod tests;
