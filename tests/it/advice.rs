//! Advice (issue 50) on the advice fixture (`tests/data/advice-4.1.1`, a real PySpark 4.1.1 run
//! of `scripts/diagnosis_workload.py` written by `scripts/advice-fixture.sh`, with the executors'
//! peak memory recorded) and on the diagnosis fixture (without it):
//!
//! - 200 shuffle partitions of a few KB with adaptive execution off: the scheduler-delay finding
//!   names `spark.sql.adaptive.enabled` and the partition count, with the values the job group's
//!   session ran with;
//! - a join under a session threshold of -1: a threshold above the small side, naming -1; its
//!   broadcast twin gets none;
//! - GC pressure with the stage's peak heap recorded: `spark.executor.memory` from that peak
//!   (read here from Spark's own `SparkListenerStageExecutorMetrics`), never the recorders, which
//!   were on; without peaks (the diagnosis fixture): the recorders, never a memory value;
//! - one application's HTML page passes `tests/review_page.py --app` in headless Chromium: every
//!   finding and every suggestion drawn, a unit per chart.
//!
//! The re-run that checks the advice against Spark is `tests/advice_rerun.py`.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use spark_exporter::diagnose::advice::{spark::bytes, spark::mebibytes, Origin, Scope};
use spark_exporter::diagnose::report::{AppReport, Kind, Report};
use support::command::exporter_command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/advice-4.1.1")
}

fn log() -> String {
    fixture().join("eventlog").to_string_lossy().into_owned()
}

