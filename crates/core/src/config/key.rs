//! A configuration key, declared once: its name, flag, documentation, default's description,
//! the commands that use it, and how its value is parsed into [`Settings`].
//!
//! The environment variable is the name's (`model.summary_level` is
//! `SPARK_EXPORTER_MODEL__SUMMARY_LEVEL`), the flag's help is the documentation's first
//! sentence, and the default is printed from [`Settings::default`] unless the declaration
//! describes it. The reader (`reader.rs`), the flags (`flags.rs`), `check-config` and the
//! reference in `docs/configuration.md` (`docs.rs`) all come from these declarations.

use std::collections::BTreeMap;

use serde_json::Value;

use super::diagnose::Thresholds;
pub use super::parse::Problems;
use super::settings::Settings;

/// Env-var prefix: `SPARK_EXPORTER_SPARK__POLL_INTERVAL=10s`.
pub const ENV_PREFIX: &str = "SPARK_EXPORTER";

/// One key of the configuration.
#[derive(Debug)]
pub struct Key {
    /// Dotted name in files (`model.summary_level`), also the override key.
    pub name: &'static str,
    /// Its command-line flag, if it has one.
    pub flag: Flag,
    /// How the reference describes the default, when the default's printed value does not say
    /// it well (a computed default, a long list).
    pub default: Option<&'static str>,
    /// What it does (Markdown): the reference's *Meaning*; its first sentence is the flag's help
    /// unless [`Key::brief`] gives a shorter one.
    pub doc: &'static str,
    /// The flag's help when the documentation's first sentence is too long for `--help`.
    pub brief: Option<&'static str>,
    /// The commands it changes.
    pub uses: Uses,
    /// Standard OpenTelemetry variables that also set it (`otlp.*`).
    pub otel_env: Option<&'static str>,
    /// The values it takes, when it takes one of a few words (the Helm chart's schema types
    /// them from here; a test parses each, and refuses another).
    pub choices: Option<&'static [&'static str]>,
    /// How a value is read into the settings.
    pub set: Set,
}

/// A key's command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// None: the key is set in a file or the environment only.
    None,
    /// `--name value`.
    Value(&'static str),
    /// `--name value`, repeatable; each value is one list item, an empty value means none.
    Repeat(&'static str),
    /// `--name`, which sets the key to `true`.
    Switch(&'static str),
}

impl Flag {
    /// The long flag name, without `--`.
    pub fn long(self) -> Option<&'static str> {
        match self {
            Flag::None => None,
            Flag::Value(l) | Flag::Repeat(l) | Flag::Switch(l) => Some(l),
        }
    }
}

/// The commands a key changes (`check-config` prints every key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uses(u8);

impl Uses {
    /// The exporter (`run`, the default command).
    pub const RUN: Uses = Uses(1);
    /// `dump`.
    pub const DUMP: Uses = Uses(2);
    /// `diagnose`.
    pub const DIAGNOSE: Uses = Uses(4);
    /// `run` and `dump`: what the exposition shows.
    pub const SERVE: Uses = Uses(1 | 2);
    /// Every command that reads Spark.
    pub const ALL: Uses = Uses(1 | 2 | 4);

    /// Whether every command of `other` is one of these.
    pub fn includes(self, other: Uses) -> bool {
        self.0 & other.0 == other.0
    }

    /// The command names, for the reference.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Self::RUN, "run"),
            (Self::DUMP, "dump"),
            (Self::DIAGNOSE, "diagnose"),
        ]
        .into_iter()
        .filter(|(u, _)| self.0 & u.0 != 0)
        .map(|(_, n)| n)
        .collect()
    }
}

/// How a key's value is read, by the shape it takes.
#[derive(Debug, Clone, Copy)]
pub enum Set {
    /// A scalar: a string, number or boolean (what a file, variable or flag gives).
    One(fn(&mut Settings, &str) -> Result<(), String>),
    /// A list: an array, or comma-separated text (the environment's form).
    List(fn(&mut Settings, &[String]) -> Result<(), Problems>),
    /// A string map: a table, or `name=value,name2=value2` (the environment's form).
    Map(fn(&mut Settings, BTreeMap<String, String>) -> Result<(), Problems>),
    /// A structured value read whole (rewrite rules, per-group thresholds).
    Tree(fn(&mut Settings, &Value) -> Result<(), Problems>),
    /// A `diagnose` threshold: set in the defaults, and per job group under `diagnose.groups`.
    Threshold(fn(&mut Thresholds, &str) -> Result<(), String>),
}

