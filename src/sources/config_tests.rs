//! The sources' sections read with the core's: defaults, every wrong field named, values
//! normalised.

use serde_json::json;

use crate::config::*;
use crate::sources::eventlog::config::EventLogConfig;
use crate::sources::rest::config::{SparkConfig, DEFAULT_SPARK_URL};

#[test]
fn the_sources_sections_have_their_defaults() {
    super::declare_config();
    let s = from_value(&json!({})).unwrap();
    assert_eq!(
        SparkConfig::of(&s).urls,
        vec![DEFAULT_SPARK_URL.to_string()]
    );
    assert!(EventLogConfig::of(&s).dirs.is_empty());
    assert_eq!(s.web.telemetry_path, "/metrics");
}

#[test]
fn every_wrong_field_of_a_source_is_listed_with_the_cores() {
    super::declare_config();
    let v = json!({
        "spark": {"urls": ["ftp://x", "http://ok:4040"], "poll_interval": "0s", "timeout": "soon",
                  "app_name_filter": "(" , "pol_interval": "1s",
                  "auth": {"password": "p"}},
        "event_log": {"depth": 17},
        "model": {"summary_level": "stages"},
    });
    let Err(ConfigError::Invalid(errs)) = from_value(&v) else {
        panic!("expected errors")
    };
    let all = errs.join("\n");
    for k in [
        "spark.urls[0]",
        "spark.poll_interval",
        "spark.timeout",
        "spark.app_name_filter",
        "spark.pol_interval: unknown",
        "spark.auth.username: required with a password",
        "event_log.depth: must be at most 16",
        "model.summary_level",
    ] {
        assert!(all.contains(k), "{k} missing from:\n{all}");
    }
    assert_eq!(errs.len(), 8, "{all}");
}

#[test]
fn urls_are_normalised() {
    super::declare_config();
    let s =
        from_value(&json!({"spark": {"urls": "http://a:4040/api/v1/, http://b:18080"}})).unwrap();
    assert_eq!(
        SparkConfig::of(&s).urls,
        vec!["http://a:4040", "http://b:18080"]
    );
}

/// `check-config` prints the sources' sections with the core's and reads them back.
#[test]
fn the_printed_sections_read_back() {
    super::declare_config();
    let mut s = crate::config::Settings::defaults();
    SparkConfig::of_mut(&mut s).urls = vec!["http://history:18080".into()];
    let text = print::yaml(&s);
    assert!(text.contains("\nspark:\n  app_limit: 1000\n"), "{text}");
    assert!(
        text.contains("discovery_interval: null  # unset: the poll interval"),
        "{text}"
    );
    let merged: serde_json::Value = ::config::Config::builder()
        .add_source(::config::File::from_str(&text, ::config::FileFormat::Yaml))
        .build()
        .and_then(|c| c.try_deserialize())
        .unwrap();
    let back = from_value(&merged).unwrap();
    assert_eq!(SparkConfig::of(&back).urls, ["http://history:18080"]);
}
