use super::*;

/// A graph from `(name, children)` pairs.
fn graph(nodes: &[(&str, &[u32])]) -> PlanGraph {
    PlanGraph {
        nodes: nodes
            .iter()
            .map(|(name, children)| PlanNode {
                name: name.to_string(),
                children: children.to_vec(),
                aqe: vec![],
            })
            .collect(),
    }
}

#[test]
fn names_lose_codegen_ids_and_skew_markers() {
    assert_eq!(clean_name("SortMergeJoin(skew=true)"), "SortMergeJoin");
    assert_eq!(
        clean_name("ShuffledHashJoin (skew=true)"),
        "ShuffledHashJoin"
    );
    assert_eq!(clean_name("*(3) SortMergeJoin"), "SortMergeJoin");
    assert_eq!(clean_name("* Project"), "Project");
    assert_eq!(clean_name("WholeStageCodegen (12)"), "WholeStageCodegen");
    assert_eq!(clean_name("  Exchange "), "Exchange");
    // Only digits are codegen ids.
    assert_eq!(clean_name("Scan parquet t (x)"), "Scan parquet t (x)");
    assert_eq!(clean_name("*(a) Project"), "*(a) Project");
}

#[test]
fn strategies_exchanges_and_wrappers() {
    let s = |n: &str| strategy(clean_name(n)).map(|i| STRATEGIES[i]);
    assert_eq!(s("BroadcastHashJoin"), Some("BroadcastHashJoin"));
    assert_eq!(s("SortMergeJoin(skew=true)"), Some("SortMergeJoin"));
    assert_eq!(s("*(2) ShuffledHashJoin"), Some("ShuffledHashJoin"));
    assert_eq!(
        s("BroadcastNestedLoopJoin"),
        Some("BroadcastNestedLoopJoin")
    );
    assert_eq!(s("CartesianProduct"), Some("CartesianProduct"));
    // Vendor joins: Photon, RAPIDS, Spark's own streaming join.
    assert_eq!(s("PhotonBroadcastHashJoin"), Some("other"));
    assert_eq!(s("GpuShuffledHashJoin"), Some("other"));
    assert_eq!(s("StreamingSymmetricHashJoin"), Some("other"));
    assert_eq!(s("Project"), None);
    assert_eq!(s("BroadcastExchange"), None);
    let x = |n: &str| exchange(clean_name(n)).map(|i| EXCHANGES[i]);
    assert_eq!(x("Exchange"), Some("shuffle"));
    assert_eq!(x("BroadcastExchange"), Some("broadcast"));
    assert_eq!(x("GpuColumnarExchange"), Some("shuffle"));
    assert_eq!(x("ReusedExchange"), None);
    assert_eq!(x("AQEShuffleRead"), None);
    for w in [
        "WholeStageCodegen (1)",
        "InputAdapter",
        "ShuffleQueryStage",
        "BroadcastQueryStage",
        "ResultQueryStage",
        "TableCacheQueryStage",
        "AQEShuffleRead",
        "ReusedExchange",
        "ReusedSubquery",
        "AdaptiveSparkPlan",
    ] {
        assert!(is_wrapper(clean_name(w)), "{w}");
    }
    assert!(!is_wrapper("Exchange") && !is_wrapper("Subquery") && !is_wrapper("Sort"));
}

