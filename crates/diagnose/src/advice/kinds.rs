//! One advisor per finding kind: what to change for it, computed from the finding's numbers and
//! the run's settings ([`super::Cx::value`]), and nothing where the value already fits.

use super::cx::Cx;
use super::spark::{boolean, bytes, mebibytes, memory, round_up_mib, size};
use super::types::{Advice, CodeChange, Origin, Suggestion};
use crate::report::Kind;
use crate::rules::human_bytes;

/// Every kind and what its advisor names (a test checks every kind is here).
pub const COVERED: &[(Kind, &str)] = &[
    (
        Kind::Skew,
        "where the stage's query joined by shuffle, adaptive skew join \
         (`spark.sql.adaptive.skewJoin.*`) where it was off or its factor missed the skew; \
         salting the key (code)",
    ),
    (
        Kind::Spill,
        "the operator's spill thresholds when they were lowered, else smaller partitions \
         (`spark.sql.adaptive.advisoryPartitionSizeInBytes`, `spark.sql.shuffle.partitions` or \
         `spark.sql.files.maxPartitionBytes`)",
    ),
    (
        Kind::GcPressure,
        "with the stage's peak JVM heap recorded: `spark.executor.memory` at twice the peak when \
         it came within half of the heap, else holding fewer objects per task (code); without \
         it, turning on what records it (`spark.eventLog.logStageExecutorMetrics`, \
         `spark.executor.processTreeMetrics.enabled`), never a memory value",
    ),
    (
        Kind::JoinStrategy,
        "a broadcast threshold above the small side (`spark.sql.autoBroadcastJoinThreshold`, or \
         its adaptive twin), adaptive execution where it was off; a `broadcast()` hint (code) \
         where no threshold helps",
    ),
    (Kind::PlanChange, "none: compare the plans"),
    (
        Kind::PartialCache,
        "none: storage memory or persisting less",
    ),
    (
        Kind::SchedulerDelay,
        "adaptive execution or partition coalescing where off, else fewer shuffle partitions \
         (`spark.sql.shuffle.partitions`)",
    ),
    (Kind::Locality, "a longer `spark.locality.wait`"),
    (
        Kind::ExecutorLoss,
        "with executors that exited and their peak process memory recorded: \
         `spark.executor.memoryOverhead` above what the process held beyond its heap; without \
         it, turning on what records it, never a memory value",
    ),
    (
        Kind::IdleCores,
        "with the what-if's prediction (its replay within 10% of the run): fewer executors \
         (`spark.executor.instances`) or dynamic allocation, whichever holds the fewest \
         core-seconds within 10% of the run's time, nothing when neither beats the run; \
         without it, dynamic allocation (`spark.dynamicAllocation.enabled`, with shuffle \
         tracking)",
    ),
    (
        Kind::StreamingTrigger,
        "a trigger interval above the longest recent batch (code)",
    ),
];

/// The advice for `cx`'s finding.
pub fn advise(cx: &Cx<'_>) -> Advice {
    match cx.finding.kind {
        Kind::JoinStrategy => join(cx),
        Kind::Spill => spill(cx),
        Kind::Skew => skew(cx),
        Kind::SchedulerDelay => tiny_tasks(cx),
        Kind::GcPressure => gc(cx),
        Kind::ExecutorLoss => lost(cx),
        Kind::IdleCores => idle(cx),
        Kind::Locality => locality(cx),
        Kind::StreamingTrigger => trigger(cx),
        Kind::PlanChange | Kind::PartialCache => Advice::default(),
    }
}

/// `key`'s value as a boolean, with Spark's default when unset or unreadable (said in the
/// basis by the caller through `ran_with`).
fn on(cx: &Cx<'_>, key: &str, default: bool) -> bool {
    cx.value(key)
        .0
        .as_deref()
        .and_then(boolean)
        .unwrap_or(default)
}

/// `key`'s value as bytes, `None` when unset or a value Spark would reject.
fn size_of(cx: &Cx<'_>, key: &str) -> Option<i64> {
    cx.value(key).0.as_deref().and_then(bytes)
}

