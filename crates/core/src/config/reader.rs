//! Reads a merged configuration tree into [`Settings`] through the key declarations: each
//! declared key found in the tree is given to its parser in the shape it declares, every
//! problem is kept (named by key) instead of stopping at the first, and keys nobody declared
//! are reported as unknown (typos such as `spark.pol_interval`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::key::{Key, Problems, Set};
use super::parse::scalar_string;
use super::Settings;

/// The merged tree and what reading it found.
pub(super) struct Reader<'a> {
    root: &'a Value,
    /// Every problem, as `key: message`.
    pub(super) errors: Vec<String>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(root: &'a Value) -> Self {
        Reader {
            root,
            errors: vec![],
        }
    }

    /// The value at dotted `key`, if set (null counts as unset).
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        let mut v = self.root;
        for part in key.split('.') {
            v = v.get(part)?;
        }
        (!v.is_null()).then_some(v)
    }

    /// Apply every key of `keys` that the tree sets, in order.
    pub(super) fn read_all<'k>(&mut self, s: &mut Settings, keys: impl Iterator<Item = &'k Key>) {
        for k in keys {
            if let Some(v) = self.get(k.name) {
                let r = apply(k, s, v);
                if let Err(p) = r {
                    self.report(k.name, p);
                }
            }
        }
    }

    fn report(&mut self, name: &str, p: Problems) {
        for (at, msg) in p.0 {
            self.errors.push(format!("{name}{at}: {msg}"));
        }
    }

    /// Report the keys of the tree that no declaration names, each with the declared key
    /// nearest to it when one is near (a typo).
    pub(super) fn unknown_keys<'k>(&mut self, keys: impl Iterator<Item = &'k Key> + Clone) {
        let mut found = vec![];
        walk(self.root, "", &keys, &mut found);
        for k in found {
            match nearest(&k, keys.clone().map(|key| key.name)) {
                Some(near) => self
                    .errors
                    .push(format!("{k}: unknown field (did you mean {near}?)")),
                None => self.errors.push(format!("{k}: unknown field")),
            }
        }
    }
}

/// Give `v` to `k`'s parser in the shape it declares.
fn apply(k: &Key, s: &mut Settings, v: &Value) -> Result<(), Problems> {
    match k.set {
        Set::One(f) => f(s, &one(v)?).map_err(Problems::from),
        Set::List(f) => f(s, &list(v)?),
        Set::Map(f) => f(s, map(v)?),
        Set::Tree(f) => f(s, v),
        Set::Threshold(f) => f(&mut s.diagnose.defaults, &one(v)?).map_err(Problems::from),
    }
}

/// A scalar's text.
pub(super) fn one(v: &Value) -> Result<String, Problems> {
    scalar_string(v).ok_or_else(|| "expected a single value".into())
}

/// A list's items: an array of scalars, or comma-separated text (empty text: no items).
fn list(v: &Value) -> Result<Vec<String>, Problems> {
    let items: Vec<Value> = match v {
        Value::Array(a) => a.clone(),
        Value::String(s) if s.is_empty() => vec![],
        Value::String(s) => s
            .split(',')
            .map(|x| Value::String(x.trim().into()))
            .collect(),
        other => vec![other.clone()],
    };
    let mut out = vec![];
    let mut bad = vec![];
    for (i, item) in items.iter().enumerate() {
        match scalar_string(item) {
            Some(s) => out.push(s),
            None => bad.push((format!("[{i}]"), "expected a string".to_string())),
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Problems(bad))
    }
}

/// A string map: a table, or `k=v,k2=v2` (the `OTEL_EXPORTER_OTLP_HEADERS` syntax).
fn map(v: &Value) -> Result<BTreeMap<String, String>, Problems> {
    let mut out = BTreeMap::new();
    let mut bad = vec![];
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match scalar_string(v) {
                    Some(s) => {
                        out.insert(k.clone(), s);
                    }
                    None => bad.push((format!(".{k}"), "expected a string".to_string())),
                }
            }
        }
        Value::String(s) => {
            for part in s.split(',').filter(|p| !p.trim().is_empty()) {
                match part.split_once('=') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        out.insert(k.trim().to_string(), v.trim().to_string());
                    }
                    _ => bad.push((String::new(), format!("{part:?} is not name=value"))),
                }
            }
        }
        _ => return Err("expected a map of name: value".into()),
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Problems(bad))
    }
}

/// The name among `names` closest to `unknown` by edit distance, if it is close: at most a
/// third of its length apart (a typo or a dropped letter, not another key).
pub(super) fn nearest<'n>(unknown: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let (d, best) = names
        .map(|n| (edit_distance(unknown, n), n))
        .min_by_key(|(d, _)| *d)?;
    (d > 0 && d * 3 <= unknown.chars().count().max(3)).then_some(best)
}

/// Levenshtein distance, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != *cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// Collect the dotted paths under `v` that are neither a declared key nor on the way to one.
fn walk<'k>(
    v: &Value,
    prefix: &str,
    keys: &(impl Iterator<Item = &'k Key> + Clone),
    found: &mut Vec<String>,
) {
    let Value::Object(m) = v else {
        return;
    };
    for (k, child) in m {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if keys.clone().any(|key| key.name == path) {
            continue;
        }
        let inner = format!("{path}.");
        if keys.clone().any(|key| key.name.starts_with(&inner)) {
            walk(child, &path, keys, found);
        } else {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_nearest_key() {
        let names = [
            "spark.poll_interval",
            "spark.timeout",
            "model.summary_level",
        ];
        assert_eq!(
            nearest("spark.pol_interval", names.into_iter()),
            Some("spark.poll_interval")
        );
        assert_eq!(
            nearest("model.sumary_levl", names.into_iter()),
            Some("model.summary_level")
        );
        assert_eq!(nearest("bogus", names.into_iter()), None, "nothing near");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
