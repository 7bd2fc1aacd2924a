//! The procedure: the Spark UI's top-down reading of one application, step by step, each step a
//! function from the model's read view to findings. Each finding's cost is the task time (or
//! core time) it explains, by the formula its step documents (and `docs/diagnose.md` repeats).

use std::collections::BTreeMap;

use spark_exporter_core::config::{DiagnoseConfig, Thresholds};
use std::sync::Arc;

use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::findings::{FindingKey, Found, StageDigest};
use spark_exporter_core::model::view::{AppView, GroupView, SqlView};
use spark_exporter_core::model::{GroupKey, StageStatus, TriggerInterval};

use crate::links::Links;
use crate::report::{AppReport, Bottleneck, Finding, GroupTime, Kind, Place, Summary};

/// Stages listed as bottlenecks.
const BOTTLENECKS: usize = 5;

/// Executor removal reasons that mean the executor was lost, not released.
const LOST_REASONS: [&str; 3] = ["lost", "heartbeat_timeout", "exited"];

/// Diagnose one application from its view and the details of its stage attempts (in
/// `(stage_id, attempt)` order): every step, the findings most costly first.
pub fn diagnose_app(
    app: &AppView<'_>,
    stages: &[StageDetail],
    cfg: &DiagnoseConfig,
    links: &Links,
) -> AppReport {
    let groups = app.groups();
    let summary = summary(app, stages, &groups);
    let mut findings = vec![];
    for s in stages {
        findings.extend(stage_findings(app, s, cfg, links));
    }
    findings.extend(end_findings(app, &digest(stages), cfg, links));
    findings.extend(window_findings(app, cfg, links));
    findings.sort_by(|a, b| {
        b.cost_seconds
            .total_cmp(&a.cost_seconds)
            .then(a.kind.cmp(&b.kind))
            .then(a.at.stage_id.cmp(&b.at.stage_id))
            .then(a.at.job_group.cmp(&b.at.job_group))
            .then(a.at.description.cmp(&b.at.description))
    });
    let mut group_times: Vec<GroupTime> = groups
        .iter()
        .filter(|g| g.totals.run_time_ms > 0)
        .map(|g| GroupTime {
            job_group: g.key.0.to_string(),
            description: g.key.1.to_string(),
            task_seconds: secs(g.totals.run_time_ms),
            jobs: g.jobs.iter().map(|(_, n)| n).sum(),
        })
        .collect();
    group_times.sort_by(|a, b| {
        b.task_seconds
            .total_cmp(&a.task_seconds)
            .then_with(|| (&a.job_group, &a.description).cmp(&(&b.job_group, &b.description)))
    });
    let step = Step { cfg, links, app };
    AppReport {
        group_times,
        notes: step.notes(),
        app_id: app.id().to_string(),
        app_name: app.name().to_string(),
        spark_version: app.spark_version().to_string(),
        start_ms: app.start_ms(),
        end_ms: app.end_ms(),
        bottlenecks: bottlenecks(stages, summary.task_seconds, links, app),
        summary,
        findings,
    }
}

/// The findings of one stage attempt, final once it settles: skew, spill, GC pressure.
pub fn stage_findings(
    app: &AppView<'_>,
    s: &StageDetail,
    cfg: &DiagnoseConfig,
    links: &Links,
) -> Vec<Finding> {
    let step = Step { cfg, links, app };
    let t = cfg.for_group(&s.group.0);
    let found = [step.skew(s, t), step.spill(s, t), step.gc(s, t)];
    worth(found.into_iter().flatten(), cfg)
}

/// The findings of an ended application as a whole and of its descriptions, final once every
/// source has delivered it: executor loss, join strategy (read from its stages' `digest`), plan
/// changes, partial cache, idle cores.
pub fn end_findings(
    app: &AppView<'_>,
    digest: &BTreeMap<GroupKey, StageDigest>,
    cfg: &DiagnoseConfig,
    links: &Links,
) -> Vec<Finding> {
    let step = Step { cfg, links, app };
    let groups = app.groups();
    let sql = app.sql();
    let mut found = vec![];
    found.extend(step.executor_loss(&groups));
    found.extend(step.joins(&sql, digest));
    found.extend(step.plan_changes(&sql));
    found.extend(step.cache());
    found.extend(step.idle_cores(&summary(app, &[], &groups)));
    worth(found, cfg)
}

