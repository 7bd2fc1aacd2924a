//! Which applications this exporter follows, decided once from the settings and asked by
//! everyone who decides it: the REST poller (before reading an application), the event-log pool
//! (before reading a log) and the model (before keeping an application). Each asks as early as
//! it can, with what it knows by then:
//! - **by application id** (a log's name, a listing's entry): this exporter's shard
//!   ([`crate::shard`]), unless shards go by name (`model.aggregate_by: app_name`);
//! - **by name**: `model.app_name_filter`, and in name mode the shard of the name;
//!   `spark.app_name_filter` narrows REST listings (History Servers) only;
//! - **by time**: `model.max_app_age`, against the application's start or, before a log is
//!   read, the log's last modification (a log last written before the window is of an
//!   application that started before it).
//!
//! The collectors' checks only save work: the model refuses what they let through anyway.

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::clock::EpochMs;
use crate::config::{AggregateBy, Settings};
use crate::shard::Shard;

/// Why an application is not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `model.app_name_filter` does not match its name.
    Name,
    /// Name mode: the name is another shard's.
    Shard,
    /// It started before `model.max_app_age`.
    Age,
}

/// The applications this exporter follows (see the module docs). Cheap to clone: every
/// collector and the model hold the same one.
#[derive(Debug, Clone, Default)]
pub struct AppFilter {
    inner: Arc<Inner>,
}

#[derive(Debug, Default, Clone)]
struct Inner {
    /// `model.app_name_filter`.
    name: Option<Regex>,
    /// A listing's own filter (REST's `spark.app_name_filter`), set by [`AppFilter::listing`].
    listing: Option<Regex>,
    /// This exporter's shard.
    shard: Shard,
    /// The part of the applications known by id alone (`Settings::shard_by_app_id`): the
    /// shard, or every application in name mode.
    id_shard: Shard,
    /// Shards go by application name (`model.aggregate_by: app_name`), not id.
    by_name: bool,
    /// `model.max_app_age`.
    max_age: Option<Duration>,
}

impl AppFilter {
    /// The filter `settings` describe (its patterns were compiled when the configuration was
    /// read; a clone of a compiled regex shares it).
    pub fn new(settings: &Settings) -> AppFilter {
        AppFilter {
            inner: Arc::new(Inner {
                name: settings.model.app_name_filter.as_ref().map(|p| p.0.clone()),
                listing: None,
                shard: settings.shard,
                id_shard: settings.shard_by_app_id(),
                by_name: settings.model.aggregate_by == AggregateBy::AppName,
                max_age: settings.model.max_app_age,
            }),
        }
    }

    /// This filter, with listings also narrowed by `pattern` (REST's `spark.app_name_filter`:
    /// the source keeps its own section, the model does not know it).
    pub fn listing(&self, pattern: Option<&crate::config::Pattern>) -> AppFilter {
        let mut inner = (*self.inner).clone();
        inner.listing = pattern.map(|p| p.0.clone());
        AppFilter {
            inner: Arc::new(inner),
        }
    }

    /// Whether application `app_id` may be this exporter's, known before anything of it is
    /// read: its shard by id (every id in name mode, where the name decides).
    pub fn owns_id(&self, app_id: &str) -> bool {
        self.inner.id_shard.owns(app_id)
    }

    /// Whether an application named `name` may be this exporter's: in name mode, the name's
    /// shard (every name otherwise, where the id decides).
    pub fn owns_name(&self, name: &str) -> bool {
        !self.inner.by_name || self.inner.shard.owns(name)
    }

    /// Whether the application `app_id` named `name` is this exporter's shard's, by id or by
    /// name as `model.aggregate_by` says.
    pub fn owns(&self, app_id: &str, name: &str) -> bool {
        self.owns_id(app_id) && self.owns_name(name)
    }

    /// Whether `name` passes `model.app_name_filter` (every name when unset).
    pub fn matches_name(&self, name: &str) -> bool {
        self.inner.name.as_ref().is_none_or(|r| r.is_match(name))
    }

    /// Whether a REST listing's application named `name` is read: `spark.app_name_filter` and
    /// `model.app_name_filter` both match (the model would drop the others; not polling them
    /// saves requests).
    pub fn lists_name(&self, name: &str) -> bool {
        self.inner.listing.as_ref().is_none_or(|r| r.is_match(name)) && self.matches_name(name)
    }

    /// Whether `at_ms` (an application's start, or its log's last modification) is older than
    /// `model.max_app_age` as of `now`; an unknown time is not.
    pub fn too_old(&self, at_ms: Option<EpochMs>, now: EpochMs) -> bool {
        let (Some(age), Some(at)) = (self.inner.max_age, at_ms) else {
            return false;
        };
        let age = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
        at < now.saturating_sub(age)
    }

    /// The model's verdict on an application named `name` that started at `start_ms`: why it
    /// is not kept, if it is not. A name not known yet (empty) is not judged by name.
    pub fn refuses(&self, name: &str, start_ms: Option<EpochMs>, now: EpochMs) -> Option<Refusal> {
        if !name.is_empty() {
            if !self.matches_name(name) {
                return Some(Refusal::Name);
            }
            if !self.owns_name(name) {
                return Some(Refusal::Shard);
            }
        }
        self.too_old(start_ms, now).then_some(Refusal::Age)
    }

