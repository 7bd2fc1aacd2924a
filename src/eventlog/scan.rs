//! A structural JSON scanner for the hot path: `SparkListenerTaskEnd` lines are over 90% of a
//! log's bytes, and most of each is `Accumulables` and executor metrics the exporter ignores.
//! Walking the object's members and skipping values by their brackets and strings (found with
//! `memchr`) is several times faster than having serde visit every ignored key and string.
//!
//! Skipped values are not validated; the values read are (numbers, booleans, strings). A line
//! cut short fails to scan.

/// Why a scan failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScanError {
    /// The input ended inside a value.
    #[error("unexpected end of line")]
    Eof,
    /// A byte that cannot start or continue a value at this point.
    #[error("unexpected byte {0:?} at {1}")]
    Unexpected(char, usize),
    /// A required member is missing.
    #[error("missing {0:?}")]
    Missing(&'static str),
    /// A member has the wrong type.
    #[error("{0:?} is not a {1}")]
    Type(&'static str, &'static str),
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Index just past the string whose opening quote is at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Result<usize, ScanError> {
    i += 1;
    loop {
        let j = i + memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]).ok_or(ScanError::Eof)?;
        if b[j] == b'"' {
            return Ok(j + 1);
        }
        i = j + 2;
    }
}

/// Index just past the JSON value that starts at `i` (after optional whitespace).
pub fn skip_value(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let mut i = ws(b, i);
    match *b.get(i).ok_or(ScanError::Eof)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Err(ScanError::Eof)
        }
        c if c == b'-' || c.is_ascii_alphanumeric() => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            {
                i += 1;
            }
            Ok(i)
        }
        c => Err(ScanError::Unexpected(c as char, i)),
    }
}

/// Calls `f(key, value)` for every member of the object `b` (raw key bytes, without quotes;
/// the value's bytes, trimmed of surrounding whitespace).
pub fn members<'a>(
    b: &'a [u8],
    f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    members_until(b, None, f).map(|_| ())
}

/// Like [`members`], but stops at the member whose key is `stop`, without reading its value,
/// and returns the index in `b` where that value starts; `Ok(None)` when the object ends first.
/// This lets the hot path jump over a large value it does not need.
pub fn members_until<'a>(
    b: &'a [u8],
    stop: Option<&[u8]>,
    mut f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<Option<usize>, ScanError> {
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err(b
            .get(i)
            .map_or(ScanError::Eof, |&c| ScanError::Unexpected(c as char, i)));
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(None);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return Err(b
                .get(i)
                .map_or(ScanError::Eof, |&c| ScanError::Unexpected(c as char, i)));
        }
        let key_end = skip_string(b, i)?;
        let key = &b[i + 1..key_end - 1];
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return Err(ScanError::Eof);
        }
        let start = ws(b, i + 1);
        if stop == Some(key) {
            return Ok(Some(start));
        }
        let end = skip_value(b, start)?;
        f(key, &b[start..end])?;
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Ok(None),
            Some(&c) => return Err(ScanError::Unexpected(c as char, i)),
            None => return Err(ScanError::Eof),
        }
    }
}

/// The value starting at `start` is the last member of the top-level object `b`: it ends, after
/// optional whitespace, with the object's closing brace and nothing else. Returns its end.
pub fn last_value_end(b: &[u8], start: usize) -> Result<Option<usize>, ScanError> {
    let end = skip_value(b, start)?;
    let close = ws(b, end);
    Ok((b.get(close) == Some(&b'}') && ws(b, close + 1) == b.len()).then_some(end))
}

/// An integer member value; fractions are truncated, negatives kept.
pub fn int(name: &'static str, v: &[u8]) -> Result<i64, ScanError> {
    let (neg, digits) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        _ => (false, v),
    };
    let mut n: i64 = 0;
    let mut seen = false;
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                n = n.saturating_mul(10).saturating_add((c - b'0') as i64);
                seen = true;
            }
            b'.' | b'e' | b'E' if seen => {
                // Rare: let serde read a non-integer number.
                let f: f64 =
                    serde_json::from_slice(v).map_err(|_| ScanError::Type(name, "number"))?;
                return Ok(f as i64);
            }
            _ => return Err(ScanError::Type(name, "number")),
        }
    }
    if !seen {
        return Err(ScanError::Type(name, "number"));
    }
    Ok(if neg { -n } else { n })
}

/// A non-negative count (negative values, which Spark uses for "unset", read as 0).
pub fn count(name: &'static str, v: &[u8]) -> Result<u64, ScanError> {
    if v == b"null" {
        return Ok(0);
    }
    Ok(int(name, v)?.max(0) as u64)
}

/// A boolean member value.
pub fn boolean(name: &'static str, v: &[u8]) -> Result<bool, ScanError> {
    match v {
        b"true" => Ok(true),
        b"false" => Ok(false),
        _ => Err(ScanError::Type(name, "boolean")),
    }
}

/// A string member value (unescaped when needed).
pub fn string(name: &'static str, v: &[u8]) -> Result<String, ScanError> {
    if v.len() >= 2 && v[0] == b'"' && !v.contains(&b'\\') {
        return std::str::from_utf8(&v[1..v.len() - 1])
            .map(str::to_string)
            .map_err(|_| ScanError::Type(name, "UTF-8 string"));
    }
    serde_json::from_slice(v).map_err(|_| ScanError::Type(name, "string"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_skipping() {
        let line =
            br#" {"a" : [1, {"x":"}]\"{"}], "b":"s\"t", "c":-12, "d":{"e":true} , "f":1.5e3}"#;
        let mut seen = Vec::new();
        members(line, |k, v| {
            seen.push((
                String::from_utf8_lossy(k).to_string(),
                String::from_utf8_lossy(v).to_string(),
            ));
            Ok(())
        })
        .unwrap();
        let keys: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c", "d", "f"]);
        assert_eq!(seen[0].1, r#"[1, {"x":"}]\"{"}]"#);
        assert_eq!(int("c", seen[2].1.as_bytes()), Ok(-12));
        assert_eq!(int("f", seen[4].1.as_bytes()), Ok(1500));
        assert_eq!(string("b", seen[1].1.as_bytes()).unwrap(), "s\"t");
        assert_eq!(count("c", b"-1"), Ok(0));
    }

    #[test]
    fn truncated_and_malformed_fail() {
        for bad in [
            &br#"{"a":[1,2"#[..],
            br#"{"a":"x"#,
            br#"{"a" 1}"#,
            br#"{"a":1"#,
            b"",
            b"[1]",
            br#"{"a":1 "b":2}"#,
        ] {
            assert!(
                members(bad, |_, _| Ok(())).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(int("x", b"\"1\"").is_err());
        assert!(boolean("x", b"1").is_err());
    }
}
