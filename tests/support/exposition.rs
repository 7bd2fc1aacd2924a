//! The exposition-text parser of the tests (classic and OpenMetrics text: one sample per line,
//! labels unescaped, each sample with its family's `# TYPE`), and views of parsed samples.

use std::collections::{BTreeMap, BTreeSet};

/// One sample: name, sorted labels, value, and `kind`, its family's `# TYPE` ("" when unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    pub kind: String,
}

impl Sample {
    /// A label's value ("" when absent).
    pub fn label(&self, k: &str) -> &str {
        self.labels.get(k).map(String::as_str).unwrap_or("")
    }
    /// `name{k="v",...}` with sorted labels: the series identity.
    pub fn id(&self) -> String {
        format!("{}{}", self.name, render_labels(&self.labels))
    }
}

/// `{k="v",...}` (sorted, Rust-escaped values).
pub fn render_labels(labels: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(","))
}

/// One sample line (`name{k="v",...} value [timestamp]`, classic or OpenMetrics), or `None` if it
/// does not parse. `\\`, `\"` and `\n` are unescaped in label values; `kind` is left empty.
pub fn parse_line(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut labels = BTreeMap::new();
    let mut rest = &line[name_end..];
    if let Some(mut r) = rest.strip_prefix('{') {
        // `k="v"` pairs separated by commas, up to the closing brace.
        loop {
            r = r.trim_start_matches([',', ' ']);
            if let Some(after) = r.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = r.find('=')?;
            let k = r[..eq].trim().to_string();
            r = r[eq + 1..].strip_prefix('"')?;
            let mut v = String::new();
            let mut chars = r.char_indices();
            let close = loop {
                match chars.next()? {
                    (_, '\\') => match chars.next()?.1 {
                        'n' => v.push('\n'),
                        other => v.push(other),
                    },
                    (i, '"') => break i,
                    (_, c) => v.push(c),
                }
            };
            r = &r[close + 1..];
            labels.insert(k, v);
        }
    }
    let value = match rest.split_whitespace().next()? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name,
        labels,
        value,
        kind: String::new(),
    })
}

/// Parse a whole exposition (what `/metrics` and `dump` print), each sample with its family's
/// `# TYPE`. Panics on a line it cannot read: the exporter's output must always parse.
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut types: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split_whitespace();
            if let (Some(n), Some(t)) = (it.next(), it.next()) {
                types.insert(n, t);
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut s =
            parse_line(line).unwrap_or_else(|| panic!("unparsable exposition line: {line}"));
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|x| {
                s.name
                    .strip_suffix(x)
                    .filter(|f| types.get(f).is_some_and(|t| *t == "histogram"))
            })
            .unwrap_or(&s.name);
        s.kind = types.get(family).unwrap_or(&"").to_string();
        out.push(s);
    }
    out
}

/// Counter-like samples (`_total`, `_count`, `_sum`, `_bucket`) of `before` that are lower, or
/// gone, in `after`.
pub fn went_backwards(before: &[Sample], after: &[Sample]) -> Vec<String> {
    let after: BTreeMap<String, f64> = after.iter().map(|s| (s.id(), s.value)).collect();
    before
        .iter()
        .filter(|s| {
            ["_total", "_count", "_sum", "_bucket"]
                .iter()
                .any(|x| s.name.ends_with(x))
        })
        .filter_map(|s| match after.get(&s.id()) {
            Some(v) if *v >= s.value => None,
            Some(v) => Some(format!("{}: {} -> {v}", s.id(), s.value)),
            None => Some(format!("{}: {} -> (gone)", s.id(), s.value)),
        })
        .collect()
}

/// The value of the one sample named `name` whose labels include every `(k, v)` of `with`.
pub fn value(samples: &[Sample], name: &str, with: &[(&str, &str)]) -> Option<f64> {
    let mut it = samples
        .iter()
        .filter(|s| s.name == name && with.iter().all(|(k, v)| s.label(k) == *v));
    let first = it.next()?;
    assert!(it.next().is_none(), "more than one {name} matches {with:?}");
    Some(first.value)
}

/// `spark_exporter_eventlog_errors_total` by kind (absent kinds are 0 and left out).
pub fn eventlog_errors(samples: &[Sample]) -> BTreeMap<String, f64> {
    samples
        .iter()
        .filter(|s| s.name == "spark_exporter_eventlog_errors_total" && s.value != 0.0)
        .map(|s| (s.label("kind").to_string(), s.value))
        .collect()
}

/// `spark_exporter_scrape_errors_total` of `target` by kind (absent kinds are 0, left out).
pub fn scrape_errors(samples: &[Sample], target: &str) -> BTreeMap<String, f64> {
    samples
        .iter()
        .filter(|s| {
            s.name == "spark_exporter_scrape_errors_total"
                && s.label("target") == target
                && s.value != 0.0
        })
        .map(|s| (s.label("kind").to_string(), s.value))
        .collect()
}

/// Values keyed by a series identity or a rendered label set.
pub type Series = BTreeMap<String, f64>;

/// The differences between two series, one line each (empty when equal). Values are compared
/// to 1e-9 relative (sums of seconds print with float noise).
pub fn diff(want: &Series, got: &Series) -> Vec<String> {
    let keys: BTreeSet<&String> = want.keys().chain(got.keys()).collect();
    let mut out = vec![];
    for k in keys {
        match (want.get(k), got.get(k)) {
            (Some(a), Some(b)) if close(*a, *b) => {}
            (Some(a), Some(b)) => out.push(format!("  ✗ {k}: want {a}, got {b}")),
            (Some(a), None) => out.push(format!("  ✗ {k}: want {a}, missing")),
            (None, Some(b)) => out.push(format!("  ✗ {k}: unexpected, got {b}")),
            (None, None) => {}
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}
