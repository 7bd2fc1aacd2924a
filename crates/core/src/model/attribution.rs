//! Which job group and description a job counts under: one rule, for classic applications and
//! Spark Connect alike.
//!
//! `labels.job_group_from` lists where the `job_group` label comes from, first match wins
//! (default: `job_group`, `tag`; `call_site` on request):
//! - `job_group`: `setJobGroup` (`spark.jobGroup.id`);
//! - `tag`: a user's job tag (`SparkContext.addJobTag`, Spark 3.5+; Spark Connect's
//!   `spark.addTag`, which Spark records as `SparkConnect_…_Tag_<tag>`). Spark's internal tags
//!   (operation ids, `spark-session-…`) are never used. When several user tags match
//!   `labels.tag_pattern`, the first in sorted order wins; a capture group picks a part;
//! - `call_site`: the call site Spark records as the job's name (`count at <stdin>:1`).
//!
//! Nothing found: empty. A description that is a Spark Connect plan dump (`Spark Connect -
//! session_id: …`) is replaced by the operation's SQL text when the event log has it, else by
//! the plan's first relation (`aggregate`, `limit`), else `Spark Connect`.

use std::borrow::Cow;

use regex::Regex;

use super::obs::JobObs;
use crate::config::{GroupSource, LabelsConfig};

/// The grouping rule (see the module docs).
#[derive(Debug, Clone)]
pub struct Attribution {
    from: Vec<GroupSource>,
    tag_pattern: Option<Regex>,
}

/// A job tag a user set, with the Connect user and session when Spark Connect recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTag<'a> {
    /// The tag as the user wrote it.
    pub tag: &'a str,
    /// Spark Connect user id.
    pub user: Option<&'a str>,
}

impl Attribution {
    /// The rule of `cfg`.
    pub fn new(cfg: &LabelsConfig) -> Attribution {
        Attribution {
            from: cfg.job_group_from.clone(),
            // `config::validate` already rejected bad patterns.
            tag_pattern: cfg.tag_pattern.as_ref().map(|p| p.0.clone()),
        }
    }

    /// The raw `job_group` value of `job` (before rewrite rules and caps).
    pub fn group<'a>(&self, job: &'a JobObs) -> Option<Cow<'a, str>> {
        self.group_source(job.job_group.as_deref(), &job.tags, job.name.as_deref())
            .map(|(v, _)| v)
    }

    /// The raw `job_group` value of something with this job group, these tags and this name
    /// (a job, or a SQL execution's start), and where it came from.
    pub fn group_source<'a>(
        &self,
        job_group: Option<&'a str>,
        tags: &'a [String],
        name: Option<&'a str>,
    ) -> Option<(Cow<'a, str>, GroupSource)> {
        self.from.iter().find_map(|s| {
            let v = match s {
                GroupSource::JobGroup => job_group.filter(|g| !g.is_empty()).map(Cow::Borrowed),
                GroupSource::Tag => self.tag(tags),
                GroupSource::CallSite => name.filter(|n| !n.is_empty()).and_then(call_site),
            };
            v.map(|v| (v, *s))
        })
    }

    /// The user tag that names the group, if any.
    fn tag<'a>(&self, tags: &'a [String]) -> Option<Cow<'a, str>> {
        let mut best: Option<Cow<'a, str>> = None;
        for t in tags.iter().filter_map(|t| user_tag(t)) {
            let v: Cow<'a, str> = match &self.tag_pattern {
                None => Cow::Borrowed(t.tag),
                Some(r) => match r.captures(t.tag) {
                    None => continue,
                    Some(c) => match c.get(1) {
                        Some(m) => Cow::Borrowed(m.as_str()),
                        None => Cow::Borrowed(t.tag),
                    },
                },
            };
            if !v.is_empty() && best.as_ref().is_none_or(|b| v < *b) {
                best = Some(v);
            }
        }
        best
    }
}

/// The user's tag in a job tag as Spark records it; `None` for Spark's internal tags.
pub fn user_tag(raw: &str) -> Option<UserTag<'_>> {
    // Spark 3.5+ tags a broadcast exchange's job `broadcast exchange (runId <uuid>)`: its own.
    if raw.is_empty() || raw.starts_with("broadcast exchange (runId ") {
        return None;
    }
    if let Some(rest) = raw.strip_prefix("spark-session-") {
        // Classic `SparkSession.addTag` (4.x): `spark-session-<uuid>-thread-<uuid>-<tag>`
        // (4.1); the session's own `spark-session-<uuid>` and its SQL executions'
        // `spark-session-<uuid>-execution-root-id-<n>` are internal.
        let rest = rest.get(36..).and_then(|t| t.strip_prefix('-'))?;
        let tag = match rest.strip_prefix("thread-") {
            Some(t) => t.get(36..).and_then(|t| t.strip_prefix('-'))?,
            None if rest.starts_with("execution-root-id-") => return None,
            None => rest,
        };
        return (!tag.is_empty()).then_some(UserTag { tag, user: None });
    }
    if let Some(rest) = raw.strip_prefix("SparkConnect_") {
        // `SparkConnect_<kind>_User_<user>_Session_<uuid>_Tag_<tag>` (the user's own tags; the
        // kind is `SessionTag` on 4.x, `Tag`/`OperationTag` on 3.5); operation ids and other
        // internal tags have no `_Tag_` after the session.
        let (_, after_user) = rest.split_once("_User_")?;
        let (user, after_session) = after_user.split_once("_Session_")?;
        let (session, tag) = after_session.split_once("_Tag_")?;
        if session.len() != 36 || tag.is_empty() {
            return None;
        }
        return Some(UserTag {
            tag,
            user: Some(user).filter(|u| !u.is_empty()),
        });
    }
    Some(UserTag {
        tag: raw,
        user: None,
    })
}

