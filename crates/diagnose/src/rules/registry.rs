//! What a rule is ([`Rule`]: its kind's identifier, level, cost, step, documentation, threshold
//! keys, remedy and evaluation) and the registry that makes the finding kinds from the rules
//! ([`registry!`](crate::registry)): the `Kind` enum, `Kind::ALL`, `as_str`, `parse`,
//! `has_cost`, the threshold keys per kind, the kind lists per level and the rows of the
//! procedure's table in `docs/diagnose.md` ([`doc_table`]).

use std::collections::BTreeMap;

use spark_exporter_core::config::key::{Key, Set};
use spark_exporter_core::config::{docs, keys, DiagnoseConfig, Thresholds};
use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::findings::StageDigest;
use spark_exporter_core::model::view::{AppView, GroupView, SqlView};
use spark_exporter_core::model::GroupKey;

use crate::links::Links;
use crate::place::{Place, Summary};

/// One rule of the procedure, declared once in its file (`rules/<id>.rs`, as `RULE`); the
/// registry lists it.
#[derive(Debug)]
pub struct Rule {
    /// Its kind's identifier in the JSON report, the `kind` label and `--fail-on`: the
    /// snake_case of its registry name.
    pub id: &'static str,
    /// The procedure's step it belongs to (the table's *Step*).
    pub step: &'static str,
    /// Where its findings are (`a stage`, `the application`, ...): the schema's description of
    /// the kinds.
    pub scope: &'static str,
    /// When it finds (Markdown, the table's *Finding when*), naming its thresholds.
    pub when: &'static str,
    /// How its cost is computed (Markdown, the table's *Cost*).
    pub cost: &'static str,
    /// Whether its cost is a time the `min_cost` floor applies to; findings of the kinds without
    /// one are always reported.
    pub has_cost: bool,
    /// Whether its findings are a job group's (a stage, a group, a SQL description); `false`:
    /// the application's, with an empty `job_group` (the alerts and dashboards that sum by job
    /// group leave these kinds out).
    pub grouped: bool,
    /// The unit of its cost in the text (`task-seconds`, ...).
    pub unit: &'static str,
    /// The sources that give what it reads (the table's *Sources*).
    pub sources: &'static str,
    /// The `diagnose.*` configuration keys it reads, without the prefix: each is declared (with
    /// its default and documentation) in the core's configuration (`config/keys/diagnose.rs`),
    /// and a test fails on a name that is not.
    pub thresholds: &'static [&'static str],
    /// What the Spark tuning guides suggest (unless a finding gives its own).
    pub remedy: &'static str,
    /// Its evaluation, at its level.
    pub find: Find,
    /// What it could not check, for the text's notes.
    pub notes: Option<fn(&Cx<'_, '_>) -> Vec<String>>,
}

/// When a rule's findings are final, and so how the metrics count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Once a stage attempt settles (counted: `spark_diagnosis_findings`).
    Stage,
    /// Once the application has ended (counted: `spark_diagnosis_findings`).
    End,
    /// Over a window of what ran so far, changing while the application runs
    /// (`spark_diagnosis_window_findings`).
    Window,
}

/// A rule's evaluation: what it reads, at its level.
#[derive(Debug, Clone, Copy)]
pub enum Find {
    /// Each stage attempt, with its job group's thresholds ([`Level::Stage`]).
    Stage(fn(&Cx<'_, '_>, &StageDetail, &Thresholds) -> Vec<Draft>),
    /// The ended application as a whole ([`Level::End`]).
    End(fn(&Cx<'_, '_>, &End<'_, '_>) -> Vec<Draft>),
    /// Each job group, with its thresholds ([`Level::Window`]).
    Group(fn(&Cx<'_, '_>, &GroupView<'_>, &Thresholds) -> Vec<Draft>),
    /// The application as a whole, over the window ([`Level::Window`]).
    Window(fn(&Cx<'_, '_>) -> Vec<Draft>),
}

/// What the end rules read of an ended application.
pub struct End<'v, 'a> {
    /// Its job groups.
    pub groups: &'v [GroupView<'a>],
    /// Its SQL descriptions.
    pub sql: &'v [SqlView<'a>],
    /// Its stages' digest per job group and description ([`super::digest`]).
    pub digest: &'v BTreeMap<GroupKey, StageDigest>,
    /// Its totals (without stages).
    pub summary: &'v Summary,
}