/// `diagnose --format json` of `log` with `config` (YAML) as its configuration file.
fn report(log: &str, config: &str) -> AppReport {
    let cfg = std::env::temp_dir().join(format!(
        "advice-{}-{}.yaml",
        std::process::id(),
        config.len()
    ));
    std::fs::write(&cfg, config).unwrap();
    let o = exporter_command(
        &[
            "diagnose",
            "--config.file",
            cfg.to_str().unwrap(),
            "--event-log",
            log,
            "--format",
            "json",
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", o.stderr);
    let mut r: Report = serde_json::from_str(&o.stdout).expect("a report");
    assert_eq!(r.applications.len(), 1);
    r.applications.remove(0)
}

/// Spark's own peak `JVMHeapMemory` of each stage over its executors (the driver left out).
fn recorded_heap_peaks() -> BTreeMap<u64, u64> {
    let dir = std::fs::read_dir(fixture().join("eventlog"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the rolling log");
    let mut out: BTreeMap<u64, u64> = BTreeMap::new();
    for e in support::eventlog::rolling_events(&dir) {
        if e["Event"] != "SparkListenerStageExecutorMetrics" || e["Executor ID"] == "driver" {
            continue;
        }
        let heap = e["Executor Metrics"]["JVMHeapMemory"].as_u64().unwrap_or(0);
        let s = out.entry(e["Stage ID"].as_u64().unwrap()).or_default();
        *s = (*s).max(heap);
    }
    out
}

/// Thresholds low enough for this short run's GC (0.6 to 0.8 s a stage).
const LOW_GC: &str = "diagnose:\n  gc_min: 500ms\n  min_cost: 250ms\n";

#[test]
fn tiny_partitions_joins_and_gc_get_the_setting_and_the_value() {
    let a = report(&log(), LOW_GC);
    let of = |k: Kind, g: &str| -> Vec<_> {
        a.findings
            .iter()
            .filter(|f| f.kind == k && f.at.job_group.as_deref() == Some(g))
            .collect()
    };

    // 200 tiny partitions, adaptive execution off for the group's queries.
    let tiny = of(Kind::SchedulerDelay, "tiny_partitions");
    assert_eq!(tiny.len(), 1, "{:#?}", a.findings);
    let s: BTreeMap<&str, _> = tiny[0]
        .suggestions
        .iter()
        .map(|s| (s.key.as_str(), s))
        .collect();
    let aqe = s["spark.sql.adaptive.enabled"];
    assert_eq!(
        (aqe.ran_with.as_deref(), aqe.to_try.as_str(), aqe.origin),
        (Some("false"), "true", Origin::SqlExecution)
    );
    let parts = s["spark.sql.shuffle.partitions"];
    assert_eq!(parts.ran_with.as_deref(), Some("200"));
    let to: u64 = parts.to_try.parse().unwrap();
    assert!((1..200).contains(&to), "{parts:?}");
    assert!(tiny[0]
        .suggestions
        .iter()
        .all(|s| s.scope == Scope::JobGroup && s.job_group.as_deref() == Some("tiny_partitions")));

    // The join under -1; not its broadcast twin.
    let smj = of(Kind::JoinStrategy, "join_smj");
    assert_eq!(smj.len(), 1, "{:#?}", a.findings);
    let t = &smj[0].suggestions[0];
    assert_eq!(t.key, "spark.sql.autoBroadcastJoinThreshold");
    assert_eq!(t.ran_with.as_deref(), Some("-1"));
    assert!(bytes(&t.to_try).unwrap() as f64 > smj[0].numbers["smallest_shuffle_write_bytes"]);
    assert!(of(Kind::JoinStrategy, "join_broadcast").is_empty());

    // GC: a memory value from the recorded peak where it came within half of the 512m heap;
    // the recorders were on, so never them.
    let peaks = recorded_heap_peaks();
    let gc = of(Kind::GcPressure, "gc_pressure");
    assert!(!gc.is_empty(), "{:#?}", a.findings);
    let mut sized = 0;
    for f in &gc {
        let stage = f.at.stage_id.unwrap();
        let peak = peaks.get(&stage).copied().unwrap_or(0);
        assert!(
            f.suggestions
                .iter()
                .all(|s| !s.key.starts_with("spark.eventLog")
                    && !s.key.starts_with("spark.executor.processTree")),
            "{f:#?}"
        );
        match f
            .suggestions
            .iter()
            .find(|s| s.key == "spark.executor.memory")
        {
            Some(m) => {
                sized += 1;
                assert!(peak * 2 >= 512 << 20, "stage {stage}: peak {peak}");
                assert_eq!(
                    (m.ran_with.as_deref(), m.origin),
                    (Some("512m"), Origin::Application)
                );
                assert!(mebibytes(&m.to_try).unwrap() as u64 >= 2 * peak, "{m:?}");
                assert_eq!(m.scope, Scope::Application);
            }
            None => assert!(peak * 2 < 512 << 20, "stage {stage}: peak {peak}: {f:#?}"),
        }
    }
    assert!(sized > 0, "{gc:#?}");
    assert!(a
        .settings
        .iter()
        .any(|s| s.key == "spark.executor.memory" && s.scope == Scope::Application));
}

/// Without recorded peaks, GC findings suggest the recorders and never a memory value.
#[test]
fn without_recorded_peaks_gc_gets_the_recorders_never_a_memory_value() {
    let d = support::diagnosis::event_log(&support::diagnosis::app_id("diagnosis"));
    let a = report(&d.to_string_lossy(), LOW_GC);
    let gc: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.kind == Kind::GcPressure)
        .collect();
    assert!(!gc.is_empty());
    for f in gc {
        let keys: Vec<&str> = f.suggestions.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "spark.eventLog.logStageExecutorMetrics",
                "spark.executor.processTreeMetrics.enabled"
            ],
            "{f:#?}"
        );
        assert!(f
            .suggestions
            .iter()
            .all(|s| s.ran_with.as_deref() == Some("false") && s.origin == Origin::SparkDefault));
    }
}

/// One application's page in headless Chromium: every finding and suggestion drawn, each
/// chart of one unit; the idle application's cost is charted in core-seconds.
#[test]
fn one_applications_page_draws_its_findings_and_suggestions() {
    let a = report(&log(), LOW_GC);
    let suggestions: usize = a.findings.iter().map(|f| f.suggestions.len()).sum();
    let page = std::env::temp_dir().join(format!("advice-page-{}.html", std::process::id()));
    let cfg = std::env::temp_dir().join(format!("advice-page-{}.yaml", std::process::id()));
    std::fs::write(&cfg, LOW_GC).unwrap();
    let html = exporter_command(
        &[
            "diagnose",
            "--config.file",
            cfg.to_str().unwrap(),
            "--event-log",
            &log(),
            "--format",
            "html",
        ],
        Duration::from_secs(120),
    );
    assert!(html.status.success(), "{}", html.stderr);
    assert!(html
        .stdout
        .contains("spark.conf.set(&quot;spark.sql.adaptive.enabled"));
    std::fs::write(&page, &html.stdout).unwrap();
    let idle = support::diagnosis::event_log(&support::diagnosis::app_id("diagnosis-idle"));
    let idle = exporter_command(
        &[
            "diagnose",
            "--event-log",
            idle.to_str().unwrap(),
            "--format",
            "html",
        ],
        Duration::from_secs(120),
    );
    assert!(idle.status.success(), "{}", idle.stderr);
    assert!(
        idle.stdout
            .contains("data-chart=\"cost-by-kind\" data-unit=\"core-seconds\""),
        "{}",
        idle.stdout
    );
    if support::spark::which("chromium").is_none() {
        support::spark::skip_unless_required("the application page: no chromium on PATH");
        return;
    }
    let (ok, out) = support::spark::check_page(
        &page,
        &[
            "--app",
            "--what-if",
            "--findings",
            &a.findings.len().to_string(),
            "--settings",
            &suggestions.to_string(),
        ],
    );
    assert!(ok, "{out}");
    let _ = std::fs::remove_file(&page);
    let _ = std::fs::remove_file(&cfg);
}
