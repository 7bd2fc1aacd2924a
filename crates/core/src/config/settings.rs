//! The whole effective configuration: one value per section, each section's values in its
//! own file, filled by the key declarations (`keys/`) and printed by `check-config`.

use serde::Serialize;

use super::cost::CostConfig;
use super::diagnose::DiagnoseConfig;
use super::labels::{HistogramConfig, LabelsConfig};
use super::lifecycle::{CheckpointConfig, LifecycleConfig};
use super::model::{AggregateBy, ModelConfig, StreamingConfig};
use super::otlp::OtlpConfig;
use super::section::{SectionConfig, Sections};
use super::web::{LogConfig, WebConfig};

/// The whole effective configuration.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    /// `/metrics` server.
    pub web: WebConfig,
    /// Logging.
    pub log: LogConfig,
    /// The sections declared outside the core (the sources': `spark`, `event_log`), read
    /// with [`Settings::section`]; printed where those sections were.
    #[serde(flatten)]
    pub sections: Sections,
    /// Retention.
    pub model: ModelConfig,
    /// Labels.
    pub labels: LabelsConfig,
    /// Histogram buckets.
    pub histograms: HistogramConfig,
    /// OTLP push.
    pub otlp: OtlpConfig,
    /// Drain and end.
    pub lifecycle: LifecycleConfig,
    /// The model's state kept across restarts.
    pub checkpoint: CheckpointConfig,
    /// This exporter's part of the applications (`shard.index`, `shard.count`).
    pub shard: crate::shard::Shard,
    /// Structured Streaming.
    pub streaming: StreamingConfig,
    /// Prices of what executors hold (the money families).
    pub cost: CostConfig,
    /// What `spark-exporter diagnose` reports.
    pub diagnose: DiagnoseConfig,
    /// The OTLP push as the `otlp` keys and the standard `OTEL_*` variables make it, resolved
    /// when the configuration is loaded ([`super::load`]); `None`: OTLP is off.
    #[serde(skip)]
    pub otlp_push: Option<super::otlp_env::Resolved>,
}

impl Settings {
    /// The part of the applications a source can select by application id alone, before
    /// reading anything: this exporter's shard, or every application when shards go by
    /// application name (`model.aggregate_by: app_name`; the model then drops other shards'
    /// names).
    pub fn shard_by_app_id(&self) -> crate::shard::Shard {
        match self.model.aggregate_by {
            AggregateBy::AppId => self.shard,
            AggregateBy::AppName => crate::shard::Shard::default(),
        }
    }
}

impl Settings {
    /// What a checkpoint's model state depends on, as one hex string: the labels (rewrite
    /// rules, caps), the histogram buckets, the summary level, the aggregation and the shard. A
    /// checkpoint written under another one is refused.
    pub fn model_fingerprint(&self) -> String {
        Self::fingerprint_of(self, &self.labels)
    }

    /// The fingerprints of the checkpoints this configuration reads: its own, and, while the
    /// rewrite rules are the defaults, the one the same configuration had under the previous
    /// default rules ([`super::labels::PREVIOUS_DEFAULT_RULES`]): such a checkpoint's series keep
    /// their totals under the values they were folded to then, and new values count from zero.
    pub fn accepted_model_fingerprints(&self) -> Vec<String> {
        let mut out = vec![self.model_fingerprint()];
        if self.labels.rewrite_rules == super::labels::default_rewrite_rules() {
            let mut before = self.labels.clone();
            before.rewrite_rules = super::labels::previous_default_rewrite_rules();
            out.push(Self::fingerprint_of(self, &before));
        }
        out
    }

    fn fingerprint_of(&self, labels: &LabelsConfig) -> String {
        #[derive(Serialize)]
        struct Shaping<'a> {
            labels: &'a LabelsConfig,
            histograms: &'a HistogramConfig,
            summary_level: &'a super::model::SummaryLevel,
            aggregate_by: &'a AggregateBy,
            shard: &'a crate::shard::Shard,
        }
        let text = serde_json::to_string(&Shaping {
            labels,
            histograms: &self.histograms,
            summary_level: &self.model.summary_level,
            aggregate_by: &self.model.aggregate_by,
            shard: &self.shard,
        })
        .unwrap_or_default();
        let h = twox_hash::XxHash32::oneshot(0x5e_c4_ec_4b, text.as_bytes());
        format!("{h:08x}")
    }
}

impl Settings {
    /// Section `T` as configured, or its default when the settings hold none (settings made
    /// by hand, before any section was declared).
    pub fn section<T: SectionConfig>(&self) -> std::borrow::Cow<'_, T> {
        match self.sections.get::<T>() {
            Some(t) => std::borrow::Cow::Borrowed(t),
            None => std::borrow::Cow::Owned(T::default()),
        }
    }

    /// Section `T`, to change (added at its default when missing).
    pub fn section_mut<T: SectionConfig>(&mut self) -> &mut T {
        self.sections.get_mut::<T>()
    }
}
