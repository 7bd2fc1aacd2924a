//! The sources' health, as a handle of its own: the collectors write what happened to them (a
//! poll of a REST target answered or not, the event-log folders were listed a first time), and
//! the exporter's control reads it: readiness (`/readyz`) and, in classic mode, the end of an
//! application whose driver went away (`lifecycle.rest_unreachable_after`). The self-metrics
//! ([`crate::telemetry`]) only export; nothing decides from them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::clock::EpochMs;

/// When a REST target last answered, and since when it has not.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Epoch ms of the last successful poll.
    pub last_ok_ms: Option<EpochMs>,
    /// Epoch ms of the first failed poll after the last success (None while it answers).
    pub down_since_ms: Option<EpochMs>,
}

/// The sources' health, shared (`Arc<Health>`) by the collectors that write it and the server
/// and lifecycle that read it. Never held across `.await`.
#[derive(Debug, Default)]
pub struct Health {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Every REST target polled at least once, answered or not.
    targets: BTreeMap<String, Reach>,
    /// The event-log reader has listed its folders once and read a first step.
    event_logs_listed: bool,
}

impl Health {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        // A poisoned lock only means a writer panicked mid-update; the values stay usable.
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A poll of REST target `target` answered (`ok`) or not, at `at_ms`.
    pub fn polled(&self, target: &str, ok: bool, at_ms: EpochMs) {
        self.with(|i| {
            let r = i.targets.entry(target.to_string()).or_default();
            if ok {
                r.last_ok_ms = Some(at_ms);
                r.down_since_ms = None;
            } else if r.down_since_ms.is_none() {
                r.down_since_ms = Some(at_ms);
            }
        })
    }

    /// The event-log reader's first discovery pass is done.
    pub fn event_logs_listed(&self) {
        self.with(|i| i.event_logs_listed = true)
    }

    /// How `target` answered so far; `None` before its first poll.
    pub fn reach(&self, target: &str) -> Option<Reach> {
        self.with(|i| i.targets.get(target).copied())
    }

    /// Whether every one of `targets` has been polled at least once, answered or not.
    pub fn polled_all(&self, targets: &[String]) -> bool {
        self.with(|i| targets.iter().all(|t| i.targets.contains_key(t)))
    }

    /// Whether the event-log reader's first discovery pass is done.
    pub fn event_logs_ready(&self) -> bool {
        self.with(|i| i.event_logs_listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_down_since_its_first_failure_after_a_success() {
        let h = Health::default();
        let t = "http://driver:4040";
        assert_eq!(h.reach(t), None);
        assert!(!h.polled_all(&[t.to_string()]));
        assert!(h.polled_all(&[]));
        h.polled(t, false, 1);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: None,
                down_since_ms: Some(1)
            })
        );
        assert!(h.polled_all(&[t.to_string()]), "polled, not answered");
        h.polled(t, true, 2);
        h.polled(t, false, 3);
        h.polled(t, false, 4);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: Some(2),
                down_since_ms: Some(3)
            })
        );
        h.polled(t, true, 5);
        assert_eq!(
            h.reach(t),
            Some(Reach {
                last_ok_ms: Some(5),
                down_since_ms: None
            })
        );
    }

    #[test]
    fn event_logs_are_ready_once_listed() {
        let h = Health::default();
        assert!(!h.event_logs_ready());
        h.event_logs_listed();
        assert!(h.event_logs_ready());
    }
}
