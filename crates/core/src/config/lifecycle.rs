//! The `lifecycle` section (the drain, and ending with the application) and the `shard` section
//! (this exporter's part of the applications).

use std::time::Duration;

use serde::Serialize;

/// Default longest drain, from SIGTERM (or the application's end) to exit: inside Kubernetes'
/// default `terminationGracePeriodSeconds` of 30 s, with room for the last reads.
pub const DEFAULT_GRACE_PERIOD: Duration = Duration::from_secs(25);
/// Default number of scrapes of the final state that end a drain.
pub const DEFAULT_DRAIN_SCRAPES: usize = 1;
/// Default time a REST target that answered before must stay unreachable before the
/// application counts as ended (`lifecycle.exit_when_app_ends`).
pub const DEFAULT_REST_UNREACHABLE_AFTER: Duration = Duration::from_secs(60);

/// The exporter's end: the drain after SIGTERM, and whether it ends by itself when the
/// application ends (a classic sidecar container, which nothing else stops).
#[derive(Debug, Clone, Serialize)]
pub struct LifecycleConfig {
    /// Exit 0 once the followed application has ended (its `ApplicationEnd` is in the log, REST
    /// reports it completed, or REST has been unreachable for `rest_unreachable_after` after a
    /// success) and the drain is done. For a classic sidecar container.
    pub exit_when_app_ends: bool,
    /// The longest a drain lasts, from SIGTERM (or the application's end) to exit. Keep it below
    /// the pod's `terminationGracePeriodSeconds`.
    #[serde(with = "humantime_serde")]
    pub grace_period: Duration,
    /// Scrapes of `/metrics` rendered from the final state that end the drain early (the final
    /// OTLP export, once sent, ends it too). 2 for an HA pair of Prometheus servers.
    pub drain_scrapes: usize,
    /// How long a REST target that answered before must be unreachable before its application
    /// counts as ended (with `exit_when_app_ends`).
    #[serde(with = "humantime_serde")]
    pub rest_unreachable_after: Duration,
}

impl Default for LifecycleConfig {
    fn default() -> Self {
        LifecycleConfig {
            exit_when_app_ends: false,
            grace_period: DEFAULT_GRACE_PERIOD,
            drain_scrapes: DEFAULT_DRAIN_SCRAPES,
            rest_unreachable_after: DEFAULT_REST_UNREACHABLE_AFTER,
        }
    }
}

/// Default interval between checkpoints.
pub const DEFAULT_CHECKPOINT_INTERVAL: Duration = Duration::from_secs(30);

/// Checkpoints: the model's state written to a file, read back at start, so that a restart
/// counts nothing twice and forgets nothing (`docs/internals.md`, *Checkpoints*).
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointConfig {
    /// The checkpoint file (`None`: no checkpoint). Its folder must exist and be writable.
    pub path: Option<std::path::PathBuf>,
    /// How often it is written (and once more at the end of the drain).
    #[serde(with = "humantime_serde")]
    pub interval: Duration,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            path: None,
            interval: DEFAULT_CHECKPOINT_INTERVAL,
        }
    }
}
