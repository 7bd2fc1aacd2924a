//! The weekly review: many applications' diagnoses folded into one ranking of application names
//! and job groups by what their findings cost, with the worst runs. What `diagnose --review`
//! prints: as text ([`render`]), with `--format html` as a self-contained page
//! ([`render_html`]) or, with `--format json`, as a [`Review`] (its own document
//! kind and version, [`REVIEW_SCHEMA_VERSION`], described by the JSON Schema generated from these
//! types, committed as `schemas/diagnose-review.v1.schema.json`).
//!
//! The main crate reads one application at a time, diagnoses it, folds its report into a
//! [`Ranking`] and drops it: the ranking holds one row per name and per (name, job group) and at
//! most `top` runs, so its size follows the fleet's names, not its applications.
//!
//! Costs of different kinds overlap (a skewed stage that spills counts in both `skew` and
//! `spill`), and their units differ (task-seconds, idle core-seconds, batch-seconds): they are
//! kept per kind and never added up over kinds. A row is ranked by the cost of its costliest
//! kind.
//!
//! - `ranking`: the review's types, the fold and the schema.
//! - `settings`: the settings suggested per application name, summed over its runs.
//! - `text`: the human rendering.
//! - `html`: the page (`--format html`): inline SVG charts and the tables, self-contained.

mod html;
mod ranking;
mod settings;
mod text;

pub use html::render_html;
pub use ranking::*;
pub use text::render;
