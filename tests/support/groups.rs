//! The `job_group` a job gets under the default rule (docs/internals.md "Job groups": the job
//! group, else
//! the user's tag, else the call site, else empty), worked out from Spark's own REST fields or
//! event-log properties, independently of the exporter, for the truths the tests compare with.

use serde_json::Value;

/// The group of REST job `j` (`JobData`): `jobGroup`, else the user's tag in `jobTags`, else
/// the call site in `name`. `rewrite` applies the label rewrite rules the test expects to
/// group and tag values (call sites are taken as they are).
pub fn rest_job_group(j: &Value, rewrite: impl Fn(&str) -> String) -> String {
    let tags: Vec<&str> = j["jobTags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    job_group(j["jobGroup"].as_str(), &tags, j["name"].as_str(), rewrite)
}

/// The group of a job with this job group, these raw tags and this name (call site).
pub fn job_group(
    group: Option<&str>,
    tags: &[&str],
    name: Option<&str>,
    rewrite: impl Fn(&str) -> String,
) -> String {
    if let Some(g) = group.filter(|g| !g.is_empty()) {
        return rewrite(g);
    }
    if let Some(t) = first_user_tag(tags) {
        return rewrite(&t);
    }
    name.map(call_site).unwrap_or_default()
}

/// The user's tag among job tags as Spark records them: a plain `addJobTag` tag, a classic
/// session's `spark-session-<uuid>-thread-<uuid>-<tag>`, or Spark Connect's
/// `SparkConnect_…_Session_<uuid>_Tag_<tag>`; Spark's own tags are not users'. Several: the
/// first in sorted order.
pub fn first_user_tag(tags: &[&str]) -> Option<String> {
    let mut user: Vec<String> = tags
        .iter()
        .filter(|t| !t.is_empty() && !t.starts_with("broadcast exchange (runId "))
        .filter_map(|t| {
            if let Some(rest) = t.strip_prefix("spark-session-") {
                let (_, user) = rest.split_once("-thread-")?;
                return user.get(37..).map(str::to_string);
            }
            if t.starts_with("SparkConnect_") {
                return t.split_once("_Tag_").map(|(_, u)| u.to_string());
            }
            Some(t.to_string())
        })
        .filter(|t| !t.is_empty())
        .collect();
    user.sort();
    user.into_iter().next()
}

/// A call site as the label shows it: `<method> at <file>:<line>` without the file's folders;
/// for a Spark Connect plan dump, the first relation under its root.
pub fn call_site(name: &str) -> String {
    if name.starts_with("Spark Connect - ") {
        let after = name.split_once("root {").map_or("", |(_, r)| r);
        return after
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_suffix(" {"))
            .find(|n| !matches!(*n, "common" | "input" | "sql_command" | "root" | "plan"))
            .unwrap_or("Spark Connect")
            .to_string();
    }
    match name.rsplit_once(" at ") {
        Some((method, place)) => {
            let file = place.rsplit(['/', '\\']).next().unwrap_or(place);
            format!("{method} at {file}")
        }
        None => name.to_string(),
    }
}
