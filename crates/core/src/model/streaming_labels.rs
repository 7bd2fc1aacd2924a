//! The labels of a Structured Streaming query's work: its jobs, stages, tasks and SQL
//! executions count under the query's name, and its progress families carry it as `query`.
//!
//! Spark runs every micro-batch's jobs with the query's `runId` (a UUID, new on every restart)
//! as job group and the description `"<name>\nid = <uuid>\nrunId = <uuid>\nbatch = <n>"`
//! (`StreamExecution.getBatchDescriptionString`; the name line is empty for an unnamed query),
//! and its SQL executions with the same description. Both the REST API (`JobData.description`,
//! `StageData.description`, `ExecutionData.description`) and the event log
//! (`spark.job.description`, `SparkListenerSQLExecutionStart.description`) carry it, so one
//! parser serves both sources and a job seen by both gets the same labels.
//!
//! The label: the query's name, through the rewrite rules and caps like any other value; an
//! unnamed query gets `query-<first 8 hex digits of its id>`. The id is kept across restarts
//! from the same checkpoint (the runId is not), so the stand-in is stable. The stand-in is
//! built here and only capped, never rewritten (the default rules would make it `query-{hex}`).
//! Neither form can hold a UUID (rewritten) or a newline (replaced by a space).

use std::sync::Arc;

use super::labels::{LabelSets, Labeler};
use crate::telemetry::Telemetry;

/// What a micro-batch's description says about its query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOf<'a> {
    /// The query's name; `None` for an unnamed query.
    pub name: Option<&'a str>,
    /// The query id (stable across restarts).
    pub query_id: &'a str,
}

/// The query a micro-batch description names, if `desc` is one.
pub fn batch_of(desc: Option<&str>) -> Option<BatchOf<'_>> {
    let desc = desc?;
    // The last three lines are Spark's; everything before them is the name (which may itself
    // hold newlines).
    let mut lines = desc.rsplitn(4, '\n');
    let batch = lines.next()?;
    let run_id = lines.next()?.strip_prefix("runId = ")?;
    let query_id = lines.next()?.strip_prefix("id = ")?;
    let name = lines.next()?;
    let batch = batch.strip_prefix("batch = ")?;
    if !is_uuid(query_id) || !is_uuid(run_id) || batch.is_empty() {
        return None;
    }
    Some(BatchOf {
        name: Some(name).filter(|n| !n.trim().is_empty()),
        query_id,
    })
}

/// True for a UUID in Spark's text form (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// The readable stand-in of an unnamed query: `query-` and the first 8 hex digits of its id.
pub fn stand_in(query_id: &str) -> String {
    let hex: String = query_id
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if hex.is_empty() {
        "query-unknown".into()
    } else {
        format!("query-{hex}")
    }
}

/// The exported label value of a query for label `label` of one application: its name
/// (newlines replaced, then rewritten and capped) or its stand-in (capped).
pub fn label(
    labeler: &Labeler,
    sets: &mut LabelSets,
    t: &Telemetry,
    label: &'static str,
    name: Option<&str>,
    query_id: &str,
) -> Arc<str> {
    match name.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) if n.contains(['\n', '\r']) => {
            let flat = n.replace(['\n', '\r'], " ");
            labeler.value(sets, t, label, Some(&flat))
        }
        Some(n) => labeler.value(sets, t, label, Some(n)),
        None => labeler.value_verbatim(sets, t, label, &stand_in(query_id)),
    }
}

/// Run ids of one application's streaming queries kept at most: a query gets a new one at
/// every restart; past this, new runs are not remembered (their jobs still count under the
/// query when their description is Spark's).
const MAX_RUNS: usize = 1024;

/// One application's streaming queries by run id: what the event log's `QueryStartedEvent`s
/// said, and what micro-batch descriptions (both sources) said. A job of a run whose
/// description user code replaced (`setJobDescription` inside `foreachBatch`) still has the run
/// id as its job group, and counts under the query through this.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct StreamRuns {
    #[serde(with = "crate::model::serial::pairs")]
    by_run: std::collections::HashMap<Box<str>, RunOf>,
}

/// The query of a run: its name (if any) and id.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct RunOf {
    name: Option<Box<str>>,
    query_id: Box<str>,
}

impl StreamRuns {
    /// Remember that run `run_id` belongs to the query `name` / `query_id`.
    pub fn insert(&mut self, run_id: &str, name: Option<&str>, query_id: &str) {
        if !is_uuid(run_id) || self.by_run.contains_key(run_id) || self.by_run.len() >= MAX_RUNS {
            return;
        }
        let run = RunOf {
            name: name.map(Into::into),
            query_id: query_id.into(),
        };
        self.by_run.insert(run_id.into(), run);
    }
}

