//! The what-if's place in the report: the run replayed on its own executors (how close it came),
//! the same run predicted on other executor counts and with dynamic allocation, and the answers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One executor count's prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WhatIfRow {
    /// Executors (with dynamic allocation: the most up at once).
    pub executors: u64,
    /// Cores each.
    pub cores: u64,
    /// Dynamic allocation (`spark.dynamicAllocation.enabled`) with the run's own bounds.
    pub dynamic: bool,
    /// Predicted wall time, application start to end, seconds.
    #[schemars(range(min = 0))]
    pub seconds: f64,
    /// Predicted core-seconds the executors hold.
    #[schemars(range(min = 0))]
    pub core_seconds: f64,
    /// Those core-seconds at the application's core-hour price (`cost.prices`); `null`
    /// without prices.
    #[schemars(range(min = 0))]
    pub money: Option<f64>,
}

/// The run predicted on other executor counts, from its own event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WhatIf {
    /// The run's own executors (the most registered at once; 1 in local mode: the driver).
    pub executors: u64,
    /// Their cores each.
    pub cores: u64,
    /// Local mode: the driver runs the tasks; no other executor count applies.
    pub local: bool,
    /// Its real wall time, application start to end, seconds.
    #[schemars(range(min = 0))]
    pub real_seconds: f64,
    /// The simulation of the run on its own executors, as they came and went, seconds.
    #[schemars(range(min = 0))]
    pub replayed_seconds: f64,
    /// |replayed - real| / real: how far the model is from this run.
    #[schemars(range(min = 0))]
    pub replay_error: f64,
    /// The replay came within 10% of the run: the predictions can be read as the model's best.
    pub trusted: bool,
    /// Fixed executor counts from a quarter to four times the run's own, fewest first.
    pub rows: Vec<WhatIfRow>,
    /// Dynamic allocation with the run's own bounds and timeouts.
    pub dynamic: Option<WhatIfRow>,
    /// The fewest executors whose predicted time is within 10% of the fastest row's.
    pub fewest_within_10pct: Option<u64>,
    /// The currency of `money` (`cost.currency`), when priced.
    pub currency: Option<String>,
    /// `--target-duration`, seconds, when given.
    pub target_seconds: Option<f64>,
    /// The executor count with the fewest core-seconds whose predicted time is within the
    /// target (`null`: none, or no target).
    pub cheapest_within_target: Option<u64>,
    /// What the prediction assumed or could not see for this run.
    pub notes: Vec<String>,
}
