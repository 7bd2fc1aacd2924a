//! The scheduler simulation: a [`Plan`] replayed on a pool of executors, fixed or grown and
//! shrunk as Spark's dynamic allocation does (`ExecutorAllocationManager`), event by event.
//!
//! Tasks go, in the FIFO scheduler's order (job id, then stage id), to the executor with the
//! most free cores, each for the duration it had in the run; a stage completes when its last
//! task ends (plus the driver's time after it), which readies the stages that wait for it.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::plan::{Anchor, Plan};

/// An executor of a fixed pool: when it comes up and goes (ms from the application's start),
/// and its cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exec {
    /// Up from.
    pub up_ms: i64,
    /// Gone from (`None`: to the end).
    pub down_ms: Option<i64>,
    /// Cores.
    pub cores: u64,
}

/// Dynamic allocation's settings (`spark.dynamicAllocation.*`), in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dynamic {
    /// `minExecutors`.
    pub min: u64,
    /// `maxExecutors`.
    pub max: u64,
    /// `initialExecutors` (at least `min`).
    pub initial: u64,
    /// Each executor's cores.
    pub cores: u64,
    /// When the first executors can be up (the run's first registration).
    pub first_up_ms: i64,
    /// From a request to the executor's registration.
    pub startup_ms: i64,
    /// `schedulerBacklogTimeout`.
    pub backlog_ms: i64,
    /// `sustainedSchedulerBacklogTimeout`.
    pub sustained_ms: i64,
    /// `executorIdleTimeout`.
    pub idle_ms: i64,
    /// `shuffleTracking.enabled` with `shuffleTracking.timeout` infinite (its default): an
    /// executor that wrote shuffle data is kept.
    pub shuffle_tracking: bool,
}

/// The pool the plan runs on.
#[derive(Debug, Clone, PartialEq)]
pub enum Pool {
    /// These executors.
    Fixed(Vec<Exec>),
    /// Dynamic allocation.
    Dynamic(Dynamic),
}

/// What a simulated run took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Application start to end, ms.
    pub wall_ms: i64,
    /// Core-ms the executors held (up to the end).
    pub core_ms: f64,
    /// Most executors up at once.
    pub peak_executors: u64,
    /// Tasks were left with no executor to run them (an executor timeline that ends early):
    /// `wall_ms` is then the time it stalled.
    pub stalled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    ExecUp(usize),
    TaskDone(usize, usize),
    StageDone(usize),
    JobDone(usize),
    JobSubmit(usize),
    StageReady(usize),
    Tick,
}

#[derive(Debug, Clone, Copy)]
struct ExecState {
    up_ms: i64,
    down_ms: Option<i64>,
    cores: u64,
    free: u64,
    idle_since: i64,
    shuffle: bool,
    up: bool,
}

/// Dynamic allocation's state between ticks.
#[derive(Debug, Clone, Copy)]
struct Alloc {
    target: u64,
    add_at: Option<i64>,
    to_add: u64,
}

/// Its tick, as Spark's (`ExecutorAllocationManager` runs every 100 ms).
const TICK_MS: i64 = 100;

struct Sim<'a> {
    plan: &'a Plan,
    cpus: u64,
    now: i64,
    seq: u64,
    heap: BinaryHeap<Reverse<(i64, u64, Ev)>>,
    execs: Vec<ExecState>,
    /// Up executors with a free slot: (most free first, index).
    free: BTreeSet<(Reverse<u64>, usize)>,
    pending: BTreeSet<((u64, u64, u32), usize)>,
    next_task: Vec<usize>,
    left: Vec<usize>,
    deps_left: Vec<usize>,
    children: Vec<Vec<usize>>,
    job_left: Vec<usize>,
    anchored: Vec<Vec<(usize, i64)>>,
    job_done: Vec<Option<i64>>,
    running: u64,
    pending_tasks: u64,
    end_ms: Option<i64>,
    peak: u64,
}

