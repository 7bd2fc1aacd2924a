//! A run's record as the simulation replays it ([`Plan`]): every time that is the driver's, not
//! the executors' (before the first job, between jobs, between a stage's parents' end and its
//! submission, after a stage's last task and after a job's last stage), kept as the run had it;
//! and what the executors did, as task durations to schedule again.
//!
//! A job starts a fixed time after the end of the latest job that had ended when it was
//! submitted (or after the application's start): jobs a driver runs one after the other stay in
//! sequence, jobs submitted from threads while another ran stay concurrent. A stage attempt is
//! ready a fixed time after its parents in the same job (and its own earlier attempt) complete,
//! or after its job's submission when it has none.

use std::collections::BTreeMap;

use super::record::RunRecord;

/// What a time is counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The application's start, plus ms.
    Start(i64),
    /// The end of job (index into [`Plan::jobs`]), plus ms.
    After(usize, i64),
}

/// A job.
#[derive(Debug, Clone, PartialEq)]
pub struct PJob {
    /// Spark's id (the FIFO scheduler's priority).
    pub id: u64,
    /// When it is submitted.
    pub anchor: Anchor,
    /// Its stage attempts (indexes into [`Plan::stages`]).
    pub stages: Vec<usize>,
    /// From its last stage's completion (or its submission) to its end, ms.
    pub tail_ms: i64,
}

/// A stage attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct PStage {
    /// Its job (index into [`Plan::jobs`]).
    pub job: usize,
    /// (job id, stage id, attempt): the FIFO scheduler's order.
    pub priority: (u64, u64, u32),
    /// Stage attempts it waits for.
    pub deps: Vec<usize>,
    /// From its dependencies' completion (or its job's submission) to its submission, ms.
    pub delay_ms: i64,
    /// Its tasks' durations, ms, in launch order.
    pub tasks: Vec<u32>,
    /// From its last task's end to its completion, ms.
    pub tail_ms: i64,
    /// Another stage reads its output: its executors hold shuffle data.
    pub shuffle_map: bool,
}

/// The run, as the simulation replays it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Application start, epoch ms.
    pub start_ms: i64,
    /// Its real duration, ms.
    pub real_ms: i64,
    /// Jobs, by submission.
    pub jobs: Vec<PJob>,
    /// Stage attempts.
    pub stages: Vec<PStage>,
    /// When the application ends.
    pub end: Anchor,
}

/// Why a run cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// No `SparkListenerApplicationStart` or `SparkListenerApplicationEnd` time.
    #[error("the log has no application start or end time (a run still going, or cut short)")]
    NoEnds,
    /// No task ran.
    #[error("no task ran")]
    NoTasks,
    /// It has streaming queries.
    #[error("a streaming application: its micro-batches are out of the simulation's scope")]
    Streaming,
}

/// The latest job that ended at or before `t`, other than `not`, and how long before `t`.
fn anchor(ends: &[(i64, usize)], t: i64, not: Option<usize>, start: i64) -> Anchor {
    ends.iter()
        .filter(|(e, j)| *e <= t && Some(*j) != not)
        .max_by_key(|(e, j)| (*e, *j))
        .map_or(Anchor::Start((t - start).max(0)), |(e, j)| {
            Anchor::After(*j, t - e)
        })
}

/// Jobs as (id, submission, end, stages), by submission (a job without one: its first stage's,
/// else its end); an end not logged is the application's.
fn jobs_of(r: &RunRecord, end: i64) -> Vec<(u64, i64, i64, &[u64])> {
    let mut jobs: Vec<(u64, i64, i64, &[u64])> = r
        .jobs
        .iter()
        .filter_map(|(id, j)| {
            let first = j
                .stages
                .iter()
                .filter_map(|s| r.stages.get(&(*s, 0)).and_then(|x| x.submit_ms))
                .min();
            let submit = j.submit_ms.or(first).or(j.end_ms)?;
            let end = j.end_ms.unwrap_or(end).max(submit);
            Some((*id, submit, end, j.stages.as_slice()))
        })
        .collect();
    jobs.sort_by_key(|(id, s, ..)| (*s, *id));
    jobs
}

