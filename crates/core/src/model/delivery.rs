//! What each source has delivered of an application, and so when the application may be
//! summarised and when it may be served.
//!
//! A source tells an application in a *delivery*: a REST poll of it (the application, then its
//! jobs, stages, SQL, executors), or an event log read up to its end. Every observation opens
//! a delivery for its source; [`super::Observer::app_delivered`] closes it. Two rules follow:
//! - **No summary in the middle of a delivery.** An application is summarised (its detail
//!   dropped, `summary.rs`) only while no source is delivering it, so the order a source tells
//!   things in (REST: the application with its end before its jobs) never decides what is
//!   counted. A delivery left open longer than [`STALE_DELIVERY_MS`] (a source that failed in
//!   the middle and never came back) no longer holds the summary back.
//! - **No partial application after a start.** When the exporter runs its collectors
//!   ([`super::Model::expect_sources`]), an application is served only once every expected
//!   source has given its start-up state for it: delivered it at least once, or finished its own
//!   start-up read (a REST target's first poll, every event log present at start read to its
//!   last complete event) without it. From then on it is served for good. So a restarted
//!   exporter never serves a count lower than its predecessor served (Prometheus would read it
//!   as a counter reset). Without expected sources (`dump`, `diagnose`, tests) everything is
//!   served at once.

use serde::{Deserialize, Deserializer, Serialize};

use super::obs::{EpochMs, Source};

/// A delivery open this long (wall clock) no longer holds back a summary.
pub const STALE_DELIVERY_MS: EpochMs = 10 * 60 * 1000;

/// A set of sources: one bit per registry number ([`Source::MAX`] of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SourceSet(u64);

impl SourceSet {
    fn bit(source: Source) -> u64 {
        1 << source.number()
    }
    fn insert(&mut self, source: Source) {
        self.0 |= Self::bit(source);
    }
    #[cfg(test)]
    fn contains(self, source: Source) -> bool {
        self.0 & Self::bit(source) != 0
    }
    /// Every source of `self` is in `other`.
    fn within(self, other: SourceSet) -> bool {
        self.0 & !other.0 == 0
    }
    /// The set with each number `n` moved to `map[n]` (dropped when `None` or out of the map).
    fn renumbered(self, map: &[Option<usize>]) -> SourceSet {
        let mut out = 0;
        for (old, new) in map.iter().enumerate().take(Source::MAX) {
            if let Some(new) = new.filter(|n| *n < Source::MAX) {
                if self.0 & (1 << old) != 0 {
                    out |= 1 << new;
                }
            }
        }
        SourceSet(out)
    }
}

/// One application's deliveries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Delivery {
    /// The sources in the middle of a delivery (by number), each since when (wall clock);
    /// empty between deliveries.
    #[serde(deserialize_with = "open_any_version")]
    open: Vec<(u8, EpochMs)>,
    /// The sources that delivered it at least once.
    #[serde(deserialize_with = "delivered_any_version")]
    delivered: SourceSet,
    /// Served; once set, for good.
    served: bool,
}

/// Release 0.2.0 kept two fixed slots, REST then the event log (the registry's first two
/// numbers): `"open":[null,17…]`, `"delivered":[false,true]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum OpenWire {
    Now(Vec<(u8, EpochMs)>),
    Slots([Option<EpochMs>; 2]),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum DeliveredWire {
    Now(SourceSet),
    Slots([bool; 2]),
}

fn open_any_version<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u8, EpochMs)>, D::Error> {
    Ok(match OpenWire::deserialize(d)? {
        OpenWire::Now(v) => v,
        OpenWire::Slots(slots) => (0u8..)
            .zip(slots)
            .filter_map(|(n, since)| since.map(|ms| (n, ms)))
            .collect(),
    })
}

fn delivered_any_version<'de, D: Deserializer<'de>>(d: D) -> Result<SourceSet, D::Error> {
    Ok(match DeliveredWire::deserialize(d)? {
        DeliveredWire::Now(set) => set,
        DeliveredWire::Slots(slots) => SourceSet(
            slots
                .iter()
                .enumerate()
                .filter(|(_, d)| **d)
                .map(|(n, _)| 1u64 << n)
                .sum(),
        ),
    })
}

impl Delivery {
    /// `source` is telling something of the application at `now`.
    pub fn observed(&mut self, source: Source, now: EpochMs) {
        let n = source.number() as u8;
        if !self.open.iter().any(|(s, _)| *s == n) {
            self.open.push((n, now));
        }
    }

    /// `source` has told everything it has of the application.
    pub fn delivered(&mut self, source: Source) {
        let n = source.number() as u8;
        self.open.retain(|(s, _)| *s != n);
        self.delivered.insert(source);
    }