/// A sort-merge join whose small side wrote `smallest_shuffle_write_bytes`: with adaptive
/// execution on, Spark compares the measured size with `adaptive.autoBroadcastJoinThreshold`
/// (when set, else `autoBroadcastJoinThreshold`) at run time; with it off, the planner compares
/// `autoBroadcastJoinThreshold` with its own estimate, which may be far above the measured size.
fn join(cx: &Cx<'_>) -> Advice {
    let small = cx.number("smallest_shuffle_write_bytes").max(0.0) as u64;
    let mut a = Advice::default();
    let aqe = on(cx, "spark.sql.adaptive.enabled", true);
    let plain = "spark.sql.autoBroadcastJoinThreshold";
    let adaptive = "spark.sql.adaptive.autoBroadcastJoinThreshold";
    let key = if aqe && cx.value(adaptive).0.is_some() {
        adaptive
    } else {
        plain
    };
    let threshold = size_of(cx, key);
    let to_try = size(round_up_mib(small.saturating_mul(2)).max(10 << 20));
    let measured = format!(
        "the small side wrote {small} bytes of shuffle data (measured){}",
        if aqe {
            ", which adaptive execution compares with the threshold at run time"
        } else {
            "; with adaptive execution off the planner compares the threshold with its estimate \
             of the side's size, not this"
        }
    );
    if threshold.is_none_or(|t| t < small as i64) {
        a.settings.push(cx.set(key, to_try, measured.clone()));
    }
    if !aqe {
        a.settings.push(cx.set(
            "spark.sql.adaptive.enabled",
            "true".into(),
            format!("{measured}: on, the measured size decides"),
        ));
    }
    if a.settings.is_empty() {
        a.code.push(CodeChange {
            change: "broadcast(small_df) in the join (pyspark.sql.functions.broadcast)".into(),
            basis: format!(
                "{measured}, and the threshold ({}) is above it already: Spark did not \
                 broadcast for another reason (the join type, or an estimate above the \
                 threshold)",
                cx.value(key).0.unwrap_or_default()
            ),
        });
    }
    a
}

/// The operators' buffer thresholds a job can lower (each spills past its own).
const SPILL_THRESHOLDS: &[&str] = &[
    "spark.sql.windowExec.buffer.spill.threshold",
    "spark.sql.windowExec.buffer.in.memory.threshold",
    "spark.sql.sortMergeJoinExec.buffer.spill.threshold",
    "spark.sql.sortMergeJoinExec.buffer.in.memory.threshold",
    "spark.sql.cartesianProductExec.buffer.spill.threshold",
    "spark.sql.cartesianProductExec.buffer.in.memory.threshold",
    "spark.sql.sessionWindow.buffer.spill.threshold",
    "spark.sql.sessionWindow.buffer.in.memory.threshold",
];

/// A stage that spilled: the thresholds of its queries that were set below Spark's default
/// back to it; else partitions that hold less: the spilled in-memory bytes over the bytes read
/// say how many times too large each partition was.
fn spill(cx: &Cx<'_>) -> Advice {
    let mut a = Advice::default();
    for key in SPILL_THRESHOLDS {
        let (ran, origin, _) = cx.value(key);
        let default = super::spark::known(key).and_then(|k| k.default);
        let (Some(ran), Some(default)) = (ran, default) else {
            continue;
        };
        let lowered = matches!(origin, Origin::SqlExecution | Origin::Application)
            && ran.trim().parse::<i64>().ok() < default.parse::<i64>().ok();
        if lowered {
            a.settings.push(cx.set(
                key,
                default.into(),
                format!(
                    "the run set it to {ran}, below Spark's default {default}: the operator \
                     spills once it buffers that many rows"
                ),
            ));
        }
    }
    if !a.settings.is_empty() {
        return a;
    }
    let spilled = cx.number("memory_spilled_bytes");
    let read = cx.number("shuffle_read_bytes");
    let input = cx.number("input_bytes");
    let base = if read > 0.0 { read } else { input };
    if base <= 0.0 || spilled <= 0.0 {
        return a;
    }
    // Each task held about (1 + spilled / read) times what fits: split by the next power of two.
    let factor = ((1.0 + spilled / base).log2().ceil().exp2() as u64).clamp(2, 64);
    let basis = format!(
        "{spilled:.0} bytes spilled from memory against {base:.0} bytes read: partitions about \
         {factor}x smaller fit"
    );
    if cx.executions().is_empty() {
        a.code.push(CodeChange {
            change: format!("repartition the input into {factor}x as many partitions"),
            basis,
        });
        return a;
    }
    if read <= 0.0 {
        let now = size_of(cx, "spark.sql.files.maxPartitionBytes").unwrap_or(128 << 20);
        let to = (now as u64 / factor).max(1 << 20);
        a.settings.push(cx.set(
            "spark.sql.files.maxPartitionBytes",
            size(to >> 20 << 20),
            basis,
        ));
    } else if on(cx, "spark.sql.adaptive.enabled", true)
        && on(cx, "spark.sql.adaptive.coalescePartitions.enabled", true)
    {
        let now =
            size_of(cx, "spark.sql.adaptive.advisoryPartitionSizeInBytes").unwrap_or(64 << 20);
        let to = (now as u64 / factor).max(1 << 20);
        a.settings.push(cx.set(
            "spark.sql.adaptive.advisoryPartitionSizeInBytes",
            size(to >> 20 << 20),
            format!("{basis} (adaptive execution coalesces to this size)"),
        ));
    } else {
        let now = partitions(cx);
        a.settings.push(cx.set(
            "spark.sql.shuffle.partitions",
            (now * factor).to_string(),
            basis,
        ));
    }
    a
}

