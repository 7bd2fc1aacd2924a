//! Generated reference sections of the docs: the text between `<!-- NAME:begin -->` and
//! `<!-- NAME:end -->` markers comes from a declaration (configuration keys, metric catalogue,
//! diagnose rules), and each crate's tests keep it in step through [`check_section`].

use std::path::Path;

/// `text` with what stands between `<!-- NAME:begin -->` and `<!-- NAME:end -->` replaced by
/// `body`; `None` when the markers are missing.
pub fn splice(text: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- {name}:begin -->\n");
    let end = format!("<!-- {name}:end -->");
    let a = text.find(&begin)? + begin.len();
    let b = a + text[a..].find(&end)?;
    Some(format!("{}{}{}", &text[..a], body, &text[b..]))
}

/// For tests: panics unless `path`'s section `name` is `body`; with `UPDATE_DOCS` set in the
/// environment it rewrites the section instead. `regenerate` is the command the panic names.
pub fn check_section(path: &Path, name: &str, body: &str, regenerate: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let want = splice(&text, name, body).unwrap_or_else(|| {
        panic!(
            "{} has no <!-- {name}:begin/end --> markers",
            path.display()
        )
    });
    if want == text {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    panic!(
        "{} ({name}) drifted from its declaration: run `UPDATE_DOCS=1 {regenerate}`",
        path.display()
    );
}

/// For tests: panics unless the file at `path` is `body` (a file generated whole, such as the
/// kinds the alert generators read); with `UPDATE_DOCS` set it writes the file instead.
pub fn check_file(path: &Path, body: &str, regenerate: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if text == body {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    panic!(
        "{} drifted from its declaration: run `UPDATE_DOCS=1 {regenerate}`",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::splice;

    #[test]
    fn splice_replaces_between_markers_only() {
        let t = "a\n<!-- x:begin -->\nold\n<!-- x:end -->\nb\n";
        assert_eq!(
            splice(t, "x", "new\n").as_deref(),
            Some("a\n<!-- x:begin -->\nnew\n<!-- x:end -->\nb\n")
        );
        assert_eq!(splice(t, "y", ""), None);
    }
}
