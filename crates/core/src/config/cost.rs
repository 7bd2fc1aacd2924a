//! The `cost` section: prices of the resources executors hold, so the cost families can be
//! read in money (`spark_app_cost_total`, see docs/metrics.md *Money*). Without a price the
//! cost stays in core-seconds and GiB-seconds: prices are configuration, never guessed.

use serde::Serialize;

use crate::clock::EpochMs;

/// The prices and what they apply to.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CostConfig {
    /// ISO 4217 code of the prices' currency (`USD`, `EUR`): the `currency` label. Required
    /// with prices.
    pub currency: Option<String>,
    /// A Spark property whose value picks an application's prices (`spark.kubernetes.namespace`):
    /// entries with a `value` apply to the applications whose property has that value, the
    /// others to the rest.
    pub property: Option<String>,
    /// The price list, as configured (in order).
    pub prices: Vec<Price>,
}

/// One price: what a core-hour and a GiB-hour of executor memory cost, from `since` on, for
/// the applications `value` selects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Price {
    /// Price of one core held for an hour.
    pub core_hour: f64,
    /// Price of one GiB of executor memory held for an hour.
    pub gib_hour: f64,
    /// From when it applies (Spark's clock, epoch ms); `None`: from the beginning.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rfc3339")]
    pub since: Option<EpochMs>,
    /// The value of `cost.property` it applies to; `None`: applications without an entry of
    /// their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A time printed as RFC 3339 (UTC), as it is written.
fn rfc3339<S: serde::Serializer>(t: &Option<EpochMs>, s: S) -> Result<S::Ok, S::Error> {
    let ms = t.unwrap_or(0).max(0) as u64;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    s.serialize_str(&humantime::format_rfc3339_millis(at).to_string())
}

impl CostConfig {
    /// Whether any price is configured: without one there is no money family.
    pub fn priced(&self) -> bool {
        !self.prices.is_empty()
    }

    /// The currency label (`""` when none is set, which the configuration refuses with
    /// prices).
    pub fn currency(&self) -> &str {
        self.currency.as_deref().unwrap_or("")
    }

    /// The price schedule of an application whose `cost.property` has value `value`: the
    /// entries for that value if there are any, else those without a value; by `since` (no
    /// `since` first), a later entry winning a tie. Empty: no price applies.
    pub fn schedule(&self, value: Option<&str>) -> Vec<Price> {
        let own: Vec<&Price> = match value {
            Some(v) => self
                .prices
                .iter()
                .filter(|p| p.value.as_deref() == Some(v))
                .collect(),
            None => vec![],
        };
        let mut out: Vec<Price> = if own.is_empty() {
            self.prices
                .iter()
                .filter(|p| p.value.is_none())
                .cloned()
                .collect()
        } else {
            own.into_iter().cloned().collect()
        };
        out.sort_by_key(|p| p.since.unwrap_or(EpochMs::MIN));
        out
    }
}

/// The price in effect at `t` in schedule `prices` (sorted as [`CostConfig::schedule`] gives
/// it): the last entry whose `since` is at or before `t`; `None` before the first.
pub fn price_at(prices: &[Price], t: EpochMs) -> Option<&Price> {
    prices.iter().rev().find(|p| p.since.is_none_or(|s| s <= t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(core: f64, since: Option<EpochMs>, value: Option<&str>) -> Price {
        Price {
            core_hour: core,
            gib_hour: 0.0,
            since,
            value: value.map(String::from),
        }
    }

    #[test]
    fn a_value_picks_its_entries_and_the_others_take_the_rest() {
        let c = CostConfig {
            currency: Some("EUR".into()),
            property: Some("spark.kubernetes.namespace".into()),
            prices: vec![
                p(1.0, None, None),
                p(2.0, Some(10), Some("gpu")),
                p(3.0, None, Some("gpu")),
            ],
        };
        let gpu = c.schedule(Some("gpu"));
        assert_eq!(
            gpu.iter().map(|p| p.core_hour).collect::<Vec<_>>(),
            [3.0, 2.0]
        );
        assert_eq!(price_at(&gpu, 9).map(|p| p.core_hour), Some(3.0));
        assert_eq!(price_at(&gpu, 10).map(|p| p.core_hour), Some(2.0));
        let other = c.schedule(Some("batch"));
        assert_eq!(other.len(), 1);
        assert_eq!(c.schedule(None)[0].core_hour, 1.0);
        let later = [p(1.0, Some(100), None)];
        assert!(
            price_at(&later, 99).is_none(),
            "no price before the first since"
        );
    }
}
