//! A structural JSON scanner for the hot path: `SparkListenerTaskEnd` lines are over 90% of a
//! large log's bytes, and most of each is `Accumulables` and executor metrics the exporter
//! ignores; in a fleet's small logs, job and stage events carry RDD infos, call sites and
//! properties it ignores too. Walking the object's members and skipping values by their brackets
//! and strings (64 bytes at a time, [`skip_container`]) is several times faster than having serde
//! visit every ignored key and string; [`pick`] hands serde only the members it reads.
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

/// Index of the first byte at or after `i` that is not JSON whitespace. Spark writes none
/// between tokens, so the first byte is checked alone first.
#[inline(always)]
fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if c > b' ' => i,
        _ => ws_loop(b, i),
    }
}

fn ws_loop(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Index just past the string whose opening quote is at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Result<usize, ScanError> {
    i += 1;
    loop {
        let j = quote_or_backslash(b, i).ok_or(ScanError::Eof)?;
        if b[j] == b'"' {
            return Ok(j + 1);
        }
        i = j + 2;
    }
}

/// The index of the first `"` or `\` in `b` at or after `i`, 16 bytes at a time: most strings
/// the scanner meets are keys and short values, for which a `memchr2` call costs more than the
/// search.
#[cfg(target_arch = "x86_64")]
fn quote_or_backslash(b: &[u8], mut i: usize) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    while i + 16 <= b.len() {
        // SAFETY: SSE2 is in the x86-64 baseline; the load reads b[i..i + 16], in bounds.
        let found = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
            let hits = _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            );
            _mm_movemask_epi8(hits) as u32
        };
        if found != 0 {
            return Some(i + found.trailing_zeros() as usize);
        }
        i += 16;
    }
    b.get(i..)?
        .iter()
        .position(|&c| c == b'"' || c == b'\\')
        .map(|k| i + k)
}

#[cfg(not(target_arch = "x86_64"))]
fn quote_or_backslash(b: &[u8], i: usize) -> Option<usize> {
    memchr::memchr2(b'"', b'\\', b.get(i..)?).map(|k| i + k)
}

/// Index just past the JSON value that starts at `i` (after optional whitespace).
pub fn skip_value(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let mut i = ws(b, i);
    match *b.get(i).ok_or(ScanError::Eof)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => skip_container(b, i),
        c if c == b'-' || c.is_ascii_alphanumeric() => {
            i += 1;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            {
                i += 1;
            }
            Ok(i)
        }
        c => Err(ScanError::Unexpected(c as char, i)),
    }
}

/// The structural bytes of one 64-byte block, a bit per byte (bit `k` for byte `k`).
#[derive(Default, Debug, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// `{` and `[`.
    open: u64,
    /// `}` and `]`.
    close: u64,
}

/// [`Masks`] of a block, 16 bytes at a time (SSE2 is part of every x86-64 CPU).
#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut m = Masks::default();
    // SAFETY: SSE2 is in the x86-64 baseline, so these intrinsics are always available; each
    // unaligned load reads 16 bytes at offsets 0, 16, 32 and 48 of a 64-byte array.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        // `[` and `]` are `{` and `}` less 0x20: or-ing 0x20 in folds each pair into one compare.
        let fold = _mm_set1_epi8(0x20);
        let open = _mm_set1_epi8(b'{' as i8);
        let close = _mm_set1_epi8(b'}' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let folded = _mm_or_si128(v, fold);
            let bits = |x| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            m.quote |= bits(_mm_cmpeq_epi8(v, quote));
            m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
            m.open |= bits(_mm_cmpeq_epi8(folded, open));
            m.close |= bits(_mm_cmpeq_epi8(folded, close));
        }
    }
    m
}