    /// Whether the event log of application `app_id` (the id its name gives), last modified at
    /// `modified_ms`, is read at all.
    pub fn reads_log(&self, app_id: &str, modified_ms: Option<EpochMs>, now: EpochMs) -> bool {
        !self.too_old(modified_ms, now) && self.owns_id(app_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(f: impl FnOnce(&mut Settings)) -> AppFilter {
        let mut s = Settings::default();
        f(&mut s);
        AppFilter::new(&s)
    }

    /// An id (or name) of each shard of 3.
    fn of_shard(index: usize) -> String {
        (0..)
            .map(|i| format!("app-{i}"))
            .find(|id| crate::shard::shard_of(id, 3) == index)
            .expect("some id")
    }

    #[test]
    fn the_default_follows_everything() {
        let f = AppFilter::default();
        assert!(f.owns("any", "name") && f.lists_name("name") && f.matches_name(""));
        assert!(!f.too_old(Some(0), i64::MAX));
        assert_eq!(f.refuses("name", Some(0), i64::MAX), None);
        assert!(f.reads_log("any", Some(0), i64::MAX));
        let from_defaults = AppFilter::new(&Settings::default());
        assert_eq!(from_defaults.refuses("x", Some(0), i64::MAX), None);
    }

    #[test]
    fn shards_go_by_id_or_by_name() {
        let (mine, other) = (of_shard(1), of_shard(2));
        let shard = Shard { index: 1, count: 3 };
        let by_id = filter(|s| s.shard = shard);
        assert!(by_id.owns_id(&mine) && !by_id.owns_id(&other));
        assert!(by_id.owns_name(&other), "the id decides");
        assert!(by_id.owns(&mine, &other) && !by_id.owns(&other, &mine));
        assert_eq!(by_id.refuses(&other, None, 0), None);
        assert!(by_id.reads_log(&mine, None, 0) && !by_id.reads_log(&other, None, 0));

        let by_name = filter(|s| {
            s.shard = shard;
            s.model.aggregate_by = AggregateBy::AppName;
        });
        assert!(by_name.owns_id(&other), "the name decides");
        assert!(by_name.owns_name(&mine) && !by_name.owns_name(&other));
        assert!(by_name.owns(&other, &mine) && !by_name.owns(&mine, &other));
        assert_eq!(by_name.refuses(&other, None, 0), Some(Refusal::Shard));
        assert_eq!(by_name.refuses(&mine, None, 0), None);
        assert!(
            by_name.reads_log(&other, None, 0),
            "every log: its name is read later"
        );
    }

    #[test]
    fn names_pass_the_model_filter_and_listings_both() {
        let f = filter(|s| s.model.app_name_filter = crate::config::Pattern::new("^etl").ok());
        let f = f.listing(crate::config::Pattern::new("nightly$").ok().as_ref());
        assert!(f.matches_name("etl-hourly") && !f.matches_name("adhoc"));
        assert!(f.lists_name("etl-nightly"));
        assert!(!f.lists_name("etl-hourly"), "spark.app_name_filter");
        assert!(!f.lists_name("adhoc-nightly"), "model.app_name_filter");
        assert_eq!(f.refuses("adhoc", None, 0), Some(Refusal::Name));
        assert_eq!(
            f.refuses("etl-hourly", None, 0),
            None,
            "the listing filter is REST's"
        );
        assert_eq!(f.refuses("", None, 0), None, "a name not known yet");
        assert!(!f.lists_name(""), "a listing's missing name is judged");
    }

    #[test]
    fn max_app_age_by_start_or_by_log_modification() {
        let f = filter(|s| s.model.max_app_age = Some(Duration::from_secs(3600)));
        let now = 10_000_000;
        let edge = now - 3_600_000;
        assert!(!f.too_old(Some(edge), now) && f.too_old(Some(edge - 1), now));
        assert!(!f.too_old(None, now), "no time known");
        assert_eq!(f.refuses("", Some(edge - 1), now), Some(Refusal::Age));
        assert_eq!(f.refuses("x", Some(edge), now), None);
        assert!(f.reads_log("local-1", Some(now - 60_000), now));
        assert!(!f.reads_log("local-2", Some(now - 7_200_000), now));
        assert!(f.reads_log("local-3", None, now));
        // A refused name is the reason given first.
        let both = filter(|s| {
            s.model.max_app_age = Some(Duration::from_secs(1));
            s.model.app_name_filter = crate::config::Pattern::new("^etl").ok();
        });
        assert_eq!(both.refuses("adhoc", Some(0), now), Some(Refusal::Name));
    }

    #[test]
    fn clones_share_one_compiled_filter() {
        let f = filter(|s| s.model.app_name_filter = crate::config::Pattern::new("^etl").ok());
        let g = f.clone();
        assert!(Arc::ptr_eq(&f.inner, &g.inner));
    }
}