#[test]
fn summary_counts_each_node_once() {
    // AdaptiveSparkPlan <- HashAggregate <- SortMergeJoin(skew) <- [Sort <- AQEShuffleRead <-
    // Exchange <- Range, Sort <- AQEShuffleRead <- Exchange (shared, drawn once)].
    let mut g = graph(&[
        ("AdaptiveSparkPlan", &[1]),
        ("HashAggregate", &[2]),
        ("SortMergeJoin(skew=true)", &[3, 4]),
        ("Sort", &[5]),
        ("Sort", &[6]),
        ("AQEShuffleRead", &[7]),
        ("AQEShuffleRead", &[7]),
        ("Exchange", &[8]),
        ("Range", &[]),
        ("BroadcastExchange", &[]),
        ("ReusedExchange", &[]),
    ]);
    g.nodes[5].aqe = vec![(AqeMetric::Coalesced, 2), (AqeMetric::Skewed, 1)];
    g.nodes[6].aqe = vec![(AqeMetric::SkewSplits, 4)];
    let (mut s, refs) = g.summarize();
    assert_eq!(s.joins, [0, 1, 0, 0, 0, 0]);
    assert_eq!(s.skew_joins, 1);
    assert_eq!(s.exchanges, [1, 1]);
    assert_eq!(s.aqe, [0, 0, 0], "values are the caller's to resolve");
    for (m, v) in refs {
        s.add_aqe(m, v);
    }
    assert_eq!(s.aqe, [2, 1, 4]);
    assert!(s.fingerprint < 1 << 48);
}

#[test]
fn fingerprint_passes_wrappers_and_ignores_child_order() {
    // Event-log shape: every wrapper present, children in plan order.
    let log = graph(&[
        ("AdaptiveSparkPlan", &[1]),
        ("ResultQueryStage", &[2]),
        ("WholeStageCodegen (3)", &[3]),
        ("SortMergeJoin", &[4, 9]),
        ("InputAdapter", &[5]),
        ("AQEShuffleRead", &[6]),
        ("ShuffleQueryStage", &[7]),
        ("Exchange", &[8]),
        ("*(1) Range", &[]),
        ("Sort", &[10]),
        ("Exchange", &[11]),
        ("LocalTableScan", &[]),
    ]);
    // REST shape: wrappers gone, the children listed the other way round.
    let rest = graph(&[
        ("AdaptiveSparkPlan", &[1]),
        ("SortMergeJoin(skew=true)", &[4, 2]),
        ("AQEShuffleRead", &[3]),
        ("Exchange", &[6]),
        ("Sort", &[5]),
        ("Exchange", &[7]),
        ("Range", &[]),
        ("LocalTableScan", &[]),
    ]);
    let f = |g: &PlanGraph| g.summarize().0.fingerprint;
    assert_eq!(f(&log), f(&rest));
    // A different join strategy is a different plan.
    let mut bhj = rest.clone();
    bhj.nodes[1].name = "BroadcastHashJoin".into();
    assert_ne!(f(&bhj), f(&rest));
    // Structure counts, not only the names in order: Sort above or below the exchange.
    let mut moved = rest.clone();
    moved.nodes[4].name = "Exchange".into();
    moved.nodes[5].name = "Sort".into();
    assert_ne!(f(&moved), f(&rest));
}

#[test]
fn a_shared_node_is_hashed_under_each_parent() {
    // REST draws a reused exchange once with two parents; the event log repeats it under a
    // ReusedExchange. Both are the same plan.
    let rest = graph(&[
        ("SortMergeJoin", &[1, 2]),
        ("Sort", &[3]),
        ("Sort", &[3]),
        ("Exchange", &[4]),
        ("Range", &[]),
    ]);
    let log = graph(&[
        ("SortMergeJoin", &[1, 2]),
        ("Sort", &[3]),
        ("Sort", &[5]),
        ("Exchange", &[4]),
        ("Range", &[]),
        ("ReusedExchange", &[6]),
        ("Exchange", &[7]),
        ("Range", &[]),
    ]);
    assert_eq!(
        rest.summarize().0.fingerprint,
        log.summarize().0.fingerprint
    );
}

#[test]
fn malformed_graphs_do_not_hang_or_panic() {
    // A cycle, an edge to a missing node, an empty graph, a deep chain.
    let cyclic = graph(&[("A", &[1]), ("B", &[0, 7])]);
    let _ = cyclic.summarize();
    assert_eq!(PlanGraph::default().summarize().0, PlanSummary::default());
    let deep = PlanGraph {
        nodes: (0..100_000u32)
            .map(|i| PlanNode {
                name: "Project".into(),
                children: if i + 1 < 100_000 { vec![i + 1] } else { vec![] },
                aqe: vec![],
            })
            .collect(),
    };
    assert!(deep.summarize().0.fingerprint > 0);
}