/// A finding as a rule makes it; the procedure adds its kind and, unless it has its own, its
/// rule's remedy.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// One line for a human.
    pub title: String,
    /// The time it explains, seconds (0 for the kinds without a cost).
    pub cost_seconds: f64,
    /// Where.
    pub at: Place,
    /// The numbers behind it, by name.
    pub numbers: BTreeMap<String, f64>,
    /// Its Spark UI page, when known.
    pub url: Option<String>,
    /// A remedy for this finding in place of the rule's.
    pub remedy: Option<String>,
}

impl Rule {
    /// Its level, from its evaluation.
    pub const fn level(&self) -> Level {
        match self.find {
            Find::Stage(_) => Level::Stage,
            Find::End(_) => Level::End,
            Find::Group(_) | Find::Window(_) => Level::Window,
        }
    }

    /// The declarations of its threshold keys (`diagnose.<name>`), in its order; `None` for a
    /// name the configuration does not declare as a threshold.
    pub fn threshold_keys(&self) -> Vec<(&'static str, Option<&'static Key>)> {
        self.thresholds
            .iter()
            .map(|t| (*t, threshold_key(t)))
            .collect()
    }
}

/// The declaration of threshold `name` (`diagnose.<name>`), if the configuration has it.
pub fn threshold_key(name: &str) -> Option<&'static Key> {
    keys().find(|k| {
        matches!(k.set, Set::Threshold(_)) && k.name.strip_prefix("diagnose.") == Some(name)
    })
}

/// A registry's kind enum (what [`registry!`](crate::registry) makes): its kinds in the
/// procedure's order, and each one's rule.
pub trait RuleKind: Copy + Ord + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static {
    /// Every kind, in the procedure's order.
    const KINDS: &'static [Self];
    /// Their identifiers, in that order.
    const IDS: &'static [&'static str];
    /// The kind's rule.
    fn rule(self) -> &'static Rule;
}

/// How many of `rules` are at the window level (`window`), or not.
#[doc(hidden)]
pub const fn count_at(rules: &[&Rule], window: bool) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < rules.len() {
        if matches!(rules[i].level(), Level::Window) == window {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The identifiers of `rules` at the window level (`window`), or not, in order (`N` of them:
/// [`count_at`]).
#[doc(hidden)]
pub const fn ids_at<const N: usize>(rules: &[&'static Rule], window: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < rules.len() {
        if matches!(rules[i].level(), Level::Window) == window {
            out[n] = rules[i].id;
            n += 1;
        }
        i += 1;
    }
    out
}

/// A kind as JSON: its identifier (serde's unit variant).
#[doc(hidden)]
pub fn serialize_kind<K: RuleKind, S: serde::Serializer>(k: K, s: S) -> Result<S::Ok, S::Error> {
    let i = K::KINDS.iter().position(|x| *x == k).unwrap_or(0);
    s.serialize_unit_variant("Kind", i as u32, k.rule().id)
}

/// A kind from its identifier.
#[doc(hidden)]
pub fn deserialize_kind<'de, K: RuleKind, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<K, D::Error> {
    struct Id<K>(std::marker::PhantomData<K>);
    impl<K: RuleKind> serde::de::Visitor<'_> for Id<K> {
        type Value = K;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a finding kind")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<K, E> {
            K::KINDS
                .iter()
                .copied()
                .find(|k| k.rule().id == v)
                .ok_or_else(|| E::unknown_variant(v, K::IDS))
        }
    }
    d.deserialize_str(Id(std::marker::PhantomData))
}

