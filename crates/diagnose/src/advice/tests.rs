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
    super::kinds::advise(&Cx {
        run,
        finding: f,
        what_if: None,
    })
}

/// The advice tables of docs/diagnose.md are generated (`UPDATE_DOCS=1 cargo test -p
/// spark-exporter-diagnose` rewrites them).
#[test]
fn the_advice_tables_of_the_docs_are_generated() {
    let (kinds, settings) = doc_tables();
    crate::rules::tests::check_doc("docs/diagnose.md", "advice-kinds", &kinds);
    crate::rules::tests::check_doc("docs/diagnose.md", "advice-settings", &settings);
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
        what_if: None,
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

/// Values Spark would reject, a bare number and a log without an environment event: each
/// suggestion says what the run had and what was assumed; nothing panics.
#[test]
fn bad_values_and_a_missing_environment_say_what_was_assumed() {
    let mut f = finding(
        Kind::JoinStrategy,
        "g",
        &[("smallest_shuffle_write_bytes", 1000.0)],
    );
    // Rejected: the suggestion is made, naming the value the run had.
    let run = RunConf {
        app: Some(props(&[("spark.sql.autoBroadcastJoinThreshold", "ten")])),
        ..RunConf::default()
    };
    let a = advice(&f, &run);
    assert_eq!(a.settings[0].ran_with.as_deref(), Some("ten"));
    assert_eq!(a.settings[0].origin, Origin::Application);
    // A bare number is bytes, as Spark reads it: 1 MiB is above the side's 1,000 bytes.
    let run = RunConf {
        app: Some(props(&[(
            "spark.sql.autoBroadcastJoinThreshold",
            "1048576",
        )])),
        ..RunConf::default()
    };
    let a = advice(&f, &run);
    assert!(a.settings.is_empty(), "{a:?}");
    assert_eq!(a.code.len(), 1);
    // No environment event: Spark's default, said to be assumed.
    f.numbers
        .insert("smallest_shuffle_write_bytes".into(), 50e6);
    let a = advice(&f, &RunConf::default());
    assert_eq!(a.settings[0].origin, Origin::Assumed);
    assert_eq!(a.settings[0].ran_with.as_deref(), Some("10MB"));
    // A heap Spark would not read: its default assumed, in words.
    let mut gc = finding(Kind::GcPressure, "g", &[]);
    gc.at.stage_id = Some(4);
    let mut run = RunConf {
        app: Some(props(&[("spark.executor.memory", "lots")])),
        ..RunConf::default()
    };
    run.stage_peaks.insert(
        4,
        Peaks {
            jvm_heap: 900 << 20,
            process_rss: 0,
        },
    );
    let a = advice(&gc, &run);
    assert_eq!(a.settings[0].key, "spark.executor.memory");
    assert!(
        a.settings[0].basis.contains("\"lots\" is not a size"),
        "{a:?}"
    );
}

/// GC pressure: a recorded peak near the heap gives a heap twice the peak; a low one, code; no
/// peak (or one sampled to 0), the recorders where they were off.
#[test]
fn gc_sizes_the_heap_from_a_recorded_peak_only() {
    let mut gc = finding(Kind::GcPressure, "g", &[]);
    gc.at.stage_id = Some(7);
    let mut run = RunConf {
        app: Some(props(&[("spark.executor.memory", "2g")])),
        ..RunConf::default()
    };
    let keys = |a: &Advice| a.settings.iter().map(|s| s.key.clone()).collect::<Vec<_>>();
    assert_eq!(
        keys(&advice(&gc, &run)),
        [
            "spark.eventLog.logStageExecutorMetrics",
            "spark.executor.processTreeMetrics.enabled"
        ]
    );
    run.stage_peaks.insert(
        7,
        Peaks {
            jvm_heap: 1800 << 20,
            process_rss: 0,
        },
    );
    let a = advice(&gc, &run);
    assert_eq!(keys(&a), ["spark.executor.memory"]);
    assert_eq!(a.settings[0].to_try, "3712m");
    assert_eq!(a.settings[0].ran_with.as_deref(), Some("2g"));
    run.stage_peaks.insert(
        7,
        Peaks {
            jvm_heap: 300 << 20,
            process_rss: 0,
        },
    );
    let a = advice(&gc, &run);
    assert!(a.settings.is_empty() && a.code.len() == 1, "{a:?}");
    // Recorders on, peak sampled to 0: nothing to say about memory.
    let run = RunConf {
        app: Some(props(&[
            ("spark.eventLog.logStageExecutorMetrics", "true"),
            ("spark.executor.processTreeMetrics.enabled", "true"),
        ])),
        ..RunConf::default()
    };
    assert_eq!(advice(&gc, &run), Advice::default());
}

/// Executors that exited, with their processes' peak memory recorded: an overhead above what
/// they held beyond the heap; without exits or peaks, the recorders.
#[test]
fn lost_executors_get_an_overhead_from_their_peak_process_memory() {
    let lost = finding(
        Kind::ExecutorLoss,
        "",
        &[("executors_lost", 2.0), ("removed_exited", 2.0)],
    );
    let mut run = RunConf {
        app: Some(props(&[("spark.executor.memory", "1g")])),
        ..RunConf::default()
    };
    run.executor_peaks.insert(
        "1".into(),
        Peaks {
            jvm_heap: 0,
            process_rss: 2 << 30,
        },
    );
    let a = advice(&lost, &run);
    assert_eq!(a.settings.len(), 1, "{a:?}");
    assert_eq!(a.settings[0].key, "spark.executor.memoryOverhead");
    assert_eq!(a.settings[0].to_try, "1536m");
    assert_eq!(a.settings[0].ran_with, None);
    run.executor_peaks.clear();
    let a = advice(&lost, &run);
    assert_eq!(a.settings[0].key, "spark.eventLog.logStageExecutorMetrics");
}

/// A skewed stage gets adaptive skew-join settings only when its query joined by shuffle: an
/// aggregation's skew (or the executors' slow first tasks) is not what the skew join splits.
#[test]
fn skew_gets_skew_join_settings_only_where_its_query_joined_by_shuffle() {
    let mut f = finding(Kind::Skew, "g", &[("skew_ratio", 6.0)]);
    f.at.execution_id = Some(4);
    let mut run = RunConf {
        app: Some(props(&[])),
        ..RunConf::default()
    };
    run.shuffled_joins.insert(4, 0);
    let a = advice(&f, &run);
    assert!(a.settings.is_empty(), "{a:?}");
    assert_eq!(a.code.len(), 1, "{a:?}");

    run.shuffled_joins.insert(4, 1);
    let a = advice(&f, &run);
    assert_eq!(a.settings.len(), 1, "{a:?}");
    assert_eq!(
        a.settings[0].key,
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor"
    );
    assert_eq!(a.settings[0].to_try, "4.0");

    run.app = Some(props(&[("spark.sql.adaptive.enabled", "false")]));
    let a = advice(&f, &run);
    assert_eq!(a.settings[0].key, "spark.sql.adaptive.enabled", "{a:?}");
}