    /// True while some source is in the middle of a delivery that is not stale at `now`.
    pub fn in_progress(&self, now: EpochMs) -> bool {
        self.open
            .iter()
            .any(|(_, since)| now.saturating_sub(*since) < STALE_DELIVERY_MS)
    }

    /// Whether the application is served: sticky once true.
    pub fn served(&self) -> bool {
        self.served
    }

    /// Serve the application if every expected source has delivered it or finished its own
    /// start-up read (see the module docs).
    pub fn review(&mut self, sources: &Sources) {
        if !self.served {
            let given = SourceSet(sources.started.0 | self.delivered.0);
            self.served = sources.expected.within(given);
        }
    }

    /// Number each source `n` as `map[n]` (a checkpoint written under another registry); a
    /// source no longer registered is dropped.
    pub fn renumber(&mut self, map: &[Option<usize>]) {
        self.delivered = self.delivered.renumbered(map);
        self.open = std::mem::take(&mut self.open)
            .into_iter()
            .filter_map(|(n, since)| {
                let new = map.get(usize::from(n)).copied().flatten()?;
                (new < Source::MAX).then_some((new as u8, since))
            })
            .collect();
    }
}

/// Which sources the exporter runs, and which have finished their start-up read.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    expected: SourceSet,
    started: SourceSet,
}

impl Sources {
    /// The exporter runs `source`: its applications wait for its start-up state.
    pub fn expect(&mut self, source: Source) {
        self.expected.insert(source);
    }

    /// `source` has finished its start-up read.
    pub fn started(&mut self, source: Source) {
        self.started.insert(source);
    }

    /// True once every expected source has finished its start-up read (or none is expected).
    pub fn complete(&self) -> bool {
        self.expected.within(self.started)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Feed;

    const REST: Source = Source::new(0, Feed::Status);
    const LOG: Source = Source::new(1, Feed::Log);

    #[test]
    fn an_application_is_served_once_every_expected_source_has_given_its_state() {
        let mut s = Sources::default();
        let mut d = Delivery::default();
        d.review(&s);
        assert!(d.served(), "nothing expected: served at once");

        let (mut s2, mut d2) = (Sources::default(), Delivery::default());
        s2.expect(REST);
        s2.expect(LOG);
        d2.observed(LOG, 0);
        d2.delivered(LOG);
        d2.review(&s2);
        assert!(!d2.served(), "REST has not given its start-up state");
        s2.started(REST);
        d2.review(&s2);
        assert!(d2.served());
        // Sticky: a later delivery does not hide it again.
        d2.observed(REST, 5);
        d2.review(&s2);
        assert!(d2.served());
        s.started(REST);
        assert!(s.complete());
    }

    #[test]
    fn a_delivery_in_progress_holds_the_summary_until_it_is_closed_or_stale() {
        let mut d = Delivery::default();
        assert!(!d.in_progress(0));
        d.observed(REST, 1_000);
        d.observed(REST, 2_000);
        assert!(d.in_progress(2_000));
        assert!(
            !d.in_progress(1_000 + STALE_DELIVERY_MS),
            "stale from its first observation"
        );
        d.delivered(REST);
        assert!(!d.in_progress(2_000));
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;
    use crate::model::Feed;

    #[test]
    fn the_two_slots_of_release_0_2_0_read_as_the_registry_s_first_two_numbers() {
        let old: Delivery =
            serde_json::from_str(r#"{"open":[null,1000],"delivered":[false,true],"served":false}"#)
                .unwrap();
        let log = Source::new(1, Feed::Log);
        assert_eq!(old.open, vec![(1, 1000)]);
        assert!(old.delivered.contains(log));
        assert!(!old.delivered.contains(Source::new(0, Feed::Status)));
        let now = serde_json::to_string(&old).unwrap();
        assert_eq!(now, r#"{"open":[[1,1000]],"delivered":2,"served":false}"#);
        let back: Delivery = serde_json::from_str(&now).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), now);
    }

    #[test]
    fn renumbering_moves_each_source_and_drops_the_unregistered() {
        let mut d = Delivery::default();
        let (a, b, c) = (
            Source::new(0, Feed::Status),
            Source::new(1, Feed::Log),
            Source::new(2, Feed::Log),
        );
        d.delivered(a);
        d.delivered(b);
        d.observed(c, 7);
        // 0 → 1, 1 dropped, 2 → 0.
        d.renumber(&[Some(1), None, Some(0)]);
        assert!(d.delivered.contains(b) && !d.delivered.contains(a));
        assert_eq!(d.open, vec![(0, 7)]);
    }
}
