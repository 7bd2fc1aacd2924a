//! A compact set of ids. Spark's job, stage and SQL ids are sequential, so the ids already counted
//! collapse into a few ranges and the set stays small however long the application runs.

use std::collections::BTreeMap;

/// Set of `u64` ids stored as disjoint, non-adjacent ranges `start -> end` (inclusive).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct IdSet {
    ranges: BTreeMap<u64, u64>,
}

impl IdSet {
    /// True if `id` is in the set.
    pub fn contains(&self, id: u64) -> bool {
        self.ranges
            .range(..=id)
            .next_back()
            .is_some_and(|(_, end)| id <= *end)
    }

    /// Insert `id`; returns false if it was already present.
    pub fn insert(&mut self, id: u64) -> bool {
        if self.contains(id) {
            return false;
        }
        let mut start = id;
        let mut end = id;
        // Merge with the range ending right before `id`.
        if let Some((&s, &e)) = self.ranges.range(..id).next_back() {
            if e.checked_add(1) == Some(id) {
                start = s;
            }
        }
        // Merge with the range starting right after `id`.
        if let Some(next) = id.checked_add(1) {
            if let Some(e) = self.ranges.remove(&next) {
                end = e;
            }
        }
        self.ranges.insert(start, end);
        true
    }

    /// Number of stored ranges (memory use; tests).
    #[cfg(test)]
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sequential_ids_collapse() {
        let mut s = IdSet::default();
        for i in (0..1000).rev() {
            assert!(s.insert(i));
        }
        assert!(!s.insert(10));
        assert_eq!(s.ranges(), 1);
        assert!(s.contains(999) && !s.contains(1000));
    }

    proptest! {
        #[test]
        fn behaves_like_a_hashset(ids in proptest::collection::vec(0u64..200, 0..300)) {
            let mut s = IdSet::default();
            let mut h = std::collections::HashSet::new();
            for id in ids {
                prop_assert_eq!(s.insert(id), h.insert(id));
            }
            for id in 0..210 {
                prop_assert_eq!(s.contains(id), h.contains(&id));
            }
        }
    }
}
