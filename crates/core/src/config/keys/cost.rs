//! The `cost` section: its keys.

use serde_json::Value;

use crate::config::cost::Price;
use crate::config::key::{Key, Uses};
use crate::config::parse::{scalar_string, Problems};
use crate::config::settings::Settings;

/// The `cost` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("cost.currency", |s, v| {
        let v = v.trim();
        if v.len() != 3 || !v.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(format!(
                "{v:?} is not an ISO 4217 code (three capital letters, as EUR)"
            ));
        }
        s.cost.currency = Some(v.to_string());
        Ok(())
    })
    .flag("cost.currency")
    .uses(Uses::ALL)
    .default("none (required with `cost.prices`)")
    .doc(
        "ISO 4217 code of the prices' currency (`USD`, `EUR`): the `currency` label of the \
         money families (see [Money](metrics.md#money)).",
    ),
    Key::one("cost.property", |s, v| {
        let v = v.trim();
        if v.is_empty() {
            return Err("must not be empty".into());
        }
        s.cost.property = Some(v.to_string());
        Ok(())
    })
    .flag("cost.property")
    .uses(Uses::ALL)
    .default("none")
    .doc(
        "A Spark property whose value picks an application's prices (for example \
         `spark.kubernetes.namespace`): a `cost.prices` entry with `value` applies to the \
         applications whose property has that value; the entries without `value` apply to the \
         others (and to all when this is unset).",
    ),
    Key::tree("cost.prices", |s, v| {
        s.cost.prices = prices(v)?;
        Ok(())
    })
    .flag("cost.prices")
    .uses(Uses::ALL)
    .default("none: the cost stays in core-seconds and GiB-seconds")
    .brief(
        "Prices per core-hour and GiB-hour of executor memory, as a list (YAML, or JSON in a \
        flag or variable).",
    )
    .doc(
        "Prices of the resources executors hold, a list of `{core_hour, gib_hour, since, \
         value}`: `core_hour` is the price of a core held for an hour, `gib_hour` of a GiB of \
         executor memory held for an hour (both numbers, at least 0, in `cost.currency`); \
         `since` (optional, RFC 3339 in UTC, `2026-07-01T00:00:00Z`) the time from which the \
         entry applies to resources held, by Spark's clock; `value` (optional) the value of \
         `cost.property` it applies to. In a flag or an environment variable, the list as JSON \
         (`[{\"core_hour\": 0.04, \"gib_hour\": 0.005}]`). Money is counted at the price in \
         effect when the resource was held: **change a price by adding an entry with a \
         `since`**, which never changes money already counted; editing an entry in place \
         reprices the past (see [Money](metrics.md#money)). Without prices the money families \
         are absent. Every wrong field is named, exit 64.",
    ),
];

/// `cost.prices`: a list of price entries (or its JSON text, as a flag or variable gives it).
fn prices(v: &Value) -> Result<Vec<Price>, Problems> {
    let parsed;
    let v = match v {
        Value::String(s) if s.trim().is_empty() => return Ok(vec![]),
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s)
                .map_err(|e| Problems::from(format!("not a JSON list of prices: {e}")))?;
            &parsed
        }
        v => v,
    };
    let Value::Array(items) = v else {
        return Err("expected a list of {core_hour, gib_hour, since, value}".into());
    };
    let mut out = vec![];
    let mut bad = vec![];
    for (i, item) in items.iter().enumerate() {
        let Value::Object(m) = item else {
            bad.push((
                format!("[{i}]"),
                "expected {core_hour, gib_hour, since, value}".into(),
            ));
            continue;
        };
        let mut price = Price {
            core_hour: 0.0,
            gib_hour: 0.0,
            since: None,
            value: None,
        };
        let mut ok = true;
        for field in ["core_hour", "gib_hour"] {
            let at = format!("[{i}].{field}");
            let n = m
                .get(field)
                .and_then(scalar_string)
                .map(|x| x.trim().parse::<f64>());
            match n {
                None => bad.push((at, "missing".into())),
                Some(Ok(x)) if x.is_finite() && x >= 0.0 => {
                    if field == "core_hour" {
                        price.core_hour = x;
                    } else {
                        price.gib_hour = x;
                    }
                    continue;
                }
                Some(_) => bad.push((at, "not a number of at least 0".into())),
            }
            ok = false;
        }
        if let Some(t) = m.get("since").filter(|t| !t.is_null()) {
            match scalar_string(t).as_deref().map(since) {
                Some(Ok(ms)) => price.since = Some(ms),
                Some(Err(e)) => {
                    bad.push((format!("[{i}].since"), e));
                    ok = false;
                }
                None => {
                    bad.push((format!("[{i}].since"), "expected a time".into()));
                    ok = false;
                }
            }
        }
        if let Some(x) = m.get("value").filter(|x| !x.is_null()) {
            match scalar_string(x) {
                Some(x) => price.value = Some(x),
                None => {
                    bad.push((format!("[{i}].value"), "expected a single value".into()));
                    ok = false;
                }
            }
        }
        for k in m.keys() {
            if !["core_hour", "gib_hour", "since", "value"].contains(&k.as_str()) {
                bad.push((format!("[{i}].{k}"), "unknown field".into()));
                ok = false;
            }
        }
        if ok {
            out.push(price);
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Problems(bad))
    }
}

