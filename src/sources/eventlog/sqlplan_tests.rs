//! SQL plan reading, on a Spark 4.1.1 run's event log (`tests/data/sql-plans-4.1.1`, see its
//! README), against what the same driver's REST API served for the same executions.

use std::collections::BTreeMap;
use std::io::Read;

use super::*;
use crate::model::plan::{PlanSummary, STRATEGIES};
use crate::sources::eventlog::parser::{parse_line, Event};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sql-plans-4.1.1");
const APP: &str = "local-1796102515495";

/// The event log's lines.
fn log_lines() -> String {
    let p = format!("{DATA}/eventlog/eventlog_v2_{APP}/events_1_{APP}.zstd");
    let mut text = String::new();
    zstd::stream::Decoder::new(std::fs::File::open(p).expect("log"))
        .expect("zstd")
        .read_to_string(&mut text)
        .expect("decode");
    text
}

/// Every execution's final plan as the event-log collector reads it: the last plan (a final
/// adaptive update wins), adaptive numbers summed from the driver's accumulator updates.
fn log_plans() -> BTreeMap<u64, PlanSummary> {
    let mut plans: BTreeMap<u64, Box<LogPlan>> = BTreeMap::new();
    let mut accums: BTreeMap<u64, BTreeMap<u64, u64>> = BTreeMap::new();
    for line in log_lines().lines() {
        match parse_line(line.as_bytes()).expect("parses") {
            Some(Event::SqlStart {
                execution_id,
                plan: Some(p),
                ..
            }) => {
                plans.insert(execution_id, p);
            }
            Some(Event::SqlPlanUpdate { execution_id, plan }) => {
                let keep = plans.get(&execution_id).is_some_and(|p| p.is_final);
                if plan.is_final || !keep {
                    plans.insert(execution_id, plan);
                }
            }
            Some(Event::SqlDriverAccums {
                execution_id,
                updates,
            }) => {
                for (a, v) in updates {
                    *accums
                        .entry(execution_id)
                        .or_default()
                        .entry(a)
                        .or_default() += v;
                }
            }
            _ => {}
        }
    }
    plans
        .into_iter()
        .map(|(id, p)| {
            let acc = accums.remove(&id).unwrap_or_default();
            (id, p.resolve(|a| acc.get(&a).copied()))
        })
        .collect()
}

/// What REST served for each execution (`raw.json`), converted as the poller converts it.
fn rest_plans() -> BTreeMap<u64, PlanSummary> {
    let text = std::fs::read_to_string(format!("{DATA}/rest/{APP}/raw.json")).expect("rest");
    let raw: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).expect("json");
    raw.into_iter()
        .filter_map(|(k, v)| {
            let id = k
                .strip_prefix("sql/")?
                .strip_suffix("?details=true")?
                .parse()
                .ok()?;
            let p: crate::sources::rest::api::ExecutionPlan = serde_json::from_value(v).ok()?;
            Some((id, crate::sources::rest::convert::sql_plan_obs(&p)?.plan))
        })
        .collect()
}

fn joins(s: &PlanSummary) -> BTreeMap<&'static str, u64> {
    STRATEGIES
        .iter()
        .zip(s.joins)
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (*k, n))
        .collect()
}

#[test]
fn event_log_and_rest_give_the_same_plan() {
    let (log, rest) = (log_plans(), rest_plans());
    assert_eq!(log.len(), 16);
    assert_eq!(log, rest);
    // Every strategy of Spark's is in the run. Broadcast joins: join_broadcast, ctas, write,
    // cache, cache_read (its own and the cached plan's), subq (the query's and the subquery's).
    let mut all = [0u64; 6];
    for s in log.values() {
        for (a, n) in all.iter_mut().zip(s.joins) {
            *a += n;
        }
    }
    assert_eq!(all, [8, 3, 1, 1, 1, 0], "{STRATEGIES:?}");
}

#[test]
fn skew_reuse_cache_and_subquery_read_as_spark_draws_them() {
    let log = log_plans();
    // 2: a skew join, adaptive execution coalesced 2 + 2 partitions and split one into two.
    let s = &log[&2];
    assert_eq!(joins(s), BTreeMap::from([("SortMergeJoin", 1)]));
    assert_eq!(s.skew_joins, 1);
    assert_eq!(s.exchanges, [3, 0]);
    assert_eq!(s.aqe, [4, 1, 2]);
    // 3: a self-join of one aggregate: the reused exchange is one exchange.
    let s = &log[&3];
    assert_eq!(joins(s), BTreeMap::from([("SortMergeJoin", 1)]));
    assert_eq!((s.skew_joins, s.exchanges), (0, [2, 0]));
    // 14: a self-join of a cached table: the cached plan under each scan, its exchange
    // drawn once; the broadcast joins are the query's and the cached plan's.
    let s = &log[&14];
    assert_eq!(joins(s), BTreeMap::from([("BroadcastHashJoin", 2)]));
    assert_eq!(s.exchanges, [1, 2]);
    assert_eq!(
        s.aqe,
        [0, 0, 0],
        "the cache was filled by another execution"
    );
    // 15: a scalar subquery used twice is one subquery.
    let s = &log[&15];
    assert_eq!(joins(s), BTreeMap::from([("BroadcastHashJoin", 2)]));
    assert_eq!(s.exchanges, [2, 2]);
}

