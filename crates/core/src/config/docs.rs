//! The key declarations as documentation: the key table of `docs/configuration.md` and the
//! `otlp.*` table of `docs/otlp.md`, between marker comments. The binary's tests
//! (`src/sources/config_docs_tests.rs`, over the core's keys and the sources') fail when
//! either drifts from the declarations; `UPDATE_DOCS=1 cargo test --lib config_docs` rewrites
//! them.

use serde_json::Value;

use super::key::{Flag, Key, Set, Uses};
use super::{keys, Settings};

/// The default's value in [`Settings::defaults`] at `k`'s path (`Null` when there is none).
fn default_value(k: &Key) -> Value {
    static DEFAULTS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let mut v =
        DEFAULTS.get_or_init(|| serde_json::to_value(Settings::defaults()).unwrap_or(Value::Null));
    for part in k.name.split('.') {
        match v.get(part) {
            Some(x) => v = x,
            None => return Value::Null,
        }
    }
    v.clone()
}

/// A printed default, without Markdown.
fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(value_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(_) => v.to_string(),
    }
}

/// The default as the reference shows it (Markdown).
pub fn default_md(k: &Key) -> String {
    if let Some(d) = k.default {
        return d.to_string();
    }
    match default_value(k) {
        Value::Null => "none".into(),
        v => format!("`{}`", value_text(&v)),
    }
}

/// The default as a flag's help shows it.
pub fn default_plain(k: &Key) -> String {
    default_md(k).replace('`', "")
}

fn flag_md(k: &Key) -> String {
    match k.flag {
        Flag::None => String::new(),
        Flag::Value(l) | Flag::Switch(l) => format!("`--{l}`"),
        Flag::Repeat(l) => format!("`--{l}` (repeatable)"),
    }
}

fn env_md(k: &Key) -> String {
    match k.set {
        // A tree is read from the environment only when it also takes a flag's text (JSON).
        Set::Tree(_) if k.flag == Flag::None => String::new(),
        _ => format!("`{}`", k.env()),
    }
}

fn uses_md(u: Uses) -> String {
    if u == Uses::ALL {
        "all".into()
    } else {
        u.names().join(", ")
    }
}

/// Cells of a Markdown table row (pipes in the text escaped).
fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// The key table of `docs/configuration.md`: every key but `otlp.*`.
pub fn reference_table() -> String {
    let mut s = String::from(
        "| Key | Flag | Environment | Default | Commands | Meaning |\n|---|---|---|---|---|---|\n",
    );
    for k in keys().filter(|k| !k.name.starts_with("otlp.")) {
        s.push_str(&row(&[
            format!("`{}`", k.name),
            flag_md(k),
            env_md(k),
            default_md(k),
            uses_md(k.uses),
            k.doc.to_string(),
        ]));
    }
    s
}

/// The `otlp.*` table of `docs/otlp.md`: each key with its flag and the standard variables
/// that set it when it is unset.
pub fn otlp_table() -> String {
    let mut s =
        String::from("| Key | Flag | Variable | Default | Meaning |\n|---|---|---|---|---|\n");
    for k in keys().filter(|k| k.name.starts_with("otlp.")) {
        s.push_str(&row(&[
            format!("`{}`", k.name),
            flag_md(k),
            k.otel_env.unwrap_or("").to_string(),
            default_md(k),
            k.doc.to_string(),
        ]));
    }
    s
}

/// The list of default rewrite rules in `docs/configuration.md`, from
/// [`crate::config::DEFAULT_RULES`]: each pattern, its replacement and what it folds.
pub fn default_rules_table() -> String {
    let mut s = String::from("| # | pattern | replacement | folds |\n|---|---|---|---|\n");
    for (i, r) in crate::config::DEFAULT_RULES.iter().enumerate() {
        let folds: String = r.folds.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = std::fmt::Write::write_fmt(
            &mut s,
            format_args!(
                "| {} | `{}` | `{}` | {} |\n",
                i + 1,
                r.pattern.replace('|', "\\|"),
                r.replacement,
                folds
            ),
        );
    }
    s
}