/// [`Masks`] of a block, 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn masks_avx2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    let mut m = Masks::default();
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    // As in `masks`: `[` and `]` fold into `{` and `}`.
    let fold = _mm256_set1_epi8(0x20);
    let open = _mm256_set1_epi8(b'{' as i8);
    let close = _mm256_set1_epi8(b'}' as i8);
    for k in 0..2 {
        // SAFETY: the unaligned load reads 32 bytes at offset 0 or 32 of a 64-byte array.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k).cast::<__m256i>()) };
        let folded = _mm256_or_si256(v, fold);
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        m.quote |= bits(_mm256_cmpeq_epi8(v, quote));
        m.backslash |= bits(_mm256_cmpeq_epi8(v, backslash));
        m.open |= bits(_mm256_cmpeq_epi8(folded, open));
        m.close |= bits(_mm256_cmpeq_epi8(folded, close));
    }
    m
}

/// [`Masks`] of a block, a byte at a time (other CPUs, and the reference in tests).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn masks_bytewise(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, &c) in block.iter().enumerate() {
        let bit = 1u64 << k;
        match c {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8; 64]) -> Masks {
    masks_bytewise(block)
}

/// Bit `k` of the result is the parity of bits `0..=k` of `x`: with `x` the quotes, the bytes
/// from an opening quote up to (not including) its closing quote.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Index just past the object or array whose opening bracket is at `start`.
///
/// Nested values (RDD infos, accumulables, metrics) are most of what is skipped, and they hold
/// few brackets: the bytes are classified 64 at a time into bit masks, strings are masked out by
/// their quotes (escaped quotes removed first), and only the brackets outside strings are
/// counted.
fn skip_container(b: &[u8], start: usize) -> Result<usize, ScanError> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("bmi1") {
        // SAFETY: the CPU has AVX2 and BMI1, checked just above.
        return unsafe { skip_container_avx2(b, start) };
    }
    skip_container_with(b, start, masks)
}

/// [`skip_container`] with [`masks_avx2`], 32 bytes at a time (CPUs since 2013).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1")]
fn skip_container_avx2(b: &[u8], start: usize) -> Result<usize, ScanError> {
    skip_container_with(b, start, |block: &[u8; 64]| masks_avx2(block))
}

/// [`skip_container`] with `masks` to classify each block.
#[inline(always)]
fn skip_container_with(
    b: &[u8],
    start: usize,
    masks: impl Fn(&[u8; 64]) -> Masks,
) -> Result<usize, ScanError> {
    let mut depth: u64 = 0;
    // All ones when the next block starts inside a string.
    let mut in_string: u64 = 0;
    // The next block's first byte follows an unescaped backslash.
    let mut escape_next = false;
    let mut p = start;
    let mut tail = [b' '; 64];
    while p < b.len() {
        let block: &[u8; 64] = match b[p..].first_chunk::<64>() {
            Some(block) => block,
            None => {
                // The last, short block, padded with spaces (not structural).
                let rest = &b[p..];
                tail[..rest.len()].copy_from_slice(rest);
                &tail
            }
        };
        let m = masks(block);
        let mut escaped = 0u64;
        if m.backslash != 0 || escape_next {
            let mut bs = m.backslash;
            if escape_next {
                escaped = 1;
                bs &= !1;
            }
            escape_next = false;
            while bs != 0 {
                let k = bs.trailing_zeros();
                bs &= bs - 1;
                if k == 63 {
                    escape_next = true;
                } else {
                    // The byte after an unescaped backslash is escaped, a backslash included.
                    escaped |= 1 << (k + 1);
                    bs &= !(1 << (k + 1));
                }
            }
        }
        let inside = prefix_xor(m.quote & !escaped) ^ in_string;
        in_string = ((inside as i64) >> 63) as u64;
        let close = m.close & !inside;
        let mut brackets = (m.open & !inside) | close;
        // A bracket at a time (there are few; no `popcnt` in the x86-64 baseline), without a
        // branch on its kind.
        while brackets != 0 {
            let k = brackets.trailing_zeros();
            brackets &= brackets - 1;
            let closing = (close >> k) & 1;
            depth = (depth + 1).wrapping_sub(closing << 1);
            if depth == 0 {
                return Ok(p + k as usize + 1);
            }
        }
        p += 64;
    }
    Err(ScanError::Eof)
}

