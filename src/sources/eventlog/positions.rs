//! The event-log reader's part of the checkpoint (`sources::parts`): its read positions.
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

use std::collections::BTreeMap;
use std::sync::Arc;

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
    pub files: Vec<(u64, bool, super::ResumeAt)>,
    /// The log's parsing state there.
    pub state: super::LogAppState,
}

/// Every done log, by the path logs show (a local path, or the object's URL).
pub type LogPositions = BTreeMap<String, DoneLog>;

/// The reader's part as published: the positions of its last step.
#[derive(Debug)]
pub struct LogPart(pub Arc<LogPositions>);

impl crate::sources::Part for LogPart {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(&*self.0).unwrap_or_default()
    }
}

/// The positions in a loaded part (none when there is none, or it is not the reader's: the log
/// is then read again from its start, which the model's idempotent calls make safe).
pub fn from_part(part: Option<serde_json::Value>) -> LogPositions {
    part.and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}
