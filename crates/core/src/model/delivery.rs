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

use super::obs::{EpochMs, Source};

/// A delivery open this long (wall clock) no longer holds back a summary.
pub const STALE_DELIVERY_MS: EpochMs = 10 * 60 * 1000;

fn index(s: Source) -> usize {
    match s {
        Source::Rest => 0,
        Source::EventLog => 1,
    }
}

/// One application's deliveries.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Delivery {
    /// Per source: since when a delivery has been open (wall clock).
    open: [Option<EpochMs>; 2],
    /// Per source: delivered at least once.
    delivered: [bool; 2],
    /// Served; once set, for good.
    served: bool,
}

impl Delivery {
    /// `source` is telling something of the application at `now`.
    pub fn observed(&mut self, source: Source, now: EpochMs) {
        self.open[index(source)].get_or_insert(now);
    }

    /// `source` has told everything it has of the application.
    pub fn delivered(&mut self, source: Source) {
        let i = index(source);
        self.open[i] = None;
        self.delivered[i] = true;
    }

    /// True while some source is in the middle of a delivery that is not stale at `now`.
    pub fn in_progress(&self, now: EpochMs) -> bool {
        self.open
            .iter()
            .flatten()
            .any(|since| now.saturating_sub(*since) < STALE_DELIVERY_MS)
    }

    /// Whether the application is served: sticky once true.
    pub fn served(&self) -> bool {
        self.served
    }

    /// Serve the application if every expected source has delivered it or finished its own
    /// start-up read (see the module docs).
    pub fn review(&mut self, sources: &Sources) {
        if !self.served {
            self.served =
                (0..2).all(|i| !sources.expected[i] || sources.started[i] || self.delivered[i]);
        }
    }
}

/// Which sources the exporter runs, and which have finished their start-up read.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    expected: [bool; 2],
    started: [bool; 2],
}

impl Sources {
    /// The exporter runs `source`: its applications wait for its start-up state.
    pub fn expect(&mut self, source: Source) {
        self.expected[index(source)] = true;
    }

    /// `source` has finished its start-up read.
    pub fn started(&mut self, source: Source) {
        self.started[index(source)] = true;
    }

    /// True once every expected source has finished its start-up read (or none is expected).
    pub fn complete(&self) -> bool {
        (0..2).all(|i| !self.expected[i] || self.started[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_application_is_served_once_every_expected_source_has_given_its_state() {
        let mut s = Sources::default();
        let mut d = Delivery::default();
        d.review(&s);
        assert!(d.served(), "nothing expected: served at once");

        let (mut s2, mut d2) = (Sources::default(), Delivery::default());
        s2.expect(Source::Rest);
        s2.expect(Source::EventLog);
        d2.observed(Source::EventLog, 0);
        d2.delivered(Source::EventLog);
        d2.review(&s2);
        assert!(!d2.served(), "REST has not given its start-up state");
        s2.started(Source::Rest);
        d2.review(&s2);
        assert!(d2.served());
        // Sticky: a later delivery does not hide it again.
        d2.observed(Source::Rest, 5);
        d2.review(&s2);
        assert!(d2.served());
        s.started(Source::Rest);
        assert!(s.complete());
    }

    #[test]
    fn a_delivery_in_progress_holds_the_summary_until_it_is_closed_or_stale() {
        let mut d = Delivery::default();
        assert!(!d.in_progress(0));
        d.observed(Source::Rest, 1_000);
        d.observed(Source::Rest, 2_000);
        assert!(d.in_progress(2_000));
        assert!(
            !d.in_progress(1_000 + STALE_DELIVERY_MS),
            "stale from its first observation"
        );
        d.delivered(Source::Rest);
        assert!(!d.in_progress(2_000));
    }
}
