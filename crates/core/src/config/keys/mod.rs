//! Every configuration key, declared once, by section: what each key is called, its flag, its
//! documentation and how its value is read into the [`crate::config::Settings`] of its
//! section's file (`config/web.rs` holds the `web` values, `keys/web.rs` their keys).

mod cost;
mod diagnose;
mod labels;
mod lifecycle;
mod model;
mod otlp;
mod web;

pub(crate) use cost::check_cost;
pub(crate) use lifecycle::check_shard;

use super::declared::Declared;
use super::key::Key;

/// The core's sections after `web`, in the order they are read and documented
/// (`diagnose.groups` after the thresholds it starts from).
const SECTIONS: &[&[Key]] = &[
    model::KEYS,
    cost::KEYS,
    labels::KEYS,
    lifecycle::KEYS,
    otlp::KEYS,
    diagnose::KEYS,
];

/// Every declared key: `web`'s, then the sections declared outside the core (the sources'),
/// then the core's others.
pub fn all(declared: &'static [&'static Declared]) -> impl Iterator<Item = &'static Key> + Clone {
    web::KEYS
        .iter()
        .chain(declared.iter().flat_map(|d| d.keys.iter()))
        .chain(SECTIONS.iter().flat_map(|s| s.iter()))
}
