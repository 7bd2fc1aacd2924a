//! The model's state as one value that can be written out and read back (`serde`, JSON), ready
//! for checkpoints.
//!
//! **What is stored**: every application the model holds, as its summary and (unless
//! summarised) its detail, with the ids already counted and its `created_ms` (the `_created`
//! time of all its series); every name's accumulator across runs (name mode); the applications
//! not kept (excluded, never taken again), and of those the ones it counted and retired; and when
//! the model was made (name mode counts the
//! runs that end from then on). [`StateValue`] names them.
//!
//! **What is derived, not stored**: everything the configuration gives (histogram buckets come
//! back with each histogram, but retention, label rules, caps, the name filter, the shard,
//! trigger intervals are the settings of the process that reads the state back); what the
//! sources of this process have delivered since its start (`delivery.rs`: a restart serves an
//! application again only once its sources gave their start-up state); the wall clock; the
//! generation number; the self-metrics; settled stage details not taken yet (`details.rs`: a
//! hand-over to a consumer of this process, which takes them as they settle).
//!
//! The JSON is deterministic: hash maps and sets are written as lists in key order (JSON object
//! keys are strings, and a hash map's own order changes from run to run), so the same state
//! always writes the same bytes, and "read back equal" is "written again, the same bytes".

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::app::{AppState, NameAgg};
use super::obs::EpochMs;
use crate::hash::Map;

/// The version of the written state. Version 2 numbers the sources by the exporter's registry
/// (`delivery.rs`: one bit a source); version 1 (release 0.2.0) had two fixed slots, REST then
/// the event log, and is still read.
pub const STATE_VERSION: u32 = 2;
/// The oldest version still read.
pub const OLDEST_STATE_READ: u32 = 1;

/// Why a written state could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not JSON of the model's state (damaged, or another program's).
    #[error("model state is not readable: {0}")]
    Json(#[from] serde_json::Error),
    /// Written by a version of the exporter whose state this one cannot read.
    #[error("model state version {found} is not {OLDEST_STATE_READ} to {STATE_VERSION}")]
    Version {
        /// The version written.
        found: u32,
    },
}

/// The stored part of the model's state (see the module docs), borrowed for writing.
#[derive(Serialize)]
pub(super) struct StateRef<'a> {
    pub(super) version: u32,
    pub(super) started_ms: EpochMs,
    #[serde(serialize_with = "in_id_order")]
    pub(super) apps: &'a Map<String, AppState>,
    pub(super) names: &'a BTreeMap<Arc<str>, NameAgg>,
    #[serde(serialize_with = "sorted_ref")]
    pub(super) excluded: &'a HashSet<Box<str>>,
    #[serde(serialize_with = "sorted_ref")]
    pub(super) retired: &'a HashSet<Box<str>>,
}

/// The stored part of the model's state, read back.
#[derive(Deserialize)]
pub(super) struct StateValue {
    pub(super) started_ms: EpochMs,
    pub(super) apps: BTreeMap<String, AppState>,
    pub(super) names: BTreeMap<Arc<str>, NameAgg>,
    #[serde(deserialize_with = "sorted::deserialize")]
    pub(super) excluded: HashSet<Box<str>>,
    /// Absent before reshards were handed over (an empty set then).
    #[serde(default, deserialize_with = "sorted::deserialize")]
    pub(super) retired: HashSet<Box<str>>,
}

/// The applications as a map in id order, as a tree map wrote them (a checkpoint is the same
/// whatever the hashing).
fn in_id_order<S: Serializer>(apps: &&Map<String, AppState>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(super::state::by_id(apps.iter().collect()))
}

fn sorted_ref<S: Serializer>(set: &&HashSet<Box<str>>, s: S) -> Result<S::Ok, S::Error> {
    sorted::serialize(*set, s)
}

