//! The model's rules: how each kind of observation changes the state, one file per entity
//! (`impl State` methods and the functions they share). The state's types live beside them in
//! `src/model/` and know nothing of the rules, so no file imports back up.

mod app;
pub(super) mod cache;
pub(super) mod cost;
pub(super) mod executor;
pub(super) mod findings;
pub(super) mod group;
pub(super) mod job;
pub(super) mod sql;
pub(super) mod stage;
pub(super) mod streaming;
pub(super) mod tasks;
