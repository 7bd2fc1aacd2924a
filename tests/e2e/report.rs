//! Collecting every problem of a test and printing readable diffs.

use std::collections::BTreeSet;

use super::truth::Series;
use super::Run;

/// Every problem of one test, reported together with a diff for each mismatching family.
#[derive(Default)]
pub struct Failures(pub Vec<String>);

impl Failures {
    pub fn push(&mut self, m: String) {
        self.0.push(m);
    }
    pub fn check(&mut self, what: &str, want: Option<f64>, got: Option<f64>) {
        if want != got {
            self.push(format!("{what}: want {want:?}, got {got:?}"));
        }
    }
    pub fn check_empty(&mut self, what: &str, items: &[String]) {
        if !items.is_empty() {
            self.push(format!("{what}:\n    {}", items.join("\n    ")));
        }
    }
    /// Exact comparison; values that are milliseconds divided by 1000 may differ by float
    /// rounding only (1e-9 relative).
    pub fn compare(&mut self, what: &str, want: &Series, got: &Series) {
        let mut lines = vec![];
        for k in want.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
            let (w, g) = (want.get(k), got.get(k));
            let same = match (w, g) {
                (Some(w), Some(g)) => (w - g).abs() <= 1e-9 * w.abs().max(1.0),
                _ => false,
            };
            let show = |v: Option<&f64>| v.map_or("(none)".to_string(), |v| format!("{v}"));
            lines.push(format!(
                "  {} {k}: REST {} / exported {}",
                if same { " " } else { "✗" },
                show(w),
                show(g)
            ));
        }
        if lines.iter().any(|l| l.starts_with("  ✗")) {
            self.push(format!(
                "{what} differs from the REST API:\n{}",
                lines.join("\n")
            ));
        }
    }
    pub fn finish(self, run: &Run) {
        if !self.0.is_empty() {
            panic!(
                "{} problem(s); artefacts in {}\n\n{}",
                self.0.len(),
                run.dir.display(),
                self.0.join("\n\n")
            );
        }
    }
}

pub fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
