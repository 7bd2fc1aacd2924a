//! Sections of the configuration declared outside the core: a source's (`spark`, `event_log`)
//! lives in its folder in the binary, with its keys, and is declared once at start-up
//! ([`declare`]). The core then reads, checks, prints and documents it with its own sections.

use std::sync::OnceLock;

use super::key::Key;
use super::section::{Section, SectionConfig, Sections};
use super::settings::Settings;

/// A section declared by its owner: its name, its keys, its default value and the checks that
/// span several of its keys.
#[derive(Debug)]
pub struct Declared {
    /// The section's name.
    pub name: &'static str,
    /// Its keys, in the order they are read and documented.
    pub keys: &'static [Key],
    /// Its default value.
    pub default: fn() -> Box<dyn Section>,
    /// Problems of its keys together (values that exclude each other), added to `errors`.
    pub check: fn(&Settings, &mut Vec<String>),
}

fn boxed_default<T: SectionConfig>() -> Box<dyn Section> {
    Box::new(T::default())
}

fn no_check(_: &Settings, _: &mut Vec<String>) {}

impl Declared {
    /// Section `T` with `keys`, checked key by key only.
    pub const fn of<T: SectionConfig>(keys: &'static [Key]) -> Declared {
        Declared {
            name: T::NAME,
            keys,
            default: boxed_default::<T>,
            check: no_check,
        }
    }

    /// With `check` run over the settings once every key is read.
    pub const fn checked(mut self, check: fn(&Settings, &mut Vec<String>)) -> Declared {
        self.check = check;
        self
    }
}

static DECLARED: OnceLock<Vec<&'static Declared>> = OnceLock::new();

/// Declare the sections outside the core, once per process (a second call is ignored: the
/// binary declares the same ones everywhere).
pub fn declare(sections: Vec<&'static Declared>) {
    let _ = DECLARED.set(sections);
}

/// The sections declared ([`declare`]); none before.
pub fn declared() -> &'static [&'static Declared] {
    DECLARED.get().map_or(&[], Vec::as_slice)
}

impl Settings {
    /// The defaults, with every declared section's ([`declare`]).
    pub fn defaults() -> Settings {
        Settings {
            sections: Sections::of(declared().iter().map(|d| (d.default)()).collect()),
            ..Settings::default()
        }
    }
}