/// The `(job_group, job_description)` of a micro-batch's job or stage: both the query's label
/// when `desc` is Spark's micro-batch description; the query's label and the description's own
/// label when only the job group (`group`, the run id) names a known run. `None` otherwise.
pub fn group_key(
    labeler: &Labeler,
    sets: &mut LabelSets,
    runs: &mut StreamRuns,
    t: &Telemetry,
    group: Option<&str>,
    desc: Option<&str>,
) -> Option<(Arc<str>, Arc<str>)> {
    if let Some(b) = batch_of(desc) {
        if let Some(g) = group {
            runs.insert(g, b.name, b.query_id);
        }
        return Some((
            label(labeler, sets, t, "job_group", b.name, b.query_id),
            label(labeler, sets, t, "job_description", b.name, b.query_id),
        ));
    }
    let run = runs.by_run.get(group?)?;
    Some((
        label(
            labeler,
            sets,
            t,
            "job_group",
            run.name.as_deref(),
            &run.query_id,
        ),
        labeler.value(sets, t, "job_description", desc),
    ))
}

/// The SQL `description` of a micro-batch's SQL execution: the query's label.
pub fn sql_description(
    labeler: &Labeler,
    sets: &mut LabelSets,
    t: &Telemetry,
    desc: Option<&str>,
) -> Option<Arc<str>> {
    let b = batch_of(desc)?;
    Some(label(labeler, sets, t, "description", b.name, b.query_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    const ID: &str = "1a8d25d9-1b6e-4b84-90af-3bc3c0da28ec";
    const RUN: &str = "05ee1333-6b6a-4ea8-99d9-c7b84cb67ef4";

    #[test]
    fn spark_batch_descriptions_name_their_query() {
        let named = format!("windowed_counts\nid = {ID}\nrunId = {RUN}\nbatch = 12");
        assert_eq!(
            batch_of(Some(&named)),
            Some(BatchOf {
                name: Some("windowed_counts"),
                query_id: ID
            })
        );
        let unnamed = format!("\nid = {ID}\nrunId = {RUN}\nbatch = init");
        assert_eq!(batch_of(Some(&unnamed)).map(|b| b.name), Some(None));
        let multi = format!("a\nb\nid = {ID}\nrunId = {RUN}\nbatch = 0");
        assert_eq!(batch_of(Some(&multi)).and_then(|b| b.name), Some("a\nb"));
        for other in [
            "count at app.py:3",
            "x\nid = 1\nrunId = 2\nbatch = 3",
            &format!("id = {ID}\nrunId = {RUN}\nbatch = 1"),
            "",
        ] {
            assert_eq!(batch_of(Some(other)), None, "{other:?}");
        }
        assert_eq!(batch_of(None), None);
    }

    #[test]
    fn a_known_run_names_the_query_of_a_job_with_the_users_description() {
        let s = Settings::default();
        let l = Labeler::new(&s.labels);
        let t = Telemetry::default();
        let (mut sets, mut runs) = (LabelSets::default(), StreamRuns::default());
        let mut key = |group: Option<&str>, desc: Option<&str>| {
            group_key(&l, &mut sets, &mut runs, &t, group, desc)
                .map(|(g, d)| (g.to_string(), d.to_string()))
        };
        assert_eq!(
            key(Some(RUN), Some("merge into target")),
            None,
            "unknown run"
        );
        let batch = format!("orders\nid = {ID}\nrunId = {RUN}\nbatch = 3");
        assert_eq!(
            key(Some(RUN), Some(&batch)),
            Some(("orders".into(), "orders".into()))
        );
        assert_eq!(
            key(Some(RUN), Some("merge into target")),
            Some(("orders".into(), "merge into target".into())),
            "learnt from the batch's description"
        );
        assert_eq!(key(Some("etl"), Some("load")), None);
    }

    #[test]
    fn labels_hold_no_uuid_and_no_newline() {
        let s = Settings::default();
        let l = Labeler::new(&s.labels);
        let t = Telemetry::default();
        let mut sets = LabelSets::default();
        let mut v = |name: Option<&str>| label(&l, &mut sets, &t, "query", name, ID).to_string();
        assert_eq!(v(None), "query-1a8d25d9", "the stand-in is not rewritten");
        assert_eq!(v(Some("  ")), "query-1a8d25d9");
        assert_eq!(v(Some("orders")), "orders");
        assert_eq!(v(Some("a\nb")), "a b");
        assert_eq!(v(Some(&format!("run {RUN}"))), "run {uuid}");
    }
}