#[test]
fn several_roots_hash_as_one_plan() {
    let a = graph(&[("Project", &[]), ("Range", &[])]);
    let b = graph(&[("Range", &[]), ("Project", &[])]);
    assert_eq!(a.summarize().0.fingerprint, b.summarize().0.fingerprint);
}

#[test]
fn fingerprint_is_stable_across_versions() {
    // A fixed value: changing the hash changes every exported fingerprint (a plan change for
    // every description at upgrade), so it must be deliberate.
    let g = graph(&[("SortMergeJoin", &[1, 2]), ("Range", &[]), ("Range", &[])]);
    assert_eq!(g.summarize().0.fingerprint, EXPECTED_SMJ);
}

/// Computed independently (Python, the same FNV-1a steps).
const EXPECTED_SMJ: u64 = 11_220_994_195_373;

#[test]
fn an_aggregate_counts_plans_and_keeps_the_latest_fingerprint() {
    let mut agg = PlanAgg::default();
    let s = |fp: u64| PlanSummary {
        joins: [1, 0, 0, 0, 0, 0],
        fingerprint: fp,
        ..Default::default()
    };
    agg.add(&s(7), 3, Some(2_000), 0);
    agg.add(&s(8), 1, Some(1_000), 0);
    assert_eq!(agg.plans, 2);
    assert_eq!(agg.joins[0], 2);
    assert_eq!(agg.latest.unwrap().fingerprint, 7, "latest by end time");
    agg.add(&s(9), 4, Some(2_000), 0);
    assert_eq!(agg.latest.unwrap().fingerprint, 9, "then by execution id");
}

/// Two queries whose labels fold into one aggregate keep their plans apart: a shape per query,
/// one latest per query, and a fingerprint that changes only when one query's plan does.
#[test]
fn an_aggregate_tells_its_queries_apart() {
    let mut agg = PlanAgg::default();
    let s = |fp: u64| PlanSummary {
        fingerprint: fp,
        ..Default::default()
    };
    let (q1, q2) = (
        query_id(raw_hash(Some("q01")), 1),
        query_id(raw_hash(Some("q02")), 1),
    );
    assert_ne!(q1, q2);
    agg.add(&s(7), 1, Some(1_000), q1);
    agg.add(&s(8), 2, Some(2_000), q2);
    agg.add(&s(7), 3, Some(3_000), q1);
    agg.add(&s(8), 4, Some(4_000), q2);
    assert_eq!(agg.shapes().len(), 2, "two shapes in the aggregate");
    let per_query: Vec<(u64, usize, u64)> = agg
        .queries()
        .iter()
        .map(|q| (q.query(), q.shapes().len(), q.plans()))
        .collect();
    assert_eq!(per_query, [(q1, 1, 2), (q2, 1, 2)], "one shape per query");
    let (newest, fp) = latest_fingerprint(&agg.latest_by_query()).unwrap();
    assert_eq!(newest.execution_id, 4);
    // Another execution of q1 with its same plan: the same fingerprint, whichever ran last.
    agg.add(&s(7), 5, Some(5_000), q1);
    assert_eq!(latest_fingerprint(&agg.latest_by_query()).unwrap().1, fp);
    // q1's plan changes: so does the fingerprint, and q1 has two shapes.
    agg.add(&s(9), 6, Some(6_000), q1);
    assert_ne!(latest_fingerprint(&agg.latest_by_query()).unwrap().1, fp);
    assert_eq!(agg.queries()[0].shapes().len(), 2);
    // One query alone, or several that plan alike: that one shape's fingerprint.
    let q2_only: Vec<Latest> = agg.queries()[1..].iter().map(|q| q.latest()).collect();
    assert_eq!(latest_fingerprint(&q2_only).unwrap().1, 8);
    let mut alike = PlanAgg::default();
    for (i, day) in ["2026-11-01", "2026-11-02", "2026-11-03"]
        .iter()
        .enumerate()
    {
        let q = query_id(raw_hash(Some("daily")), raw_hash(Some(day)));
        alike.add(&s(7), i as u64, Some(i as i64), q);
    }
    assert_eq!(alike.queries().len(), 3);
    assert_eq!(latest_fingerprint(&alike.latest_by_query()).unwrap().1, 7);
}