/// `spark.sql.shuffle.partitions` as the run had it (200 when unreadable).
fn partitions(cx: &Cx<'_>) -> u64 {
    cx.value("spark.sql.shuffle.partitions")
        .0
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(200)
}

/// A skewed stage: where its query joined by shuffle (sort-merge or shuffled hash), adaptive
/// skew join where it was off, and where it was on, a factor below the skew it missed; and
/// salting the key. A stage of a query with no shuffled join (an aggregation, an RDD, or the
/// executors' slow first tasks) gets no setting: adaptive execution splits only join partitions.
fn skew(cx: &Cx<'_>) -> Advice {
    let mut a = Advice::default();
    let ratio = cx.number("skew_ratio");
    let joins = cx
        .executions()
        .iter()
        .any(|e| cx.run.shuffled_joins.get(e).is_some_and(|n| *n > 0));
    if joins && !on(cx, "spark.sql.adaptive.enabled", true) {
        a.settings.push(cx.set(
            "spark.sql.adaptive.enabled",
            "true".into(),
            format!(
                "its longest task ran {ratio:.1}x its median: adaptive execution splits skewed \
                join partitions"
            ),
        ));
    } else if joins && !on(cx, "spark.sql.adaptive.skewJoin.enabled", true) {
        a.settings.push(cx.set(
            "spark.sql.adaptive.skewJoin.enabled",
            "true".into(),
            format!("its longest task ran {ratio:.1}x its median"),
        ));
    } else if joins {
        let factor = cx
            .value("spark.sql.adaptive.skewJoin.skewedPartitionFactor")
            .0
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(5.0);
        if ratio > 1.0 && ratio < factor * 1.5 {
            let to = (ratio / 1.5).floor().max(2.0);
            if to < factor {
                a.settings.push(cx.set(
                    "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
                    format!("{to:.1}"),
                    format!(
                        "its longest task ran {ratio:.1}x its median, which a factor of \
                         {factor} does not count as skew (a sort-merge join's partitions only)"
                    ),
                ));
            }
        }
    }
    a.code.push(CodeChange {
        change: "salt the hot key (add a random suffix, aggregate or join in two steps)".into(),
        basis: format!("one task ran {ratio:.1}x the median: its key holds most of the rows"),
    });
    a
}

/// Tasks too short for their overhead: adaptive execution or coalescing where off, else fewer
/// shuffle partitions, by as much as the delay exceeds a twentieth of the run time.
fn tiny_tasks(cx: &Cx<'_>) -> Advice {
    let mut a = Advice::default();
    if cx.executions().is_empty() {
        return a;
    }
    let ratio = cx.number("ratio");
    let parts = partitions(cx);
    let basis = format!(
        "scheduler delay was {:.0}% of the tasks' run time with {parts} shuffle partitions",
        ratio * 100.0
    );
    if !on(cx, "spark.sql.adaptive.enabled", true) {
        a.settings.push(cx.set(
            "spark.sql.adaptive.enabled",
            "true".into(),
            format!("{basis}: adaptive execution coalesces small partitions"),
        ));
    } else if !on(cx, "spark.sql.adaptive.coalescePartitions.enabled", true) {
        a.settings.push(cx.set(
            "spark.sql.adaptive.coalescePartitions.enabled",
            "true".into(),
            basis.clone(),
        ));
    }
    if ratio > 0.05 {
        let to = ((parts as f64 * 0.05 / ratio).floor() as u64).max(1);
        if to < parts {
            a.settings
                .push(cx.set("spark.sql.shuffle.partitions", to.to_string(), basis));
        }
    }
    a
}