/// The JSON Schema of a registry's kinds: one of their identifiers, described by where each
/// kind's findings are (kinds of the same place together, as in
/// `skew, spill, gc_pressure: a stage; ...`).
#[doc(hidden)]
pub fn kind_schema<K: RuleKind>() -> schemars::Schema {
    let mut scopes: Vec<(&str, Vec<&str>)> = vec![];
    for k in K::KINDS {
        let r = k.rule();
        match scopes.iter_mut().find(|(s, _)| *s == r.scope) {
            Some((_, ids)) => ids.push(r.id),
            None => scopes.push((r.scope, vec![r.id])),
        }
    }
    let description = scopes
        .iter()
        .map(|(s, ids)| format!("{}: {s}", ids.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
        + ".";
    schemars::json_schema!({
        "description": description,
        "type": "string",
        "enum": K::IDS,
    })
}

/// The bottleneck row that opens the procedure's table: not a rule, the report's
/// `bottlenecks`.
const BOTTLENECK_ROW: &str =
    "| Where the time went | (the report's `bottlenecks`) | the five stages \
    with the most task run time, with their share of the application's | | | both |\n";

/// The procedure's table of `docs/diagnose.md` (between its `diagnose-rules` markers): a row
/// per rule of registry `K`, in order, with its thresholds' defaults from the configuration's
/// declarations.
pub fn doc_table<K: RuleKind>() -> String {
    let mut s = String::from(
        "| Step | Kind | Finding when | Cost (seconds) | Thresholds (default) | Sources |\n\
         |---|---|---|---|---|---|\n",
    );
    s.push_str(BOTTLENECK_ROW);
    for k in K::KINDS {
        s.push_str(&doc_row(k.rule()));
    }
    s
}

/// One rule's row of the procedure's table.
pub fn doc_row(r: &Rule) -> String {
    let thresholds = r
        .threshold_keys()
        .into_iter()
        .map(|(name, key)| match key {
            Some(k) => format!("`{name}` ({})", docs::default_md(k)),
            None => format!("`{name}` (undeclared)"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let thresholds = if thresholds.is_empty() {
        "none".to_string()
    } else {
        thresholds
    };
    let cells = [
        r.step.to_string(),
        format!("`{}`", r.id),
        r.when.to_string(),
        r.cost.to_string(),
        thresholds,
        r.sources.to_string(),
    ];
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// Makes the finding kinds from a list of rules, one entry per rule: `Kind => path::to::rule`
/// (the rule's module, holding its `RULE`), in the procedure's order (ties in cost keep it).
///
/// In the invoking module it makes:
/// - `enum Kind`, a variant per entry (serialized as the rule's `id`, the variant's snake_case;
///   with its JSON Schema, the identifiers as an enum), implementing
///   [`RuleKind`](crate::rules::RuleKind);
/// - `Kind::ALL`, `Kind::RULES`, and `rule`, `as_str`, `parse`, `has_cost`, `level` and
///   `thresholds` per kind;
/// - `FINDING_KINDS` and `WINDOW_FINDING_KINDS`: the identifiers of the kinds counted once final
///   (stage and end level: `spark_diagnosis_findings`) and of the window kinds
///   (`spark_diagnosis_window_findings`).
///
/// The procedure runs any such registry ([`Procedure`](crate::rules::Procedure)), and
/// [`doc_table`](crate::rules::doc_table) makes its documentation. The built-in registry is
/// [`builtin_rules!`](crate::builtin_rules), which takes more entries after its own.
#[macro_export]
macro_rules! registry {
    ($($(#[$attr:meta])* $kind:ident => $($rule:ident)::+),+ $(,)?) => {
        /// The finding kinds, in the procedure's order: one per rule of the registry.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($(#[$attr])* $kind,)+
        }

        impl Kind {
            /// Every kind, in the procedure's order.
            pub const ALL: [Kind; [$(Kind::$kind),+].len()] = [$(Kind::$kind),+];

            /// Each kind's rule, in [`Kind::ALL`]'s order.
            pub const RULES: [&'static $crate::rules::Rule; [$(Kind::$kind),+].len()] =
                [$(&$($rule)::+::RULE),+];

            /// The kind's rule.
            pub const fn rule(self) -> &'static $crate::rules::Rule {
                Kind::RULES[self as usize]
            }

            /// The kind whose identifier is `s`.
            pub fn parse(s: &str) -> Option<Kind> {
                Kind::ALL.into_iter().find(|k| k.as_str() == s)
            }

            /// The kind's identifier in JSON.
            pub const fn as_str(self) -> &'static str {
                self.rule().id
            }

            /// Whether findings of this kind have a cost (and so a `min_cost` floor).
            pub const fn has_cost(self) -> bool {
                self.rule().has_cost
            }

            /// When its findings are final.
            pub const fn level(self) -> $crate::rules::Level {
                self.rule().level()
            }

            /// The `diagnose.*` threshold keys its rule reads (without the prefix).
            pub const fn thresholds(self) -> &'static [&'static str] {
                self.rule().thresholds
            }
        }

        /// The identifiers of the kinds counted once final (a stage attempt's, an ended
        /// application's): `spark_diagnosis_findings`' `kind` values, in the procedure's order.
        pub const FINDING_KINDS: &[&str] = &$crate::rules::ids_at::<
            { $crate::rules::count_at(&Kind::RULES, false) },
        >(&Kind::RULES, false);

        /// The identifiers of the window kinds: `spark_diagnosis_window_findings`' `kind`
        /// values, in the procedure's order.
        pub const WINDOW_FINDING_KINDS: &[&str] = &$crate::rules::ids_at::<
            { $crate::rules::count_at(&Kind::RULES, true) },
        >(&Kind::RULES, true);

        impl $crate::rules::RuleKind for Kind {
            const KINDS: &'static [Kind] = &Kind::ALL;
            const IDS: &'static [&'static str] = &[$($($rule)::+::RULE.id),+];
            fn rule(self) -> &'static $crate::rules::Rule {
                Kind::rule(self)
            }
        }

        impl $crate::__private::serde::Serialize for Kind {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                s: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                $crate::rules::serialize_kind(*self, s)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for Kind {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                d: D,
            ) -> ::std::result::Result<Kind, D::Error> {
                $crate::rules::deserialize_kind(d)
            }
        }

        impl $crate::__private::schemars::JsonSchema for Kind {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                "Kind".into()
            }
            fn json_schema(
                _: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                $crate::rules::kind_schema::<Kind>()
            }
        }
    };
}

// What the rules are written with: their context, where a stage or job group is, a finding's
// numbers, units.

/// The unit of most costs in the text.
pub const TASK_SECONDS: &str = "task-seconds";

/// Milliseconds as seconds.
pub fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// Where a stage attempt is.
pub fn stage_place(s: &StageDetail) -> Place {
    Place {
        job_group: Some(s.group.0.to_string()),
        description: Some(s.group.1.to_string()),
        stage_id: Some(s.stage_id),
        stage_attempt: Some(s.attempt),
        stage_name: Some(s.name.to_string()),
        ..Place::default()
    }
}

/// Where a job group (and description) is.
pub fn group_place(g: &GroupView<'_>) -> Place {
    Place {
        job_group: Some(g.key.0.to_string()),
        description: Some(g.key.1.to_string()),
        ..Place::default()
    }
}

/// What every rule reads: the application's view, the thresholds and the Spark UI's links.
pub struct Cx<'c, 'a> {
    /// The `diagnose` thresholds (per job group: [`DiagnoseConfig::for_group`]).
    pub cfg: &'c DiagnoseConfig,
    /// The application's Spark UI pages.
    pub links: &'c Links,
    /// The application.
    pub app: &'c AppView<'a>,
}

impl Cx<'_, '_> {
    /// A finding at stage attempt `s`, linked to its page.
    pub fn stage_draft(
        &self,
        s: &StageDetail,
        title: String,
        cost: f64,
        numbers: BTreeMap<String, f64>,
    ) -> Draft {
        Draft {
            title,
            cost_seconds: cost,
            at: stage_place(s),
            numbers,
            url: self.links.stage(self.app.id(), s.stage_id, s.attempt),
            remedy: None,
        }
    }
}

/// A finding's numbers from `(name, value)` pairs.
pub fn numbers<const N: usize>(pairs: [(&str, f64); N]) -> BTreeMap<String, f64> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Bytes for a human: `1.5 MiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}
