//! The what-if of one run: its replay on its own executors, then fixed executor counts from a
//! quarter to four times its own and dynamic allocation with its own bounds, each predicted by
//! [`super::sim::simulate`]; the fewest executors within 10% of the fastest, the cheapest within
//! a target, and notes on what the model cannot see.

use std::collections::BTreeMap;

use super::plan::{Plan, PlanError};
use super::record::RunRecord;
use super::sim::{simulate, Dynamic, Exec, Outcome, Pool};
use super::types::{WhatIf, WhatIfRow};

/// What the prediction reads beside the record.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Settings<'a> {
    /// The application's Spark properties (`None`: the log had no environment event).
    pub props: Option<&'a BTreeMap<String, String>>,
    /// Money per core-second (`cost.prices`), when priced.
    pub per_core_second: Option<f64>,
    /// Its currency (`cost.currency`).
    pub currency: Option<&'a str>,
    /// `--target-duration`, seconds.
    pub target_seconds: Option<f64>,
}

/// The multiples of the run's own executor count predicted.
const FACTORS: [f64; 8] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0];

/// A replay this close to the run is trusted.
const TRUSTED: f64 = 0.10;

/// A run whose tasks spent at least this share of their run time on CPU computes: on executors
/// that share a machine's cores, its task times move with the executor count.
const COMPUTE_BOUND: f64 = 0.5;