/// The heap each executor had (`spark.executor.memory`, bytes), and what was assumed when its
/// value is one Spark would reject.
fn heap(cx: &Cx<'_>) -> (u64, String) {
    let (ran, ..) = cx.value("spark.executor.memory");
    match ran.as_deref().map(|v| (v, mebibytes(v))) {
        Some((_, Some(b))) => (b as u64, String::new()),
        Some((v, None)) => (
            1 << 30,
            format!(" (its value {v:?} is not a size Spark reads: its default 1g assumed)"),
        ),
        None => (1 << 30, String::new()),
    }
}

/// GC pressure: from the stage's peak JVM heap when the log recorded it, a heap twice that
/// (at least half again the one it had) when the peak came within half of the heap, else fewer
/// objects per task; without it, turning on what records it.
fn gc(cx: &Cx<'_>) -> Advice {
    let peak = cx
        .finding
        .at
        .stage_id
        .and_then(|s| cx.run.stage_peaks.get(&s))
        .map_or(0, |p| p.jvm_heap);
    if peak == 0 {
        return recorders(cx);
    }
    let (heap, assumed) = heap(cx);
    let full = peak as f64 / heap.max(1) as f64;
    let seen = format!(
        "the stage's executors peaked at {} of JVM heap (sampled at heartbeats: the true peak \
         is higher) against a {} heap{assumed}, {:.0}% of it",
        human_bytes(peak),
        human_bytes(heap),
        full * 100.0
    );
    let mut a = Advice::default();
    if full >= 0.5 {
        let to = memory(peak.saturating_mul(2).max(heap / 2 * 3), 128);
        a.settings.push(cx.set(
            "spark.executor.memory",
            to,
            format!("{seen}: twice the peak leaves the collector room"),
        ));
    } else {
        a.code.push(CodeChange {
            change: "hold fewer objects per task: more partitions (repartition(N)), no huge \
                     collect_list/groupByKey values, serialized caching"
                .into(),
            basis: format!(
                "{seen}: no sign the heap was too small; fewer objects per task lower GC \
                 whatever the heap"
            ),
        });
    }
    a
}

/// Executors lost: where some exited and the log recorded their processes' peak resident
/// memory, an overhead above what the process held beyond its heap (half again, at least 384
/// MiB); otherwise turning on what records it.
fn lost(cx: &Cx<'_>) -> Advice {
    let rss = cx
        .run
        .executor_peaks
        .values()
        .map(|p| p.process_rss)
        .max()
        .unwrap_or(0);
    if rss == 0 || cx.number("removed_exited") <= 0.0 {
        return recorders(cx);
    }
    let (heap, assumed) = heap(cx);
    let beyond = rss.saturating_sub(heap);
    let (ran, ..) = cx.value("spark.executor.memoryOverhead");
    // Spark's default: a tenth of the heap, at least 384 MiB.
    let now = ran
        .as_deref()
        .and_then(mebibytes)
        .map_or((heap / 10).max(384 << 20), |b| b as u64);
    let to = (beyond / 2 * 3).max(384 << 20);
    let mut a = Advice::default();
    if to > now {
        a.settings.push(cx.set(
            "spark.executor.memoryOverhead",
            memory(to, 128),
            format!(
                "executors exited; the largest process held {} resident against a {} heap{assumed}: \
                 {} beyond it, over the {} overhead it had",
                human_bytes(rss),
                human_bytes(heap),
                human_bytes(beyond),
                human_bytes(now)
            ),
        ));
    }
    a
}

/// Peak memory the log does not hold: turn on what records it, never a memory value.
fn recorders(cx: &Cx<'_>) -> Advice {
    let mut a = Advice::default();
    for key in [
        "spark.eventLog.logStageExecutorMetrics",
        "spark.executor.processTreeMetrics.enabled",
    ] {
        if !on(cx, key, false) {
            a.settings.push(
                cx.set(
                    key,
                    "true".into(),
                    "the log holds no executor's peak JVM heap or process memory (task ends \
                 sample them at heartbeats, mostly 0): with them a next run's diagnosis can \
                 size spark.executor.memory and spark.executor.memoryOverhead"
                        .into(),
                ),
            );
        }
    }
    a
}

