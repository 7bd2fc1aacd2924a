//! What the REST source reads of the configuration: its `spark` section, and how long the model
//! keeps what it reads (an ended application older than `model.app_retention` is not worth a
//! request; a finished stage's task summary only within `model.stage_retention`). Its collector
//! holds this, not the whole configuration.

use std::time::Duration;

use super::config::SparkConfig;
use crate::config::Settings;

/// The REST source's settings.
#[derive(Debug, Clone)]
pub struct RestSettings {
    /// The `spark` section: targets, intervals, timeouts, authentication, limits.
    pub spark: SparkConfig,
    /// `model.app_retention`.
    pub app_retention: Duration,
    /// `model.stage_retention`.
    pub stage_retention: Duration,
}

impl From<&Settings> for RestSettings {
    fn from(s: &Settings) -> RestSettings {
        RestSettings {
            spark: SparkConfig::of(s).into_owned(),
            app_retention: s.model.app_retention,
            stage_retention: s.model.stage_retention,
        }
    }
}
