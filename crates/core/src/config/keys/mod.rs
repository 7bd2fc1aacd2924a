//! Every configuration key, declared once, by section: what each key is called, its flag, its
//! documentation and how its value is read into the [`crate::config::Settings`] of its
//! section's file (`config/web.rs` holds the `web` values, `keys/web.rs` their keys).

mod cost;
mod diagnose;
mod event_log;
mod labels;
mod lifecycle;
mod model;
mod otlp;
mod spark;
mod web;

pub(crate) use cost::check_cost;
pub(crate) use lifecycle::check_shard;

use super::key::Key;

/// Every section's keys, in the order they are read and documented (`diagnose.groups` after
/// the thresholds it starts from).
const SECTIONS: &[&[Key]] = &[
    web::KEYS,
    spark::KEYS,
    event_log::KEYS,
    model::KEYS,
    cost::KEYS,
    labels::KEYS,
    lifecycle::KEYS,
    otlp::KEYS,
    diagnose::KEYS,
];

/// Every declared key.
pub fn all() -> impl Iterator<Item = &'static Key> + Clone {
    SECTIONS.iter().flat_map(|s| s.iter())
}