/// An RFC 3339 time in UTC as epoch milliseconds.
fn since(t: &str) -> Result<i64, String> {
    let at = humantime::parse_rfc3339_weak(t.trim())
        .map_err(|_| format!("{t:?} is not an RFC 3339 time in UTC (2026-07-01T00:00:00Z)"))?;
    at.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .ok_or_else(|| format!("{t:?} is before 1970"))
}

/// Checks across the `cost` keys: prices need a currency; an entry with a `value` needs
/// `cost.property`.
pub(crate) fn check_cost(s: &Settings, errors: &mut Vec<String>) {
    let c = &s.cost;
    if c.priced() && c.currency.is_none() {
        errors.push("cost.currency: required with cost.prices".into());
    }
    if c.property.is_none() {
        for (i, p) in c.prices.iter().enumerate() {
            if p.value.is_some() {
                errors.push(format!("cost.prices[{i}].value: needs cost.property"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{from_value, ConfigError};
    use serde_json::json;

    #[test]
    fn prices_are_read_from_a_list_or_its_json_text() {
        let v = json!({"cost": {"currency": "EUR", "property": "spark.kubernetes.namespace",
            "prices": [{"core_hour": 0.04, "gib_hour": "0.005"},
                       {"core_hour": 0.05, "gib_hour": 0.006, "since": "2026-07-01T00:00:00Z", "value": "etl"}]}});
        let c = from_value(&v).unwrap().cost;
        assert_eq!(c.prices.len(), 2);
        assert_eq!(c.prices[0].gib_hour, 0.005);
        assert_eq!(c.prices[1].since, Some(1_782_864_000_000));
        assert_eq!(c.prices[1].value.as_deref(), Some("etl"));
        let text = r#"[{"core_hour": 1, "gib_hour": 2}]"#;
        let c = from_value(&json!({"cost": {"currency": "USD", "prices": text}}))
            .unwrap()
            .cost;
        assert_eq!((c.prices[0].core_hour, c.prices[0].gib_hour), (1.0, 2.0));
    }

    #[test]
    fn every_wrong_price_field_is_named() {
        let v = json!({"cost": {"currency": "euro", "prices": [
            {"core_hour": -1, "gib_hour": "x", "since": "yesterday", "value": "a", "cpu": 1},
            {"gib_hour": 1}, 3]}});
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        for k in [
            "cost.currency: \"euro\" is not an ISO 4217 code",
            "cost.prices[0].core_hour: not a number",
            "cost.prices[0].gib_hour: not a number",
            "cost.prices[0].since: \"yesterday\" is not an RFC 3339 time",
            "cost.prices[0].cpu: unknown field",
            "cost.prices[1].core_hour: missing",
            "cost.prices[2]: expected",
        ] {
            assert!(all.contains(k), "{k} missing from:\n{all}");
        }
        let v = json!({"cost": {"prices": [{"core_hour": 1, "gib_hour": 1, "value": "a"}]}});
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        assert_eq!(
            errs,
            [
                "cost.currency: required with cost.prices",
                "cost.prices[0].value: needs cost.property"
            ]
        );
    }
}