/// A stage attempt's submission, completion and last task's end (the tasks' when not logged).
fn times(r: &RunRecord, k: &(u64, u32)) -> (Option<i64>, Option<i64>, Option<i64>) {
    let s = &r.stages[k];
    let first = s.tasks.iter().map(|t| t.launch_ms).min();
    let last = s
        .tasks
        .iter()
        .map(|t| t.launch_ms + i64::from(t.duration_ms))
        .max();
    let submit = s.submit_ms.or(first);
    let complete = s.complete_ms.or(last).or(submit);
    (submit, complete, last)
}

impl Plan {
    /// The plan of `r`.
    pub fn of(r: &RunRecord) -> Result<Plan, PlanError> {
        if r.streaming {
            return Err(PlanError::Streaming);
        }
        let (Some(start), Some(end)) = (r.start_ms, r.end_ms) else {
            return Err(PlanError::NoEnds);
        };
        if r.stages.values().all(|s| s.tasks.is_empty()) {
            return Err(PlanError::NoTasks);
        }
        let jobs = jobs_of(r, end);
        // Each stage attempt's job: the one listing its stage whose time holds its submission.
        let times = |k: &(u64, u32)| times(r, k);
        let mut stages: Vec<PStage> = vec![];
        let mut index: BTreeMap<(u64, u32), usize> = BTreeMap::new();
        let mut own: Vec<Vec<(u64, u32)>> = vec![vec![]; jobs.len()];
        for k in r.stages.keys() {
            let (Some(submit), ..) = times(k) else {
                continue;
            };
            let job = jobs
                .iter()
                .position(|(_, s, e, st)| st.contains(&k.0) && *s <= submit && submit <= *e)
                .or_else(|| jobs.iter().position(|(_, _, _, st)| st.contains(&k.0)));
            if let Some(j) = job {
                own[j].push(*k);
            }
        }
        let read: std::collections::BTreeSet<u64> = r.parents.values().flatten().copied().collect();
        // Every attempt's index, job by job.
        let mut order: Vec<(usize, (u64, u32))> = vec![];
        for (ji, keys) in own.iter().enumerate() {
            for k in keys {
                index.insert(*k, order.len());
                order.push((ji, *k));
            }
        }
        let mut last_complete: Vec<i64> = jobs.iter().map(|j| j.1).collect();
        for (ji, k) in &order {
            let (Some(sub), complete, last) = times(k) else {
                continue;
            };
            let complete = complete.unwrap_or(sub).max(sub);
            last_complete[*ji] = last_complete[*ji].max(complete);
            // Parents that ran in this job, and this stage's earlier attempts, that completed
            // before it was submitted.
            let deps: Vec<(u64, u32)> = own[*ji]
                .iter()
                .filter(|p| {
                    (r.parents.get(&k.0).is_some_and(|ps| ps.contains(&p.0))
                        || (p.0 == k.0 && p.1 < k.1))
                        && times(p).1.is_some_and(|c| c <= sub)
                })
                .copied()
                .collect();
            let ready_from = deps
                .iter()
                .filter_map(|p| times(p).1)
                .max()
                .unwrap_or(jobs[*ji].1);
            let mut tasks: Vec<(i64, u32)> = r.stages[k]
                .tasks
                .iter()
                .map(|t| (t.launch_ms, t.duration_ms))
                .collect();
            tasks.sort_unstable();
            stages.push(PStage {
                job: *ji,
                priority: (jobs[*ji].0, k.0, k.1),
                deps: deps.iter().filter_map(|d| index.get(d).copied()).collect(),
                delay_ms: (sub - ready_from).max(0),
                tasks: tasks.into_iter().map(|(_, d)| d).collect(),
                tail_ms: last.map_or(0, |l| (complete - l).max(0)),
                shuffle_map: read.contains(&k.0),
            });
        }
        let ends: Vec<(i64, usize)> = jobs.iter().enumerate().map(|(i, j)| (j.2, i)).collect();
        let mut by_job: Vec<Vec<usize>> = vec![vec![]; jobs.len()];
        for (i, (ji, _)) in order.iter().enumerate() {
            by_job[*ji].push(i);
        }
        let pjobs = jobs
            .iter()
            .enumerate()
            .map(|(ji, (id, submit, jend, _))| PJob {
                id: *id,
                anchor: anchor(&ends, *submit, Some(ji), start),
                stages: std::mem::take(&mut by_job[ji]),
                tail_ms: (jend - last_complete[ji]).max(0),
            })
            .collect();
        Ok(Plan {
            start_ms: start,
            real_ms: (end - start).max(0),
            jobs: pjobs,
            stages,
            end: anchor(&ends, end, None, start),
        })
    }
}
