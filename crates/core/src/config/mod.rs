//! Configuration: defaults, then a file (`--config.file`, YAML or TOML), then environment
//! variables (`SPARK_EXPORTER_<SECTION>__<KEY>`), then flags, merged with the `config` crate.
//!
//! Every key is declared once, in its section's file, as a [`key::Key`]: name, flag,
//! documentation, default's description, the commands that use it, and its parser, which turns
//! the text into a typed value (durations, regexes, locations) once, here. From those
//! declarations come the reader (`reader.rs`), the flags (`flags.rs`), `check-config` (the
//! [`Settings`] it fills, printed) and the reference in `docs/configuration.md` (`docs.rs`, with
//! a test that fails on drift).
//!
//! - `key.rs`: what a declaration is.
//! - `parse.rs`: the value parsers the declarations share.
//! - `otlp_env.rs`: the OTLP push as the `otlp` keys and the standard `OTEL_*` variables make
//!   it, resolved by [`load`] with the rest (a wrong variable is listed with the wrong keys).
//! - `reader.rs`: a merged tree into [`Settings`], every problem named at once.
//! - `settings.rs`: [`Settings`], one value per section.
//! - `print.rs`: the settings as `check-config` prints them (YAML `--config.file` reads back).
//! - the flags are built from the declarations by the binary's `cli/flags.rs` (clap's builder
//!   API).
//! - `docs.rs`: the reference tables.
//! - The sections: `web.rs` (`web`, `log`), `model.rs` (`model`, `streaming`), `labels.rs`
//!   (`labels`, `histograms`), `otlp.rs`, `lifecycle.rs` (`lifecycle`, `shard`), `cost.rs`
//!   (prices), `diagnose.rs`; and those declared outside the core (`section.rs`): each source's
//!   (`spark`, `event_log`) lives in its folder in the binary, with its keys, and is read,
//!   checked, printed and documented with these once declared (`declared.rs`).
//!
//! Every field is validated separately, so one run of `check-config` names every wrong field at
//! once instead of stopping at the first.

use std::path::PathBuf;

use serde_json::Value;

pub mod cost;
pub mod declared;
mod diagnose;
pub mod docs;
pub mod key;
mod keys;
mod labels;
mod lifecycle;
mod model;
mod otlp;
pub mod otlp_env;
pub mod parse;
pub mod print;
mod reader;
pub mod section;
mod settings;
mod web;

pub use cost::{CostConfig, Price};
pub use declared::{declare, Declared};
pub use diagnose::{DiagnoseConfig, Thresholds};
pub use key::ENV_PREFIX;
pub use labels::*;
pub use lifecycle::*;
pub use model::*;
pub use otlp::*;
pub use parse::Pattern;
pub use section::SectionConfig;
pub use settings::Settings;
pub use web::*;

/// Every declared key, in the order they are read and documented: the core's and the
/// declared sections' ([`declare`]).
pub fn keys() -> impl Iterator<Item = &'static key::Key> + Clone {
    keys::all(declared::declared())
}

/// Configuration errors: every invalid field, found in one pass.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The sources could not be read or merged (missing file, syntax error).
    #[error("cannot load configuration: {0}")]
    Load(String),
    /// One or more fields are invalid.
    #[error("invalid configuration:\n{}", .0.iter().map(|e| format!("  - \
        {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<String>),
}

