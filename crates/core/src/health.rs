//! The sources' health, as a handle of its own: each source writes how the places it reads (a
//! REST target, an event-log folder) answer and when its first round is done, under its own
//! name; the exporter's control reads it: readiness (`/readyz`), the status page and, in classic
//! mode, the end of an application whose driver went away (`lifecycle.rest_unreachable_after`).
//! Nothing here names a source: the binary's registry of sources does. The self-metrics
//! ([`crate::telemetry`]) only export; nothing decides from them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::clock::EpochMs;

/// How one place of a source (a REST target, an event-log folder) answered so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Place {
    /// Epoch ms of the last success.
    pub last_ok_ms: Option<EpochMs>,
    /// Epoch ms of the first failure after the last success (None while it answers).
    pub down_since_ms: Option<EpochMs>,
    /// Epoch ms and text of the last failure, when it failed after its last success.
    pub last_error: Option<(EpochMs, String)>,
}

impl Place {
    /// Answering: it succeeded last (`None` before its first attempt).
    pub fn up(&self) -> Option<bool> {
        match (&self.last_ok_ms, &self.down_since_ms) {
            (None, None) => None,
            (_, Some(_)) => Some(false),
            (Some(_), None) => Some(true),
        }
    }
}

/// The sources' health, shared (`Arc<Health>`) by the collectors that write it and the server
/// and lifecycle that read it. Never held across `.await`.
#[derive(Debug, Default)]
pub struct Health {
    inner: Mutex<BTreeMap<String, SourceHealth>>,
}

/// One source's health.
#[derive(Debug, Default, Clone)]
struct SourceHealth {
    /// Every place read at least once, answered or not.
    places: BTreeMap<String, Place>,
    /// Its first round is done (every place tried once, a first step read).
    first_round_done: bool,
}

impl Health {
    fn with<R>(&self, source: &str, f: impl FnOnce(&mut SourceHealth) -> R) -> R {
        // A poisoned lock only means a writer panicked mid-update; the values stay usable.
        let mut all = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(all.entry(source.to_string()).or_default())
    }

    /// `source` read `place` successfully at `at_ms`.
    pub fn answered(&self, source: &str, place: &str, at_ms: EpochMs) {
        self.with(source, |s| {
            let p = s.places.entry(place.to_string()).or_default();
            p.last_ok_ms = Some(at_ms);
            p.down_since_ms = None;
            p.last_error = None;
        })
    }

    /// `source` could not read `place` at `at_ms`, because of `error` (kept until it answers
    /// again).
    pub fn failed(&self, source: &str, place: &str, at_ms: EpochMs, error: &str) {
        self.with(source, |s| {
            let p = s.places.entry(place.to_string()).or_default();
            p.down_since_ms.get_or_insert(at_ms);
            p.last_error = Some((at_ms, error.to_string()));
        })
    }

    /// `source` has finished its first round.
    pub fn round_done(&self, source: &str) {
        self.with(source, |s| s.first_round_done = true)
    }

    /// Whether `source` has finished its first round.
    pub fn first_round_done(&self, source: &str) -> bool {
        self.with(source, |s| s.first_round_done)
    }

    /// How `place` of `source` answered so far; `None` before its first read.
    pub fn place(&self, source: &str, place: &str) -> Option<Place> {
        self.with(source, |s| s.places.get(place).cloned())
    }

    /// Every place `source` read, in name order.
    pub fn places(&self, source: &str) -> Vec<(String, Place)> {
        self.with(source, |s| {
            s.places
                .iter()
                .map(|(n, p)| (n.clone(), p.clone()))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_say_up_down_and_why() {
        let h = Health::default();
        h.answered("rest", "http://a:4040", 1_000);
        h.failed("rest", "http://b:4040", 2_000, "connection refused");
        h.answered("event_log", "/logs", 3_000);
        let up: Vec<Option<bool>> = h.places("rest").iter().map(|(_, p)| p.up()).collect();
        assert_eq!(up, [Some(true), Some(false)]);
        assert_eq!(h.place("rest", "http://c"), None);
        assert_eq!(h.place("rest", "/logs"), None, "kept apart by source");
        let b = h.place("rest", "http://b:4040").unwrap();
        assert_eq!(b.last_error, Some((2_000, "connection refused".into())));
        // Answering again clears the error.
        h.answered("rest", "http://b:4040", 4_000);
        let b = h.place("rest", "http://b:4040").unwrap();
        assert_eq!((b.up(), b.last_error), (Some(true), None));
    }

    #[test]
    fn a_place_is_down_since_its_first_failure_after_a_success() {
        let h = Health::default();
        let t = "http://driver:4040";
        h.failed("rest", t, 1, "no answer");
        let p = h.place("rest", t).unwrap();
        assert_eq!((p.last_ok_ms, p.down_since_ms), (None, Some(1)));
        h.answered("rest", t, 2);
        h.failed("rest", t, 3, "no answer");
        h.failed("rest", t, 4, "no answer");
        let p = h.place("rest", t).unwrap();
        assert_eq!((p.last_ok_ms, p.down_since_ms), (Some(2), Some(3)));
    }

    #[test]
    fn a_source_is_ready_once_its_first_round_is_done() {
        let h = Health::default();
        assert!(!h.first_round_done("event_log"));
        h.round_done("event_log");
        assert!(h.first_round_done("event_log"));
        assert!(!h.first_round_done("rest"));
    }
}
