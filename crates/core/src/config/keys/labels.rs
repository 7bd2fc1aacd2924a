//! The `labels` and `histograms` sections: its keys.

use serde_json::Value;

use crate::config::key::{Key, Uses};
use crate::config::labels::{GroupSource, RewriteRule};
use crate::config::parse::{self, scalar_string, Pattern, Problems};

/// `labels.rewrite_rules`: a list of `{pattern, replacement}`, each pattern a valid regex.
fn rules(v: &Value) -> Result<Vec<RewriteRule>, Problems> {
    let Value::Array(items) = v else {
        return Err("expected a list of {pattern, replacement}".into());
    };
    let mut out = vec![];
    let mut bad = vec![];
    for (i, item) in items.iter().enumerate() {
        let replacement = item
            .get("replacement")
            .and_then(scalar_string)
            .unwrap_or_default();
        match item.get("pattern").and_then(scalar_string) {
            None => bad.push((format!("[{i}].pattern"), "missing".to_string())),
            Some(p) => match regex::Regex::new(&p) {
                Ok(r) => out.push(RewriteRule {
                    pattern: Pattern(r),
                    replacement,
                }),
                Err(e) => bad.push((format!("[{i}].pattern"), format!("not a valid regex: {e}"))),
            },
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Problems(bad))
    }
}

/// The `labels` and `histograms` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("labels.max_value_length", |s, v| {
        s.labels.max_value_length = parse::count(v)?;
        Ok(())
    })
    .doc("Longer label values are cut and end in `…`."),
    Key::one("labels.max_values_per_label", |s, v| {
        s.labels.max_values_per_label = parse::count(v)?;
        Ok(())
    })
    .doc("Distinct values per label per application; more fold into `__other__`."),
    Key::tree("labels.rewrite_rules", |s, v| {
        s.labels.rewrite_rules = rules(v)?;
        Ok(())
    })
    .default("see below")
    .doc("List of `{pattern, replacement}` regex rewrites, applied in order."),
    Key::list("labels.job_group_from", |s, v| {
        s.labels.job_group_from = parse::items(v, |x| {
            parse::one_of(
                x,
                &[
                    ("job_group", GroupSource::JobGroup),
                    ("tag", GroupSource::Tag),
                    ("call_site", GroupSource::CallSite),
                ],
            )
        })?;
        Ok(())
    })
    .doc(
        "Where `job_group` comes from, first match wins: `job_group`, `tag`, `call_site` (see \
         [Job groups](internals.md#job-groups)).",
    ),
    Key::one("labels.tag_pattern", |s, v| {
        s.labels.tag_pattern = parse::regex(v)?;
        Ok(())
    })
    .doc(
        "Regex picking the user tag that names a group; a capture group picks a part. None: \
         any user tag, first in sorted order.",
    ),
    Key::one("labels.connect_user", |s, v| {
        s.labels.connect_user = parse::boolean(v)?;
        Ok(())
    })
    .switch("labels.connect-user")
    .brief("spark_connect_jobs_total carries the Spark Connect user.")
    .doc("`spark_connect_jobs_total` carries the Spark Connect user in `user` (else empty)."),
    Key::list("histograms.duration_buckets", |s, v| {
        s.histograms.duration_buckets = parse::buckets(v)?;
        Ok(())
    })
    .uses(Uses::SERVE)
    .default("`0.1 … 14400` (22 buckets, see [Metrics](metrics.md))")
    .doc("Buckets (seconds) of job, stage, SQL and batch durations."),
    Key::list("histograms.task_duration_buckets", |s, v| {
        s.histograms.task_duration_buckets = parse::buckets(v)?;
        Ok(())
    })
    .uses(Uses::SERVE)
    .default("`0.01 … 3600`")
    .doc("Buckets (seconds) of task durations."),
];
