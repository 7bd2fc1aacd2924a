//! The catalogue as documentation: the metric reference of `docs/metrics.md` and the tables of
//! `docs/otlp.md`. Both files hold the generated text between marker comments; a test fails when
//! they drift, and `UPDATE_DOCS=1 cargo test --lib export::docs` rewrites them.

use super::catalogue::{AttrType, Metric, Scale, Scope, Stability, ATTRIBUTES, CATALOGUE};

/// The labels column of the metric table (`docs/metrics.md`).
fn labels_md(m: &Metric) -> String {
    let mut parts: Vec<String> = vec![];
    let scope = match m.scope {
        Scope::Group => Some("group labels".to_string()),
        Scope::Stage => Some("group labels, `stage_id, stage_attempt`".to_string()),
        Scope::Executor => Some("executor labels".to_string()),
        Scope::Process => None,
        s => Some(format!("`{}`", s.labels().join(", "))),
    };
    parts.extend(scope);
    for l in m.labels {
        if l.values.is_empty() {
            parts.push(format!("`{}`", l.name));
        } else {
            let values: Vec<String> = l.values.iter().map(|v| format!("`{v}`")).collect();
            parts.push(format!("`{}` = {}", l.name, values.join("\\|")));
        }
    }
    parts.join(", ")
}

/// The metric reference table of `docs/metrics.md`.
pub fn readme_table() -> String {
    let mut s = String::from("| Name | Type | Labels | Meaning | Since |\n|---|---|---|---|---|\n");
    for m in CATALOGUE {
        let meaning = if m.doc.is_empty() { m.help } else { m.doc };
        let since = match m.stability {
            Stability::Stable => m.since.to_string(),
            Stability::Experimental => format!("{} (experimental)", m.since),
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            m.prometheus_name(),
            m.kind.classic_type(),
            labels_md(m),
            meaning,
            since
        ));
    }
    s
}

/// The two tables of `docs/otlp.md` (metrics, then attributes).
pub fn otlp_tables() -> String {
    let mut s = String::from(
        "| Prometheus name | OTLP name | unit | type | notes |\n|---|---|---|---|---|\n",
    );
    for m in CATALOGUE {
        let x = &m.otlp;
        let mut notes = vec![];
        if x.receiver {
            notes.push("as `apachesparkreceiver`".to_string());
        }
        if x.scale == Scale::SecondsToMillis {
            notes.push("value × 1000, integer".to_string());
        }
        for (k, v) in x.extra {
            notes.push(format!("`{k}={v}`"));
        }
        for (l, n) in x.renames {
            notes.push(format!("`{l}` as `{n}`"));
        }
        s.push_str(&format!(
            "| `{}` | `{}` | `{}` | {} | {} |\n",
            m.prometheus_name(),
            x.name,
            x.unit,
            x.instrument.as_str(),
            notes.join(", ")
        ));
    }
    s.push_str("\n| Prometheus label | OTLP attribute | type |\n|---|---|---|\n");
    for (l, n, t) in ATTRIBUTES {
        let t = match t {
            AttrType::Str => "string",
            AttrType::Int => "int",
        };
        s.push_str(&format!("| `{l}` | `{n}` | {t} |\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(file: &str, marker: &str, body: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        spark_exporter_core::docgen::check_section(
            &path,
            marker,
            body,
            "cargo test --lib export::docs",
        );
    }

    #[test]
    fn metrics_doc_table_is_generated_from_the_catalogue() {
        check("docs/metrics.md", "metrics", &readme_table());
    }

    #[test]
    fn otlp_doc_tables_are_generated_from_the_catalogue() {
        check("docs/otlp.md", "otlp-tables", &otlp_tables());
    }
}
