//! Read positions kept across restarts: which logs a restart need not read again.
//!
//! A log is *done* once it is finished (a single file without `.inprogress`, a rolling folder
//! with its `appstatus` file gone), every file of it is read to its end, and the model has been
//! told it is delivered. Its entry holds the application it fed and how many bytes of each file
//! were read. A restart from a checkpoint that holds the entry, finding the log at the same path
//! with the same files of the same sizes, does not read it: the checkpoint's model state already
//! holds everything it said. A log that changed (grew, was rewritten, gained a part) is read
//! again from its start, which the model's idempotent updates make safe.
//!
//! A log still being written is not done: a restart reads it again from its start (its parsing
//! state, open jobs and plans, is not kept). That bounds a restart's reading by the logs of the
//! applications still running.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// One done log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoneLog {
    /// The application id its events were recorded under.
    pub app_id: String,
    /// Per file, `[index, compacted, bytes read]` (a single-file log: one file, index 0, not
    /// compacted; a compacted part skipped because the parts it repeats were read: 0 bytes).
    pub files: Vec<(u64, bool, u64)>,
}

/// Every done log, by the path logs show (a local path, or the object's URL).
pub type Positions = BTreeMap<String, DoneLog>;

/// The read positions shared between the event-log reader (which publishes them) and the
/// checkpoint (which writes them out, and hands the loaded ones to the reader at start).
#[derive(Debug, Default)]
pub struct ReadPositions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// What the checkpoint loaded, until the reader takes it.
    loaded: Option<Arc<Positions>>,
    /// What the reader last published.
    current: Option<Arc<Positions>>,
}

impl ReadPositions {
    /// A handle on nothing loaded or published yet.
    pub fn new() -> Arc<ReadPositions> {
        Arc::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The positions a checkpoint held (at start, before the reader runs).
    pub fn set_loaded(&self, p: Positions) {
        self.lock().loaded = Some(Arc::new(p));
    }

    /// The loaded positions, for the reader to resume from (empty if none were loaded).
    pub fn loaded(&self) -> Arc<Positions> {
        self.lock().loaded.clone().unwrap_or_default()
    }

    /// The reader's positions now.
    pub fn publish(&self, p: Positions) {
        self.lock().current = Some(Arc::new(p));
    }

    /// What to write in a checkpoint: the reader's last published positions, or, before it
    /// published any, the loaded ones (which the loaded model state still holds).
    pub fn to_write(&self) -> Arc<Positions> {
        let g = self.lock();
        g.current
            .clone()
            .or_else(|| g.loaded.clone())
            .unwrap_or_default()
    }
}
