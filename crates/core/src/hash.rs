//! The hash maps and sets of the model and the collectors' hot paths: std's, with foldhash's
//! fast hasher instead of SipHash. Their keys are Spark's ids and label values, hashed on every
//! event (a task's stage, a job's group); SipHash spent about 3 % of a fleet's cold start on
//! them (BENCHMARKS.md, *Cold start at the reader's speed*). foldhash is seeded per process, so
//! an application's names cannot be chosen to collide (they come from the event logs).

/// A `HashMap` with the fast hasher; make one with `Map::default()`.
pub type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A `HashSet` with the fast hasher; make one with `Set::default()`.
pub type Set<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// The fast hasher alone, with a fixed seed: every call hashes alike, so hashes made by
/// different calls compare (a SQL plan's nodes: the text of each is hashed, and a plan's text
/// can be hundreds of KiB).
pub fn hasher() -> impl std::hash::Hasher {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().build_hasher()
}
