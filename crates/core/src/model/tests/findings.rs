//! Findings as the model counts them (`findings.rs`): each stage attempt's once, an
//! application's end findings once, the window replaced, a summary that waits for the end
//! findings, and a name's series summing its runs'.

use std::sync::Arc;
use std::time::Duration;

use crate::model::findings::{FindingKey, Found};
use crate::model::testkit::*;

fn key(kind: &str, group: &str) -> FindingKey {
    FindingKey {
        kind: Arc::from(kind),
        job_group: Arc::from(group),
        job_description: Arc::from(if group.is_empty() { "" } else { "d" }),
        query: Arc::from(""),
    }
}

fn found(kind: &str, group: &str, cost: f64) -> Found {
    (key(kind, group), cost)
}

/// A run of `name` with one complete stage in group `g`, ended and delivered at `end`.
fn ended_run(m: &TestModel, id: &str, name: &str, end: i64) {
    let o = m.log();
    o.upsert_app(&app(id).name(name).started(end - 10_000));
    o.upsert_job(
        id,
        &job(0)
            .group("g")
            .desc("d")
            .stages([0])
            .submitted(end - 9_000),
    );
    o.upsert_stage(id, &stage(0).tasks(1).submitted(end - 9_000));
    o.upsert_stage(
        id,
        &stage(0)
            .status(crate::model::StageStatus::Complete)
            .ended_at(end - 1_000),
    );
    o.upsert_app(&app(id).ended_at(end).exit(0));
    o.app_delivered(id);
}

/// `(findings, cost)` of `kind` in `group` as the model holds them for `key`.
fn total(m: &TestModel, key_: &str, kind: &str, group: &str) -> (u64, f64) {
    m.view(|v| {
        let a = v.app(key_).expect("app");
        a.findings()
            .total()
            .get(&key(kind, group))
            .map_or((0, 0.0), |t| (t.findings, t.cost_seconds))
    })
}

#[test]
fn each_stage_attempt_and_each_end_counts_once_and_the_summary_waits_for_the_end() {
    let m = TestModel::with(|s| s.model.summary_after = Duration::ZERO);
    m.model.keep_settled_stages();
    ended_run(&m, "a", "n", T0);
    let settled = m.model.take_settled_stages();
    assert_eq!(settled.len(), 1, "{settled:?}");
    let (k, d) = &settled[0];
    // A stage attempt counted twice (settled, then held at the end) counts once.
    m.model
        .count_stage_findings(k, d, vec![found("skew", "g", 2.5)]);
    m.model
        .count_stage_findings(k, d, vec![found("skew", "g", 2.5)]);
    assert_eq!(total(&m, "a", "skew", "g"), (1, 2.5));
    // Ended and delivered: due, and its detail stays until the end findings are counted.
    assert_eq!(m.model.open_findings(), vec![("a".to_string(), true)]);
    assert!(
        !m.view(|v| v.startup_complete()),
        "an end due: start-up not complete"
    );
    m.model.expire(m.now_ms());
    assert!(m.view(|v| v.app("a").expect("app").stage_details().len()) == 1);
    let held = vec![(d.clone(), vec![found("skew", "g", 2.5)])];
    m.model.close_findings(
        "a",
        held,
        vec![found("idle_cores", "", 7.0)],
        vec![found("locality", "g", 0.0)],
    );
    m.model
        .close_findings("a", vec![], vec![found("idle_cores", "", 7.0)], vec![]);
    assert_eq!(
        total(&m, "a", "skew", "g"),
        (1, 2.5),
        "the held stage was counted already"
    );
    assert_eq!(total(&m, "a", "idle_cores", ""), (1, 7.0));
    // Closed: the window stays at its last evaluation, and the summary went ahead.
    m.model.set_window_findings("a", vec![]);
    m.view(|v| {
        let a = v.app("a").expect("app");
        assert_eq!(a.findings().window().len(), 1);
        assert!(a
            .findings()
            .digest()
            .contains_key(&(Arc::from("g"), Arc::from("d"))));
        assert!(a.stage_details().is_empty(), "summarised once closed");
    });
    assert!(m.model.open_findings().is_empty());
    assert!(m.view(|v| v.startup_complete()));
}

#[test]
fn a_names_findings_sum_its_runs() {
    let m = TestModel::with(|s| {
        s.model.aggregate_by = crate::config::AggregateBy::AppName;
    });
    m.model.keep_settled_stages();
    let t = m.advance(1_000);
    for id in ["r1", "r2"] {
        ended_run(&m, id, "daily", t);
        m.model
            .close_findings(id, vec![], vec![found("idle_cores", "", 1.5)], vec![]);
    }
    let names: Vec<(u64, f64)> = m.view(|v| {
        let n = v.by_name().expect("name mode");
        n.views()
            .map(|a| {
                let t = a.findings().total()[&key("idle_cores", "")];
                (t.findings, t.cost_seconds)
            })
            .collect()
    });
    assert_eq!(names, vec![(2, 3.0)]);
}