/// A name's latest plans across runs, as a checkpoint written before queries were told apart
/// holds them (one latest per label set), read as one query's.
#[test]
fn a_name_s_latest_plan_reads_from_an_older_checkpoint() {
    let old = r#"{"end_ms":5,"execution_id":2,"fingerprint":9}"#;
    let b: ByQuery = serde_json::from_str(old).unwrap();
    assert_eq!(b.latest().len(), 1);
    assert_eq!((b.latest()[0].fingerprint, b.latest()[0].query), (9, 0));
    let back: ByQuery = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
    assert_eq!(back, b);
}

#[test]
fn plan_state_counts_once_and_stays_bounded() {
    let key: (Arc<str>, Arc<str>) = ("g".into(), "d".into());
    let mut st = PlanState::default();
    st.wait(
        1,
        Ended {
            key: key.clone(),
            end_ms: Some(5),
            query: 0,
        },
    );
    assert!(st.take(2).is_none(), "an execution not ended");
    assert!(st.take(1).is_some());
    assert!(st.take(1).is_none(), "counted once");
    assert!(st.counted(1));
    st.wait(
        1,
        Ended {
            key: key.clone(),
            end_ms: None,
            query: 0,
        },
    );
    assert_eq!(st.waiting(), 0, "a counted execution never waits again");
    assert!(st.count(2) && !st.count(2));
    for id in 10..10 + MAX_WAITING as u64 + 5 {
        st.wait(
            id,
            Ended {
                key: key.clone(),
                end_ms: None,
                query: 0,
            },
        );
    }
    assert_eq!(st.waiting(), MAX_WAITING);
    assert!(st.take(10).is_none(), "the oldest were forgotten");
}

mod through_the_model {
    use super::super::{PlanSummary, EXCHANGES, STRATEGIES};
    use crate::model::testkit::*;

    /// Execution `id` of description `desc`, ended at `end` after 10 ms.
    fn ended(id: u64, desc: &str, end: i64) -> SqlObs {
        sql(id)
            .desc(desc)
            .status(SqlStatus::Completed)
            .submitted(end - 10)
            .duration(10)
    }

