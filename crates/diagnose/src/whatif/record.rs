//! What the what-if simulation reads of a run: its jobs and their stages, each stage's parents,
//! each stage attempt's tasks (launch and finish), the executors with their cores and
//! lifetimes, and the application's start and end. `diagnose` records it beside the model while
//! it reads an event log (the long-running model keeps none of it): a task is 16 bytes here, so
//! a million-task run is 16 MB, for one application at a time.

use std::collections::BTreeMap;

/// One run's record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRecord {
    /// `SparkListenerApplicationStart`, epoch ms.
    pub start_ms: Option<i64>,
    /// `SparkListenerApplicationEnd`, epoch ms.
    pub end_ms: Option<i64>,
    /// Jobs by id.
    pub jobs: BTreeMap<u64, JobRec>,
    /// Each stage's parent stages (`Parent IDs`).
    pub parents: BTreeMap<u64, Vec<u64>>,
    /// Stage attempts that were submitted or ran tasks, by (stage, attempt).
    pub stages: BTreeMap<(u64, u32), StageRec>,
    /// Executors by id (`driver` too).
    pub executors: BTreeMap<String, ExecRec>,
    /// The run has streaming queries (out of the simulation's scope).
    pub streaming: bool,
    /// CPU time of its tasks, ns, and their run time, ms: how much they computed.
    pub cpu_ns: u64,
    /// Run time of its tasks, ms.
    pub run_ms: u64,
}

/// A job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRec {
    /// Submission, epoch ms.
    pub submit_ms: Option<i64>,
    /// End, epoch ms.
    pub end_ms: Option<i64>,
    /// Its stages (skipped ones too).
    pub stages: Vec<u64>,
}

/// A stage attempt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageRec {
    /// Submission, epoch ms.
    pub submit_ms: Option<i64>,
    /// Completion, epoch ms.
    pub complete_ms: Option<i64>,
    /// Its tasks, in the order they ended.
    pub tasks: Vec<TaskRec>,
}

/// A task attempt: when it launched and how long it held its slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskRec {
    /// Launch, epoch ms.
    pub launch_ms: i64,
    /// Finish minus launch, ms.
    pub duration_ms: u32,
    /// The executor (an index into [`RunRecord::executors`]' order of first sight, see
    /// [`RunRecord::task`]).
    pub executor: u32,
}

/// An executor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecRec {
    /// Added, epoch ms.
    pub add_ms: Option<i64>,
    /// Removed, epoch ms.
    pub remove_ms: Option<i64>,
    /// Its cores.
    pub cores: Option<u64>,
    /// Its index (order of first sight), as tasks name it.
    pub index: u32,
}

impl RunRecord {
    /// The executor `id`'s record, made on first sight.
    pub fn executor(&mut self, id: &str) -> &mut ExecRec {
        let n = self.executors.len() as u32;
        self.executors
            .entry(id.to_string())
            .or_insert_with(|| ExecRec {
                index: n,
                ..ExecRec::default()
            })
    }

    /// A task attempt of stage attempt (`stage`, `attempt`) ended.
    pub fn task(
        &mut self,
        stage: u64,
        attempt: u32,
        executor: &str,
        launch_ms: i64,
        finish_ms: i64,
    ) {
        let executor = self.executor(executor).index;
        let duration_ms = finish_ms
            .saturating_sub(launch_ms)
            .clamp(0, u32::MAX as i64) as u32;
        self.stages
            .entry((stage, attempt))
            .or_default()
            .tasks
            .push(TaskRec {
                launch_ms,
                duration_ms,
                executor,
            });
    }

    /// A stage attempt's submission and completion, as far as known.
    pub fn stage(
        &mut self,
        stage: u64,
        attempt: u32,
        submit_ms: Option<i64>,
        complete_ms: Option<i64>,
    ) {
        let s = self.stages.entry((stage, attempt)).or_default();
        s.submit_ms = submit_ms.or(s.submit_ms);
        s.complete_ms = complete_ms.or(s.complete_ms);
    }

    /// A job's submission, end and stages, as far as known.
    pub fn job(&mut self, id: u64, submit_ms: Option<i64>, end_ms: Option<i64>, stages: &[u64]) {
        let j = self.jobs.entry(id).or_default();
        j.submit_ms = submit_ms.or(j.submit_ms);
        j.end_ms = end_ms.or(j.end_ms);
        if !stages.is_empty() {
            j.stages = stages.to_vec();
        }
    }
}