/// Every `&'static str` the state holds (status labels, executor removal reasons, label names),
/// so a state read back holds the same static strings; anything else is not the model's.
const KNOWN: &[&str] = &[
    // Job, stage and SQL statuses (`obs.rs`).
    "running",
    "succeeded",
    "failed",
    "pending",
    "active",
    "complete",
    "skipped",
    "completed",
    // Executor removal reasons (`executor.rs`).
    "decommissioned",
    "heartbeat_timeout",
    "killed_by_driver",
    "exited",
    "lost",
    "other",
    // Label names with a cap on distinct values (`labels.rs`).
    "job_group",
    "job_description",
    "description",
    "client_app",
    "user",
    "rdd_name",
    "query",
];

/// The static string equal to `s`, if the state can hold it.
pub(super) fn intern(s: &str) -> Option<&'static str> {
    KNOWN.iter().find(|k| **k == s).copied()
}

fn interned<E: serde::de::Error>(s: &str) -> Result<&'static str, E> {
    intern(s).ok_or_else(|| E::custom(format_args!("unknown label value {s:?}")))
}

/// A map of any key as a list of `[key, value]` pairs in key order.
pub(super) mod pairs {
    use super::*;

    /// Write `m` as pairs in key order.
    pub fn serialize<'a, M, K, V, S>(m: &'a M, s: S) -> Result<S::Ok, S::Error>
    where
        &'a M: IntoIterator<Item = (&'a K, &'a V)>,
        K: Ord + Serialize + 'a,
        V: Serialize + 'a,
        S: Serializer,
    {
        let mut v: Vec<(&K, &V)> = m.into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        s.collect_seq(v)
    }

    /// Read pairs back into a map.
    pub fn deserialize<'de, M, K, V, D>(d: D) -> Result<M, D::Error>
    where
        M: FromIterator<(K, V)>,
        K: Deserialize<'de>,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

/// A set as a list in order.
pub(super) mod sorted {
    use super::*;

    /// Write `set` as a list in order.
    pub fn serialize<'a, C, K, S>(set: &'a C, s: S) -> Result<S::Ok, S::Error>
    where
        &'a C: IntoIterator<Item = &'a K>,
        K: Ord + Serialize + 'a,
        S: Serializer,
    {
        let mut v: Vec<&K> = set.into_iter().collect();
        v.sort();
        s.collect_seq(v)
    }

    /// Read a list back into a set.
    pub fn deserialize<'de, C, K, D>(d: D) -> Result<C, D::Error>
    where
        C: FromIterator<K>,
        K: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<K>::deserialize(d)?.into_iter().collect())
    }
}

/// A map keyed by status labels or reasons (`&'static str`), read back onto the same statics.
pub(super) fn static_keys<'de, V, D>(d: D) -> Result<BTreeMap<&'static str, V>, D::Error>
where
    V: Deserialize<'de>,
    D: Deserializer<'de>,
{
    BTreeMap::<String, V>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| Ok((interned(&k)?, v)))
        .collect()
}

/// An optional status label or reason, read back onto the same static.
pub(super) fn opt_static<'de, D>(d: D) -> Result<Option<&'static str>, D::Error>
where
    D: Deserializer<'de>,
{
    Option::<String>::deserialize(d)?
        .map(|s| interned(&s))
        .transpose()
}

/// A float written as the shortest decimal that reads back to it and read back with a
/// correctly rounded parse (`str::parse`): JSON numbers read by `serde_json` without its
/// `float_roundtrip` feature can come back one unit in the last place off (which the
/// exposition shows), and JSON has no NaN or infinity.
pub(super) mod exact {
    use super::*;

    fn parse<E: serde::de::Error>(s: &str) -> Result<f64, E> {
        s.parse::<f64>()
            .map_err(|_| E::custom(format_args!("not a number: {s:?}")))
    }