    fn plan(id: u64, smj: u64, fp: u64) -> SqlPlanObs {
        SqlPlanObs {
            execution_id: id,
            plan: PlanSummary {
                joins: [0, smj, 0, 0, 0, 0],
                exchanges: [2 * smj, 0],
                fingerprint: fp,
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_plan_counts_once_whatever_the_source_and_order() {
        let m = TestModel::new();
        let (log, rest) = (m.log(), m.rest());
        // 1: the log tells its plan while it runs; it counts at the end, REST's copy not again.
        log.upsert_sql("a", &sql(1).desc("q").submitted(90));
        log.sql_plan("a", &plan(1, 1, 7));
        assert!(
            m.app("a").sql.iter().all(|q| q.plans.is_none()),
            "no counter while the execution's group is unknown"
        );
        log.upsert_sql("a", &ended(1, "q", 100));
        rest.upsert_sql("a", &ended(1, "q", 100));
        rest.sql_plan("a", &plan(1, 1, 7));
        // 2: REST sees it ended first, its plan a poll later; the log's copy not again.
        rest.upsert_sql("a", &ended(2, "q", 200));
        rest.sql_plan("a", &plan(2, 2, 8));
        log.sql_plan("a", &plan(2, 2, 8));
        // 3: a plan of an execution the model never saw is dropped.
        rest.sql_plan("a", &plan(3, 5, 9));
        let a = m.app("a");
        let counted: Vec<(&str, &str, u64)> = a
            .sql
            .iter()
            .filter_map(|q| q.plans.as_ref().map(|p| (&*q.group, &*q.desc, p.plans)))
            .collect();
        assert_eq!(counted, [("", "q", 2)]);
        let p = a.sql_desc("", "q").and_then(|q| q.plans.as_ref()).unwrap();
        let strategy = |s: &str| STRATEGIES.iter().position(|x| *x == s).unwrap();
        assert_eq!(p.joins.len(), 6, "every strategy, at zero until counted");
        assert_eq!(p.joins[strategy("SortMergeJoin")], 3);
        assert_eq!(p.joins[strategy("BroadcastHashJoin")], 0);
        let shuffle = EXCHANGES.iter().position(|x| *x == "shuffle").unwrap();
        assert_eq!(p.exchanges[shuffle], 6);
        let latest: Vec<(&str, &str, u64)> = a
            .fingerprints
            .iter()
            .map(|(g, d, l)| (&**g, &**d, l.fingerprint))
            .collect();
        assert_eq!(latest, [("", "q", 8)]);
    }

    /// Each run keeps its latest plan's fingerprint; a name's state across runs
    /// (`model.aggregate_by: app_name`) the latest of its runs'. (Across the runs of a name in
    /// `app_id` mode, the exposition keeps the latest run's: `tests/it/metric_catalogue.rs`.)
    #[test]
    fn the_fingerprint_is_the_latest_runs_one_series_per_name() {
        // `job_group/description=fingerprint` of each latest plan.
        let latest = |a: &App| -> String {
            let f = a.fingerprints.iter();
            let f: Vec<String> = f
                .map(|(g, d, l)| format!("{g}/{d}={}", l.fingerprint))
                .collect();
            f.join(",")
        };
        let m = TestModel::new();
        observe_runs(&m);
        let per_run: Vec<(String, String, String)> = m
            .apps()
            .iter()
            .map(|a| (a.key.clone(), a.name.clone(), latest(a)))
            .collect();
        let want = [
            ("run-1", "nightly", "/load=11"),
            ("run-2", "nightly", "/load=22"),
            ("run-3", "nightly", "/load=33"),
            ("x-1", "other", "/load=44"),
        ]
        .map(|(k, n, f)| (k.to_string(), n.to_string(), f.to_string()));
        assert_eq!(per_run, want);
        // The same per name's state across runs.
        let m = TestModel::with(|s| s.model.aggregate_by = AggregateBy::AppName);
        observe_runs(&m);
        let per_name: Vec<(String, String)> = m
            .names()
            .iter()
            .map(|a| (a.name.clone(), latest(a)))
            .collect();
        let want = [("nightly", "/load=33"), ("other", "/load=44")]
            .map(|(n, f)| (n.to_string(), f.to_string()));
        assert_eq!(per_name, want);
    }

    /// Three runs of "nightly" and one of "other", the same description in each.
    fn observe_runs(m: &TestModel) {
        let rest = m.rest();
        for (id, name, end, fp) in [
            ("run-1", "nightly", 100, 11),
            ("run-3", "nightly", 300, 33),
            ("run-2", "nightly", 200, 22),
            ("x-1", "other", 400, 44),
        ] {
            rest.upsert_app(&app(id).name(name));
            rest.upsert_sql(id, &ended(1, "load", end));
            rest.sql_plan(id, &plan(1, 1, fp));
        }
        // A later execution without a plan yet changes nothing.
        rest.upsert_sql("run-3", &ended(2, "load", 500));
    }
}
