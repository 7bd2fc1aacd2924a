use std::collections::BTreeMap;

use spark_exporter_core::model::plan::PlanSummary;

use super::profile::{GroupProfile, Measures, QueryProfile, StageProfile, TASKS, TASK_SECONDS};
use super::types::Baseline;
use super::*;

fn baseline(id: &str) -> Baseline {
    Baseline {
        kind: "run".into(),
        runs: vec![id.into()],
        closest: id.into(),
        input: "test".into(),
    }
}

fn measures(task_s: f64, tasks: f64) -> Measures {
    let mut m = Measures::default();
    m.0[TASK_SECONDS] = task_s;
    m.0[TASKS] = tasks;
    m
}

/// A run of two job groups, one SQL execution, AQE as given.
fn run(id: &str, aqe: Option<&str>, tiny_tasks: f64) -> Profile {
    let stage = |sid: u64, s: f64, n: f64| StageProfile {
        stage_id: sid,
        name: format!("stage {sid}"),
        m: measures(s, n),
        skew: Some(1.5),
    };
    let mut groups = BTreeMap::new();
    groups.insert(
        ("etl".to_string(), "load".to_string()),
        GroupProfile {
            m: measures(100.0, 40.0),
            jobs: 1,
            stages: [
                ((0, 0), stage(0, 60.0, 20.0)),
                ((0, 1), stage(1, 40.0, 20.0)),
            ]
            .into(),
        },
    );
    groups.insert(
        ("tiny".to_string(), "agg".to_string()),
        GroupProfile {
            m: measures(tiny_tasks / 10.0, tiny_tasks),
            jobs: 1,
            stages: [((0, 0), stage(2, tiny_tasks / 10.0, tiny_tasks))].into(),
        },
    );
    let mut props = BTreeMap::from([
        ("spark.app.id".to_string(), id.to_string()),
        ("spark.driver.port".to_string(), format!("4{}", id.len())),
        ("spark.executor.memory".to_string(), "1g".to_string()),
    ]);
    if let Some(v) = aqe {
        props.insert("spark.sql.adaptive.enabled".into(), v.into());
    }
    let mut totals = Measures::default();
    for g in groups.values() {
        totals.add(&g.m);
    }
    let plan = PlanSummary {
        joins: if aqe == Some("false") {
            [0, 1, 0, 0, 0, 0]
        } else {
            [1, 0, 0, 0, 0, 0]
        },
        fingerprint: if aqe == Some("false") { 2 } else { 1 },
        ..PlanSummary::default()
    };
    Profile {
        app_id: id.into(),
        app_name: "nightly".into(),
        spark_version: "4.1.1".into(),
        start_ms: Some(0),
        wall_seconds: Some(60.0 + totals.0[TASK_SECONDS] / 2.0),
        executors: Some(2),
        cores: Some(1),
        core_seconds: 200.0,
        totals,
        props: Some(props),
        groups,
        queries: [(
            ("load".to_string(), 0),
            QueryProfile {
                execution_id: 3,
                group: "etl".into(),
                plan: Some(plan),
                settings: BTreeMap::new(),
            },
        )]
        .into(),
        findings: BTreeMap::new(),
    }
}

#[test]
fn a_run_against_itself_changes_nothing() {
    let a = run("app-1", None, 14.0);
    let c = compare(&a, &a, baseline("app-1"), "t");
    assert!(c.unchanged, "{c:#?}");
    assert!(render::text(&c).contains("No change"));
}

#[test]
fn keys_that_always_differ_are_not_compared() {
    // Two runs differ in their id and port only.
    let (a, b) = (run("app-1", None, 14.0), run("app-22", None, 14.0));
    let c = compare(&b, &a, baseline("app-1"), "t");
    assert!(c.unchanged, "{:#?}", c.settings);
}

#[test]
fn adaptive_off_is_named_first_with_the_tasks_and_the_plan() {
    let a = run("app-1", None, 14.0);
    let b = run("app-2", Some("false"), 200.0);
    let mut b2 = b.clone();
    b2.props
        .as_mut()
        .unwrap()
        .insert("spark.ui.showConsoleProgress".into(), "true".into());
    let c = compare(&b2, &a, baseline("app-1"), "t");
    assert!(!c.unchanged);
    // The known setting first (its default stands for the baseline's unset value).
    let s = &c.settings[0];
    assert_eq!(s.key, "spark.sql.adaptive.enabled");
    assert_eq!(
        (s.baseline.as_deref(), s.run.as_deref()),
        (None, Some("false"))
    );
    assert_eq!(s.default.as_deref(), Some("true"));
    assert!(c
        .settings
        .iter()
        .any(|s| s.key == "spark.ui.showConsoleProgress" && !s.known));
    // The job group whose task count grew, by how much.
    let g = c.groups.iter().find(|g| g.job_group == "tiny").unwrap();
    assert_eq!((g.tasks.baseline, g.tasks.run), (14.0, 200.0));
    assert_eq!(c.ranked[0].job_group.as_deref(), Some("tiny"));
    assert!(
        c.groups.iter().all(|g| g.job_group != "etl"),
        "etl did not change"
    );
    // The plan change, a join strategy that flipped.
    assert_eq!(c.plans.len(), 1);
    assert_eq!(
        c.plans[0].changes,
        [
            "adaptive execution on -> off",
            "BroadcastHashJoin 1 -> 0",
            "SortMergeJoin 0 -> 1"
        ]
    );
    let t = render::text(&c);
    assert!(
        t.contains("spark.sql.adaptive.enabled (application): true (default) -> false"),
        "{t}"
    );
    assert!(t.contains("tasks 14 -> 200"), "{t}");
}

