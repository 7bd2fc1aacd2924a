//! The diagnosis' rules and report as contracts (issue 35):
//!
//! - adding a rule is one file and one registry entry: a rule of this test's own
//!   ([`test_rule`], what a `rules/<id>.rs` holds) and the built-in registry with its entry
//!   (`builtin_rules! { TestRule => test_rule }`) make a kind that is in `Kind::ALL`, parses, has
//!   its row in the docs table, is counted at its level, and whose findings come out of the
//!   procedure beside the built-in ones, on the diagnosis fixture's real event log;
//! - the report's schema, generated from the report types, accepts exactly what v1 does: real
//!   reports, nulls where a place does not apply, fields v1 does not know (readers ignore them),
//!   a report without `read_errors`; and rejects the rest: a required field missing, a wrong
//!   type or value, a kind v1 does not have (this test's own among them). Python's `jsonschema`
//!   (the test venv's) validates.

use crate::support;

use std::sync::Arc;

use serde_json::{json, Value};
use spark_exporter::config::Settings;
use spark_exporter::diagnose::links::Links;
use spark_exporter::diagnose::report::{AppReport, Report, SCHEMA_PATH};
use spark_exporter::diagnose::rules::{self, doc_table, kind_schema, Level, Procedure};
use spark_exporter::diagnose::{diagnose, Request};
use spark_exporter::model::details::StageDetail;
use spark_exporter::model::Model;
use spark_exporter::telemetry::Telemetry;
use support::diagnosis::{app_id, event_log};

/// A rule of the test's own, whole: what its file `rules/test_rule.rs` would hold.
mod test_rule {
    use spark_exporter::config::Thresholds;
    use spark_exporter::diagnose::rules::{numbers, secs, Cx, Draft, Find, Rule, TASK_SECONDS};
    use spark_exporter::model::details::StageDetail;

    /// The rule.
    pub const RULE: Rule = Rule {
        id: "test_rule",
        step: "A test's own",
        scope: "a stage",
        when: "a stage ran ≥ 1 s of tasks",
        cost: "its task time",
        has_cost: true,
        grouped: true,
        unit: TASK_SECONDS,
        sources: "both",
        thresholds: &[],
        remedy: "Nothing: a test's rule.",
        find: Find::Stage(find),
        notes: None,
    };

    /// Every stage attempt's task time (`min_cost` keeps those of 1 s and more).
    fn find(cx: &Cx<'_, '_>, s: &StageDetail, _: &Thresholds) -> Vec<Draft> {
        let task_s = secs(s.totals.run_time_ms);
        vec![cx.stage_draft(
            s,
            format!("Stage {} ran {task_s:.1} s of tasks", s.stage_id),
            task_s,
            numbers([("task_seconds", task_s)]),
        )]
    }
}

// The one registry entry: the built-in rules, then this test's.
spark_exporter_diagnose::builtin_rules! {
    /// A test's own rule.
    TestRule => test_rule,
}

#[test]
fn a_rule_is_one_file_and_one_registry_entry() {
    use spark_exporter::diagnose::report::Kind as Builtin;
    assert_eq!(Kind::ALL.len(), Builtin::ALL.len() + 1);
    for (k, b) in Kind::ALL.into_iter().zip(Builtin::ALL) {
        assert_eq!(k.as_str(), b.as_str());
        assert_eq!(k.has_cost(), b.has_cost());
        assert_eq!(k.level(), b.level());
    }
    let k = Kind::TestRule;
    assert_eq!(Kind::ALL.last(), Some(&k));
    assert_eq!(k.as_str(), "test_rule");
    assert_eq!(Kind::parse("test_rule"), Some(k));
    assert_eq!(Builtin::parse("test_rule"), None);
    assert_eq!(serde_json::to_value(k).unwrap(), json!("test_rule"));
    assert_eq!(
        serde_json::from_value::<Kind>(json!("test_rule")).unwrap(),
        k
    );
    assert!(k.has_cost());
    assert_eq!(k.level(), Level::Stage);
    assert!(k.thresholds().is_empty());
    // Counted with the stage kinds; the window kinds as they were.
    assert_eq!(FINDING_KINDS.last(), Some(&"test_rule"));
    assert_eq!(
        &FINDING_KINDS[..FINDING_KINDS.len() - 1],
        rules::FINDING_KINDS
    );
    assert_eq!(WINDOW_FINDING_KINDS, rules::WINDOW_FINDING_KINDS);
    // Its row in the docs table, after the built-in ones.
    let (builtin, mine) = (doc_table::<Builtin>(), doc_table::<Kind>());
    let row = "| A test's own | `test_rule` | a stage ran ≥ 1 s of tasks | its task time | none | \
        both |\n";
    assert_eq!(mine, builtin + row);
    // In the schema's enum of kinds.
    let ids = kind_schema::<Kind>().to_value()["enum"].clone();
    assert_eq!(ids.as_array().unwrap().last(), Some(&json!("test_rule")));
}