/// The findings over a window of what ran so far, which change while the application runs:
/// locality and scheduler delay per job group, streaming batches near their trigger.
pub fn window_findings(app: &AppView<'_>, cfg: &DiagnoseConfig, links: &Links) -> Vec<Finding> {
    let step = Step { cfg, links, app };
    let mut found = vec![];
    for g in &app.groups() {
        let t = cfg.for_group(&g.key.0);
        found.extend(step.locality(g, t));
        found.extend(step.scheduler_delay(g, t));
    }
    found.extend(step.streaming());
    worth(found, cfg)
}

/// What the join rule reads of `stages`, per job group and description.
pub fn digest(stages: &[StageDetail]) -> BTreeMap<GroupKey, StageDigest> {
    let mut m: BTreeMap<GroupKey, StageDigest> = BTreeMap::new();
    for s in stages {
        m.entry(s.group.clone())
            .or_default()
            .add(s.totals.run_time_ms, s.totals.shuffle_write_bytes);
    }
    m
}

/// Where a finding is counted, as the model keeps it (`spark_diagnosis_*`), and its cost.
pub fn counted(f: &Finding) -> Found {
    let s = |v: &Option<String>| -> Arc<str> { Arc::from(v.as_deref().unwrap_or("")) };
    (
        FindingKey {
            kind: Arc::from(f.kind.as_str()),
            job_group: s(&f.at.job_group),
            job_description: s(&f.at.description),
            query: s(&f.at.query),
        },
        f.cost_seconds,
    )
}

/// The findings worth reporting: costs below `min_cost` are noise, for the kinds that have a
/// cost.
fn worth(found: impl IntoIterator<Item = Finding>, cfg: &DiagnoseConfig) -> Vec<Finding> {
    found
        .into_iter()
        .filter(|f| {
            !has_cost(f.kind)
                || f.cost_seconds
                    >= cfg
                        .for_group(f.at.job_group.as_deref().unwrap_or(""))
                        .min_cost
                        .as_secs_f64()
        })
        .collect()
}

/// Whether findings of `kind` have a cost (and so a `min_cost` floor).
fn has_cost(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::PlanChange | Kind::PartialCache | Kind::Locality | Kind::StreamingTrigger
    )
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

fn summary(app: &AppView<'_>, stages: &[StageDetail], groups: &[GroupView<'_>]) -> Summary {
    let cost = app.cost();
    let (mut jobs, mut tasks, mut run, mut gc) = (0, 0, 0u64, 0u64);
    for g in groups {
        jobs += g.jobs.iter().map(|(_, n)| n).sum::<u64>();
        tasks += g.tasks.succeeded + g.tasks.failed + g.tasks.killed;
        run = run.saturating_add(g.totals.run_time_ms);
        gc = gc.saturating_add(g.totals.gc_time_ms);
    }
    Summary {
        jobs,
        stages: stages.len() as u64,
        tasks,
        task_seconds: secs(run),
        gc_seconds: secs(gc),
        allocated_core_seconds: cost.allocated_core_seconds(),
        used_core_seconds: cost.used_core_seconds(),
        core_utilization: (cost.allocated_core_ms > 0)
            .then(|| cost.used_core_ms as f64 / cost.allocated_core_ms as f64),
    }
}

fn stage_place(s: &StageDetail) -> Place {
    Place {
        job_group: Some(s.group.0.to_string()),
        description: Some(s.group.1.to_string()),
        stage_id: Some(s.stage_id),
        stage_attempt: Some(s.attempt),
        stage_name: Some(s.name.to_string()),
        ..Place::default()
    }
}

fn bottlenecks(
    stages: &[StageDetail],
    total_s: f64,
    links: &Links,
    app: &AppView<'_>,
) -> Vec<Bottleneck> {
    let mut v: Vec<&StageDetail> = stages.iter().filter(|s| s.totals.run_time_ms > 0).collect();
    v.sort_by(|a, b| {
        b.totals
            .run_time_ms
            .cmp(&a.totals.run_time_ms)
            .then((a.stage_id, a.attempt).cmp(&(b.stage_id, b.attempt)))
    });
    v.into_iter()
        .take(BOTTLENECKS)
        .map(|s| {
            let task_seconds = secs(s.totals.run_time_ms);
            Bottleneck {
                at: stage_place(s),
                task_seconds,
                share: if total_s > 0.0 {
                    task_seconds / total_s
                } else {
                    0.0
                },
                duration_seconds: s.duration_seconds(),
                url: links.stage(app.id(), s.stage_id, s.attempt),
            }
        })
        .collect()
}