#[test]
fn groups_and_stages_on_one_side_are_listed_with_their_time() {
    let a = run("app-1", None, 14.0);
    let mut b = run("app-2", None, 14.0);
    let extra = b.groups[&("etl".to_string(), "load".to_string())].stages[&(0, 1)].clone();
    b.groups
        .get_mut(&("etl".to_string(), "load".to_string()))
        .unwrap()
        .stages
        .insert((0, 2), extra);
    b.groups.remove(&("tiny".to_string(), "agg".to_string()));
    let c = compare(&b, &a, baseline("app-1"), "t");
    assert!(c
        .added
        .iter()
        .any(|u| u.what == "stage" && u.task_seconds == 40.0));
    assert!(c
        .gone
        .iter()
        .any(|u| u.what == "job_group" && u.job_group == "tiny"));
    assert!(c.ranked.iter().any(|r| r.kind == "job_group_gone"));
}

#[test]
fn capacity_names_the_executors_and_cores_held() {
    let a = run("app-1", None, 14.0);
    let mut b = run("app-2", None, 14.0);
    b.executors = Some(1);
    b.core_seconds = 120.0;
    let c = compare(&b, &a, baseline("app-1"), "t");
    let m: Vec<&str> = c.capacity.iter().map(|m| m.measure.as_str()).collect();
    assert_eq!(m, ["executors", "core_seconds"]);
    assert!(render::text(&c).contains("Capacity: executors 2 -> 1"));
}

#[test]
fn the_median_baseline_takes_each_measure_apart_and_names_the_closest_run() {
    let runs: Vec<Profile> = [10.0, 14.0, 300.0]
        .iter()
        .enumerate()
        .map(|(i, t)| run(&format!("app-{i}"), None, *t))
        .collect();
    let (base, closest) = median_of(&runs);
    assert_eq!(closest, 1);
    let tiny = &base.groups[&("tiny".to_string(), "agg".to_string())];
    assert_eq!(tiny.m.0[TASKS], 14.0);
    // The same as the middle run: no change against it.
    let c = compare(&runs[1], &base, baseline("app-1"), "t");
    assert!(c.unchanged, "{c:#?}");
}

#[test]
fn the_median_is_the_middle_or_the_mean_of_the_middle_two() {
    assert_eq!(baseline::median(vec![3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(baseline::median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(baseline::median(vec![]), None);
}

/// The committed schema is the one the types generate: `UPDATE_SCHEMA=1 cargo test -p
/// spark-exporter-diagnose compare::` rewrites it.
#[test]
fn the_committed_comparison_schema_is_generated_from_the_types() {
    crate::report::check_schema(COMPARE_SCHEMA_PATH, &schema(), "compare");
}

/// The list of keys left out, in docs/diagnose.md, is generated from [`diff::ALWAYS_DIFFER`]
/// (`UPDATE_DOCS=1 cargo test -p spark-exporter-diagnose compare::` rewrites it).
#[test]
fn the_docs_list_the_keys_that_always_differ() {
    let mut body = String::from("- exact keys: ");
    let keys: Vec<String> = diff::ALWAYS_DIFFER
        .iter()
        .map(|k| format!("`{k}`"))
        .collect();
    body.push_str(&keys.join(", "));
    body.push_str(";\n- keys ending in: ");
    let ends: Vec<String> = diff::ALWAYS_DIFFER_SUFFIXES
        .iter()
        .map(|k| format!("`{k}`"))
        .collect();
    body.push_str(&ends.join(", "));
    body.push_str(" (ports, hosts, submission ids, staging paths).\n");
    crate::rules::tests::check_doc("docs/diagnose.md", "compare-ignored", &body);
}

/// The schema's description of a measure names every measure compared ([`profile::MEASURES`]).
#[test]
fn the_schema_names_every_measure() {
    let s = schema().to_string();
    for (name, _, _) in profile::MEASURES {
        assert!(
            s.contains(&format!("`{name}`")),
            "{name} is not in MeasureDiff's doc"
        );
    }
}