    /// Write `v` exactly.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Read it back.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        parse(&String::deserialize(d)?)
    }

    /// An optional float, exactly.
    pub(crate) mod opt {
        use super::*;

        /// Write `v` exactly.
        pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(x) => s.collect_str(x),
                None => s.serialize_none(),
            }
        }

        /// Read it back.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|x| parse(&x))
                .transpose()
        }
    }

    /// Histogram bounds, exactly.
    pub(crate) mod slice {
        use super::*;

        /// Write `v` exactly.
        pub fn serialize<S: Serializer>(v: &Arc<[f64]>, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(v.iter().map(|x| x.to_string()))
        }

        /// Read it back.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<[f64]>, D::Error> {
            Vec::<String>::deserialize(d)?
                .iter()
                .map(|x| parse(x))
                .collect()
        }
    }
}

/// Distinct label values per label name (`labels.rs`), in order.
pub(super) mod label_sets {
    use super::*;

    type Seen = crate::hash::Map<&'static str, crate::hash::Set<Arc<str>>>;

    /// Write each label's values in order, labels in order.
    pub fn serialize<S: Serializer>(m: &Seen, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<(&str, Vec<&Arc<str>>)> = m
            .iter()
            .map(|(k, set)| {
                let mut vals: Vec<&Arc<str>> = set.iter().collect();
                vals.sort();
                (*k, vals)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        s.collect_seq(v)
    }

    /// Read them back, label names onto their statics.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Seen, D::Error> {
        Vec::<(String, Vec<Arc<str>>)>::deserialize(d)?
            .into_iter()
            .map(|(k, vals)| Ok((interned(&k)?, vals.into_iter().collect())))
            .collect()
    }
}

impl StateValue {
    /// Read a state written by [`StateRef`] (this version or an older one still read):
    /// refuses another.
    pub(super) fn read(r: impl std::io::Read) -> Result<StateValue, StateError> {
        #[derive(Deserialize)]
        struct Head {
            version: u32,
        }
        let mut r = r;
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes)
            .map_err(|e| StateError::Json(serde_json::Error::io(e)))?;
        let head: Head = serde_json::from_slice(&bytes)?;
        if !(OLDEST_STATE_READ..=STATE_VERSION).contains(&head.version) {
            return Err(StateError::Version {
                found: head.version,
            });
        }
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// The state with its sources numbered by `map` (`Model::load_state_renumbered`).
    pub(super) fn renumbered(mut self, map: &[Option<usize>]) -> StateValue {
        if map.iter().enumerate().any(|(n, m)| *m != Some(n)) {
            for app in self.apps.values_mut() {
                app.summary.delivery.renumber(map);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn every_status_and_reason_can_be_read_back() {
        use crate::model::obs::{JobStatus, SqlStatus, StageStatus};
        let statuses = [
            JobStatus::Running.label(),
            JobStatus::Succeeded.label(),
            JobStatus::Failed.label(),
            StageStatus::Pending.label(),
            StageStatus::Active.label(),
            StageStatus::Complete.label(),
            StageStatus::Failed.label(),
            StageStatus::Skipped.label(),
            SqlStatus::Running.label(),
            SqlStatus::Completed.label(),
            SqlStatus::Failed.label(),
        ];
        for s in statuses {
            assert_eq!(intern(s), Some(s));
        }
        for raw in [
            None,
            Some("decommissioned"),
            Some("Executor heartbeat timed out"),
            Some("killed by driver"),
            Some("Command exited with code 1"),
            Some("lost worker"),
            Some("something else"),
        ] {
            let r = crate::model::executor::normalise_reason(raw);
            assert_eq!(intern(r), Some(r), "{raw:?}");
        }
        assert_eq!(intern("not a label"), None);
    }

    #[test]
    fn maps_and_sets_are_written_in_key_order() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct T {
            #[serde(with = "pairs")]
            m: HashMap<(u64, u32), String>,
            #[serde(with = "sorted")]
            s: HashSet<Box<str>>,
        }
        let t = T {
            m: [((2, 0), "b".to_string()), ((1, 1), "a".to_string())]
                .into_iter()
                .collect(),
            s: ["z".into(), "a".into()].into_iter().collect(),
        };
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"m":[[[1,1],"a"],[[2,0],"b"]],"s":["a","z"]}"#);
        assert_eq!(serde_json::from_str::<T>(&json).unwrap(), t);
    }
}