/// The diagnosis fixture's main application, as `diagnose` reads it: its view's stage details
/// and those that settled, then `f` on its view.
fn with_fixture_app<T>(
    f: impl FnOnce(&spark_exporter::model::view::AppView<'_>, &[StageDetail]) -> T,
) -> T {
    let settings = Settings::default();
    let model = Model::for_diagnosis(&settings, Arc::new(Telemetry::default()));
    let observer = model.observer(spark_exporter::sources::source("event_log"));
    let id = app_id("diagnosis");
    spark_exporter::sources::eventlog::ingest_paths(
        &[event_log(&id)],
        &settings,
        &observer,
        model.telemetry(),
    )
    .expect("read the log");
    model.flush_pending();
    let settled: Vec<StageDetail> = model
        .take_settled_stages()
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    model.view(|v| {
        let a = v.app(&id).expect("the application");
        let mut stages = a.stage_details();
        for d in settled {
            if !stages
                .iter()
                .any(|s| (s.stage_id, s.attempt) == (d.stage_id, d.attempt))
            {
                stages.push(d);
            }
        }
        stages.sort_by_key(|s| (s.stage_id, s.attempt));
        f(&a, &stages)
    })
}

#[tokio::test]
async fn its_findings_come_out_of_the_procedure() {
    let settings = Settings::default();
    let cfg = &settings.diagnose;
    let none = Links::none();
    let (builtin, mine, stages): (AppReport, AppReport<Kind>, Vec<StageDetail>) =
        with_fixture_app(|a, stages| {
            (
                rules::diagnose_app(a, stages, cfg, &none),
                Procedure::<Kind>::diagnose_app(a, stages, cfg, &none),
                stages.to_vec(),
            )
        });
    // The built-in registry gives what `diagnose` reports of the same log.
    let id = app_id("diagnosis");
    let req = Request {
        event_logs: vec![event_log(&id).to_string_lossy().into_owned()],
        ..Request::default()
    };
    let mut report = diagnose(&settings, &req).await.expect("diagnose");
    // `diagnose` adds the what-if (`whatif::predict`) and the advice (`advice::advise`) to
    // what the procedure found.
    for a in &mut report.applications {
        assert!(
            a.what_if.take().is_some(),
            "diagnose predicts other executor counts"
        );
        assert!(!a.settings.is_empty(), "diagnose gives advice");
        a.settings.clear();
        for f in &mut a.findings {
            f.suggestions.clear();
            f.code.clear();
        }
    }
    assert_eq!(report.applications, vec![builtin.clone()]);

    // Its findings: one per stage attempt of 1 s of tasks or more (min_cost), most costly
    // first among the rest.
    let (ours, rest): (Vec<_>, Vec<_>) =
        mine.findings.iter().partition(|f| f.kind == Kind::TestRule);
    let mut want: Vec<u64> = stages
        .iter()
        .filter(|s| s.totals.run_time_ms >= 1000)
        .map(|s| s.stage_id)
        .collect();
    let mut got: Vec<u64> = ours.iter().map(|f| f.at.stage_id.unwrap()).collect();
    assert!(!want.is_empty());
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(ours
        .iter()
        .all(|f| f.remedy == "Nothing: a test's rule." && f.cost_seconds >= 1.0));
    assert!(mine
        .findings
        .windows(2)
        .all(|w| w[0].cost_seconds >= w[1].cost_seconds));
    // And the built-in rules' findings are as the built-in registry gives them, in its order.
    assert_eq!(
        rest.iter()
            .map(|f| serde_json::to_value(f).unwrap())
            .collect::<Vec<_>>(),
        builtin
            .findings
            .iter()
            .map(|f| serde_json::to_value(f).unwrap())
            .collect::<Vec<_>>()
    );
    // The same counts per kind as metrics would key them.
    assert_eq!(
        rest.iter().map(|f| rules::counted(f)).collect::<Vec<_>>(),
        builtin
            .findings
            .iter()
            .map(rules::counted)
            .collect::<Vec<_>>()
    );
    // Its stage findings come out of the stage level too.
    let per_stage: usize = with_fixture_app(|a, stages| {
        stages
            .iter()
            .flat_map(|s| Procedure::<Kind>::stage_findings(a, s, cfg, &none))
            .filter(|f| f.kind == Kind::TestRule)
            .count()
    });
    assert_eq!(per_stage, want.len());
    // In JSON it is a finding like any other, of kind `test_rule`.
    let v = serde_json::to_value(ours[0]).unwrap();
    assert_eq!(v["kind"], "test_rule");
    assert_eq!(v["stage_id"], json!(ours[0].at.stage_id));
}

/// Whether the committed schema accepts each document (Python's `jsonschema`, one process for
/// all); `None` without the test venv.
fn verdicts(docs: &[Value]) -> Option<Vec<bool>> {
    let py = support::spark::python("diagnose schema contract")?;
    let schema = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_PATH);
    let code = "import json, sys, jsonschema\n\
                s = json.load(open(sys.argv[1]))\n\
                jsonschema.Draft202012Validator.check_schema(s)\n\
                v = jsonschema.Draft202012Validator(s)\n\
                print(json.dumps([v.is_valid(d) for d in json.load(sys.stdin)]))\n";
    let docs = serde_json::to_string(docs).unwrap();
    let out = support::spark::run_python(&py, code, &[schema.to_str().unwrap()], docs.as_bytes());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("verdicts"))
}

