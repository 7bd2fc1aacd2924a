//! The wall clock, in epoch milliseconds as Spark reports times: one definition for the model
//! and the REST poller, replaceable in tests ([`Clock`]).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub type EpochMs = i64;

/// A wall-clock source: the system clock in production, a fixed or stepped one in tests.
pub type Clock = Arc<dyn Fn() -> EpochMs + Send + Sync>;

/// The system clock in epoch milliseconds (0 before 1970, saturating far in the future).
pub fn system_now_ms() -> EpochMs {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The system clock as a [`Clock`].
pub fn system() -> Clock {
    Arc::new(system_now_ms)
}