/// The context every step reads.
struct Step<'c, 'a> {
    cfg: &'c DiagnoseConfig,
    links: &'c Links,
    app: &'c AppView<'a>,
}

/// A finding's numbers from `(name, value)` pairs.
fn numbers<const N: usize>(pairs: [(&str, f64); N]) -> BTreeMap<String, f64> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

impl Step<'_, '_> {
    fn stage_finding(
        &self,
        s: &StageDetail,
        kind: Kind,
        title: String,
        cost: f64,
        nums: BTreeMap<String, f64>,
        remedy: &str,
    ) -> Finding {
        Finding {
            kind,
            title,
            cost_seconds: cost,
            at: stage_place(s),
            numbers: nums,
            remedy: remedy.to_string(),
            url: self.links.stage(self.app.id(), s.stage_id, s.attempt),
        }
    }

    /// Skew: a complete stage whose longest task ran at least `skew_ratio` times its median one
    /// and at least `skew_min_excess` longer. Cost: longest − median task duration, the time the
    /// stage ran past a balanced one while its other task slots waited.
    fn skew(&self, s: &StageDetail, t: &Thresholds) -> Option<Finding> {
        let (longest, median) = s.longest_median_ms?;
        if s.status != StageStatus::Complete || median <= 0.0 {
            return None;
        }
        let ratio = longest / median;
        let excess = (longest - median) / 1000.0;
        if ratio < t.skew_ratio || excess < t.skew_min_excess.as_secs_f64() {
            return None;
        }
        Some(self.stage_finding(
            s,
            Kind::Skew,
            format!(
                "Stage {} is skewed: its longest task ran {ratio:.1}x its median one",
                s.stage_id
            ),
            excess,
            numbers([
                ("longest_task_seconds", longest / 1000.0),
                ("median_task_seconds", median / 1000.0),
                ("skew_ratio", ratio),
                ("tasks", s.tasks.succeeded as f64),
                ("task_seconds", secs(s.totals.run_time_ms)),
            ]),
            "Spread the hot key: salt it, or let adaptive execution split skewed join partitions \
             (spark.sql.adaptive.skewJoin.enabled); repartition by a better-spread column before \
             the wide operation.",
        ))
    }

    /// Spill: a stage that spilled at least `spill_min_bytes` to disk. Spark does not time
    /// spills; the cost is the stage's task time × min(1, disk bytes spilled / bytes read
    /// (input + shuffle read)).
    fn spill(&self, s: &StageDetail, t: &Thresholds) -> Option<Finding> {
        let x = &s.totals;
        if x.disk_spilled_bytes == 0 || x.disk_spilled_bytes < t.spill_min_bytes {
            return None;
        }
        let read = x.input_bytes.saturating_add(x.shuffle_read_bytes).max(1);
        let share = (x.disk_spilled_bytes as f64 / read as f64).min(1.0);
        let task_s = secs(x.run_time_ms);
        Some(self.stage_finding(
            s,
            Kind::Spill,
            format!(
                "Stage {} spilled {} to disk",
                s.stage_id,
                human_bytes(x.disk_spilled_bytes)
            ),
            task_s * share,
            numbers([
                ("disk_spilled_bytes", x.disk_spilled_bytes as f64),
                ("memory_spilled_bytes", x.memory_spilled_bytes as f64),
                ("input_bytes", x.input_bytes as f64),
                ("shuffle_read_bytes", x.shuffle_read_bytes as f64),
                ("task_seconds", task_s),
            ]),
            "Give each task less data or more memory: more shuffle partitions \
             (spark.sql.shuffle.partitions, or adaptive execution's advisory partition size), \
             more executor memory or spark.memory.fraction; for windows, a larger \
             spark.sql.windowExec.buffer.spill.threshold.",
        ))
    }