impl Key {
    const fn new(name: &'static str, set: Set) -> Key {
        Key {
            name,
            flag: Flag::None,
            default: None,
            doc: "",
            brief: None,
            uses: Uses::ALL,
            otel_env: None,
            choices: None,
            set,
        }
    }
    /// A scalar key.
    pub const fn one(name: &'static str, f: fn(&mut Settings, &str) -> Result<(), String>) -> Key {
        Key::new(name, Set::One(f))
    }
    /// A list key.
    pub const fn list(
        name: &'static str,
        f: fn(&mut Settings, &[String]) -> Result<(), Problems>,
    ) -> Key {
        Key::new(name, Set::List(f))
    }
    /// A string-map key.
    pub const fn map(
        name: &'static str,
        f: fn(&mut Settings, BTreeMap<String, String>) -> Result<(), Problems>,
    ) -> Key {
        Key::new(name, Set::Map(f))
    }
    /// A key read as a whole tree.
    pub const fn tree(
        name: &'static str,
        f: fn(&mut Settings, &Value) -> Result<(), Problems>,
    ) -> Key {
        Key::new(name, Set::Tree(f))
    }
    /// A `diagnose` threshold.
    pub const fn threshold(
        name: &'static str,
        f: fn(&mut Thresholds, &str) -> Result<(), String>,
    ) -> Key {
        Key {
            uses: Uses::DIAGNOSE,
            ..Key::new(name, Set::Threshold(f))
        }
    }
    /// With the flag `--long value`.
    pub const fn flag(self, long: &'static str) -> Key {
        Key {
            flag: Flag::Value(long),
            ..self
        }
    }
    /// With the repeatable flag `--long value`.
    pub const fn repeat(self, long: &'static str) -> Key {
        Key {
            flag: Flag::Repeat(long),
            ..self
        }
    }
    /// With the switch `--long`.
    pub const fn switch(self, long: &'static str) -> Key {
        Key {
            flag: Flag::Switch(long),
            ..self
        }
    }
    /// With its documentation.
    pub const fn doc(self, doc: &'static str) -> Key {
        Key { doc, ..self }
    }
    /// Taking one of `choices` (in the reference's order).
    pub const fn choices(self, choices: &'static [&'static str]) -> Key {
        Key {
            choices: Some(choices),
            ..self
        }
    }
    /// With a short help for its flag (the documentation stays the reference's).
    pub const fn brief(self, brief: &'static str) -> Key {
        Key {
            brief: Some(brief),
            ..self
        }
    }
    /// With the reference's description of its default.
    pub const fn default(self, default: &'static str) -> Key {
        Key {
            default: Some(default),
            ..self
        }
    }
    /// Used by these commands only.
    pub const fn uses(self, uses: Uses) -> Key {
        Key { uses, ..self }
    }
    /// Also set by these OpenTelemetry variables.
    pub const fn otel(self, vars: &'static str) -> Key {
        Key {
            otel_env: Some(vars),
            ..self
        }
    }

    /// Its environment variable: `SPARK_EXPORTER_<SECTION>__<KEY>`.
    pub fn env(&self) -> String {
        format!(
            "{}_{}",
            ENV_PREFIX,
            self.name.replace('.', "__").to_ascii_uppercase()
        )
    }

    /// Whether its value is a list (the environment splits it at commas).
    pub fn is_list(&self) -> bool {
        matches!(self.set, Set::List(_))
    }

    /// The flag's help: the documentation's first sentence, as plain text.
    pub fn help(&self) -> String {
        if let Some(b) = self.brief {
            return b.to_string();
        }
        let plain = plain_text(self.doc);
        let first = match plain.find(". ") {
            Some(i) => &plain[..=i],
            None => plain.as_str(),
        };
        first.trim().to_string()
    }
}

/// Markdown as terminal text: no backticks, links as their text.
fn plain_text(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after
            .find("](")
            .and_then(|j| after[j..].find(')').map(|k| (j, j + k)))
        {
            Some((j, end)) if !after[..j].contains('[') => {
                out.push_str(&after[..j]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_the_first_sentence_in_plain_text() {
        let k = Key::one("a.b", |_, _| Ok(()))
            .doc("Path of the `/metrics` [exposition](x.md#y). More here. And here.");
        assert_eq!(k.help(), "Path of the /metrics exposition.");
        assert_eq!(k.env(), "SPARK_EXPORTER_A__B");
    }
}
