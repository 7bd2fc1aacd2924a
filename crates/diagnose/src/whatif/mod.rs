//! What if: the same run on more or fewer executors, predicted from its own event log by
//! replaying its stage graph and task durations on a simulated pool ([`sim`]), after checking
//! that the replay on the run's own executors reproduces its wall time ([`WhatIf::replay_error`]).
//!
//! - `record`: what `diagnose` records of a run beside the model ([`RunRecord`]).
//! - `plan`: the record as the simulation replays it: the driver's times kept, the executors'
//!   work as tasks to schedule again.
//! - `sim`: the event-by-event scheduler, on a fixed pool or with dynamic allocation.
//! - `predict`: the rows of executor counts, the answers, the notes.
//! - `render`: its text table and the HTML page's charts.
//! - `types`: the report's fields.

pub mod plan;
pub mod predict;
pub mod record;
pub mod render;
pub mod sim;
pub mod types;

pub use predict::{predict, Settings};
pub use record::RunRecord;
pub use types::{WhatIf, WhatIfRow};

#[cfg(test)]
mod tests;