/// A `sparkPlanInfo` node.
fn node(name: &str, simple: &str, children: &[String]) -> String {
    format!(
        r#"{{"nodeName":"{name}","simpleString":"{simple}","children":[{}],"metadata":{{}},"metrics":[]}}"#,
        children.join(",")
    )
}

#[test]
fn codegen_wrappers_and_reuse_follow_sparks_graph() {
    let scan = node("Range", "Range (0, 10)", &[]);
    let ex = node(
        "Exchange",
        "Exchange hashpartitioning(k, 2), [plan_id=7]",
        &[scan],
    );
    let stage = |s: &str| node("ShuffleQueryStage", s, std::slice::from_ref(&ex));
    let reused = node(
        "ShuffleQueryStage",
        "ShuffleQueryStage 1",
        &[node(
            "ReusedExchange",
            "ReusedExchange [k#2]",
            std::slice::from_ref(&ex),
        )],
    );
    let smj = node(
        "SortMergeJoin",
        "SortMergeJoin [k], [k]",
        &[
            node(
                "InputAdapter",
                "InputAdapter",
                &[stage("ShuffleQueryStage 0")],
            ),
            node("InputAdapter", "InputAdapter", &[reused]),
        ],
    );
    let root = node(
        "AdaptiveSparkPlan",
        "AdaptiveSparkPlan isFinalPlan=true",
        &[node(
            "WholeStageCodegen (1)",
            "WholeStageCodegen (1)",
            &[smj],
        )],
    );
    let arena = read_tree(root.as_bytes()).unwrap();
    let g = graph(&arena);
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        names,
        ["AdaptiveSparkPlan", "SortMergeJoin", "Exchange", "Range"]
    );
    assert_eq!(g.nodes[0].children, [1]);
    assert_eq!(
        g.nodes[1].children,
        [2, 2],
        "the reused exchange is the same node"
    );
    assert!(plan(root.as_bytes()).unwrap().is_final);
}

#[test]
fn deep_plans_read_without_recursion() {
    // Serde's recursion limit would stop at about 64 plan levels; the scanner has none.
    let mut v = node("Range", "Range (0, 1)", &[]);
    for i in 0..3000 {
        v = node("Project", &format!("Project [c{i}]"), &[v]);
    }
    let p = plan(v.as_bytes()).unwrap();
    assert!(!p.is_final);
    assert!(p.summary.fingerprint > 0);
}

#[test]
fn accumulator_updates_and_bad_lines() {
    let line = br#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates","executionId":2,"accumUpdates":[[953,4],[955,3070],[955,-1],[1]]}"#;
    let (id, u) = accum_line(line).unwrap();
    assert_eq!(id, 2);
    assert_eq!(u, [(953, 4), (955, 3070), (955, 0)]);
    assert!(accum_line(br#"{"accumUpdates":[]}"#).is_err());
    assert!(
        plan_line(br#"{"executionId":1,"sparkPlanInfo":{"nodeName":"A","children":[{"#).is_err()
    );
    assert!(
        plan_line(br#"{"executionId":1,"sparkPlanInfo":{"nodeName":"A","children":7}}"#).is_err()
    );
    assert_eq!(plan_line(br#"{"executionId":1}"#).unwrap(), (1, None));
    // A start whose plan cannot be read still starts the execution.
    let start = r#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":4,"description":"d","time":5,"sparkPlanInfo":{"nodeName":"A","children":7}}"#;
    match parse_line(start.as_bytes()).unwrap() {
        Some(Event::SqlStart {
            execution_id: 4,
            plan: None,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

/// The filter that spares reading most nodes' metrics lets every adaptive-execution metric
/// through, plain or escaped.
#[test]
fn metrics_naming_adaptive_execution_are_read() {
    for name in [
        "number of coalesced partitions",
        "number of skewed partitions",
        "number of skewed partition splits",
    ] {
        assert!(AqeMetric::from_name(name).is_some());
        let m = format!(r#"[{{"name":"{name}","accumulatorId":7,"metricType":"sum"}}]"#);
        assert!(may_name_aqe(m.as_bytes()), "{name}");
    }
    assert!(may_name_aqe(
        br#"[{"name":"number of skew\u0065d partitions","accumulatorId":7}]"#
    ));
    assert!(!may_name_aqe(
        br#"[{"name":"number of partitions","accumulatorId":7,"metricType":"sum"}]"#
    ));
}