/// Calls `f(key, value)` for every member of the object `b` (raw key bytes, without quotes;
/// the value's bytes, trimmed of surrounding whitespace).
pub fn members<'a>(
    b: &'a [u8],
    f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    walk_members(b, None, f).map(|_| ())
}

/// Like [`members`]; returns the index in `b` just past the object's closing brace.
pub fn members_end<'a>(
    b: &'a [u8],
    f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<usize, ScanError> {
    match walk_members(b, None, f)? {
        Walked::End(end) | Walked::Stop(end) => Ok(end),
    }
}

/// [`members_end`] of the object that starts at `b[at]` (a member's value, where
/// [`members_at`] gives it): the index in `b`, not in the value, just past it.
pub fn members_end_at<'a>(
    b: &'a [u8],
    at: usize,
    f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<usize, ScanError> {
    let v = b.get(at..).ok_or(ScanError::Eof)?;
    members_end(v, f).map(|end| at + end)
}

/// `rest`, what follows a value, closes the object it is in and the line: optional whitespace,
/// a closing brace, optional whitespace.
pub fn closes_line(rest: &[u8]) -> bool {
    rest.trim_ascii() == b"}"
}

/// Where [`walk_members`] stopped.
enum Walked {
    /// At the member to stop at: the index where its value starts.
    Stop(usize),
    /// At the object's end: the index just past its closing brace.
    End(usize),
}

/// Like [`members`], but stops at the member whose key is `stop`, without reading its value,
/// and returns the index in `b` where that value starts; `Ok(None)` when the object ends first.
/// This lets the hot path jump over a large value it does not need.
pub fn members_until<'a>(
    b: &'a [u8],
    stop: Option<&[u8]>,
    f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<Option<usize>, ScanError> {
    Ok(match walk_members(b, stop, f)? {
        Walked::Stop(start) => Some(start),
        Walked::End(_) => None,
    })
}

/// `b[i]` is `c`.
fn expect(b: &[u8], i: usize, c: u8) -> Result<(), ScanError> {
    match b.get(i) {
        Some(&x) if x == c => Ok(()),
        Some(&x) => Err(ScanError::Unexpected(x as char, i)),
        None => Err(ScanError::Eof),
    }
}

fn walk_members<'a>(
    b: &'a [u8],
    stop: Option<&[u8]>,
    mut f: impl FnMut(&'a [u8], &'a [u8]) -> Result<(), ScanError>,
) -> Result<Walked, ScanError> {
    let i = ws(b, 0);
    expect(b, i, b'{')?;
    object_at(b, i, |key, start| {
        if stop == Some(key) {
            return Ok(None);
        }
        let end = skip_value(b, start)?;
        f(key, &b[start..end])?;
        Ok(Some(end))
    })
}

/// Like [`members_end`], but `f(key, at)` reads each value itself: it gets the index in `b`
/// where the value starts and returns the index just past it. A value read this way (a plan
/// tree, say) is not skipped first to find its end, so its bytes are scanned once.
pub fn members_at<'a>(
    b: &'a [u8],
    mut f: impl FnMut(&'a [u8], usize) -> Result<usize, ScanError>,
) -> Result<usize, ScanError> {
    let i = ws(b, 0);
    expect(b, i, b'{')?;
    match object_at(b, i, |key, start| f(key, start).map(Some))? {
        Walked::End(end) | Walked::Stop(end) => Ok(end),
    }
}

