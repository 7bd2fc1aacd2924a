//! Broadcast jobs count under their query's job group.
//!
//! Spark 2.x to 3.4 run a broadcast exchange's job under
//! `setJobGroup(runId, "broadcast exchange (runId <runId>)")`, which overrides the user's job
//! group (Spark 3.5 uses a job tag instead). Counted as they come, those jobs, their stages and
//! tasks would land in a group of their own (`{uuid}` after the rewrite rules) and the user's
//! group would lose them. A broadcast job usually starts before its query's other jobs, so the
//! user's group is not known yet when it runs. It counts under a hidden *placeholder* group
//! until its SQL execution's group is learnt, then the placeholder's counters and histograms
//! move into that group, and its live stages and job follow:
//! - from the event log: the next job of the same execution (`spark.sql.execution.id`) that is
//!   not a broadcast names the group and description;
//! - over REST: the execution's job list (`/sql`) names the execution's other jobs.
//!
//! A broadcast whose execution ends with no other grouped job (outside any user group), or
//! still pending when its application is summarised, keeps what it would have had before: its
//! own `runId` group and description. Placeholders are never exported ([`is_placeholder`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::obs::JobObs;

/// `(job_group, job_description)` label values (`app::GroupKey`; spelt out here so this file
/// imports nothing of the application's state, which holds a [`Broadcasts`]).
type GroupKey = (Arc<str>, Arc<str>);

/// The description Spark gives a broadcast exchange's job.
const PREFIX: &str = "broadcast exchange (runId ";

/// Most learnt groups remembered per application (executions and REST jobs), lowest ids
/// dropped first.
const REMEMBERED: usize = 2048;

/// True for a broadcast exchange's job of Spark 3.4 and older: its group is the `runId` its
/// description names.
pub fn is_broadcast(job: &JobObs) -> bool {
    match (job.job_group.as_deref(), job.description.as_deref()) {
        (Some(g), Some(d)) => {
            !g.is_empty() && d.strip_prefix(PREFIX).is_some_and(|r| r.starts_with(g))
        }
        _ => false,
    }
}

/// True for a placeholder group (never exported).
pub fn is_placeholder(key: &GroupKey) -> bool {
    key.0.starts_with('\0')
}

/// A broadcast job waiting for its query's group.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Pending {
    /// Its SQL execution, when the source says (event log).
    execution: Option<u64>,
    /// The group it counts under meanwhile.
    placeholder: GroupKey,
    /// The group it would have had: its own `runId` group and description.
    fallback: GroupKey,
}

/// One application's broadcast jobs and what is known of their queries' groups.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Broadcasts {
    /// Broadcast jobs still waiting, by job id.
    pending: BTreeMap<u64, Pending>,
    /// Execution id -> group of its first job that is not a broadcast (event log).
    by_execution: BTreeMap<u64, GroupKey>,
    /// Job id -> its group, for jobs that are not broadcasts (REST).
    by_job: BTreeMap<u64, GroupKey>,
}

impl Broadcasts {
    /// The group broadcast job `job` counts under now: its query's, when known, else a
    /// placeholder (remembered with `fallback`, the group it would have had).
    pub fn group_of(&mut self, job: &JobObs, fallback: GroupKey) -> GroupKey {
        if let Some(k) = job.sql_execution_id.and_then(|e| self.by_execution.get(&e)) {
            return k.clone();
        }
        let placeholder: GroupKey = (
            Arc::from(format!("\0broadcast {}", job.job_id)),
            fallback.1.clone(),
        );
        self.pending.insert(
            job.job_id,
            Pending {
                execution: job.sql_execution_id,
                placeholder: placeholder.clone(),
                fallback,
            },
        );
        placeholder
    }

    /// Job `job`, not a broadcast, counts under `key`: remembered for its execution's
    /// broadcasts. Returns the placeholders this resolves, with their group.
    pub fn saw_job(&mut self, job: &JobObs, key: &GroupKey) -> Vec<(GroupKey, GroupKey)> {
        if key.0.is_empty() {
            return vec![];
        }
        match job.sql_execution_id {
            Some(e) => {
                self.by_execution.entry(e).or_insert_with(|| key.clone());
                bound(&mut self.by_execution);
                self.take(|p| p.execution == Some(e), |_| Some(key.clone()))
            }
            None => {
                self.by_job.insert(job.job_id, key.clone());
                bound(&mut self.by_job);
                vec![]
            }
        }
    }

