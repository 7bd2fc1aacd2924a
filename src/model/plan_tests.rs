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
    agg.add(&s(7), 3, Some(2_000));
    agg.add(&s(8), 1, Some(1_000));
    assert_eq!(agg.plans, 2);
    assert_eq!(agg.joins[0], 2);
    assert_eq!(agg.latest.unwrap().fingerprint, 7, "latest by end time");
    agg.add(&s(9), 4, Some(2_000));
    assert_eq!(agg.latest.unwrap().fingerprint, 9, "then by execution id");
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
            },
        );
    }
    assert_eq!(st.waiting(), MAX_WAITING);
    assert!(st.take(10).is_none(), "the oldest were forgotten");
}

mod through_the_model {
    use std::sync::Arc;

    use super::super::PlanSummary;
    use crate::config::Settings;
    use crate::export::families::{collect, Family};
    use crate::model::{AppObs, Model, Observer, Source, SqlObs, SqlPlanObs, SqlStatus};
    use crate::telemetry::Telemetry;

    fn model() -> Arc<Model> {
        model_with(&Settings::default())
    }

    fn model_with(s: &Settings) -> Arc<Model> {
        Model::with_clock(s, Arc::new(Telemetry::default()), Arc::new(|| 1_000_000))
    }

    fn sql(id: u64, status: SqlStatus, desc: &str, end: i64) -> SqlObs {
        SqlObs {
            execution_id: id,
            description: Some(desc.into()),
            status,
            submission_ms: Some(end - 10),
            duration_ms: status.is_terminal().then_some(10),
            job_ids: vec![],
        }
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

    /// Samples of `name` as `(labels without app_id except when `with_app`, value)`.
    fn samples(f: &[Family], name: &str) -> Vec<(String, f64)> {
        let fam = f.iter().find(|x| x.name == name).expect(name);
        fam.samples
            .iter()
            .map(|s| {
                let l: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (l.join(","), s.value.as_f64())
            })
            .collect()
    }

    #[test]
    fn a_plan_counts_once_whatever_the_source_and_order() {
        let m = model();
        let (log, rest) = (m.observer(Source::EventLog), m.observer(Source::Rest));
        // 1: the log tells its plan while it runs; it counts at the end, REST's copy not again.
        log.upsert_sql("a", &sql(1, SqlStatus::Running, "q", 100));
        log.sql_plan("a", &plan(1, 1, 7));
        let f = collect(&m);
        assert!(
            samples(&f, "spark_sql_joins").is_empty(),
            "no counter while the execution's group is unknown"
        );
        log.upsert_sql("a", &sql(1, SqlStatus::Completed, "q", 100));
        rest.upsert_sql("a", &sql(1, SqlStatus::Completed, "q", 100));
        rest.sql_plan("a", &plan(1, 1, 7));
        // 2: REST sees it ended first, its plan a poll later; the log's copy not again.
        rest.upsert_sql("a", &sql(2, SqlStatus::Completed, "q", 200));
        rest.sql_plan("a", &plan(2, 2, 8));
        log.sql_plan("a", &plan(2, 2, 8));
        // 3: a plan of an execution the model never saw is dropped.
        rest.sql_plan("a", &plan(3, 5, 9));
        let f = collect(&m);
        let q = "app_id=a,app_name=,job_group=,description=q";
        assert_eq!(samples(&f, "spark_sql_plans"), [(q.to_string(), 2.0)]);
        let joins = samples(&f, "spark_sql_joins");
        assert_eq!(joins.len(), 6, "every strategy born at zero");
        assert!(joins.contains(&(format!("{q},strategy=SortMergeJoin"), 3.0)));
        assert!(joins.contains(&(format!("{q},strategy=BroadcastHashJoin"), 0.0)));
        assert!(samples(&f, "spark_sql_exchanges").contains(&(format!("{q},type=shuffle"), 6.0)));
        assert_eq!(
            samples(&f, "spark_sql_plan_fingerprint"),
            [("app_name=,job_group=,description=q".to_string(), 8.0)]
        );
    }

    #[test]
    fn the_fingerprint_is_the_latest_runs_one_series_per_name() {
        check_latest_per_name(&model());
        // The same per name's state across runs (`model.aggregate_by: app_name`).
        let mut s = Settings::default();
        s.model.aggregate_by = crate::config::AggregateBy::AppName;
        check_latest_per_name(&model_with(&s));
    }

    fn check_latest_per_name(m: &Arc<Model>) {
        let rest = m.observer(Source::Rest);
        // Three runs of "nightly" and one of "other", the same description in each.
        for (app, name, end, fp) in [
            ("run-1", "nightly", 100, 11),
            ("run-3", "nightly", 300, 33),
            ("run-2", "nightly", 200, 22),
            ("x-1", "other", 400, 44),
        ] {
            rest.upsert_app(&AppObs {
                app_id: app.into(),
                name: Some(name.into()),
                ..Default::default()
            });
            rest.upsert_sql(app, &sql(1, SqlStatus::Completed, "load", end));
            rest.sql_plan(app, &plan(1, 1, fp));
        }
        // A later execution without a plan yet changes nothing.
        rest.upsert_sql("run-3", &sql(2, SqlStatus::Completed, "load", 500));
        let f = collect(m);
        assert_eq!(
            samples(&f, "spark_sql_plan_fingerprint"),
            [
                (
                    "app_name=nightly,job_group=,description=load".to_string(),
                    33.0
                ),
                (
                    "app_name=other,job_group=,description=load".to_string(),
                    44.0
                ),
            ]
        );
    }
}
