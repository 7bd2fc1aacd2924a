//! Value parsers shared by the sections' key declarations: each takes the text a file, variable
//! or flag gives and returns the typed value or a message (the reader names the key).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// Problems with one key's value: each a place within it (`""`, `"[2]"`, `".pattern"`) and a
/// message. The reader prefixes the key's name.
#[derive(Debug, Default)]
pub struct Problems(pub Vec<(String, String)>);

impl From<String> for Problems {
    fn from(msg: String) -> Self {
        Problems(vec![(String::new(), msg)])
    }
}

impl From<&str> for Problems {
    fn from(msg: &str) -> Self {
        Problems(vec![(String::new(), msg.to_string())])
    }
}

/// A regular expression given in the configuration, compiled once when it is read.
#[derive(Debug, Clone)]
pub struct Pattern(pub regex::Regex);

impl Pattern {
    /// Compile `re`.
    pub fn new(re: &str) -> Result<Pattern, regex::Error> {
        regex::Regex::new(re).map(Pattern)
    }
    /// The expression as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::ops::Deref for Pattern {
    type Target = regex::Regex;
    fn deref(&self) -> &regex::Regex {
        &self.0
    }
}

/// `check-config` prints a pattern as written.
impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Secrets (header values) print as `<redacted>`.
pub fn redact_values<S: serde::Serializer>(
    m: &BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for k in m.keys() {
        map.serialize_entry(k, "<redacted>")?;
    }
    map.end()
}

/// A scalar as a string: strings, numbers and booleans (what a file, env var or flag gives).
pub fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every item of a list through `f`; every bad item is named by its index.
pub fn items<T>(xs: &[String], f: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, Problems> {
    let mut out = Vec::with_capacity(xs.len());
    let mut bad = vec![];
    for (i, x) in xs.iter().enumerate() {
        match f(x) {
            Ok(t) => out.push(t),
            Err(e) => bad.push((format!("[{i}]"), e)),
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Problems(bad))
    }
}

/// The value named `s` (case-insensitive) among `choices`, or "must be a, b or c".
pub fn one_of<T: Copy>(s: &str, choices: &[(&str, T)]) -> Result<T, String> {
    let s = s.to_ascii_lowercase();
    if let Some((_, v)) = choices.iter().find(|(name, _)| *name == s) {
        return Ok(*v);
    }
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    Err(match names.split_last() {
        Some((last, [])) => format!("must be {last}"),
        Some((last, rest)) => format!("must be {} or {last}", rest.join(", ")),
        None => "has no valid value".into(),
    })
}

/// An optional regex (empty: none).
pub fn regex(s: &str) -> Result<Option<Pattern>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    regex::Regex::new(s)
        .map(|r| Some(Pattern(r)))
        .map_err(|e| format!("not a valid regex: {e}"))
}

/// An `http(s)://` base URL, without a trailing `/` or `/api/v1`.
pub fn url(s: &str) -> Result<String, String> {
    let u = s.trim_end_matches('/');
    if !(u.starts_with("http://") || u.starts_with("https://")) || u.len() < 10 {
        return Err(format!("{s:?} is not an http(s) URL"));
    }
    Ok(u.trim_end_matches("/api/v1").to_string())
}

/// A file that can be opened now.
pub fn readable_file(s: &str) -> Result<Option<PathBuf>, String> {
    let p = PathBuf::from(s);
    match std::fs::File::open(&p) {
        Ok(_) if p.is_file() => Ok(Some(p)),
        Ok(_) => Err(format!("{s} is not a file")),
        Err(e) => Err(format!("{s}: {e}")),
    }
}

/// `true` or `false`.
pub fn boolean(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("must be true or false".into()),
    }
}

/// A duration (`30s`, `5m`, `1h30m`), zero allowed.
pub fn duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{s:?} is not a duration ({e})"))
}

/// A duration greater than zero.
pub fn positive(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err("must be greater than zero".into());
    }
    Ok(d)
}

/// A whole number greater than zero.
pub fn count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be greater than zero".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a positive integer")),
    }
}

/// A whole number, zero allowed.
pub fn whole(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| format!("{s:?} is not a non-negative integer"))
}

/// A number greater than zero, at most `max`.
pub fn ratio(s: &str, max: Option<f64>) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if !x.is_finite() || x <= 0.0 {
        return Err("must be a number greater than zero".into());
    }
    if let Some(m) = max.filter(|m| x > *m) {
        return Err(format!("must be at most {m}"));
    }
    Ok(x)
}

/// Bytes: an integer with an optional `KiB`, `MiB`, `GiB`, `KB`, `MB` or `GB` suffix.
pub fn bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (such as 1048576 or 10MiB)"))?;
    let mult = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        u => {
            return Err(format!(
                "{u:?} is not a size unit (B, KiB, MiB, GiB, KB, MB, GB)"
            ))
        }
    };
    Ok((n * mult).round() as u64)
}

/// Histogram buckets: positive numbers, strictly increasing, at least one.
pub fn buckets(xs: &[String]) -> Result<Vec<f64>, Problems> {
    let b = items(xs, |s| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| format!("{s:?} is not a positive number"))
    })?;
    if b.is_empty() {
        return Err("needs at least one bucket".into());
    }
    if b.windows(2).any(|w| w[0] >= w[1]) {
        return Err("buckets must be strictly increasing".into());
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(bytes("1048576"), Ok(1048576));
        assert_eq!(bytes("10MiB"), Ok(10 * 1024 * 1024));
        assert_eq!(bytes("1.5 KB"), Ok(1500));
        assert!(bytes("ten").is_err());
    }
}
