//! Which ids of one entity kind (jobs, stages or SQL executions of one application) the poller
//! already knows, so it can ask Spark only for new ones.
//!
//! Spark numbers jobs, stages and SQL executions sequentially per application. After one full
//! list, new entities are found by probing `max + 1`, `max + 2`, ... until [`PROBE_LOOKAHEAD`]
//! 404s in a row. Ids skipped on the way ("holes": a concurrent submission published after a
//! later one, or an id never published) are re-probed a few polls, then forgotten. Too many new ids
//! at once means probing would cost more than the list,
//! so the tracker asks for the full list instead.

use std::collections::{BTreeMap, BTreeSet};

/// Most ids probed past the known maximum in one poll before falling back to the full list.
pub const PROBE_CAP: usize = 50;
/// Consecutive 404s that end probing. More than one, so an id that is never published (a
/// submission that failed before reaching the UI) does not hide every id after it.
pub const PROBE_LOOKAHEAD: usize = 2;
/// Polls a hole is re-probed before it is given up.
pub const HOLE_PROBES: u8 = 3;
/// Only ids this close below the maximum can be holes after a full list; older gaps are ids
/// Spark evicted (`spark.ui.retained*`) and will never come back.
pub const HOLE_WINDOW: u64 = 64;
/// Most holes remembered at once (the lowest are dropped first).
pub const MAX_HOLES: usize = 256;

/// Known-id bookkeeping for one entity kind of one application.
#[derive(Debug, Clone)]
pub struct IdTracker {
    max: Option<u64>,
    holes: BTreeMap<u64, u8>,
    full_next: bool,
}

impl Default for IdTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl IdTracker {
    /// A tracker that knows nothing: the first poll reads the full list.
    pub fn new() -> IdTracker {
        IdTracker {
            max: None,
            holes: BTreeMap::new(),
            full_next: true,
        }
    }

    /// True when the next read of this kind must be the full list.
    pub fn needs_full(&self) -> bool {
        self.full_next
    }

    /// Ask for the full list on the next read (probe cap hit, or too large a jump).
    pub fn request_full(&mut self) {
        self.full_next = true;
    }

    /// Highest id seen.
    pub fn max(&self) -> Option<u64> {
        self.max
    }

    /// The next id to probe for.
    pub fn next_probe(&self) -> u64 {
        self.max.map_or(0, |m| m.saturating_add(1))
    }

    /// Ids below the maximum that were never seen and are still worth probing.
    pub fn holes(&self) -> Vec<u64> {
        self.holes.keys().copied().collect()
    }

    /// Start over from a full list holding `ids`.
    pub fn reset_from_full(&mut self, ids: impl IntoIterator<Item = u64>) {
        let ids: BTreeSet<u64> = ids.into_iter().collect();
        self.full_next = false;
        self.holes.clear();
        self.max = ids.last().copied();
        let (Some(&lo), Some(hi)) = (ids.first(), self.max) else {
            return;
        };
        let from = lo.max(hi.saturating_sub(HOLE_WINDOW));
        for id in from..hi {
            if !ids.contains(&id) {
                self.holes.insert(id, HOLE_PROBES);
            }
        }
    }

    /// Record that `id` exists (seen in a status list, a probe or a hole probe). A jump past the
    /// maximum turns the skipped ids into holes, or, if there are more than [`PROBE_CAP`], asks
    /// for the full list.
    pub fn saw(&mut self, id: u64) {
        self.holes.remove(&id);
        let next = self.next_probe();
        if self.max.is_some_and(|m| id <= m) {
            return;
        }
        if id - next > PROBE_CAP as u64 {
            self.full_next = true;
        } else {
            for gap in next..id {
                self.holes.insert(gap, HOLE_PROBES);
            }
            while self.holes.len() > MAX_HOLES {
                self.holes.pop_first();
            }
        }
        self.max = Some(id);
    }

    /// A hole probe answered 404: one try fewer.
    pub fn hole_missed(&mut self, id: u64) {
        if let Some(left) = self.holes.get_mut(&id) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.holes.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_needing_a_full_list() {
        let mut t = IdTracker::new();
        assert!(t.needs_full());
        assert_eq!(t.next_probe(), 0);
        t.reset_from_full([]);
        assert!(!t.needs_full());
        assert_eq!((t.max(), t.next_probe()), (None, 0));
    }

    #[test]
    fn full_list_sets_max_and_recent_holes_only() {
        let mut t = IdTracker::new();
        // 0..=99 evicted long ago, 150 and 198 missing near the top.
        t.reset_from_full((100..200).filter(|i| *i != 150 && *i != 198));
        assert_eq!(t.max(), Some(199));
        assert_eq!(t.next_probe(), 200);
        assert_eq!(t.holes(), vec![150, 198]);
        let mut t = IdTracker::new();
        t.reset_from_full([0, 1000]);
        assert_eq!(t.holes().len(), HOLE_WINDOW as usize);
        assert_eq!(t.holes()[0], 1000 - HOLE_WINDOW);
    }

    #[test]
    fn sighting_past_max_creates_holes_and_holes_expire() {
        let mut t = IdTracker::new();
        t.reset_from_full([0, 1, 2]);
        t.saw(5);
        assert_eq!((t.max(), t.holes()), (Some(5), vec![3, 4]));
        t.saw(4);
        assert_eq!(t.holes(), vec![3]);
        for _ in 0..HOLE_PROBES - 1 {
            t.hole_missed(3);
            assert_eq!(t.holes(), vec![3]);
        }
        t.hole_missed(3);
        assert!(t.holes().is_empty());
        t.saw(2);
        assert_eq!(t.max(), Some(5), "old ids do not move max");
        assert!(!t.needs_full());
    }

    #[test]
    fn huge_jump_asks_for_full_list() {
        let mut t = IdTracker::new();
        t.reset_from_full([0]);
        t.saw(1 + PROBE_CAP as u64);
        assert!(!t.needs_full(), "exactly the cap is still probed");
        t.saw(2 + 2 * PROBE_CAP as u64 + 1);
        assert!(t.needs_full());
        assert_eq!(t.max(), Some(2 + 2 * PROBE_CAP as u64 + 1));
    }

    #[test]
    fn holes_are_bounded() {
        let mut t = IdTracker::new();
        t.reset_from_full([0]);
        let mut id = 0;
        for _ in 0..20 {
            id += PROBE_CAP as u64;
            t.saw(id);
        }
        assert!(t.holes().len() <= MAX_HOLES);
        assert_eq!(t.holes().last(), Some(&(id - 1)));
    }
}
