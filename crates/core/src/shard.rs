//! Sharding: several exporters over one event-log store (or History Server), each exporting a
//! disjoint part of the applications, by a stable hash of the application id. Prometheus, with its
//! own sharding and federation, stays the aggregation layer; there is no coordinator.
//!
//! An application belongs to shard `XXH32(app_id, seed 0) mod count`: the same in every version
//! and on every machine, so the union of all shards is every application exactly once. The
//! application id is known from a log's name before the log is read, so a shard never reads
//! another shard's logs.

/// This exporter's part of the applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: usize,
    /// How many shards there are (1: no sharding).
    pub count: usize,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// Whether the application `app_id` is this shard's.
    pub fn owns(&self, app_id: &str) -> bool {
        self.count <= 1 || shard_of(app_id, self.count) == self.index
    }
}

/// The shard of `app_id` among `count`.
pub fn shard_of(app_id: &str, count: usize) -> usize {
    let h = twox_hash::XxHash32::oneshot(0, app_id.as_bytes());
    (h as usize) % count.max(1)
}

/// The ordinal of a StatefulSet pod from its host name (`spark-exporter-fleet-3` gives 3).
pub fn statefulset_ordinal(hostname: &str) -> Option<usize> {
    let (_, n) = hostname.rsplit_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable() {
        // Fixed values (checked against the reference implementation, Python `xxhash`): a change
        // here moves applications between the shards of a running fleet.
        assert_eq!(
            twox_hash::XxHash32::oneshot(0, b"local-1795981136444"),
            0xbe92_e177
        );
        assert_eq!(shard_of("local-1795981136444", 3), 0xbe92_e177 % 3);
    }

    #[test]
    fn shards_partition_the_applications() {
        let ids: Vec<String> = (0..200)
            .map(|i| format!("spark-{:032x}", i * 7919))
            .collect();
        for count in [1, 2, 3, 5] {
            let mut owners = vec![0usize; ids.len()];
            for index in 0..count {
                let s = Shard { index, count };
                for (i, id) in ids.iter().enumerate() {
                    owners[i] += usize::from(s.owns(id));
                }
            }
            assert!(
                owners.iter().all(|n| *n == 1),
                "{count} shards: every id exactly once"
            );
        }
        // Reasonably even: no shard of 3 gets fewer than a fifth of 200 ids.
        for index in 0..3 {
            let n = ids
                .iter()
                .filter(|id| Shard { index, count: 3 }.owns(id))
                .count();
            assert!(n > 40, "shard {index}: {n}");
        }
    }

    #[test]
    fn statefulset_ordinals() {
        assert_eq!(statefulset_ordinal("spark-exporter-fleet-3"), Some(3));
        assert_eq!(statefulset_ordinal("fleet-0"), Some(0));
        assert_eq!(statefulset_ordinal("fleet"), None);
        assert_eq!(statefulset_ordinal("fleet-7f9c"), None);
        assert_eq!(statefulset_ordinal("fleet-"), None);
    }
}