    /// GC pressure: a stage whose tasks spent at least `gc_ratio` of their run time, and at
    /// least `gc_min`, in GC. Cost: the GC time.
    fn gc(&self, s: &StageDetail, t: &Thresholds) -> Option<Finding> {
        let x = &s.totals;
        if x.run_time_ms == 0 {
            return None;
        }
        let ratio = x.gc_time_ms as f64 / x.run_time_ms as f64;
        let gc_s = secs(x.gc_time_ms);
        if ratio < t.gc_ratio || gc_s < t.gc_min.as_secs_f64() {
            return None;
        }
        Some(self.stage_finding(
            s,
            Kind::GcPressure,
            format!(
                "Stage {} spent {:.0}% of its task time in GC",
                s.stage_id,
                ratio * 100.0
            ),
            gc_s,
            numbers([
                ("gc_seconds", gc_s),
                ("task_seconds", secs(x.run_time_ms)),
                ("gc_ratio", ratio),
                (
                    "peak_execution_memory_bytes",
                    x.peak_execution_memory_bytes as f64,
                ),
            ]),
            "Hold less per task: more partitions, no huge collect_list/groupByKey values, \
             serialized caching; or give executors more heap (spark.executor.memory) and try \
             G1GC settings.",
        ))
    }

    /// Executor loss: executors removed as lost, for a heartbeat timeout or a process exit.
    /// Cost: the task time of failed tasks, estimated per job group as its task time × failed
    /// tasks / all its tasks.
    fn executor_loss(&self, groups: &[GroupView<'_>]) -> Option<Finding> {
        let removed: BTreeMap<&str, u64> = self.app.executors_removed().collect();
        let lost: u64 = LOST_REASONS
            .iter()
            .map(|r| removed.get(r).copied().unwrap_or(0))
            .sum();
        if lost == 0 {
            return None;
        }
        let (mut failed, mut cost) = (0u64, 0.0);
        for g in groups {
            let all = g.tasks.succeeded + g.tasks.failed + g.tasks.killed;
            if all > 0 && g.tasks.failed > 0 {
                failed += g.tasks.failed;
                cost += secs(g.totals.run_time_ms) * g.tasks.failed as f64 / all as f64;
            }
        }
        let mut nums = numbers([
            ("executors_lost", lost as f64),
            ("failed_tasks", failed as f64),
        ]);
        for r in LOST_REASONS {
            nums.insert(
                format!("removed_{r}"),
                removed.get(r).copied().unwrap_or(0) as f64,
            );
        }
        Some(Finding {
            kind: Kind::ExecutorLoss,
            title: format!("{lost} executor(s) lost; {failed} task(s) failed"),
            cost_seconds: cost,
            at: Place {
                subject: Some(
                    LOST_REASONS
                        .iter()
                        .filter(|r| removed.get(*r).is_some_and(|n| *n > 0))
                        .copied()
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                ..Place::default()
            },
            numbers: nums,
            remedy: "Read the executors' logs for the cause: out of memory (more \
                     spark.executor.memoryOverhead or memory, fewer cores per executor), \
                     preemption or node loss (spark.decommission.enabled), long GC pauses \
                     (spark.network.timeout)."
                .into(),
            url: self.links.page(self.app.id(), "executors/"),
        })
    }

    /// Join strategy: a description whose plans hold a sort-merge or shuffled hash join while
    /// the smallest shuffle its stages wrote is at most `broadcast_max_bytes`: a broadcast join
    /// would have spared the shuffle of the large side and the sort. Cost: the task time of the
    /// description's stages (its job group and description), the most a broadcast could save.
    fn joins(&self, sql: &[SqlView<'_>], digest: &BTreeMap<GroupKey, StageDigest>) -> Vec<Finding> {
        let mut out = vec![];
        for q in sql {
            let Some(p) = q.plans else { continue };
            let (smj, shj) = (p.joins()[1], p.joins()[2]);
            if smj + shj == 0 {
                continue;
            }
            let t = self.cfg.for_group(q.job_group);
            let mine = digest
                .iter()
                .find(|((g, d), _)| &**g == q.job_group && *d == *q.description)
                .map(|(_, v)| *v)
                .unwrap_or_default();
            let Some(smallest) = mine.min_shuffle_write_bytes else {
                continue;
            };
            if smallest > t.broadcast_max_bytes {
                continue;
            }
            let task_s = secs(mine.run_time_ms);
            let exec = p.latest().map(|l| l.execution_id());
            let strategy = if smj > 0 {
                "SortMergeJoin"
            } else {
                "ShuffledHashJoin"
            };
            out.push(Finding {
                kind: Kind::JoinStrategy,
                title: format!(
                    "{strategy} where one side wrote only {} of shuffle data: a broadcast \
                     candidate",
                    human_bytes(smallest)
                ),
                cost_seconds: task_s,
                at: Place {
                    job_group: Some(q.job_group.to_string()),
                    description: Some(q.description.to_string()),
                    execution_id: exec,
                    subject: Some(strategy.into()),
                    ..Place::default()
                },
                numbers: numbers([
                    ("sort_merge_joins", smj as f64),
                    ("shuffled_hash_joins", shj as f64),
                    ("broadcast_hash_joins", p.joins()[0] as f64),
                    ("smallest_shuffle_write_bytes", smallest as f64),
                    ("broadcast_max_bytes", t.broadcast_max_bytes as f64),
                    ("executions", p.plans() as f64),
                    ("task_seconds", task_s),
                ]),
                remedy: "Broadcast the small side: a broadcast() hint, or \
                         spark.sql.autoBroadcastJoinThreshold above its size; keep table \
                         statistics current (ANALYZE TABLE ... COMPUTE STATISTICS) so the \
                         planner sees how small it is."
                    .into(),
                url: exec.and_then(|e| self.links.sql(self.app.id(), e)),
            });
        }
        out
    }

    /// Plan change: one description whose ended executions ran with more than one plan shape
    /// (fingerprint). No cost: a signal to compare the plans. A streaming query's micro-batches
    /// (their job group is the query's name) are left out: their first batches plan differently
    /// from the rest (no data yet, state being set up) in every healthy query.
    fn plan_changes(&self, sql: &[SqlView<'_>]) -> Vec<Finding> {
        let queries: Vec<String> = self.app.streaming().map(|(n, _)| n.to_string()).collect();
        let mut out = vec![];
        for q in sql {
            let Some(p) = q.plans else { continue };
            if p.shapes().len() < 2 || queries.iter().any(|n| n == q.job_group) {
                continue;
            }
            let exec = p.latest().map(|l| l.execution_id());
            let mut nums = numbers([
                ("plan_shapes", p.shapes().len() as f64),
                ("executions", p.plans() as f64),
            ]);
            for (i, (_, first)) in p.shapes().iter().enumerate() {
                nums.insert(format!("shape_{}_first_execution", i + 1), *first as f64);
            }
            out.push(Finding {
                kind: Kind::PlanChange,
                title: format!(
                    "The plan changed: {} shapes over {} executions",
                    p.shapes().len(),
                    p.plans()
                ),
                cost_seconds: 0.0,
                at: Place {
                    job_group: Some(q.job_group.to_string()),
                    description: Some(q.description.to_string()),
                    execution_id: exec,
                    ..Place::default()
                },
                numbers: nums,
                remedy: "Compare the executions' plans in the SQL tab: a join strategy that \
                         flips with data size or configuration, or statistics that changed; pin \
                         the strategy with a hint if the change is unwanted."
                    .into(),
                url: exec.and_then(|e| self.links.sql(self.app.id(), e)),
            });
        }
        out
    }

    /// Partial cache: a cached dataset with some but not all partitions cached (evicted, or
    /// never fitted). No cost: Spark does not time recomputation.
    fn cache(&self) -> Vec<Finding> {
        self.app
            .cached_datasets()
            .into_iter()
            .filter(|d| d.cached_fraction < 1.0)
            .map(|d| Finding {
                kind: Kind::PartialCache,
                title: format!(
                    "Cached dataset {} is only {:.0}% cached",
                    d.name,
                    d.cached_fraction * 100.0
                ),
                cost_seconds: 0.0,
                at: Place {
                    subject: Some(format!("rdd {}: {}", d.rdd_id, d.name)),
                    ..Place::default()
                },
                numbers: numbers([
                    ("cached_fraction", d.cached_fraction),
                    ("memory_bytes", d.memory_bytes as f64),
                    ("disk_bytes", d.disk_bytes as f64),
                ]),
                remedy: "The rest is recomputed on each read: give storage more memory, cache \
                         with MEMORY_AND_DISK or serialized, or cache less."
                    .into(),
                url: self.links.page(self.app.id(), "storage/"),
            })
            .collect()
    }

    /// Locality: of a job group's tasks with a locality preference, at least
    /// `locality_remote_ratio` ran `RACK_LOCAL` or `ANY` (event logs only). No cost: Spark does
    /// not time remote reads.
    fn locality(&self, g: &GroupView<'_>, t: &Thresholds) -> Option<Finding> {
        let l = g.locality?;
        let all: u64 = l.iter().sum();
        let with_pref = all - l[3];
        let remote = l[2] + l[4];
        if with_pref == 0 || with_pref < t.locality_min_tasks {
            return None;
        }
        let ratio = remote as f64 / with_pref as f64;
        if ratio < t.locality_remote_ratio {
            return None;
        }
        Some(Finding {
            kind: Kind::Locality,
            title: format!("{:.0}% of tasks ran far from their data", ratio * 100.0),
            cost_seconds: 0.0,
            at: group_place(g),
            numbers: numbers([
                ("process_local", l[0] as f64),
                ("node_local", l[1] as f64),
                ("rack_local", l[2] as f64),
                ("no_pref", l[3] as f64),
                ("any", l[4] as f64),
                ("remote_ratio", ratio),
            ]),
            remedy: "Raise spark.locality.wait if executors sit near the data but are busy; \
                     run executors where the data is (HDFS) or accept remote reads for object \
                     storage."
                .into(),
            url: None,
        })
    }

    /// Scheduler delay: a job group whose tasks waited at least `scheduler_delay_ratio` of
    /// their run time, and at least `scheduler_delay_min`, between being scheduled and running
    /// (the UI's scheduler delay; event logs only). Cost: the scheduler delay.
    fn scheduler_delay(&self, g: &GroupView<'_>, t: &Thresholds) -> Option<Finding> {
        if !g.from_log || g.totals.run_time_ms == 0 {
            return None;
        }
        let delay = secs(g.totals.scheduler_delay_ms);
        let ratio = g.totals.scheduler_delay_ms as f64 / g.totals.run_time_ms as f64;
        if ratio < t.scheduler_delay_ratio || delay < t.scheduler_delay_min.as_secs_f64() {
            return None;
        }
        Some(Finding {
            kind: Kind::SchedulerDelay,
            title: format!(
                "Tasks waited {delay:.1} s for the scheduler ({:.0}% of their run time)",
                ratio * 100.0
            ),
            cost_seconds: delay,
            at: group_place(g),
            numbers: numbers([
                ("scheduler_delay_seconds", delay),
                ("task_seconds", secs(g.totals.run_time_ms)),
                ("ratio", ratio),
                ("deserialize_seconds", secs(g.totals.deserialize_ms)),
            ]),
            remedy: "Tasks too short for their overhead: fewer, larger partitions (coalesce, \
                     adaptive coalescing); smaller closures and broadcast variables; a driver \
                     with more cores if it is busy."
                .into(),
            url: None,
        })
    }

    /// Streaming trigger: a query with at least `trigger_over_fraction` of its recent batches
    /// (the last 32) longer than `trigger_ratio` of its trigger interval. Cost: Σ over those
    /// batches of (duration − trigger_ratio × interval), reported but never filtered by
    /// `min_cost`.
    fn streaming(&self) -> Vec<Finding> {
        let t = &self.cfg.defaults;
        let mut out = vec![];
        for (name, q) in self.app.streaming() {
            let (interval, how) = match q.trigger_interval() {
                Some(TriggerInterval::Configured(s)) if s > 0.0 => (s, "configured"),
                Some(TriggerInterval::Inferred(s)) if s > 0.0 => (s, "inferred"),
                // Not checked: notes() says so.
                _ => continue,
            };
            let budget_ms = interval * 1000.0 * t.trigger_ratio;
            let d: Vec<u64> = q.recent_durations_ms().collect();
            if d.is_empty() {
                continue;
            }
            let near: Vec<f64> = d
                .iter()
                .map(|x| *x as f64)
                .filter(|x| *x > budget_ms)
                .collect();
            let frac = near.len() as f64 / d.len() as f64;
            if near.is_empty() || frac < t.trigger_over_fraction {
                continue;
            }
            let cost: f64 = near.iter().map(|x| (x - budget_ms) / 1000.0).sum();
            let longest = d.iter().max().copied().unwrap_or(0);
            // Over the whole trigger, a batch starts the next one late: with half the recent
            // batches so, the query is behind, not close to it.
            let over = d.iter().filter(|x| **x as f64 > interval * 1000.0).count();
            let behind = over * 2 >= d.len();
            out.push(Finding {
                kind: Kind::StreamingTrigger,
                title: format!(
                    "{} of the last {} batches took over {:.0}% of the {interval} s trigger, \
                     {over} over all of it",
                    near.len(),
                    d.len(),
                    t.trigger_ratio * 100.0
                ),
                cost_seconds: cost,
                at: Place {
                    query: Some(name.to_string()),
                    subject: Some(format!("trigger {how}")),
                    ..Place::default()
                },
                numbers: numbers([
                    ("trigger_interval_seconds", interval),
                    ("recent_batches", d.len() as f64),
                    ("batches_near_trigger", near.len() as f64),
                    ("longest_batch_seconds", secs(longest)),
                    ("batches", q.batches() as f64),
                    ("batches_over_trigger", over as f64),
                ]),
                remedy: format!(
                    "{} cap each batch's input (maxOffsetsPerTrigger, maxFilesPerTrigger), add \
                     executors or partitions, or lengthen the trigger interval.",
                    if behind {
                        "The query is falling behind: its batches outlast the trigger, so each \
                         starts late and the backlog grows;"
                    } else {
                        "The query is close to falling behind:"
                    }
                ),
                url: self.links.page(self.app.id(), "StreamingQuery/"),
            });
        }
        out
    }

    /// What the procedure could not check: each streaming query without a trigger interval
    /// (none configured in `streaming.trigger_intervals`, and none inferred from its batch
    /// starts, as for a query always behind, whose batches start back to back).
    fn notes(&self) -> Vec<String> {
        self.app
            .streaming()
            .filter(|(_, q)| q.batches() > 0)
            .filter(|(_, q)| {
                !matches!(
                    q.trigger_interval(),
                    Some(TriggerInterval::Configured(s) | TriggerInterval::Inferred(s)) if s > 0.0
                )
            })
            .map(|(name, q)| {
                format!(
                    "streaming query {name:?} ({} batches) was not checked against its trigger: \
                     its interval is not configured and could not be inferred from its batch \
                     starts (a query always behind starts each batch right after the last). Set \
                     it in the configuration file (--config.file), e.g. `streaming: \
                     {{trigger_intervals: {{{name:?}: 10s}}}}`.",
                    q.batches()
                )
            })
            .collect()
    }

    /// Idle cores: used / allocated core time below `min_core_utilization`, once at least
    /// `utilization_min_core_time` was allocated. Cost: the idle core-seconds (allocated − used).
    fn idle_cores(&self, s: &Summary) -> Option<Finding> {
        let t = &self.cfg.defaults;
        let u = s.core_utilization?;
        if s.allocated_core_seconds < t.utilization_min_core_time.as_secs_f64()
            || u >= t.min_core_utilization
        {
            return None;
        }
        // Allocated − used, from the summary's reading of the cost (held ≥ used, at least 0).
        let idle = (s.allocated_core_seconds - s.used_core_seconds).max(0.0);
        Some(Finding {
            kind: Kind::IdleCores,
            title: format!(
                "Executors' cores were busy {:.0}% of the time they were held",
                u * 100.0
            ),
            cost_seconds: idle,
            at: Place::default(),
            numbers: numbers([
                ("allocated_core_seconds", s.allocated_core_seconds),
                ("used_core_seconds", s.used_core_seconds),
                ("idle_core_seconds", idle),
                ("core_utilization", u),
            ]),
            remedy: "Hold fewer cores while they wait: dynamic allocation \
                     (spark.dynamicAllocation.enabled, with shuffle tracking), fewer or smaller \
                     executors, more partitions where too few tasks run, and less driver-only \
                     work between jobs."
                .into(),
            url: self.links.page(self.app.id(), "executors/"),
        })
    }
}

fn group_place(g: &GroupView<'_>) -> Place {
    Place {
        job_group: Some(g.key.0.to_string()),
        description: Some(g.key.1.to_string()),
        ..Place::default()
    }
}

/// Bytes for a human: `1.5 MiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}
