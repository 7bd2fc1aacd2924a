//! The exposition-text parser of the end-to-end tests (`tests/e2e/`, `tests/e2e_live/`): one
//! sample per line, labels unescaped, and the counter check between two scrapes.

#![allow(dead_code)] // each test uses a subset

use std::collections::BTreeMap;

/// One sample: name, sorted labels, value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Sample {
    /// A label's value ("" when absent).
    pub fn label(&self, k: &str) -> &str {
        self.labels.get(k).map(String::as_str).unwrap_or("")
    }
    /// `name{k="v",...}` with sorted labels: the series identity.
    pub fn id(&self) -> String {
        let l: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        format!("{}{{{}}}", self.name, l.join(","))
    }
}

/// One sample line (`name{k="v",...} value [timestamp]`, classic or OpenMetrics), or `None` if it
/// does not parse. `\\`, `\"` and `\n` are unescaped in label values.
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
    })
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
