//! The REST poller's part of the checkpoint (`sources::parts`): the completed applications
//! read in full.
//!
//! **REST targets.** An application attempt a target lists as completed, read in full, is done
//! at the `lastUpdated` the listing gave. A restart that finds it listed with the same
//! `lastUpdated` does not read it again (a History Server with thousands of applications is
//! not asked for all of them at every restart). Running applications are read again in full at
//! the first poll, as at any start: the bound is Spark's, jobs it forgot
//! (`spark.ui.retainedJobs`) between the last checkpoint and that poll are gone.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Per REST target (its base URL), the `lastUpdated` of each done application attempt, by the
/// model's key for it.
pub type RestPositions = BTreeMap<String, BTreeMap<String, i64>>;

/// The poller's part: the loaded positions, with each target's as its last poll published.
#[derive(Debug, Default)]
pub struct RestPart {
    loaded: RestPositions,
    polled: Mutex<BTreeMap<String, Arc<BTreeMap<String, i64>>>>,
}

impl RestPart {
    /// The part from what a checkpoint held (nothing if unreadable: read again in full).
    pub fn from_loaded(part: Option<serde_json::Value>) -> RestPart {
        RestPart {
            loaded: part
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
            polled: Mutex::default(),
        }
    }

    /// The done applications `target` had at the checkpoint.
    pub fn loaded(&self, target: &str) -> BTreeMap<String, i64> {
        self.loaded.get(target).cloned().unwrap_or_default()
    }

    /// `target`'s done applications now.
    pub fn publish(&self, target: &str, done: BTreeMap<String, i64>) {
        self.polled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(target.to_string(), Arc::new(done));
    }
}

impl crate::sources::Part for RestPart {
    fn to_json(&self) -> serde_json::Value {
        let mut all = self.loaded.clone();
        for (t, done) in self.polled.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            all.insert(t.clone(), (**done).clone());
        }
        serde_json::to_value(all).unwrap_or_default()
    }
}