    /// SQL execution `execution` with jobs `job_ids` (REST lists them; the event log does not):
    /// its broadcasts take the group of its other jobs; once it has `ended`, a broadcast
    /// still waiting keeps its fallback.
    pub fn saw_execution(
        &mut self,
        execution: u64,
        job_ids: &[u64],
        ended: bool,
    ) -> Vec<(GroupKey, GroupKey)> {
        let user = self.by_execution.get(&execution).cloned().or_else(|| {
            job_ids
                .iter()
                .filter_map(|j| self.by_job.get(j).map(|k| (*j, k)))
                .min_by_key(|(j, _)| *j)
                .map(|(_, k)| k.clone())
        });
        let mine = |p: &Pending, id: u64| p.execution == Some(execution) || job_ids.contains(&id);
        let pending: Vec<u64> = self
            .pending
            .iter()
            .filter(|(id, p)| mine(p, **id))
            .map(|(id, _)| *id)
            .collect();
        let mut out = vec![];
        for id in pending {
            let to = match (&user, ended) {
                (Some(k), _) => k.clone(),
                (None, true) => self.pending[&id].fallback.clone(),
                (None, false) => continue,
            };
            if let Some(p) = self.pending.remove(&id) {
                out.push((p.placeholder, to));
            }
        }
        out
    }

    /// Every broadcast still waiting keeps its fallback (the application is summarised).
    pub fn give_up(&mut self) -> Vec<(GroupKey, GroupKey)> {
        self.take(|_| true, |p| Some(p.fallback.clone()))
    }

    fn take(
        &mut self,
        which: impl Fn(&Pending) -> bool,
        to: impl Fn(&Pending) -> Option<GroupKey>,
    ) -> Vec<(GroupKey, GroupKey)> {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| which(p))
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter()
            .filter_map(|id| {
                let p = self.pending.remove(&id)?;
                to(&p).map(|k| (p.placeholder, k))
            })
            .collect()
    }
}

fn bound<V>(m: &mut BTreeMap<u64, V>) {
    while m.len() > REMEMBERED {
        m.pop_first();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, group: &str, desc: &str, exec: Option<u64>) -> JobObs {
        JobObs {
            job_id: id,
            job_group: Some(group.into()),
            description: Some(desc.into()),
            status: super::super::obs::JobStatus::Running,
            submission_ms: None,
            completion_ms: None,
            stage_ids: vec![],
            sql_execution_id: exec,
            tags: vec![],
            name: None,
            client_app: None,
        }
    }

    const RUN: &str = "5d1c3f6e-0a3b-4b7e-9f53-1f6b2b0c9e11";

    #[test]
    fn only_a_broadcast_exchanges_job_is_one() {
        let d = format!("broadcast exchange (runId {RUN})");
        assert!(is_broadcast(&job(1, RUN, &d, Some(0))));
        assert!(
            !is_broadcast(&job(1, "nightly", &d, Some(0))),
            "another group"
        );
        assert!(!is_broadcast(&job(1, RUN, "count", Some(0))));
    }

    #[test]
    fn a_pending_broadcast_takes_its_executions_group_or_keeps_its_own() {
        let key = |g: &str, d: &str| -> GroupKey { (Arc::from(g), Arc::from(d)) };
        let d = format!("broadcast exchange (runId {RUN})");
        let mut b = Broadcasts::default();
        let ph = b.group_of(&job(3, RUN, &d, Some(7)), key("{uuid}", "fallback"));
        assert!(is_placeholder(&ph));
        let user = key("nightly", "Join");
        assert_eq!(
            b.saw_job(&job(4, "nightly", "Join", Some(7)), &user),
            vec![(ph, user.clone())]
        );
        // Known now: the next broadcast of that execution counts there at once.
        assert_eq!(
            b.group_of(&job(5, RUN, &d, Some(7)), key("{uuid}", "x")),
            user
        );
        // REST: no execution id; the execution's job list resolves it.
        let ph = b.group_of(&job(8, RUN, &d, None), key("{uuid}", "f"));
        b.saw_job(&job(9, "etl", "q", None), &key("etl", "q"));
        assert_eq!(
            b.saw_execution(2, &[8, 9], false),
            vec![(ph, key("etl", "q"))]
        );
        // Outside any user group: the fallback once the execution ends.
        let ph = b.group_of(&job(10, RUN, &d, None), key("{uuid}", "f"));
        assert!(b.saw_execution(3, &[10], false).is_empty());
        assert_eq!(
            b.saw_execution(3, &[10], true),
            vec![(ph, key("{uuid}", "f"))]
        );
        assert!(b.give_up().is_empty());
    }
}