/// The members of the object whose `{` is at `b[i]`: `value(key, at)` gets each key (raw, without
/// quotes) and the index where its value starts, and reads or skips the value, returning the
/// index just past it, or `None` to stop there.
fn object_at<'a>(
    b: &'a [u8],
    i: usize,
    mut value: impl FnMut(&'a [u8], usize) -> Result<Option<usize>, ScanError>,
) -> Result<Walked, ScanError> {
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(Walked::End(i + 1));
    }
    loop {
        expect(b, i, b'"')?;
        let key_end = skip_string(b, i)?;
        let key = &b[i + 1..key_end - 1];
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return Err(ScanError::Eof);
        }
        let start = ws(b, i + 1);
        let Some(end) = value(key, start)? else {
            return Ok(Walked::Stop(start));
        };
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Ok(Walked::End(i + 1)),
            Some(&c) => return Err(ScanError::Unexpected(c as char, i)),
            None => return Err(ScanError::Eof),
        }
    }
}

/// Calls `f(element)` for every element of the array `b` (each trimmed of whitespace).
pub fn elements<'a>(
    b: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let i = ws(b, 0);
    expect(b, i, b'[')?;
    array_at(b, i, |start| {
        let end = skip_value(b, start)?;
        f(&b[start..end])?;
        Ok(end)
    })
    .map(|_| ())
}

/// The elements of the array whose `[` is at `b[i]`: `value(at)` reads or skips the element
/// that starts at `at` and returns the index just past it. Returns the index just past the `]`.
fn array_at(
    b: &[u8],
    i: usize,
    mut value: impl FnMut(usize) -> Result<usize, ScanError>,
) -> Result<usize, ScanError> {
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Ok(i + 1);
    }
    loop {
        let end = value(i)?;
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b']') => return Ok(i + 1),
            Some(&c) => return Err(ScanError::Unexpected(c as char, i)),
            None => return Err(ScanError::Eof),
        }
    }
}

/// What [`pick`] keeps of a value.
#[derive(Debug)]
pub enum Keep {
    /// The whole value.
    All,
    /// Of an object, these members, each kept as said; the others are dropped.
    Members(&'static [(&'static str, Keep)]),
    /// Of an array, every element, each kept as said.
    Elements(&'static Keep),
}

/// Appends to `out` the part of the JSON value `v` that `keep` says, as JSON: a line reduced to
/// the members a serde type reads, which serde then parses without visiting the rest (RDD
/// infos, accumulables, call sites, most properties). A value of another shape than `keep`
/// expects (`null`, say) is kept whole, for serde to judge. Member keys are matched as written
/// (Spark's keys hold no escapes).
pub fn pick(v: &[u8], keep: &Keep, out: &mut Vec<u8>) -> Result<(), ScanError> {
    pick_at(v, ws(v, 0), keep, out).map(|_| ())
}