impl Sim<'_> {
    fn at(&mut self, t: i64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t.max(self.now), self.seq, ev)));
    }

    fn slot_changed(&mut self, e: usize, before: u64) {
        self.free.remove(&(Reverse(before), e));
        let x = &self.execs[e];
        if x.up && x.free >= self.cpus && x.down_ms.is_none_or(|d| d > self.now) {
            self.free.insert((Reverse(x.free), e));
        }
    }

    fn submit(&mut self, j: usize) {
        let job = &self.plan.jobs[j];
        if job.stages.is_empty() {
            let t = self.now + job.tail_ms;
            self.at(t, Ev::JobDone(j));
        }
        for &s in &job.stages {
            if self.plan.stages[s].deps.is_empty() {
                let t = self.now + self.plan.stages[s].delay_ms;
                self.at(t, Ev::StageReady(s));
            }
        }
    }

    fn ready(&mut self, s: usize) {
        let st = &self.plan.stages[s];
        if st.tasks.is_empty() {
            let t = self.now + st.tail_ms;
            self.at(t, Ev::StageDone(s));
        } else {
            self.pending.insert((st.priority, s));
            self.pending_tasks += st.tasks.len() as u64;
        }
    }

    fn dispatch(&mut self) {
        while let (Some(&(p, s)), Some(&(Reverse(f), e))) =
            (self.pending.first(), self.free.first())
        {
            let st = &self.plan.stages[s];
            let d = i64::from(st.tasks[self.next_task[s]]);
            self.next_task[s] += 1;
            if self.next_task[s] == st.tasks.len() {
                self.pending.remove(&(p, s));
            }
            self.pending_tasks -= 1;
            self.running += 1;
            self.execs[e].free -= self.cpus;
            self.execs[e].shuffle |= st.shuffle_map;
            self.slot_changed(e, f);
            let t = self.now + d;
            self.at(t, Ev::TaskDone(e, s));
        }
    }

    fn handle(&mut self, ev: Ev, alloc: &mut Option<(Dynamic, Alloc)>) {
        match ev {
            Ev::ExecUp(e) => {
                self.execs[e].up = true;
                self.execs[e].idle_since = self.now;
                let f = self.execs[e].free;
                self.slot_changed(e, f);
            }
            Ev::TaskDone(e, s) => {
                self.running -= 1;
                let before = self.execs[e].free;
                self.execs[e].free += self.cpus;
                if self.execs[e].free >= self.execs[e].cores {
                    self.execs[e].idle_since = self.now;
                }
                self.slot_changed(e, before);
                self.left[s] -= 1;
                if self.left[s] == 0 {
                    let t = self.now + self.plan.stages[s].tail_ms;
                    self.at(t, Ev::StageDone(s));
                }
            }
            Ev::StageDone(s) => {
                for i in 0..self.children[s].len() {
                    let c = self.children[s][i];
                    self.deps_left[c] -= 1;
                    if self.deps_left[c] == 0 {
                        let t = self.now + self.plan.stages[c].delay_ms;
                        self.at(t, Ev::StageReady(c));
                    }
                }
                let j = self.plan.stages[s].job;
                self.job_left[j] -= 1;
                if self.job_left[j] == 0 {
                    let t = self.now + self.plan.jobs[j].tail_ms;
                    self.at(t, Ev::JobDone(j));
                }
            }
            Ev::JobDone(j) => {
                self.job_done[j] = Some(self.now);
                for i in 0..self.anchored[j].len() {
                    let (k, gap) = self.anchored[j][i];
                    self.at(self.now + gap, Ev::JobSubmit(k));
                }
                if let Anchor::After(a, gap) = self.plan.end {
                    if a == j {
                        self.end_ms = Some(self.now + gap);
                    }
                }
            }
            Ev::JobSubmit(j) => self.submit(j),
            Ev::StageReady(s) => self.ready(s),
            Ev::Tick => {
                if let Some((d, a)) = alloc.as_mut() {
                    self.tick(d, a);
                }
                let done = self.end_ms.is_some_and(|e| self.now >= e);
                if !done {
                    self.at(self.now + TICK_MS, Ev::Tick);
                }
            }
        }
    }

    /// One tick of dynamic allocation: the target follows the backlog (doubling the executors
    /// requested every sustained backlog period), executors idle past the timeout go.
    fn tick(&mut self, d: &Dynamic, a: &mut Alloc) {
        let per = (d.cores / self.cpus).max(1);
        let needed = (self.pending_tasks + self.running).div_ceil(per);
        if needed < a.target {
            a.target = needed.max(d.min);
        } else if self.pending_tasks > 0 {
            match a.add_at {
                None => a.add_at = Some(self.now + d.backlog_ms),
                Some(t) if self.now >= t => {
                    let to = (a.target + a.to_add).min(needed).min(d.max);
                    a.to_add = if to > a.target { a.to_add * 2 } else { 1 };
                    a.target = to;
                    a.add_at = Some(self.now + d.sustained_ms);
                }
                Some(_) => {}
            }
        }
        if self.pending_tasks == 0 {
            a.add_at = None;
            a.to_add = 1;
        }
        let live = |x: &ExecState, now: i64| x.down_ms.is_none_or(|t| t > now);
        let count = self.execs.iter().filter(|x| live(x, self.now)).count() as u64;
        for _ in count..a.target {
            let up = self.now + d.startup_ms;
            self.execs.push(ExecState {
                up_ms: up,
                down_ms: None,
                cores: d.cores,
                free: d.cores,
                idle_since: up,
                shuffle: false,
                up: false,
            });
            let e = self.execs.len() - 1;
            self.at(up, Ev::ExecUp(e));
        }
        // Idle executors past the timeout go, down to minExecutors; one holding shuffle data
        // stays while shuffle tracking keeps it.
        let mut alive = count.max(a.target);
        for e in 0..self.execs.len() {
            let x = self.execs[e];
            let idle = x.up && live(&x, self.now) && x.free >= x.cores;
            if idle
                && alive > d.min
                && self.now - x.idle_since >= d.idle_ms
                && !(d.shuffle_tracking && x.shuffle)
            {
                self.execs[e].down_ms = Some(self.now);
                self.free.remove(&(Reverse(x.free), e));
                alive -= 1;
                a.target = a.target.min(alive).max(d.min);
            }
        }
        let up = self
            .execs
            .iter()
            .filter(|x| x.up && live(x, self.now))
            .count() as u64;
        self.peak = self.peak.max(up);
    }
}