/// `doc` with `edit` applied.
fn edited(doc: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut d = doc.clone();
    edit(&mut d);
    d
}

/// Remove `field` from the object at `at` (a JSON pointer).
fn without(doc: &Value, at: &str, field: &str) -> Value {
    edited(doc, |d| {
        d.pointer_mut(at)
            .and_then(Value::as_object_mut)
            .expect(at)
            .remove(field)
            .expect(field);
    })
}

/// Set `at` (a JSON pointer) to `v`.
fn with(doc: &Value, at: &str, v: Value) -> Value {
    edited(doc, |d| *d.pointer_mut(at).expect(at) = v)
}

#[tokio::test]
async fn the_schema_accepts_what_v1_accepts_and_rejects_the_rest() {
    let id = app_id("diagnosis");
    let req = Request {
        event_logs: vec![event_log(&id).to_string_lossy().into_owned()],
        ..Request::default()
    };
    let report: Report = diagnose(&Settings::default(), &req)
        .await
        .expect("diagnose");
    let doc = serde_json::to_value(&report).unwrap();
    let app = &report.applications[0];
    let f = app
        .findings
        .iter()
        .position(|f| f.at.stage_id.is_some())
        .expect("a stage finding");
    assert!(!app.bottlenecks.is_empty());
    let fp = format!("/applications/0/findings/{f}");

    // With this test's rule, a report v1 does not describe.
    let mine: AppReport<Kind> = with_fixture_app(|a, stages| {
        Procedure::<Kind>::diagnose_app(a, stages, &Settings::default().diagnose, &Links::none())
    });
    let ours = serde_json::to_value(&mine).unwrap();
    assert!(ours["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "test_rule"));

    let (accepted, rejected) = (accepted(&doc, &fp), rejected(&doc, &fp, ours));
    let docs: Vec<Value> = accepted
        .iter()
        .chain(&rejected)
        .map(|(_, d)| d.clone())
        .collect();
    let Some(v) = verdicts(&docs) else { return };
    let mut wrong = vec![];
    for (i, (what, _)) in accepted.iter().enumerate() {
        if !v[i] {
            wrong.push(format!("rejected: {what}"));
        }
    }
    for (i, (what, _)) in rejected.iter().enumerate() {
        if v[accepted.len() + i] {
            wrong.push(format!("accepted: {what}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// What v1 accepts: the real report `doc` and forms of it (`fp`: the pointer of one of its
/// stages' findings).
fn accepted(doc: &Value, fp: &str) -> Vec<(&'static str, Value)> {
    let f = |field: &str| format!("{fp}/{field}");
    vec![
        ("the report", doc.clone()),
        (
            "a field v1 does not know, at the top",
            edited(doc, |d| d["extra"] = json!({"a": 1})),
        ),
        (
            "fields v1 does not know, in an application and a finding",
            edited(doc, |d| {
                d["applications"][0]["new_field"] = json!([1, 2]);
                d.pointer_mut(fp).unwrap()["new_field"] = json!("x");
                d["source"]["new_field"] = json!(true);
            }),
        ),
        ("no read_errors", without(doc, "/source", "read_errors")),
        (
            "nulls where a place does not apply",
            edited(doc, |d| {
                let f = d.pointer_mut(fp).unwrap();
                for k in [
                    "job_group",
                    "description",
                    "stage_id",
                    "stage_attempt",
                    "stage_name",
                    "execution_id",
                    "query",
                    "subject",
                    "url",
                ] {
                    f[k] = Value::Null;
                }
                let a = &mut d["applications"][0];
                a["start_ms"] = Value::Null;
                a["end_ms"] = Value::Null;
                a["summary"]["core_utilization"] = Value::Null;
                a["bottlenecks"][0]["duration_seconds"] = Value::Null;
            }),
        ),
        ("a REST source", with(doc, "/source/kind", json!("rest"))),
        ("no application", with(doc, "/applications", json!([]))),
        (
            "a share a rounding over 1",
            with(doc, "/applications/0/bottlenecks/0/share", json!(1.0000005)),
        ),
        ("an integer cost", with(doc, &f("cost_seconds"), json!(3))),
    ]
}

/// What v1 rejects: forms of the real report `doc` (`fp`: the pointer of one of its stages'
/// findings; `ours`: an application with this test's kind).
fn rejected(doc: &Value, fp: &str, ours: Value) -> Vec<(&'static str, Value)> {
    let f = |field: &str| format!("{fp}/{field}");
    let app = |field: &str| format!("/applications/0/{field}");
    vec![
        ("no schema_version", without(doc, "", "schema_version")),
        ("schema_version 2", with(doc, "/schema_version", json!(2))),
        (
            "another generator",
            with(doc, "/generator", json!("other 1")),
        ),
        ("no source", without(doc, "", "source")),
        (
            "an unknown source kind",
            with(doc, "/source/kind", json!("kafka")),
        ),
        ("no inputs", with(doc, "/source/inputs", json!([]))),
        (
            "negative read_errors",
            with(doc, "/source/read_errors", json!(-1)),
        ),
        ("no applications", without(doc, "", "applications")),
        ("an empty app_id", with(doc, &app("app_id"), json!(""))),
        ("no end_ms", without(doc, "/applications/0", "end_ms")),
        (
            "a string start_ms",
            with(doc, &app("start_ms"), json!("now")),
        ),
        (
            "no summary field",
            without(doc, &app("summary"), "core_utilization"),
        ),
        (
            "negative task_seconds",
            with(doc, &app("summary/task_seconds"), json!(-1.0)),
        ),
        (
            "fractional jobs",
            with(doc, &app("summary/jobs"), json!(1.5)),
        ),
        (
            "six bottlenecks",
            edited(doc, |d| {
                let b = d["applications"][0]["bottlenecks"][0].clone();
                d["applications"][0]["bottlenecks"] = Value::Array(vec![b; 6]);
            }),
        ),
        (
            "a share over 1",
            with(doc, &app("bottlenecks/0/share"), json!(1.5)),
        ),
        (
            "a bottleneck without its place",
            without(doc, &app("bottlenecks/0"), "stage_name"),
        ),
        ("no findings", without(doc, "/applications/0", "findings")),
        ("a finding without url", without(doc, fp, "url")),
        ("a finding without query", without(doc, fp, "query")),
        ("an unknown kind", with(doc, &f("kind"), json!("nope"))),
        ("a kind in capitals", with(doc, &f("kind"), json!("Skew"))),
        ("a string cost", with(doc, &f("cost_seconds"), json!("1.0"))),
        (
            "a negative cost",
            with(doc, &f("cost_seconds"), json!(-0.5)),
        ),
        ("an empty title", with(doc, &f("title"), json!(""))),
        ("an empty remedy", with(doc, &f("remedy"), json!(""))),
        ("a negative stage id", with(doc, &f("stage_id"), json!(-1))),
        ("a text number", with(doc, &f("numbers"), json!({"a": "1"}))),
        (
            "this test's kind (not v1's)",
            with(doc, "/applications/0", ours),
        ),
    ]
}