/// A call site as a label: `<method> at <file>:<line>` with the file's folders dropped (they
/// differ between deployments; the line is kept), or a Connect plan dump's first relation.
pub fn call_site(name: &str) -> Option<Cow<'_, str>> {
    if is_plan_dump(name) {
        return readable_description(Some(name), None);
    }
    let Some((method, place)) = name.rsplit_once(" at ") else {
        return Some(Cow::Borrowed(name));
    };
    match place.rfind(['/', '\\']) {
        Some(i) => Some(Cow::Owned(format!("{method} at {}", &place[i + 1..]))),
        None => Some(Cow::Borrowed(name)),
    }
}

/// The Spark Connect user a job ran for, from its `SparkConnect_…_User_<user>_Session_…` tags.
pub fn connect_user(tags: &[String]) -> Option<&str> {
    tags.iter().find_map(|t| {
        let rest = t.strip_prefix("SparkConnect_")?;
        let (_, after) = rest.split_once("_User_")?;
        let (user, _) = after.split_once("_Session_")?;
        Some(user).filter(|u| !u.is_empty())
    })
}

/// Spark Connect's job and SQL descriptions, and its call sites, start so.
const CONNECT_DUMP: &str = "Spark Connect - ";

/// True for a Spark Connect plan dump.
pub fn is_plan_dump(s: &str) -> bool {
    s.starts_with(CONNECT_DUMP)
}

/// `desc`, or what a person recognises instead of a Spark Connect plan dump: the plan's first
/// relation, from `desc` or else from `name` (the call site, cut later than the description),
/// else `Spark Connect`. The event log does better: the operation's statement replaces the dump
/// before it gets here (see [`statement_summary`]).
pub fn readable_description<'a>(
    desc: Option<&'a str>,
    name: Option<&'a str>,
) -> Option<Cow<'a, str>> {
    let d = desc?;
    if !is_plan_dump(d) {
        return Some(Cow::Borrowed(d));
    }
    let rel = first_relation(d, "root {").or_else(|| {
        name.filter(|n| is_plan_dump(n))
            .and_then(|n| first_relation(n, "root {"))
    });
    Some(Cow::Borrowed(rel.unwrap_or("Spark Connect")))
}

/// What a Spark Connect operation's `statementText` (its plan as protobuf text) says to a
/// person: the SQL text of `spark.sql(...)`, else its first relation.
pub fn statement_summary(text: &str) -> Option<String> {
    if let Some(q) = quoted_after(text, "query: \"") {
        return Some(q);
    }
    let rel = first_relation(text, "");
    rel.map(str::to_string)
}

/// The protobuf-text string literal after `key`, unescaped.
fn quoted_after(text: &str, key: &str) -> Option<String> {
    let (_, rest) = text.split_once(key)?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
    None
}

