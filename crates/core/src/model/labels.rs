//! Label values: regex rewrites, a length cap and a per-application cap on distinct values, so a
//! description such as "revenue for 2026-11-01" becomes one series, not one per day.

use std::sync::Arc;

use regex::Regex;

use crate::config::LabelsConfig;
use crate::hash::{Map, Set};
use crate::telemetry::Telemetry;

/// The value that stands for every value past a label's cap.
pub const OTHER: &str = "__other__";

/// Compiled rewrite rules and caps (shared by every application).
#[derive(Debug)]
pub struct Labeler {
    rules: Vec<(Regex, String)>,
    max_len: usize,
    max_values: usize,
}

/// Distinct values seen per label in one application.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct LabelSets {
    #[serde(with = "crate::model::serial::label_sets")]
    seen: Map<&'static str, Set<Arc<str>>>,
}

impl Labeler {
    /// The configured rules (compiled when the configuration was read).
    pub fn new(cfg: &LabelsConfig) -> Labeler {
        Labeler {
            rules: cfg
                .rewrite_rules
                .iter()
                .map(|r| (r.pattern.0.clone(), r.replacement.clone()))
                .collect(),
            max_len: cfg.max_value_length,
            max_values: cfg.max_values_per_label,
        }
    }

    /// Rewrite and cap a raw value (no cardinality check).
    pub fn rewrite(&self, raw: &str) -> String {
        let mut v = raw.trim().to_string();
        for (re, rep) in &self.rules {
            if re.is_match(&v) {
                v = re.replace_all(&v, rep.as_str()).into_owned();
            }
        }
        self.cap(&v)
    }

    /// Cut a value to the length cap (characters), marking the cut with `…`.
    pub fn cap(&self, v: &str) -> String {
        if v.chars().count() <= self.max_len {
            return v.to_string();
        }
        let mut s: String = v.chars().take(self.max_len.saturating_sub(1)).collect();
        s.push('…');
        s
    }

    /// The exported value of label `name` for `raw` in one application: rewritten, capped, and
    /// folded into [`OTHER`] once the label has `max_values` distinct values.
    pub fn value(
        &self,
        sets: &mut LabelSets,
        telemetry: &Telemetry,
        name: &'static str,
        raw: Option<&str>,
    ) -> Arc<str> {
        self.admit(sets, telemetry, name, self.rewrite(raw.unwrap_or("")))
    }

    /// Like [`Labeler::value`] for a value taken as it is: a call site (`count at etl.py:142`,
    /// whose line the rules would fold) or a value the exporter made itself (a streaming query's
    /// stand-in name, `query-1a8d25d9`). Capped and counted, but not rewritten.
    pub fn value_verbatim(
        &self,
        sets: &mut LabelSets,
        telemetry: &Telemetry,
        name: &'static str,
        v: &str,
    ) -> Arc<str> {
        self.admit(sets, telemetry, name, self.cap(v.trim()))
    }

    /// `v` (rewritten and capped) admitted to the label's set, or [`OTHER`] past its cap.
    fn admit(
        &self,
        sets: &mut LabelSets,
        telemetry: &Telemetry,
        name: &'static str,
        v: String,
    ) -> Arc<str> {
        let set = sets.seen.entry(name).or_default();
        if let Some(existing) = set.get(v.as_str()) {
            return existing.clone();
        }
        if set.len() >= self.max_values {
            telemetry.label_overflow(name);
            return Arc::from(OTHER);
        }
        let a: Arc<str> = Arc::from(v);
        set.insert(a.clone());
        a
    }

    /// `v`, a value already rewritten and capped for one application, admitted to another set
    /// (a name's series across runs): itself while the set has room, else [`OTHER`].
    pub fn keep(&self, sets: &mut LabelSets, name: &'static str, v: &Arc<str>) -> Arc<str> {
        let set = sets.seen.entry(name).or_default();
        if set.contains(v) {
            return v.clone();
        }
        if set.len() >= self.max_values {
            return Arc::from(OTHER);
        }
        set.insert(v.clone());
        v.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    fn labeler(max_values: usize) -> Labeler {
        let mut c = Settings::default().labels;
        c.max_values_per_label = max_values;
        c.max_value_length = 20;
        Labeler::new(&c)
    }

    #[test]
    fn defaults_fold_dates_numbers_uuids_and_hex() {
        let l = labeler(10);
        assert_eq!(l.rewrite("revenue for 2026-11-01"), "revenue for {date}");
        assert_eq!(l.rewrite("revenue for 2026-11-02"), "revenue for {date}");
        assert_eq!(l.rewrite("batch 42"), "batch {n}");
        assert_eq!(
            l.rewrite("run 123e4567-e89b-12d3-a456-426614174000"),
            "run {uuid}"
        );
        assert_eq!(l.rewrite("sha deadbeef01"), "sha {hex}");
        assert_eq!(l.rewrite("Load orders for EU"), "Load orders for EU");
        assert_eq!(l.rewrite("a bad face"), "a bad face");
    }

    #[test]
    fn long_values_are_cut() {
        let l = labeler(10);
        let v = l.rewrite("abcdefghijklmnopqrstuvwxyz");
        assert_eq!(v.chars().count(), 20);
        assert!(v.ends_with('…'));
    }

    #[test]
    fn values_past_the_cap_fold_into_other_and_are_counted() {
        let l = labeler(2);
        let t = Telemetry::default();
        let mut s = LabelSets::default();
        assert_eq!(&*l.value(&mut s, &t, "job_group", Some("a")), "a");
        assert_eq!(&*l.value(&mut s, &t, "job_group", Some("b")), "b");
        assert_eq!(&*l.value(&mut s, &t, "job_group", Some("c")), OTHER);
        assert_eq!(&*l.value(&mut s, &t, "job_group", Some("a")), "a");
        assert_eq!(t.snapshot().label_overflow.get("job_group"), Some(&1));
    }
}
