//! A small Rust lexer for `tests/it/import_graph.rs`: tokens with line numbers (comments and the
//! insides of literals dropped), bracket and item skipping, and `use` trees expanded into paths.
//! Enough to find the paths a file names, not a parser.

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    /// A literal or anything else that cannot start or continue a path.
    Other,
}

/// Tokens of `src` with their line numbers; comments and the insides of literals are dropped.
pub fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            // Block comments nest.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1, None, &mut line);
            out.push((Tok::Other, line));
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F}') or a lifetime ('a, 'static).
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push((Tok::Other, line));
            } else if at(i + 2) == '\'' {
                i += 3;
                out.push((Tok::Other, line));
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw = matches!(word.as_str(), "r" | "br");
            if raw && (at(i) == '"' || (at(i) == '#' && matches!(at(i + 1), '#' | '"'))) {
                let mut hashes = 0;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                i = skip_string(&c, i + 1, Some(hashes), &mut line);
                out.push((Tok::Other, line));
            } else if word == "r" && at(i) == '#' {
                // A raw identifier, r#type: the `type` that follows is lexed as itself.
                i += 1;
            } else if word == "b" && matches!(at(i), '"' | '\'') {
                // b"..." and b'.': the quote is handled on the next round.
            } else {
                out.push((Tok::Ident(word), line));
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                i += 1;
            }
            out.push((Tok::Other, line));
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// Index just past the string whose text starts at `i` (after the opening quote); `raw` is the
/// number of `#`s of a raw string (which has no escapes).
pub fn skip_string(c: &[char], mut i: usize, raw: Option<usize>, line: &mut usize) -> usize {
    let hashes = raw.unwrap_or(0);
    while i < c.len() {
        match c[i] {
            '\\' if raw.is_none() => i += 2,
            '"' if (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) => return i + 1 + hashes,
            ch => {
                *line += usize::from(ch == '\n');
                i += 1;
            }
        }
    }
    i
}

pub fn ident(t: Option<&(Tok, usize)>) -> Option<&str> {
    match t {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

pub fn is(t: Option<&(Tok, usize)>, p: char) -> bool {
    matches!(t, Some((Tok::Punct(q), _)) if *q == p)
}

/// Index just past the bracketed group opening at `i` (`(`, `[` or `{`).
pub fn skip_group(t: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match &t[i].0 {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            _ => {}
        }
        i += 1;
        if depth <= 0 {
            break;
        }
    }
    i
}

/// Index just past the item starting at `i`: its `;`, or the `}` closing its first block.
pub fn skip_item(t: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match &t[i].0 {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth <= 0 {
                    return i + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Expand the use tree at `i` (after `use`) into full paths with the name each binds; returns
/// the index past the tree.
pub fn use_tree(
    t: &[(Tok, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix.to_vec();
    if matches!(t.get(i), Some((Tok::Sep, _))) {
        i += 1; // `use ::std::…`
    }
    loop {
        match t.get(i) {
            Some((Tok::Ident(s), _)) if s == "self" && !path.is_empty() => i += 1,
            Some((Tok::Ident(s), _)) => {
                path.push(s.clone());
                i += 1;
            }
            Some((Tok::Punct('*'), _)) => {
                out.push((path, "*".into()));
                return i + 1;
            }
            Some((Tok::Punct('{'), _)) => {
                i += 1;
                while !is(t.get(i), '}') && i < t.len() {
                    i = use_tree(t, i, &path, out);
                    if is(t.get(i), ',') {
                        i += 1;
                    }
                }
                return i + 1;
            }
            _ => return i,
        }
        if matches!(t.get(i), Some((Tok::Sep, _))) {
            i += 1;
            continue;
        }
        let mut name = path.last().cloned().unwrap_or_default();
        if ident(t.get(i)) == Some("as") {
            name = ident(t.get(i + 1)).unwrap_or("_").to_string();
            i += 2;
        }
        out.push((path, name));
        return i;
    }
}

pub fn is_cfg_test(attr: &[(Tok, usize)]) -> bool {
    let words: Vec<_> = attr.iter().map(|(t, _)| t.clone()).collect();
    words
        == [
            Tok::Ident("cfg".into()),
            Tok::Punct('('),
            Tok::Ident("test".into()),
            Tok::Punct(')'),
        ]
}
