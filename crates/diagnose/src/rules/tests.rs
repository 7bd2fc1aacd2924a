//! The built-in registry: the kinds as v1 names them, their levels and costs, the threshold keys
//! the rules name against the configuration's declarations, and the generated table of
//! `docs/diagnose.md`.

use spark_exporter_core::config::key::Set;
use spark_exporter_core::config::keys;

use super::*;

/// The kinds v1 shipped, in the procedure's order, each with what a report, `--fail-on` and the
/// metrics rely on: its level and whether it has a cost. Frozen: a kind of v1 keeps its name,
/// level and cost; a new rule adds a kind without an edit here (the registry makes the lists).
const V1: [(&str, Level, bool); 11] = [
    ("skew", Level::Stage, true),
    ("spill", Level::Stage, true),
    ("gc_pressure", Level::Stage, true),
    ("executor_loss", Level::End, true),
    ("join_strategy", Level::End, true),
    ("plan_change", Level::End, false),
    ("partial_cache", Level::End, false),
    ("locality", Level::Window, false),
    ("scheduler_delay", Level::Window, true),
    ("streaming_trigger", Level::Window, false),
    ("idle_cores", Level::End, true),
];

/// CamelCase as snake_case: what `#[serde(rename_all = "snake_case")]` made of a variant.
fn snake(camel: &str) -> String {
    let mut s = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

#[test]
fn kinds_are_v1s_and_serialize_as_before() {
    // Every v1 kind is still there, in its order among the others.
    let ids: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    let v1: Vec<&str> = V1.iter().map(|(id, _, _)| *id).collect();
    let kept: Vec<&str> = ids.iter().copied().filter(|id| v1.contains(id)).collect();
    assert_eq!(kept, v1, "a v1 kind was removed, renamed or moved");
    for k in Kind::ALL {
        assert_eq!(k.as_str(), snake(&format!("{k:?}")), "{k:?}");
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, format!("\"{}\"", k.as_str()));
        assert_eq!(serde_json::from_str::<Kind>(&json).unwrap(), k);
        assert_eq!(Kind::parse(k.as_str()), Some(k));
    }
    assert_eq!(Kind::parse("nope"), None);
    let e = serde_json::from_str::<Kind>("\"nope\"")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown variant `nope`, expected one of `skew`"),
        "{e}"
    );
    assert!(Kind::ALL.windows(2).all(|w| w[0] < w[1]), "ordered as ALL");
}

#[test]
fn levels_and_costs() {
    for (id, level, cost) in V1 {
        let k = Kind::parse(id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!((k.level(), k.has_cost()), (level, cost), "{id}");
    }
    // The metric lists are the registry's, split by level, in its order.
    let at = |window: bool| -> Vec<&str> {
        Kind::ALL
            .into_iter()
            .filter(|k| (k.level() == Level::Window) == window)
            .map(Kind::as_str)
            .collect()
    };
    assert_eq!(FINDING_KINDS, at(false));
    assert_eq!(WINDOW_FINDING_KINDS, at(true));
}

/// Every threshold a rule names is a declared `diagnose.*` threshold key (with its default and
/// documentation there), and every declared threshold is read by a rule, but `min_cost`, which
/// the procedure applies to every kind with a cost.
#[test]
fn every_threshold_a_rule_names_is_declared_and_back() {
    for k in Kind::ALL {
        for (name, key) in k.rule().threshold_keys() {
            let key = key.unwrap_or_else(|| panic!("{}: no threshold diagnose.{name}", k.as_str()));
            assert!(!key.doc.is_empty());
        }
    }
    let named: Vec<&str> = Kind::ALL
        .into_iter()
        .flat_map(|k| k.thresholds().iter().copied())
        .collect();
    for k in keys().filter(|k| matches!(k.set, Set::Threshold(_))) {
        let name = k.name.strip_prefix("diagnose.").unwrap();
        assert!(
            name == "min_cost" || named.contains(&name),
            "{} is read by no rule",
            k.name
        );
    }
    assert_eq!(Kind::Skew.thresholds(), ["skew_ratio", "skew_min_excess"]);
}

#[test]
fn every_rule_is_documented() {
    for k in Kind::ALL {
        let r = k.rule();
        for (what, s) in [
            ("step", r.step),
            ("scope", r.scope),
            ("when", r.when),
            ("cost", r.cost),
            ("unit", r.unit),
            ("sources", r.sources),
            ("remedy", r.remedy),
        ] {
            assert!(!s.trim().is_empty(), "{}: no {what}", r.id);
        }
        let row = doc_row(r);
        assert!(row.contains(&format!("| `{}` |", r.id)), "{row}");
        for t in r.thresholds {
            assert!(row.contains(&format!("`{t}` (")), "{row}");
        }
    }
}

/// Check (or, with `UPDATE_DOCS=1`, rewrite) the text between `name`'s markers in `file`.
pub(crate) fn check_doc(file: &str, name: &str, want: &str) {
    // The repository root, two levels above this crate.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(file);
    spark_exporter_core::docgen::check_section(
        &path,
        name,
        want,
        "cargo test -p spark-exporter-diagnose rules::tests",
    );
}

#[test]
fn diagnose_doc_table_is_generated_from_the_registry() {
    check_doc("docs/diagnose.md", "diagnose-rules", &doc_table::<Kind>());
}

/// `scripts/diagnosis-kinds.json`: the kinds as the alert and dashboard generators read them
/// (every kind, the window ones, and those whose findings have no job group), from the registry,
/// so a new rule needs no edit in the scripts.
#[test]
fn the_generators_kinds_file_is_generated_from_the_registry() {
    let ids = |keep: &dyn Fn(Kind) -> bool| -> Vec<&str> {
        Kind::ALL
            .into_iter()
            .filter(|k| keep(*k))
            .map(Kind::as_str)
            .collect()
    };
    let file = serde_json::json!({
        "generated": "from the diagnose rule registry by `UPDATE_DOCS=1 cargo test -p \
            spark-exporter-diagnose rules::tests`; do not edit",
        "kinds": ids(&|_| true),
        "window": ids(&|k| k.level() == Level::Window),
        "ungrouped": ids(&|k| !k.rule().grouped),
    });
    let body = serde_json::to_string_pretty(&file).unwrap() + "\n";
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/diagnosis-kinds.json");
    spark_exporter_core::docgen::check_file(
        &path,
        &body,
        "cargo test -p spark-exporter-diagnose rules::tests",
    );
}
