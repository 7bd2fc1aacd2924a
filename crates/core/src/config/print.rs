//! The effective configuration as `check-config` prints it: YAML that `--config.file` reads back
//! to the same settings, one line per key, a key left unset (`null`) commented with what applies
//! then (from its declaration), secrets redacted.

use serde_json::Value;

use super::docs::default_md;
use super::keys;
use super::settings::Settings;

/// `s` as YAML.
pub fn yaml(s: &Settings) -> String {
    let v = serde_json::to_value(s).unwrap_or(Value::Null);
    let mut out = String::new();
    if let Value::Object(m) = &v {
        for (k, child) in m {
            entry(&mut out, 0, k, k, child);
        }
    }
    out
}

/// A map key or string as YAML: plain when it is a simple word, else JSON-quoted (a JSON string
/// is a YAML double-quoted scalar).
fn key_text(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !k.starts_with(['-', '.']);
    if plain {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A scalar (or an empty or flat collection) on one line.
fn inline(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("null".into()),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => Some(v.to_string()),
        Value::Array(a) if a.iter().all(|x| inline(x).is_some() && !x.is_array()) => Some(format!(
            "[{}]",
            a.iter().filter_map(inline).collect::<Vec<_>>().join(", ")
        )),
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        _ => None,
    }
}

/// `name: value` at `depth`, `path` the dotted key (for the comment of an unset key).
fn entry(out: &mut String, depth: usize, path: &str, name: &str, v: &Value) {
    let pad = "  ".repeat(depth);
    let k = key_text(name);
    if let Some(line) = inline(v) {
        let note = match (v, keys().find(|key| key.name == path)) {
            (Value::Null, Some(key)) => format!("  # unset: {}", default_md(key).replace('`', "")),
            _ => String::new(),
        };
        out.push_str(&format!("{pad}{k}: {line}{note}\n"));
        return;
    }
    out.push_str(&format!("{pad}{k}:\n"));
    match v {
        Value::Object(m) => {
            for (ck, child) in m {
                entry(out, depth + 1, &format!("{path}.{ck}"), ck, child);
            }
        }
        Value::Array(items) => {
            for item in items {
                item_entry(out, depth + 1, item);
            }
        }
        _ => {}
    }
}

/// One list item (`- ...`) at `depth`.
fn item_entry(out: &mut String, depth: usize, v: &Value) {
    let pad = "  ".repeat(depth);
    match (v, inline(v)) {
        (_, Some(line)) => out.push_str(&format!("{pad}- {line}\n")),
        (Value::Object(m), None) => {
            for (i, (k, child)) in m.iter().enumerate() {
                let lead = if i == 0 { "- " } else { "  " };
                let mut one = String::new();
                entry(&mut one, 0, "", k, child);
                for (j, line) in one.lines().enumerate() {
                    let p = if j == 0 { lead } else { "  " };
                    out.push_str(&format!("{pad}{p}{line}\n"));
                }
            }
        }
        _ => out.push_str(&format!("{pad}- {v}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_value;

    fn read_back(text: &str) -> Value {
        let merged: Value = config::Config::builder()
            .add_source(config::File::from_str(text, config::FileFormat::Yaml))
            .build()
            .and_then(|c| c.try_deserialize())
            .expect("YAML");
        serde_json::to_value(from_value(&merged).expect("valid")).unwrap()
    }

    #[test]
    fn the_printed_configuration_reads_back_as_the_same_settings() {
        let mut s = Settings::default();
        s.model.app_name_filter = crate::config::Pattern::new("^etl").ok();
        s.streaming
            .trigger_intervals
            .insert("orders: \"x\"".into(), std::time::Duration::from_secs(30));
        s.diagnose.groups.insert(
            "nightly.etl".into(),
            crate::config::Thresholds {
                gc_ratio: 0.3,
                ..Default::default()
            },
        );
        for s in [Settings::default(), s] {
            let text = yaml(&s);
            assert_eq!(
                read_back(&text),
                serde_json::to_value(&s).unwrap(),
                "\n{text}"
            );
        }
    }

    #[test]
    fn an_unset_key_says_what_applies() {
        let text = yaml(&Settings::default());
        assert!(
            text.contains("currency: null  # unset: none (required with cost.prices)"),
            "{text}"
        );
        assert!(text.contains("  rewrite_rules:\n    - pattern: "), "{text}");
    }
}