/// Flag values that override everything else; `None` means "not given".
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config.file`.
    pub config_file: Option<PathBuf>,
    /// `(key, value)` pairs such as `("web.listen_address", "0.0.0.0:9000")`.
    pub values: Vec<(String, OverrideValue)>,
}

impl Overrides {
    /// Whether a flag set `key`.
    pub fn sets(&self, key: &str) -> bool {
        self.values.iter().any(|(k, _)| k == key)
    }
}

/// A flag value.
#[derive(Debug, Clone)]
pub enum OverrideValue {
    /// A scalar.
    One(String),
    /// A repeatable flag.
    Many(Vec<String>),
}

/// Load defaults, file, environment and flags, then validate every field.
pub fn load(over: &Overrides) -> Result<Settings, ConfigError> {
    let mut b = config::Config::builder();
    if let Some(path) = &over.config_file {
        if !path.exists() {
            return Err(ConfigError::Invalid(vec![format!(
                "config.file: {} does not exist",
                path.display()
            )]));
        }
        b = b.add_source(config::File::from(path.as_path()));
    }
    let mut env = config::Environment::with_prefix(ENV_PREFIX)
        .prefix_separator("_")
        .separator("__")
        .list_separator(",")
        .try_parsing(false);
    for k in keys().filter(|k| k.is_list()) {
        env = env.with_list_parse_key(k.name);
    }
    b = b.add_source(env);
    for (k, v) in &over.values {
        b = match v {
            OverrideValue::One(s) => b.set_override(k.as_str(), s.as_str()),
            OverrideValue::Many(l) => b.set_override(k.as_str(), l.clone()),
        }
        .map_err(|e| ConfigError::Load(e.to_string()))?;
    }
    let merged: Value = b
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|e| ConfigError::Load(e.to_string()))?;
    from_value_and_env(&merged, &otlp_env::process_env)
}

/// [`from_value`], then the OTLP push resolved with the `OTEL_*` variables `env` gives; every
/// problem of both listed at once.
pub fn from_value_and_env(
    v: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, ConfigError> {
    let (mut s, mut errors) = read(v);
    match otlp_env::resolve(&s.otlp, env) {
        Ok(push) => s.otlp_push = push,
        Err(e) => errors.extend(e),
    }
    if errors.is_empty() {
        Ok(s)
    } else {
        Err(ConfigError::Invalid(errors))
    }
}

/// Validate a merged tree (missing keys take defaults) and list every problem. The OTLP push
/// is left unresolved (no environment is read): [`load`] resolves it.
pub fn from_value(v: &Value) -> Result<Settings, ConfigError> {
    let (s, errors) = read(v);
    if errors.is_empty() {
        Ok(s)
    } else {
        Err(ConfigError::Invalid(errors))
    }
}

/// The settings a merged tree gives (a wrong value keeps its default) and every problem found.
fn read(v: &Value) -> (Settings, Vec<String>) {
    let mut s = Settings::defaults();
    let mut r = reader::Reader::new(v);
    r.read_all(&mut s, keys());
    r.unknown_keys(keys());
    let index_given = r.get("shard.index").is_some();
    keys::check_shard(&mut s, index_given, &mut r.errors);
    for d in declared::declared() {
        (d.check)(&s, &mut r.errors);
    }
    keys::check_cost(&s, &mut r.errors);
    (s, r.errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::time::Duration;

    #[test]
    fn defaults_are_valid() {
        let s = from_value(&json!({})).unwrap();
        assert_eq!(s.web.telemetry_path, "/metrics");
    }

    #[test]
    fn streaming_trigger_intervals_are_durations_by_query_name() {
        let s =
            from_value(&json!({"streaming": {"trigger_intervals": {"orders": "30s"}}})).unwrap();
        let want = BTreeMap::from([("orders".to_string(), Duration::from_secs(30))]);
        assert_eq!(s.streaming.trigger_intervals, want);
        // The environment's `k=v,k2=v2` form.
        let s = from_value(&json!({"streaming": {"trigger_intervals": "a=1s, b=500ms"}})).unwrap();
        assert_eq!(
            s.streaming.trigger_intervals["b"],
            Duration::from_millis(500)
        );
        let v = json!({"streaming": {"trigger_intervals": {"a": "0s", "b": "soon"}, "x": 1}});
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        for k in [
            "streaming.trigger_intervals.a: must be greater than zero",
            "streaming.trigger_intervals.b: \"soon\" is not a duration",
            "streaming.x: unknown field",
        ] {
            assert!(all.contains(k), "{k} not in {all}");
        }
    }

    #[test]
    fn every_wrong_field_is_listed() {
        let v = json!({
            "web": {"listen_address": "nope", "telemetry_path": "metrics"},
            "labels": {"rewrite_rules": [{"pattern": "["}]},
            "histograms": {"duration_buckets": [3, 1]},
            "model": {"summary_level": "stages", "summary_after": "later", "app_name_filter": "[",
                      "max_app_age": "-1h", "aggregate_by": "app", "max_finished_stages": "-1",
                      "stage_skew_ratio": "0.5", "stage_skew_min_duration": "long"},
            "bogus": 1
        });
        let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        for k in [
            "web.listen_address",
            "web.telemetry_path",
            "labels.rewrite_rules[0].pattern",
            "histograms.duration_buckets",
            "bogus: unknown",
            "model.summary_level",
            "model.summary_after",
            "model.app_name_filter",
            "model.max_app_age",
            "model.aggregate_by",
            "model.max_finished_stages",
            "model.stage_skew_ratio",
            "model.stage_skew_min_duration",
        ] {
            assert!(all.contains(k), "{k} missing from:\n{all}");
        }
        assert_eq!(errs.len(), 13, "{all}");
    }

    #[test]
    fn finished_stage_keys_default_and_take_zero() {
        let d = from_value(&json!({})).unwrap().model;
        assert_eq!(d.max_finished_stages, DEFAULT_MAX_FINISHED_STAGES);
        assert_eq!(d.stage_skew_ratio, DEFAULT_STAGE_SKEW_RATIO);
        assert_eq!(d.stage_skew_min_duration, DEFAULT_STAGE_SKEW_MIN_DURATION);
        // As the environment gives them: strings.
        let m = from_value(&json!({"model": {"max_finished_stages": "0",
            "stage_skew_ratio": "2.5", "stage_skew_min_duration": "0s"}}))
        .unwrap()
        .model;
        assert_eq!(m.max_finished_stages, 0, "0: active stages only");
        assert_eq!(m.stage_skew_ratio, 2.5);
        assert_eq!(m.stage_skew_min_duration, Duration::ZERO);
    }

    #[test]
    fn otlp_variables_are_resolved_with_the_configuration() {
        let env = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_string()),
            "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("http/protobuf".to_string()),
            "OTEL_SERVICE_NAME" => Some("etl-exporter".to_string()),
            _ => None,
        };
        let s = from_value_and_env(&json!({"otlp": {"interval": "10s"}}), &env).unwrap();
        let push = s.otlp_push.expect("on: the variable names an endpoint");
        assert_eq!(push.endpoint, "http://collector:4318/v1/metrics");
        assert_eq!(push.interval, Duration::from_secs(10), "the key wins");
        assert!(push
            .resource
            .iter()
            .any(|(k, v)| k == "service.name" && v == "etl-exporter"));
        assert!(from_value_and_env(&json!({}), &|_| None)
            .unwrap()
            .otlp_push
            .is_none());
        // A wrong variable is named beside a wrong key, in one list.
        let bad = |k: &str| (k == "OTEL_EXPORTER_OTLP_TIMEOUT").then(|| "soon".to_string());
        let v = json!({"otlp": {"endpoint": "http://c:4317"}, "model": {"summary_level": "x"}});
        let Err(ConfigError::Invalid(errs)) = from_value_and_env(&v, &bad) else {
            panic!("expected errors")
        };
        let all = errs.join("\n");
        assert!(all.contains("model.summary_level"), "{all}");
        assert!(all.contains("OTEL_EXPORTER_OTLP_TIMEOUT"), "{all}");
    }
}