impl Sim<'_> {
    /// The pool's first executors (and, for dynamic allocation, its state and first tick).
    fn seed(&mut self, pool: &Pool) -> Option<(Dynamic, Alloc)> {
        let mut alloc = None;
        match pool {
            Pool::Fixed(execs) => {
                for x in execs {
                    self.execs.push(ExecState {
                        up_ms: x.up_ms,
                        down_ms: x.down_ms,
                        cores: x.cores,
                        free: x.cores,
                        idle_since: x.up_ms,
                        shuffle: false,
                        up: false,
                    });
                    let e = self.execs.len() - 1;
                    self.at(x.up_ms, Ev::ExecUp(e));
                }
                self.peak = execs.len() as u64;
            }
            Pool::Dynamic(d) => {
                let start = d.initial.max(d.min).min(d.max);
                for _ in 0..start {
                    self.execs.push(ExecState {
                        up_ms: d.first_up_ms,
                        down_ms: None,
                        cores: d.cores,
                        free: d.cores,
                        idle_since: d.first_up_ms,
                        shuffle: false,
                        up: false,
                    });
                    let e = self.execs.len() - 1;
                    self.at(d.first_up_ms, Ev::ExecUp(e));
                }
                alloc = Some((
                    *d,
                    Alloc {
                        target: start,
                        add_at: None,
                        to_add: 1,
                    },
                ));
                self.at(0, Ev::Tick);
            }
        }
        alloc
    }
}

/// `plan` run on `pool`, each task holding `task_cpus` cores.
pub fn simulate(plan: &Plan, pool: &Pool, task_cpus: u64) -> Outcome {
    let n = plan.stages.len();
    let mut children = vec![vec![]; n];
    for (s, st) in plan.stages.iter().enumerate() {
        for &d in &st.deps {
            children[d].push(s);
        }
    }
    let mut anchored = vec![vec![]; plan.jobs.len()];
    let mut sim = Sim {
        plan,
        cpus: task_cpus.max(1),
        now: 0,
        seq: 0,
        heap: BinaryHeap::new(),
        execs: vec![],
        free: BTreeSet::new(),
        pending: BTreeSet::new(),
        next_task: vec![0; n],
        left: plan.stages.iter().map(|s| s.tasks.len()).collect(),
        deps_left: plan.stages.iter().map(|s| s.deps.len()).collect(),
        children,
        job_left: plan.jobs.iter().map(|j| j.stages.len()).collect(),
        anchored: vec![],
        job_done: vec![None; plan.jobs.len()],
        running: 0,
        pending_tasks: 0,
        end_ms: match plan.end {
            Anchor::Start(t) => Some(t),
            Anchor::After(..) => None,
        },
        peak: 0,
    };
    for (j, job) in plan.jobs.iter().enumerate() {
        match job.anchor {
            Anchor::Start(t) => sim.at(t, Ev::JobSubmit(j)),
            Anchor::After(k, gap) => anchored[k].push((j, gap)),
        }
    }
    sim.anchored = anchored;
    let mut alloc = sim.seed(pool);
    let removals = matches!(pool, Pool::Fixed(x) if x.iter().any(|e| e.down_ms.is_some()));
    while let Some(Reverse((t, _, ev))) = sim.heap.pop() {
        if sim.end_ms.is_some_and(|e| t > e)
            && sim
                .heap
                .iter()
                .all(|Reverse((_, _, x))| matches!(x, Ev::Tick))
        {
            break;
        }
        sim.now = t;
        sim.handle(ev, &mut alloc);
        // Removals of a fixed pool's executors take effect as time passes (dynamic allocation
        // takes its own out of the free set): a scan only where the pool has any.
        if removals {
            let now = sim.now;
            let gone: Vec<(u64, usize)> = sim
                .free
                .iter()
                .filter(|(_, e)| sim.execs[*e].down_ms.is_some_and(|d| d <= now))
                .map(|(f, e)| (f.0, *e))
                .collect();
            for (f, e) in gone {
                sim.free.remove(&(Reverse(f), e));
            }
        }
        sim.dispatch();
    }
    let stalled = sim.pending_tasks > 0 || sim.running > 0 || sim.end_ms.is_none();
    let end = sim.end_ms.unwrap_or(sim.now).max(0);
    let core_ms = sim
        .execs
        .iter()
        .filter(|x| x.up_ms < end)
        .map(|x| (x.down_ms.unwrap_or(end).min(end) - x.up_ms).max(0) as f64 * x.cores as f64)
        .sum();
    Outcome {
        wall_ms: end,
        core_ms,
        peak_executors: sim.peak,
        stalled,
    }
}