/// The first relation of a protobuf text dump, after `from`, skipping `common` and wrappers
/// that only hold one (`sql_command`, `input`).
fn first_relation<'a>(dump: &'a str, from: &str) -> Option<&'a str> {
    let after = if from.is_empty() {
        dump
    } else {
        dump.split_once(from)?.1
    };
    after
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_suffix(" {"))
        .find(|name| !matches!(*name, "common" | "input" | "sql_command" | "root" | "plan"))
        .filter(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    fn job(group: Option<&str>, tags: &[&str], name: Option<&str>) -> JobObs {
        JobObs {
            job_id: 0,
            job_group: group.map(str::to_string),
            description: None,
            status: crate::model::JobStatus::Running,
            submission_ms: None,
            completion_ms: None,
            stage_ids: vec![],
            sql_execution_id: None,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            name: name.map(str::to_string),
            client_app: None,
        }
    }

    const S: &str = "0c6a1b5e-4d2f-4b8e-9a51-3f2d1c0b9a87";

    #[test]
    fn spark_connect_tags_give_the_users_tag_and_internal_ones_nothing() {
        let t = format!("SparkConnect_SessionTag_User_alice_Session_{S}_Tag_nightly_etl");
        assert_eq!(
            user_tag(&t),
            Some(UserTag {
                tag: "nightly_etl",
                user: Some("alice")
            })
        );
        let op = format!("SparkConnect_OperationTag_User_alice_Session_{S}_Operation_{S}");
        assert_eq!(user_tag(&op), None);
        assert_eq!(user_tag(&format!("spark-session-{S}")), None);
        // Classic SparkSession tags, as Spark 4.1.1 records them.
        assert_eq!(
            user_tag(&format!("spark-session-{S}-thread-{S}-team_x")).map(|u| u.tag),
            Some("team_x")
        );
        assert_eq!(
            user_tag(&format!("spark-session-{S}-execution-root-id-1")),
            None
        );
        assert_eq!(user_tag("SparkConnect_Execute"), None);
        assert_eq!(
            user_tag("team_a"),
            Some(UserTag {
                tag: "team_a",
                user: None
            })
        );
        // A user's tag may itself hold `_Tag_`.
        let odd = format!("SparkConnect_SessionTag_User_bob_Session_{S}_Tag_x_Tag_y");
        assert_eq!(user_tag(&odd).map(|u| u.tag), Some("x_Tag_y"));
    }

    #[test]
    fn the_rule_is_group_then_tag_then_call_site_then_empty() {
        let mut c = Settings::default().labels;
        c.job_group_from = vec![
            GroupSource::JobGroup,
            GroupSource::Tag,
            GroupSource::CallSite,
        ];
        let a = Attribution::new(&c);
        let op = format!("SparkConnect_OperationTag_User_u_Session_{S}_Operation_{S}");
        let user = format!("SparkConnect_SessionTag_User_u_Session_{S}_Tag_nightly_etl");
        let g = |j: &JobObs| a.group(j).map(|c| c.into_owned());
        assert_eq!(
            g(&job(Some("etl"), &[&user], Some("count at x.py:3"))),
            Some("etl".into())
        );
        assert_eq!(
            g(&job(Some(""), &[&op, &user], Some("count at x.py:3"))),
            Some("nightly_etl".into())
        );
        assert_eq!(
            g(&job(None, &[&op], Some("count at x.py:3"))),
            Some("count at x.py:3".into()),
            "internal tags never name a group"
        );
        assert_eq!(g(&job(None, &[], None)), None);
        // Several user tags: the first in order, or the one the pattern picks.
        assert_eq!(
            g(&job(None, &["zeta", "alpha"], None)),
            Some("alpha".into())
        );
        let mut c = Settings::default().labels;
        c.tag_pattern = crate::config::Pattern::new("^team_(.+)$").ok();
        c.job_group_from = vec![GroupSource::Tag];
        let a = Attribution::new(&c);
        assert_eq!(
            a.group(&job(Some("g"), &["alpha", "team_data"], Some("x")))
                .map(|c| c.into_owned()),
            Some("data".into())
        );
        assert_eq!(a.group(&job(Some("g"), &["alpha"], Some("x"))), None);
    }

    #[test]
    fn a_connect_plan_dump_never_becomes_a_description() {
        let dump = "Spark Connect - session_id: \"0c6a\"\nplan {\n  root {\n    common {\n      \
            plan_id: 3\n    }\n    aggregate {\n      input {";
        assert_eq!(
            readable_description(Some(dump), None).as_deref(),
            Some("aggregate")
        );
        let cut = "Spark Connect - session_id: \"0c6a\"\nplan {\n  root {\n    common {\n    ";
        assert_eq!(
            readable_description(Some(cut), None).as_deref(),
            Some("Spark Connect")
        );
        assert_eq!(
            readable_description(Some(cut), Some(dump)).as_deref(),
            Some("aggregate"),
            "from the call site, cut later"
        );
        // Real statement texts (Spark Connect 4.1.1).
        let sql = "sql_command {\n  input {\n    common {\n      plan_id: 3\n    }\n    sql \
            {\n      query: \"SELECT count(*) FROM \\\"t\\\"\"\n    }\n  }\n}\n";
        assert_eq!(
            statement_summary(sql).as_deref(),
            Some("SELECT count(*) FROM \"t\"")
        );
        let agg =
            "common {\n  plan_id: 2\n}\naggregate {\n  input {\n    common {\n      plan_id: \
            1\n    }\n    project {";
        assert_eq!(statement_summary(agg).as_deref(), Some("aggregate"));
        assert_eq!(
            readable_description(Some("Load {date}"), None).as_deref(),
            Some("Load {date}")
        );
    }

    #[test]
    fn a_call_site_keeps_its_file_and_line_without_folders() {
        for (name, want) in [
            ("count at /work/jobs/etl.py:142", "count at etl.py:142"),
            ("collect at C:\\jobs\\etl.py:7", "collect at etl.py:7"),
            (
                "count at NativeMethodAccessorImpl.java:0",
                "count at NativeMethodAccessorImpl.java:0",
            ),
            ("no place", "no place"),
        ] {
            assert_eq!(call_site(name).as_deref(), Some(want), "{name}");
        }
    }
}
