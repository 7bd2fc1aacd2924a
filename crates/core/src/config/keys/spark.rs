//! The `spark` section: its keys.

use crate::config::key::Key;
use crate::config::parse::{self, Problems};

/// The `spark` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::list("spark.urls", |s, v| {
        s.spark.urls = parse::items(v, parse::url)?;
        Ok(())
    })
    .repeat("spark.url")
    .brief("Driver UI or History Server base URL; repeatable; --spark.url= disables REST polling.")
    .doc(
        "Driver UIs or History Servers. `--spark.url=` (empty) disables REST polling; \
         `diagnose` reads the one given.",
    ),
    Key::one("spark.poll_interval", |s, v| {
        s.spark.poll_interval = parse::positive(v)?;
        Ok(())
    })
    .flag("spark.poll-interval")
    .doc("Time between polls."),
    Key::one("spark.timeout", |s, v| {
        s.spark.timeout = parse::positive(v)?;
        Ok(())
    })
    .flag("spark.timeout")
    .doc("Per-request timeout."),
    Key::one("spark.app_name_filter", |s, v| {
        s.spark.app_name_filter = parse::regex(v)?;
        Ok(())
    })
    .flag("spark.app-name-filter")
    .doc("Regex; only applications whose name matches are followed (History Servers)."),
    Key::one("spark.app_limit", |s, v| {
        s.spark.app_limit = parse::count(v)?;
        Ok(())
    })
    .flag("spark.app-limit")
    .brief("Most applications followed per target (running first, then the most recently ended).")
    .doc(
        "Most applications followed per target (running first, then the most recently \
         ended): a memory guard. It counts applications, each with all its attempts. What it \
         leaves out is counted in `spark_exporter_rest_apps_skipped` and logged.",
    ),
    Key::one("spark.max_body_bytes", |s, v| {
        let n = parse::bytes(v)?;
        if n == 0 {
            return Err("must be above 0".into());
        }
        s.spark.max_body_bytes = usize::try_from(n).unwrap_or(usize::MAX);
        Ok(())
    })
    .flag("spark.max-body-bytes")
    .brief("Largest REST response body read (bytes, or with KiB, MiB, GiB).")
    .doc(
        "Largest REST response body read (bytes, or `64MiB`): a larger one fails that request \
         (`spark_exporter_scrape_errors_total{kind=\"body\"}`), a memory guard against a target that is not \
         Spark. The exporter, `diagnose` and `diagnose --review` (whose History Server \
         listing counts too) read with it.",
    ),
    Key::one("spark.auth.username", |s, v| {
        s.spark.auth.username = Some(v.to_string());
        Ok(())
    })
    .doc("Basic-auth user for UIs behind an auth filter."),
    Key::one("spark.auth.password", |s, v| {
        s.spark.auth.password = Some(v.to_string());
        Ok(())
    })
    .doc(
        "Basic-auth password, from the environment (`SPARK_EXPORTER_SPARK__AUTH__PASSWORD`); \
         prefer `spark.auth.password_file`.",
    ),
    Key::one("spark.auth.password_file", |s, v| {
        s.spark.auth.password_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("File holding the basic-auth password (a mounted secret)."),
    Key::one("spark.auth.bearer_token", |s, v| {
        s.spark.auth.bearer_token = Some(v.to_string());
        Ok(())
    })
    .doc(
        "Bearer token, from the environment; prefer `spark.auth.bearer_token_file`. Exclusive \
         with basic auth.",
    ),
    Key::one("spark.auth.bearer_token_file", |s, v| {
        s.spark.auth.bearer_token_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("File holding the bearer token (read at start). Exclusive with basic auth."),
    Key::map("spark.auth.headers", |s, m| {
        s.spark.auth.headers = m;
        Ok::<(), Problems>(())
    })
    .doc(
        "Extra headers on every request (`{name: value}`, or `k=v,k2=v2` in the environment); \
         values are never printed.",
    ),
    Key::one("spark.auth.ca_file", |s, v| {
        s.spark.auth.ca_file = parse::readable_file(v)?;
        Ok(())
    })
    .doc("PEM CA bundle for `https://` Spark URLs."),
];
