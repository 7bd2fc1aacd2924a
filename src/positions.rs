//! Read positions kept across restarts (`crate::checkpoint`): what a restart need not read again.
//!
//! **Event logs.** A log is *done* once it is finished (a single file without `.inprogress`, a
//! rolling folder with its `appstatus` file gone), every file of it is read to its end, and the
//! model has been told it is delivered. Its entry holds the application it fed and how many
//! bytes of each file were read. A restart from a checkpoint that holds the entry, finding the
//! log at the same path with the same files of the same sizes, does not read it: the
//! checkpoint's model state already holds everything it said. A log that changed (grew, was
//! rewritten, gained a part) is read again from its start, which the model's idempotent updates
//! make safe.
//!
//! A log still being written has a position too: per file, the last boundary of its stream (any
//! line end of an uncompressed file, a block of lz4, snappy or lzf, a frame of zstd: Spark 3.0
//! and later end one at every flush), the decoded bytes after it already read as lines and the
//! start of a line begun before it; and the log's parsing state there (the application, its open
//! jobs, stage labels, SQL executions and plans, Spark Connect operations). A restart reads on
//! from there, also after Spark renamed it at the application's end (positions are keyed
//! without `.inprogress`). A zstd log written as one frame (Spark 2) has no boundary but its
//! start: it is read again from there.
//!
//! **REST targets.** An application attempt a target lists as completed, read in full, is done
//! at the `lastUpdated` the listing gave. A restart that finds it listed with the same
//! `lastUpdated` does not read it again (a History Server with thousands of applications is
//! not asked for all of them at every restart). Running applications are read again in full at
//! the first poll, as at any start: the bound is Spark's, jobs it forgot
//! (`spark.ui.retainedJobs`) between the last checkpoint and that poll are gone.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// One log's read position: done (finished and read to its end), or, while it is being
/// written, where reading goes on and the parsing state there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoneLog {
    /// The application id its events were recorded under.
    pub app_id: String,
    /// Per file, `[index, compacted, bytes read]` (a single-file log: one file, index 0, not
    /// compacted; a compacted part skipped because the parts it repeats were read: 0 bytes).
    /// For a log being written, the bytes up to the end of its last complete line.
    pub files: Vec<(u64, bool, u64)>,
    /// A log still being written: where each file reads on, and the parsing state there (open
    /// jobs, stages, SQL executions and plans). `None`: the log is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenLog>,
}

/// Where a log still being written reads on after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenLog {
    /// Per file, `[index, compacted, where]`.
    pub files: Vec<(u64, bool, crate::eventlog::ResumeAt)>,
    /// The log's parsing state there.
    pub state: crate::eventlog::LogAppState,
}

/// Every done log, by the path logs show (a local path, or the object's URL).
pub type LogPositions = BTreeMap<String, DoneLog>;

/// Per REST target (its base URL), the `lastUpdated` of each done application attempt, by the
/// model's key for it.
pub type RestPositions = BTreeMap<String, BTreeMap<String, i64>>;

/// Everything a checkpoint keeps of where the sources are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Positions {
    /// Done event logs.
    #[serde(default)]
    pub logs: LogPositions,
    /// Done REST applications.
    #[serde(default)]
    pub rest: RestPositions,
}

/// The read positions shared between the collectors (which publish them) and the checkpoint
/// (which writes them out, and hands the loaded ones to the collectors at start).
#[derive(Debug, Default)]
pub struct ReadPositions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// What the checkpoint loaded, until the reader takes it.
    loaded: Option<Arc<Positions>>,
    /// What the event-log reader last published.
    logs: Option<Arc<LogPositions>>,
    /// What each REST target last published.
    rest: BTreeMap<String, Arc<BTreeMap<String, i64>>>,
}

impl ReadPositions {
    /// A handle on nothing loaded or published yet.
    pub fn new() -> Arc<ReadPositions> {
        Arc::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The positions a checkpoint held (at start, before the collectors run).
    pub fn set_loaded(&self, p: Positions) {
        self.lock().loaded = Some(Arc::new(p));
    }

    /// The loaded positions, for the collectors to resume from (empty if none were loaded).
    pub fn loaded(&self) -> Arc<Positions> {
        self.lock().loaded.clone().unwrap_or_default()
    }

    /// The event-log reader's positions now.
    pub fn publish_logs(&self, p: LogPositions) {
        self.lock().logs = Some(Arc::new(p));
    }

    /// A REST target's positions now.
    pub fn publish_rest(&self, target: &str, p: BTreeMap<String, i64>) {
        self.lock().rest.insert(target.to_string(), Arc::new(p));
    }

    /// What to write in a checkpoint: each collector's last published positions, or, where it
    /// published none yet, the loaded ones (which the loaded model state still holds).
    pub fn to_write(&self) -> Positions {
        let g = self.lock();
        let loaded = g.loaded.clone().unwrap_or_default();
        let logs = g
            .logs
            .as_deref()
            .cloned()
            .unwrap_or_else(|| loaded.logs.clone());
        let mut rest = loaded.rest.clone();
        for (t, p) in &g.rest {
            rest.insert(t.clone(), (**p).clone());
        }
        Positions { logs, rest }
    }
}
