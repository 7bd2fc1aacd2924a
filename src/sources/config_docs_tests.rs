//! The configuration's reference, checked over every key (the core's and the sources'): the
//! tables of `docs/configuration.md` and `docs/otlp.md`, the Helm chart's schema, and the
//! declarations against the settings they fill (`UPDATE_DOCS=1 cargo test --lib
//! config_docs` rewrites the generated text).

use serde_json::Value;

use crate::config::docs::{default_rules_table, otlp_table, reference_table};
use crate::config::{from_value, keys, Settings};
use spark_exporter_core::docgen;

/// Check (or, with `UPDATE_DOCS=1`, rewrite) the text between `name`'s markers in `file`.
fn check(file: &str, name: &str, want: fn() -> String) {
    super::declare_config();
    let want = &want();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    docgen::check_section(&path, name, want, "cargo test --lib config_docs");
}

#[test]
fn configuration_doc_table_is_generated_from_the_declarations() {
    super::declare_config();
    check("docs/configuration.md", "config-keys", reference_table);
}

#[test]
fn default_rewrite_rules_are_documented_from_their_declaration() {
    super::declare_config();
    check(
        "docs/configuration.md",
        "default-rewrite-rules",
        default_rules_table,
    );
}

/// A key of a few words takes each of its `choices` and refuses another word.
#[test]
fn every_choice_parses_and_only_those() {
    super::declare_config();
    let mut any = 0;
    for k in keys() {
        let (Some(choices), crate::config::key::Set::One(set)) = (k.choices, k.set) else {
            continue;
        };
        any += 1;
        for c in choices {
            let mut s = Settings::defaults();
            assert_eq!(set(&mut s, c), Ok(()), "{}: {c}", k.name);
        }
        let mut s = Settings::defaults();
        assert!(set(&mut s, "nope").is_err(), "{}", k.name);
    }
    assert!(any >= 6);
}

/// The Helm chart's `values.schema.json` types the configuration's words from the keys'
/// `choices` (`UPDATE_DOCS=1` rewrites them), and types no other word list by hand under
/// `config`.
#[test]
fn the_chart_schema_types_the_keys_choices() {
    super::declare_config();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/helm/spark-exporter/values.schema.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let tree: Value = serde_json::from_str(&text).unwrap();
    let config = &tree["properties"]["config"]["properties"];
    let mut out = text.clone();
    let mut typed = vec![];
    for k in keys() {
        let Some(choices) = k.choices else { continue };
        let Some((section, field)) = k.name.split_once('.') else {
            continue;
        };
        let prop = &config[section]["properties"][field];
        if prop.is_null() {
            continue;
        }
        let attrs: Vec<&String> = prop.as_object().unwrap().keys().collect();
        assert!(
            attrs.iter().all(|a| *a == "enum" || *a == "type"),
            "{}: the chart types it with {attrs:?}; only `enum` is generated",
            k.name
        );
        typed.push(k.name);
        out = with_enum(&out, section, field, choices);
    }
    // No other word list under `config` is typed by hand.
    for (section, v) in config.as_object().unwrap() {
        for (field, p) in v["properties"].as_object().into_iter().flatten() {
            if p.get("enum").is_some() {
                let name = format!("{section}.{field}");
                assert!(
                    typed.contains(&name.as_str()),
                    "{name}: an enum typed by hand"
                );
            }
        }
    }
    docgen::check_file(&path, &out, "cargo test --lib config_docs");
}

/// `text` with the object of `config.<section>.<field>` replaced by an `enum` of `choices`,
/// indented as it is.
fn with_enum(text: &str, section: &str, field: &str, choices: &[&str]) -> String {
    let at = |from: usize, needle: &str| {
        from + text[from..]
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle} in the chart schema"))
    };
    let sec = at(at(0, "\"config\": {"), &format!("\"{section}\": {{"));
    let start = at(sec, &format!("\"{field}\": {{"));
    let open = start + field.len() + 4;
    let mut depth = 0;
    let mut end = open;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    let pad = " ".repeat(start - line_start);
    let items: Vec<String> = choices
        .iter()
        .map(|c| format!("{pad}    \"{c}\""))
        .collect();
    let object = format!(
        "{{\n{pad}  \"enum\": [\n{}\n{pad}  ]\n{pad}}}",
        items.join(",\n")
    );
    format!("{}{object}{}", &text[..open], &text[end..])
}

#[test]
fn otlp_doc_table_is_generated_from_the_declarations() {
    super::declare_config();
    check("docs/otlp.md", "otlp-keys", otlp_table);
}

/// Every value `check-config` prints is a declared key, and every declared key is a value
/// of the settings: a field added without a declaration (or the reverse) fails here.
#[test]
fn every_settings_field_is_a_declared_key_and_back() {
    super::declare_config();
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        if keys().any(|k| k.name == path) {
            return;
        }
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, child) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(child, &p, out);
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let v = serde_json::to_value(Settings::defaults()).unwrap();
    let mut undeclared = vec![];
    walk(&v, "", &mut undeclared);
    assert!(
        undeclared.is_empty(),
        "settings without a key: {undeclared:?}"
    );
    for k in keys() {
        let mut at = Some(&v);
        for part in k.name.split('.') {
            at = at.and_then(|x| x.get(part));
        }
        assert!(at.is_some(), "{} declared but not a settings field", k.name);
    }
    let mut names: Vec<&str> = keys().map(|k| k.name).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "a key is declared twice");
}

/// What `check-config` prints is itself a valid configuration meaning the same settings, so
/// each default goes through its own key's parser.
#[test]
fn the_printed_defaults_read_back_as_the_defaults() {
    super::declare_config();
    let printed = serde_json::to_value(Settings::defaults()).unwrap();
    let read = from_value(&printed).expect("the printed defaults are valid");
    assert_eq!(serde_json::to_value(read).unwrap(), printed);
}

#[test]
fn every_key_is_documented_and_flags_are_unique() {
    super::declare_config();
    let mut flags = vec![];
    for k in keys() {
        assert!(!k.doc.is_empty(), "{} has no documentation", k.name);
        assert!(!k.help().is_empty());
        flags.extend(k.flag.long());
    }
    let n = flags.len();
    flags.sort();
    flags.dedup();
    assert_eq!(flags.len(), n, "a flag is declared twice");
}