/// Cores held idle. With a prediction the replay backs (within 10% of the run), whichever of
/// fewer executors or dynamic allocation holds the fewest core-seconds within 10% of the run's
/// own time, if either beats the run; nothing when none does. Without one, dynamic allocation
/// where it was off.
fn idle(cx: &Cx<'_>) -> Advice {
    let mut a = Advice::default();
    let da_on = on(cx, "spark.dynamicAllocation.enabled", false);
    let busy = cx.number("core_utilization") * 100.0;
    let seen = format!(
        "the executors' cores were busy {busy:.0}% of the time they were held ({:.0} idle \
         core-seconds)",
        cx.number("idle_core_seconds")
    );
    if let Some(w) = cx.what_if.filter(|w| w.trusted && !w.local) {
        let Some(own) = w.rows.iter().find(|r| r.executors == w.executors) else {
            return a;
        };
        let best = w
            .rows
            .iter()
            .chain(w.dynamic.iter().filter(|_| !da_on))
            .filter(|r| r.seconds <= own.seconds * 1.1 && r.core_seconds < own.core_seconds)
            .min_by(|x, y| x.core_seconds.total_cmp(&y.core_seconds));
        let Some(best) = best else {
            return a;
        };
        let basis = format!(
            "{seen}; the simulation (its replay of this run {:.1}% off) predicts {:.0} s and {:.0} \
             core-seconds {}, against {:.0} s and {:.0} core-seconds on the run's {}",
            w.replay_error * 100.0,
            best.seconds,
            best.core_seconds,
            if best.dynamic {
                format!("with dynamic allocation (up to {} executors)", best.executors)
            } else {
                format!(
                    "on {} executor{}",
                    best.executors,
                    if best.executors == 1 { "" } else { "s" }
                )
            },
            own.seconds,
            own.core_seconds,
            w.executors
        );
        if best.dynamic {
            a.settings
                .push(cx.set("spark.dynamicAllocation.enabled", "true".into(), basis));
        } else {
            a.settings.push(cx.set(
                "spark.executor.instances",
                best.executors.to_string(),
                basis,
            ));
        }
        return a;
    }
    if da_on {
        return a;
    }
    a.settings.push(cx.set(
        "spark.dynamicAllocation.enabled",
        "true".into(),
        format!("{seen}: dynamic allocation releases idle executors"),
    ));
    if !on(cx, "spark.dynamicAllocation.shuffleTracking.enabled", true) {
        a.settings.push(
            cx.set(
                "spark.dynamicAllocation.shuffleTracking.enabled",
                "true".into(),
                "dynamic allocation without an external shuffle service keeps executors that hold \
             shuffle data"
                    .into(),
            ),
        );
    }
    a
}

/// Tasks ran far from their data: wait longer for a local slot.
fn locality(cx: &Cx<'_>) -> Advice {
    let (ran, ..) = cx.value("spark.locality.wait");
    let secs = ran
        .as_deref()
        .and_then(|v| {
            let v = v.trim();
            v.strip_suffix("ms")
                .and_then(|n| n.parse::<f64>().ok().map(|n| n / 1000.0))
                .or_else(|| v.strip_suffix('s').and_then(|n| n.parse().ok()))
                .or_else(|| v.parse::<f64>().ok().map(|n| n / 1000.0))
        })
        .unwrap_or(3.0);
    let to = (secs * 2.0).max(1.0);
    let basis = format!(
        "{:.0}% of the tasks with a preferred location ran rack-local or anywhere",
        cx.number("remote_ratio") * 100.0
    );
    Advice {
        settings: vec![cx.set("spark.locality.wait", format!("{to}s"), basis)],
        code: vec![],
    }
}

/// Batches near their trigger: a longer trigger interval (code), above the longest recent batch.
fn trigger(cx: &Cx<'_>) -> Advice {
    let longest = cx.number("longest_batch_seconds");
    let now = cx.number("trigger_interval_seconds");
    let to = (longest / 0.8).ceil().max(now + 1.0);
    let query = cx.finding.at.query.as_deref().unwrap_or("the query");
    Advice {
        settings: Vec::<Suggestion>::new(),
        code: vec![CodeChange {
            change: format!(
                ".trigger(processingTime=\"{to:.0} seconds\") on {query}'s writeStream"
            ),
            basis: format!(
                "its longest recent batch took {longest:.1} s against a {now:.1} s trigger: at \
                 {to:.0} s it is under 80%"
            ),
        }],
    }
}
