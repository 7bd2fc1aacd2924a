//! Advice on findings made by hand, over configurations made by hand.

use std::collections::BTreeMap;

use super::*;
use crate::report::{AppReport, Finding};
use crate::report::{Kind, Place};

fn finding(kind: Kind, group: &str, numbers: &[(&str, f64)]) -> Finding {
    Finding {
        kind,
        title: "t".into(),
        cost_seconds: 1.0,
        at: Place {
            job_group: Some(group.into()),
            ..Place::default()
        },
        numbers: numbers.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        remedy: "r".into(),
        url: None,
        suggestions: vec![],
        code: vec![],
    }
}

fn props(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn advice(f: &Finding, run: &RunConf) -> Advice {
    super::kinds::advise(&Cx { run, finding: f })
}

#[test]
fn every_kind_has_its_advice_listed() {
    let listed: Vec<Kind> = advised_kinds().iter().map(|(k, _)| *k).collect();
    for k in Kind::ALL {
        assert!(listed.contains(&k), "{k:?} has no advice entry");
    }
}

/// A join under a threshold of -1 set by the job group's session: a threshold above the small
/// side, naming -1 and the execution it came from; with the threshold already above it, a
/// `broadcast()` hint, as code.
#[test]
fn a_join_gets_a_threshold_above_its_small_side_or_a_hint() {
    let mut f = finding(
        Kind::JoinStrategy,
        "join_smj",
        &[("smallest_shuffle_write_bytes", 5.0 * 1024.0 * 1024.0)],
    );
    f.at.execution_id = Some(3);
    let mut run = RunConf {
        app: Some(props(&[])),
        ..RunConf::default()
    };
    run.sql
        .insert(3, props(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]));
    let a = advice(&f, &run);
    assert_eq!(a.settings.len(), 1, "{a:?}");
    let s = &a.settings[0];
    assert_eq!(s.key, "spark.sql.autoBroadcastJoinThreshold");
    assert_eq!(s.ran_with.as_deref(), Some("-1"));
    assert_eq!((s.origin, s.execution_id), (Origin::SqlExecution, Some(3)));
    assert_eq!(s.to_try, "16MB");
    assert!(spark::bytes(&s.to_try).unwrap() > 5 << 20);
    assert_eq!(
        (s.scope, s.job_group.as_deref()),
        (Scope::JobGroup, Some("join_smj"))
    );
    assert!(a.code.is_empty());
    // The default 10 MB is above 5 MB already: a hint.
    run.sql.clear();
    let a = advice(&f, &run);
    assert!(a.settings.is_empty(), "{a:?}");
    assert!(a.code[0].change.contains("broadcast("), "{a:?}");
    // Adaptive execution off in the application: on, and the basis says estimates decide.
    run.app = Some(props(&[("spark.sql.adaptive.enabled", "false")]));
    let a = advice(&f, &run);
    assert_eq!(a.settings[0].key, "spark.sql.adaptive.enabled");
    assert_eq!(a.settings[0].origin, Origin::Application);
    assert!(a.settings[0].basis.contains("estimate"), "{a:?}");
}

#[test]
fn lowered_spill_thresholds_go_back_to_spark_s_default() {
    let mut f = finding(
        Kind::Spill,
        "window_spill",
        &[("memory_spilled_bytes", 1e8), ("shuffle_read_bytes", 1e7)],
    );
    f.at.stage_id = Some(9);
    let mut run = RunConf::default();
    run.stage_execution.insert(9, 8);
    run.sql.insert(
        8,
        props(&[("spark.sql.windowExec.buffer.spill.threshold", "40000")]),
    );
    let a = advice(&f, &run);
    assert_eq!(a.settings.len(), 1, "{a:?}");
    assert_eq!(
        a.settings[0].key,
        "spark.sql.windowExec.buffer.spill.threshold"
    );
    assert_eq!(a.settings[0].ran_with.as_deref(), Some("40000"));
    assert_eq!(a.settings[0].to_try, "2147483647");
    // Not lowered: smaller partitions, adaptive execution's advisory size (default 64 MB) over
    // 16 (1 + 1e8 / 1e7 = 11, the next power of two).
    run.sql.clear();
    let a = advice(&f, &run);
    assert_eq!(
        a.settings[0].key,
        "spark.sql.adaptive.advisoryPartitionSizeInBytes"
    );
    assert_eq!(a.settings[0].to_try, "4MB");
    assert_eq!(a.settings[0].origin, Origin::Assumed);
}

/// Adaptive execution off for one query of 200 tiny partitions: on, and fewer partitions, with
/// the values the run had.
#[test]
fn tiny_tasks_get_adaptive_execution_and_fewer_partitions() {
    let f = finding(Kind::SchedulerDelay, "tiny", &[("ratio", 0.5)]);
    let mut run = RunConf {
        app: Some(props(&[])),
        ..RunConf::default()
    };
    run.group_executions.insert("tiny".into(), [4].into());
    run.sql
        .insert(4, props(&[("spark.sql.adaptive.enabled", "false")]));
    let a = advice(&f, &run);
    let keys: Vec<(&str, Option<&str>, &str)> = a
        .settings
        .iter()
        .map(|s| (&*s.key, s.ran_with.as_deref(), &*s.to_try))
        .collect();
    assert_eq!(
        keys,
        [
            ("spark.sql.adaptive.enabled", Some("false"), "true"),
            ("spark.sql.shuffle.partitions", Some("200"), "20"),
        ]
    );
}

/// Two findings of one group want two thresholds: one value, the greater, shown on both; the
/// application-wide block says it once.
#[test]
fn one_value_per_property_per_scope() {
    let run = RunConf {
        app: Some(props(&[("spark.sql.autoBroadcastJoinThreshold", "-1")])),
        ..RunConf::default()
    };
    let small = finding(
        Kind::JoinStrategy,
        "g",
        &[("smallest_shuffle_write_bytes", 1e6)],
    );
    let big = finding(
        Kind::JoinStrategy,
        "g",
        &[("smallest_shuffle_write_bytes", 4e7)],
    );
    let idle = finding(Kind::IdleCores, "", &[("core_utilization", 0.3)]);
    let mut app = AppReport {
        app_id: "a".into(),
        app_name: "n".into(),
        spark_version: "4.1.1".into(),
        start_ms: None,
        end_ms: None,
        summary: crate::report::Summary::default(),
        bottlenecks: vec![],
        findings: vec![small, big, idle],
        settings: vec![],
        group_times: vec![],
        notes: vec![],
    };
    advise(&mut app, &run);
    let thresholds: Vec<&SettingChange> = app
        .settings
        .iter()
        .filter(|s| s.key == "spark.sql.autoBroadcastJoinThreshold")
        .collect();
    assert_eq!(thresholds.len(), 1, "{:?}", app.settings);
    assert_eq!(thresholds[0].to_try, "128MB");
    assert_eq!(thresholds[0].findings, [0, 1]);
    assert_eq!(app.findings[0].suggestions[0].to_try, "128MB");
    let block = paste_block(&app);
    assert!(
        block.contains("--conf spark.dynamicAllocation.enabled=true"),
        "{block}"
    );
    assert!(
        block.contains("\"spark.dynamicAllocation.enabled\": \"true\""),
        "{block}"
    );
    assert!(
        block.contains("spark.conf.set(\"spark.sql.autoBroadcastJoinThreshold\", \"128MB\")"),
        "{block}"
    );
}