/// A Spark time setting in ms: a number with `ms`, `s`, `m`/`min`, `h` or `d`; a bare number is
/// seconds (the unit of the dynamic-allocation timeouts). `None`: Spark would reject it.
pub fn millis(v: &str) -> Option<i64> {
    let t = v.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().ok()?;
    let mult = match unit.trim() {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The prediction of `r`, or why there is none.
pub fn predict(r: &RunRecord, s: &Settings<'_>) -> Result<WhatIf, PlanError> {
    let plan = Plan::of(r)?;
    let prop = |k: &str| s.props.and_then(|p| p.get(k)).map(String::as_str);
    let cpus: u64 = prop("spark.task.cpus")
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let start = plan.start_ms;
    let (own, local, mut notes) = own_executors(r, start);
    let cores = mode(own.iter().map(|x| x.cores));
    let replay = simulate(&plan, &Pool::Fixed(own.clone()), cpus);
    let n_own = most_at_once(own.iter().map(|x| (x.up_ms, x.down_ms)));
    let real = plan.real_ms as f64 / 1000.0;
    let replayed = replay.wall_ms as f64 / 1000.0;
    let error = if real > 0.0 {
        (replayed - real).abs() / real
    } else {
        0.0
    };
    if replay.stalled {
        notes.push(
            "the replay ran out of executors before its last task (the run's executors were \
             lost or removed): its time is where it stalled"
                .into(),
        );
    }
    let money = |core_ms: f64| s.per_core_second.map(|p| core_ms / 1000.0 * p);
    let row = |n: u64, o: &Outcome, dynamic: bool| WhatIfRow {
        executors: n,
        cores,
        dynamic,
        seconds: o.wall_ms as f64 / 1000.0,
        core_seconds: o.core_ms / 1000.0,
        money: money(o.core_ms),
    };
    let mut rows = vec![];
    let mut dynamic = None;
    if !local {
        let counts: std::collections::BTreeSet<u64> = FACTORS
            .iter()
            .map(|f| ((n_own as f64 * f).round() as u64).max(1))
            .collect();
        // The first registrations as the run had them; more come up with the last of those.
        let ups: Vec<i64> = own.iter().map(|x| x.up_ms).take(n_own as usize).collect();
        let last_up = ups.last().copied().unwrap_or(0);
        for n in counts {
            let execs: Vec<Exec> = (0..n as usize)
                .map(|i| Exec {
                    up_ms: ups.get(i).copied().unwrap_or(last_up),
                    down_ms: None,
                    cores,
                })
                .collect();
            let o = simulate(&plan, &Pool::Fixed(execs), cpus);
            rows.push(row(n, &o, false));
        }
        let d = dynamic_settings(&prop, cores, ups.first().copied().unwrap_or(0));
        let o = simulate(&plan, &Pool::Dynamic(d), cpus);
        dynamic = Some(row(o.peak_executors, &o, true));
    } else {
        notes.push(
            "local mode: the driver runs every task, so no other executor count applies; the \
             replay checks the model on this run only"
                .into(),
        );
    }
    let (fewest, cheapest) = answers(&rows, s.target_seconds);
    notes.extend(caveats(r, error));
    Ok(WhatIf {
        executors: n_own,
        cores,
        local,
        real_seconds: real,
        replayed_seconds: replayed,
        replay_error: error,
        trusted: error <= TRUSTED,
        rows,
        dynamic,
        fewest_within_10pct: fewest,
        currency: s.per_core_second.and(s.currency).map(str::to_string),
        target_seconds: s.target_seconds,
        cheapest_within_target: cheapest,
        notes,
    })
}

/// The run's own executors (the driver in local mode), by registration, whether it ran in
/// local mode, and what was assumed.
fn own_executors(r: &RunRecord, start: i64) -> (Vec<Exec>, bool, Vec<String>) {
    // The executors that ran tasks (the driver in local mode), by registration.
    let workers: Vec<_> = r
        .executors
        .iter()
        .filter(|(id, _)| *id != "driver")
        .collect();
    let local = workers.is_empty();
    let mut own: Vec<Exec> = r
        .executors
        .iter()
        .filter(|(id, _)| local == (*id == "driver"))
        .map(|(_, x)| Exec {
            up_ms: x.add_ms.map_or(0, |t| t - start),
            down_ms: x.remove_ms.map(|t| t - start),
            cores: x.cores.unwrap_or(1).max(1),
        })
        .collect();
    own.sort_by_key(|x| x.up_ms);
    let mut notes = vec![];
    if own.is_empty() {
        // No executor event: one executor of the most tasks that ran at once.
        own.push(Exec {
            up_ms: 0,
            down_ms: None,
            cores: concurrency(r).max(1),
        });
        notes.push(
            "the log has no executor events: one executor with as many cores as tasks ran at \
             once is assumed"
                .to_string(),
        );
    }
    (own, local, notes)
}

/// The fewest executors within 10% of the fastest row, and the count of fewest core-seconds
/// within `target` seconds.
fn answers(rows: &[WhatIfRow], target: Option<f64>) -> (Option<u64>, Option<u64>) {
    let fastest = rows.iter().map(|r| r.seconds).fold(f64::INFINITY, f64::min);
    let fewest = rows
        .iter()
        .filter(|r| r.seconds <= fastest * 1.1)
        .map(|r| r.executors)
        .min();
    let cheapest = target.and_then(|t| {
        rows.iter()
            .filter(|r| r.seconds <= t)
            .min_by(|a, b| a.core_seconds.total_cmp(&b.core_seconds))
            .map(|r| r.executors)
    });
    (fewest, cheapest)
}

/// What the prediction of `r` cannot see: tasks that compute, a replay off by more than 10%.
fn caveats(r: &RunRecord, error: f64) -> Vec<String> {
    let mut notes = vec![];
    let ratio = if r.run_ms > 0 {
        r.cpu_ns as f64 / 1e6 / r.run_ms as f64
    } else {
        0.0
    };
    if ratio >= COMPUTE_BOUND {
        notes.push(format!(
            "its tasks spent {:.0}% of their run time on CPU: where executors share a \
             machine's cores (local-cluster, a busy node), a different executor count changes \
             their durations, which the simulation keeps as they were",
            ratio * 100.0
        ));
    }
    if error > TRUSTED {
        notes.push(format!(
            "the replay on the run's own executors is {:.0}% off its real time: read the \
             predictions as rough",
            error * 100.0
        ));
    }
    notes
}

/// Dynamic allocation as the run would have it: its bounds and timeouts, else Spark's
/// defaults; an executor takes as long to come up as the run's first one took after the
/// application's start (at least 0.5 s, at most a minute).
fn dynamic_settings<'a>(
    prop: &impl Fn(&str) -> Option<&'a str>,
    cores: u64,
    first_up_ms: i64,
) -> Dynamic {
    let num = |k: &str| prop(k).and_then(|v| v.trim().parse::<u64>().ok());
    let time = |k: &str, d: i64| prop(k).and_then(millis).unwrap_or(d);
    let min = num("spark.dynamicAllocation.minExecutors").unwrap_or(0);
    let max = num("spark.dynamicAllocation.maxExecutors").unwrap_or(u64::MAX / 4);
    let initial = num("spark.dynamicAllocation.initialExecutors")
        .unwrap_or(min)
        .max(num("spark.executor.instances").unwrap_or(0))
        .max(min);
    let backlog = time("spark.dynamicAllocation.schedulerBacklogTimeout", 1_000);
    Dynamic {
        min,
        max: max.max(min).max(1),
        initial,
        cores,
        first_up_ms,
        startup_ms: first_up_ms.clamp(500, 60_000),
        backlog_ms: backlog,
        sustained_ms: time(
            "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout",
            backlog,
        ),
        idle_ms: time("spark.dynamicAllocation.executorIdleTimeout", 60_000),
        shuffle_tracking: prop("spark.dynamicAllocation.shuffleTracking.enabled")
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"))
            && prop("spark.dynamicAllocation.shuffleTracking.timeout").is_none(),
    }
}

/// The most intervals (`start`, `end`; `None`: open) that overlap at once, at least 1.
fn most_at_once(spans: impl Iterator<Item = (i64, Option<i64>)>) -> u64 {
    let mut ev: Vec<(i64, i64)> = vec![];
    for (a, b) in spans {
        ev.push((a, 1));
        if let Some(b) = b {
            ev.push((b, -1));
        }
    }
    ev.sort_unstable();
    let (mut n, mut most) = (0i64, 0i64);
    for (_, d) in ev {
        n += d;
        most = most.max(n);
    }
    most.max(1) as u64
}

/// The most common value (the least among ties), 1 when none.
fn mode(v: impl Iterator<Item = u64>) -> u64 {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for x in v {
        *counts.entry(x).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(1, |(k, _)| k)
}

/// The most tasks that ran at once in the run.
fn concurrency(r: &RunRecord) -> u64 {
    most_at_once(r.stages.values().flat_map(|s| {
        s.tasks
            .iter()
            .map(|t| (t.launch_ms, Some(t.launch_ms + i64::from(t.duration_ms))))
    }))
}
