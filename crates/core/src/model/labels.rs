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
    rules: Vec<Rule>,
    max_len: usize,
    max_values: usize,
}

/// One compiled rewrite rule.
#[derive(Debug)]
struct Rule {
    re: Regex,
    replacement: String,
    /// The pattern has a group named `next`: a look-ahead (`RewriteRule`).
    next: bool,
}

impl Rule {
    /// Every match in `v` replaced, left to right. Without a `next` group, `replace_all`. With
    /// one, what `next` matched is left in place and the search goes on from its start, so the
    /// character after one match can be the one before the next (`1 2`: both numbers fold).
    fn apply(&self, v: &str) -> String {
        if !self.next {
            return self
                .re
                .replace_all(v, self.replacement.as_str())
                .into_owned();
        }
        let mut out = String::with_capacity(v.len());
        let (mut kept, mut at) = (0, 0);
        while at <= v.len() {
            let Some(c) = self.re.captures_at(v, at) else {
                break;
            };
            let Some(whole) = c.get(0) else { break };
            let end = c.name("next").map_or(whole.end(), |n| n.start());
            out.push_str(&v[kept..whole.start()]);
            c.expand(&self.replacement, &mut out);
            kept = end.max(whole.start());
            // An empty replaced part would match again where it stands: step past a character.
            at = if kept > whole.start() {
                kept
            } else {
                v[kept..]
                    .chars()
                    .next()
                    .map_or(v.len() + 1, |ch| kept + ch.len_utf8())
            };
        }
        out.push_str(&v[kept..]);
        out
    }
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
                .map(|r| Rule {
                    next: r.pattern.0.capture_names().any(|n| n == Some("next")),
                    re: r.pattern.0.clone(),
                    replacement: r.replacement.clone(),
                })
                .collect(),
            max_len: cfg.max_value_length,
            max_values: cfg.max_values_per_label,
        }
    }

    /// Rewrite and cap a raw value (no cardinality check).
    pub fn rewrite(&self, raw: &str) -> String {
        let mut v = raw.trim().to_string();
        for rule in &self.rules {
            if rule.re.is_match(&v) {
                v = rule.apply(&v);
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

    /// Every form the default rules fold, and every form they keep (issue 49: names such as
    /// `q01` were folded into `q{n}`).
    #[test]
    fn the_default_rules_fold_what_counts_and_keep_what_names() {
        let mut c = Settings::default().labels;
        c.max_value_length = 200;
        let l = Labeler::new(&c);
        let fold = [
            ("batch 42", "batch {n}"),
            ("42", "{n}"),
            ("1 2 3", "{n} {n} {n}"),
            ("ratio 1.5", "ratio {n}.{n}"),
            ("rows 10-20", "rows {n}"),
            ("stage 3 of job 7", "stage {n} of job {n}"),
            ("revenue for 2026-11-01", "revenue for {date}"),
            ("revenue for 2026-11-02", "revenue for {date}"),
            ("load 2026_12_06", "load {date}"),
            ("load 2026/12/06", "load {date}"),
            ("at 2026-12-06T12:30:00Z", "at {date}"),
            ("at 2026-12-06 12:30:00.123+01:00", "at {date}"),
            ("at 12:30:00", "at {time}"),
            ("at 12:30", "at {time}"),
            ("12:30:00", "{time}"),
            ("run_20261206", "run_{n}"),
            ("load_1733500000", "load_{n}"),
            ("q12345", "q{n}"),
            ("app-20261206205520-0000", "{app_id}"),
            ("replay app-20261206205520-0012", "replay {app_id}"),
            ("application_1733500000000_0042", "{app_id}"),
            ("local-1796000000000", "{app_id}"),
            ("run 123e4567-e89b-12d3-a456-426614174000", "run {uuid}"),
            ("sha deadbeef01", "sha {hex}"),
            ("sha_deadbeef01", "sha_{hex}"),
            ("commit-3f2a9c81d0e4", "commit-{hex}"),
            ("0x1f2e3d4c5b", "{hex}"),
            ("deadbeef01 cafebabe02", "{hex} {hex}"),
        ];
        let keep = [
            "q01",
            "q22",
            "q14a",
            "TPC-H Q1",
            "TPC-H Q18",
            "step_3",
            "tpcds_q72",
            "tpcds_q14_2",
            "etl-v2",
            "v2",
            "eu1",
            "load_region_eu1",
            "Load orders for region EU1",
            "2nd pass",
            "top10",
            "batch_42",
            "part-1-of-3",
            "Load orders for EU",
            "a bad face",
            "daily_report",
            "",
        ];
        for (raw, want) in fold {
            assert_eq!(l.rewrite(raw), want, "{raw:?} folds");
        }
        for raw in keep {
            assert_eq!(l.rewrite(raw), raw, "{raw:?} stays");
        }
    }

    /// A group named `next` is read but not replaced; without one a rule is `replace_all`.
    #[test]
    fn a_next_group_looks_ahead() {
        let rule = |p: &str, r: &str| Rule {
            re: Regex::new(p).unwrap(),
            replacement: r.into(),
            next: p.contains("(?P<next>"),
        };
        assert_eq!(
            rule(r"(^| )\d(?P<next>$| )", "${1}N").apply("1 2 3"),
            "N N N"
        );
        assert_eq!(rule(r"(^| )\d(?: |$)", "${1}N").apply("1 2 3"), "N2 N");
        assert_eq!(rule(r"x*(?P<next>)", "-").apply("ab"), "-a-b-");
        assert_eq!(rule(r"é(?P<next>.)", "e").apply("ééé"), "eeé");
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
