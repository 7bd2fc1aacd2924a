//! What an application's executors cost, in core-seconds:
//! - **Allocated**: every executor's lifetime × its cores. The lifetime runs from its add time
//!   to its removal, else to the application's end, else (both still going on) to the
//!   application's clock: the latest time it is known to have run, that is the newest event time
//!   read from its log and the wall clock of every REST poll that lists it running. So the value
//!   follows the wall clock while executors live (at each poll, or as the log's events arrive),
//!   and it never goes back: an application read from an old log counts to its last event, not
//!   to today, and its end (Spark's clock) is never before the times already counted (a removal
//!   or an end that Spark dates before a REST poll that still saw the executor or the
//!   application alive, a clock skew, counts to that poll). Only executors with cores count: a
//!   cluster-mode driver runs no task, and Spark reports it so (REST `totalCores` 0, no
//!   `SparkListenerExecutorAdded` in the event log); in local mode the driver *is* the executor,
//!   and both sources report it with its cores (`local[N]`: N), so it counts.
//! - **Used**: tasks' executor run time × `spark.task.cpus`, per job group (the group sums of
//!   `spark_task_run_time_seconds_total`, so both sources agree exactly).
//! - **Idle**: allocated − used, at least 0: cores held and paid for while no task ran on them.
//!
//! An executor that leaves the model (`model.dead_executor_retention`, or the application's
//! summary) leaves its core-milliseconds in [`Cost::retired_core_ms`] and its id in a retired
//! set, so the counter never goes back, and a source that lists the executor again (REST keeps
//! dead executors for a while) neither counts its cores twice nor counts it as removed again.

use std::collections::HashSet;

use super::executor::ExecutorState;
use super::idset::IdSet;
use super::obs::EpochMs;

/// Non-numeric executor ids remembered as retired, at most (Spark's executor ids are numbers,
/// but for `driver`); past it, such an executor listed again would be counted again.
const MAX_RETIRED_NAMED: usize = 1024;

/// The cost state of one application (or, in name mode, of a name's ended runs).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    /// `spark.task.cpus`, once a source said; in name mode the largest of the runs.
    pub(super) task_cpus: Option<u64>,
    /// The application's clock: the latest time it is known to have run (event times of its
    /// log, the wall clock of REST polls listing it running); frozen once it ended.
    pub(super) seen_ms: EpochMs,
    /// Core-milliseconds of executors that left the model (and, in name mode, of the runs
    /// folded into the name).
    pub(super) retired_core_ms: u64,
    /// Numeric ids of executors whose core-milliseconds are in `retired_core_ms`.
    retired_ids: IdSet,
    /// Other ids of such executors (bounded by [`MAX_RETIRED_NAMED`]).
    #[serde(with = "crate::model::serial::sorted")]
    retired_named: HashSet<Box<str>>,
}

impl Cost {
    /// Cores a task holds: `spark.task.cpus`, Spark's default 1 until a source says.
    pub fn cpus(&self) -> u64 {
        self.task_cpus.unwrap_or(1).max(1)
    }

    /// True once executor `id` left the model: later reports of it are ignored.
    pub fn is_retired(&self, id: &str) -> bool {
        match id.parse::<u64>() {
            Ok(n) => self.retired_ids.contains(n),
            Err(_) => self.retired_named.contains(id),
        }
    }

    /// Executor `id` leaves the model, in an application that ended at `app_end`. A dead
    /// executor of a running application counts to its removal, whatever the clock says.
    pub(super) fn retire(&mut self, id: &str, ex: &ExecutorState, app_end: Option<EpochMs>) {
        if self.is_retired(id) {
            return;
        }
        let seen = if app_end.is_some() {
            self.seen_ms
        } else {
            EpochMs::MAX
        };
        self.retired_core_ms = self
            .retired_core_ms
            .saturating_add(core_ms(ex, app_end, seen));
        match id.parse::<u64>() {
            Ok(n) => {
                self.retired_ids.insert(n);
            }
            Err(_) if self.retired_named.len() < MAX_RETIRED_NAMED => {
                self.retired_named.insert(id.into());
            }
            Err(_) => {}
        }
    }
}

/// Core-milliseconds executor `ex` held, in an application that ended at `app_end`, whose clock
/// says `seen`: 0 without cores or an add time. A live executor runs to the application's end,
/// else to `seen`; a dead one to its removal, but not before the clock it was still seen alive
/// at, and not past the application's end.
pub fn core_ms(ex: &ExecutorState, app_end: Option<EpochMs>, seen: EpochMs) -> u64 {
    let (Some(cores), Some(add)) = (ex.cores.filter(|c| *c > 0), ex.add_ms) else {
        return 0;
    };
    let live_end = app_end.map_or(seen, |e| e.max(seen));
    let end = if ex.active {
        live_end
    } else {
        let removed = ex
            .remove_ms
            .unwrap_or(0)
            .max(ex.alive_until_ms.unwrap_or(0));
        removed.min(live_end)
    };
    u64::try_from(end.saturating_sub(add))
        .unwrap_or(0)
        .saturating_mul(cores)
}