/// [`pick`] of the value that starts at `b[i]`: returns the index just past it. A kept object
/// or array is walked once, not skipped first to find its end.
fn pick_at(b: &[u8], i: usize, keep: &Keep, out: &mut Vec<u8>) -> Result<usize, ScanError> {
    let end = match (keep, b.get(i)) {
        (Keep::Members(wanted), Some(b'{')) => {
            out.push(b'{');
            let mut first = true;
            let walked = object_at(b, i, |key, at| {
                let Some((_, inner)) = wanted.iter().find(|(name, _)| name.as_bytes() == key)
                else {
                    return skip_value(b, at).map(Some);
                };
                if !first {
                    out.push(b',');
                }
                first = false;
                out.push(b'"');
                out.extend_from_slice(key);
                out.extend_from_slice(b"\":");
                pick_at(b, at, inner, out).map(Some)
            })?;
            out.push(b'}');
            match walked {
                Walked::End(end) | Walked::Stop(end) => end,
            }
        }
        (Keep::Elements(inner), Some(b'[')) => {
            out.push(b'[');
            let mut first = true;
            let end = array_at(b, i, |at| {
                if !first {
                    out.push(b',');
                }
                first = false;
                pick_at(b, at, inner, out)
            })?;
            out.push(b']');
            end
        }
        _ => {
            let end = skip_value(b, i)?;
            out.extend_from_slice(&b[i..end]);
            end
        }
    };
    Ok(end)
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

    #[test]
    fn pick_keeps_what_is_asked() {
        const KEEP: Keep = Keep::Members(&[
            ("a", Keep::All),
            ("b", Keep::Elements(&Keep::Members(&[("x", Keep::All)]))),
            ("n", Keep::Members(&[("y", Keep::All)])),
        ]);
        let line = br#"{"z":{"a":1},"a":"s\"}","b":[{"x":[1,{"q":2}],"w":3},{"w":4}, 5],"n":null}"#;
        let mut out = Vec::new();
        pick(line, &KEEP, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":"s\"}","b":[{"x":[1,{"q":2}]},{},5],"n":null}"#
        );
        let mut out = Vec::new();
        assert!(pick(br#"{"a":[1,"#, &KEEP, &mut out).is_err());
        assert!(elements(b"[1 2]", |_| Ok(())).is_err());
    }

    /// The byte-at-a-time walk the block skipper replaced: the reference for its results.
    fn skip_reference(b: &[u8], mut i: usize) -> Option<usize> {
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    loop {
                        match b.get(i)? {
                            b'"' => break,
                            b'\\' => i += 2,
                            _ => i += 1,
                        }
                    }
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// JSON values whose strings hold the bytes that matter: quotes, backslashes (escaped, and
    /// runs of them), brackets and non-ASCII text.
    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let text =
            || proptest::string::string_regex(r#"([a-z ]|"|\\|\\\\|[\[\]{}]|é|\n){0,40}"#).unwrap();
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            text().prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(5, 200, 12, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..12).prop_map(serde_json::Value::Array),
                proptest::collection::vec((text(), inner), 0..12)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// JSON values whose objects' keys are those [`PICK`] names, and others.
    fn keyed_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let key = || proptest::sample::select(vec!["a", "b", "n", "x", "z", "a\"}"]);
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<i64>().prop_map(serde_json::Value::from),
            proptest::string::string_regex(r#"([a-z]|"|\\|[\[\]{}]){0,12}"#)
                .unwrap()
                .prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(5, 120, 8, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
                proptest::collection::vec((key(), inner), 0..8).prop_map(|m| {
                    serde_json::Value::Object(
                        m.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    )
                }),
            ]
        })
    }

    const PICK: Keep = Keep::Members(&[
        ("a", Keep::All),
        (
            "b",
            Keep::Elements(&Keep::Members(&[("x", Keep::All), ("n", Keep::All)])),
        ),
        (
            "n",
            Keep::Members(&[("a", Keep::All), ("b", Keep::Elements(&Keep::All))]),
        ),
    ]);

    /// What [`pick`] keeps of `v`, computed on the parsed value.
    fn pick_reference(v: &serde_json::Value, keep: &Keep) -> serde_json::Value {
        use serde_json::Value;
        match (keep, v) {
            (Keep::Members(wanted), Value::Object(m)) => Value::Object(
                m.iter()
                    .filter_map(|(k, x)| {
                        let (_, inner) = wanted.iter().find(|(name, _)| name == k)?;
                        Some((k.clone(), pick_reference(x, inner)))
                    })
                    .collect(),
            ),
            (Keep::Elements(inner), Value::Array(a)) => {
                Value::Array(a.iter().map(|x| pick_reference(x, inner)).collect())
            }
            _ => v.clone(),
        }
    }

    proptest::proptest! {
        /// What pick keeps, walking each kept value once, is what the parsed value says, for
        /// compact and pretty-printed lines; a line cut short fails.
        #[test]
        fn pick_keeps_what_the_parsed_value_says(
            members in proptest::collection::vec(
                (proptest::sample::select(vec!["a", "b", "n", "z"]), keyed_value()), 0..6),
            pretty: bool,
            cut in 0usize..400,
        ) {
            let v = serde_json::Value::Object(
                members.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
            let text = if pretty {
                serde_json::to_vec_pretty(&v).unwrap()
            } else {
                serde_json::to_vec(&v).unwrap()
            };
            let mut out = Vec::new();
            pick(&text, &PICK, &mut out).unwrap();
            let picked: serde_json::Value = serde_json::from_slice(&out).unwrap();
            proptest::prop_assert_eq!(picked, pick_reference(&v, &PICK));
            if cut < text.len() {
                let short = text[..cut].trim_ascii_end();
                proptest::prop_assert!(pick(short, &PICK, &mut Vec::new()).is_err());
            }
        }

        /// The vector masks are the bytewise ones, for blocks of the bytes that matter and of
        /// the bytes that fold into them (`[` and `{` differ by 0x20 only).
        #[test]
        fn masks_are_bytewise(bytes in proptest::collection::vec(proptest::sample::select(
            b"\"\\{}[]a ;=\x5b\x7b\x5d\x7d\x3b\xdb\xfb\xa2\x02\x00".to_vec()), 64)) {
            let block: [u8; 64] = bytes.try_into().unwrap();
            proptest::prop_assert_eq!(masks(&block), masks_bytewise(&block));
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                proptest::prop_assert_eq!(unsafe { masks_avx2(&block) }, masks_bytewise(&block));
            }
        }

        /// Any container, at any offset from a block boundary, compact or pretty-printed and
        /// with a cut-off copy: where the byte walk ends, and an error where it finds no end.
        #[test]
        fn containers_skip_as_the_byte_walk_does(
            v in json_value(),
            pad in 0usize..70,
            pretty: bool,
            cut in 0usize..1000,
        ) {
            let v = serde_json::json!([v, {"k": v}]);
            let text = if pretty {
                serde_json::to_vec_pretty(&v).unwrap()
            } else {
                serde_json::to_vec(&v).unwrap()
            };
            let mut line = vec![b' '; pad];
            line.extend_from_slice(&text);
            line.extend_from_slice(b" ,\"after\":[1]}");
            let whole = skip_value(&line, 0);
            proptest::prop_assert_eq!(whole.as_ref().ok().copied(), skip_reference(&line, pad));
            proptest::prop_assert_eq!(whole, Ok(pad + text.len()));
            let short = &line[..cut.min(line.len())];
            proptest::prop_assert_eq!(
                skip_value(short, 0).ok().filter(|_| short.len() > pad),
                skip_reference(short, pad)
            );
            // `skip_value` takes the AVX2 path where the CPU has it: the SSE2 one too.
            proptest::prop_assert_eq!(skip_container_with(&line, pad, masks), Ok(pad + text.len()));
            if short.len() > pad {
                proptest::prop_assert_eq!(
                    skip_container_with(short, pad, masks).ok(),
                    skip_reference(short, pad)
                );
            }
        }

        /// The vector search finds the first quote or backslash, wherever it is.
        #[test]
        fn quote_or_backslash_is_the_first(bytes in proptest::collection::vec(
            proptest::sample::select(b"ab \"\\\xa2".to_vec()), 0..80), from in 0usize..90) {
            let want = bytes
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, &c)| c == b'"' || c == b'\\')
                .map(|(k, _)| k);
            proptest::prop_assert_eq!(quote_or_backslash(&bytes, from), want);
        }

        /// Arbitrary bytes never panic, and an end found is inside the input.
        #[test]
        fn any_bytes_skip_without_panic(bytes in proptest::collection::vec(proptest::sample::select(
            b"\"\\{}[]a 1,:".to_vec()), 0..300)) {
            let mut line = b"[".to_vec();
            line.extend_from_slice(&bytes);
            if let Ok(end) = skip_value(&line, 0) {
                proptest::prop_assert!(end <= line.len());
            }
        }
    }
}
