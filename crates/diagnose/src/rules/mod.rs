//! The procedure: the Spark UI's top-down reading of one application, step by step, each step a
//! rule from the model's read view to findings. Each finding's cost is the task time (or core
//! time) it explains, by the formula its rule documents (and `docs/diagnose.md` repeats, from
//! the rules).
//!
//! A rule is one file here (`rules/<id>.rs`: its [`Rule`], `RULE`: kind identifier, level,
//! cost, step, documentation, threshold keys, remedy and evaluation) and one entry of the
//! registry ([`builtin_rules!`](crate::builtin_rules), which [`registry!`](crate::registry)
//! turns into [`Kind`] and the rest). [`Procedure`] runs the rules of any registry, in its
//! order; the functions below run the built-in one.
//!
//! Adding a rule:
//! 1. a file `rules/<id>.rs` with `pub const RULE: Rule` (its `find` at its level: a stage
//!    attempt, the ended application, a job group or the application over the window) and
//!    `pub mod <id>;` below;
//! 2. its entry `Name => $crate::rules::<id>,` in [`builtin_rules!`](crate::builtin_rules)
//!    (`Name` in CamelCase: its snake_case is `<id>`), in the procedure's order;
//! 3. `UPDATE_DOCS=1 cargo test -p spark-exporter-diagnose` and `UPDATE_SCHEMA=1 cargo test -p
//!    spark-exporter-diagnose` rewrite `docs/diagnose.md`'s table and the report's schema (the
//!    new kind in its enum); a threshold it reads is a `diagnose.*` key of the core's
//!    configuration (`config/keys/diagnose.rs`, `Thresholds`).
//!
//! `tests/it/diagnose_registry.rs` does this with a rule of its own.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use spark_exporter_core::config::DiagnoseConfig;
use spark_exporter_core::model::details::StageDetail;
use spark_exporter_core::model::findings::{FindingKey, Found, StageDigest};
use spark_exporter_core::model::view::{AppView, GroupView};
use spark_exporter_core::model::GroupKey;

use crate::links::Links;
use crate::report::{AppReport, Bottleneck, Finding, GroupTime, Summary};

mod kinds;
mod registry;

pub use kinds::{Kind, FINDING_KINDS, WINDOW_FINDING_KINDS};
pub use registry::{group_place, human_bytes, numbers, secs, stage_place, Cx, TASK_SECONDS};

pub use registry::{
    count_at, deserialize_kind, doc_row, doc_table, ids_at, kind_schema, serialize_kind,
    threshold_key, Draft, End, Find, Level, Rule, RuleKind,
};

pub mod executor_loss;
pub mod gc_pressure;
pub mod idle_cores;
pub mod join_strategy;
pub mod locality;
pub mod partial_cache;
pub mod plan_change;
pub mod scheduler_delay;
pub mod skew;
pub mod spill;
pub mod streaming_trigger;

/// The built-in registry: one entry per rule, `Kind => rule module`, in the procedure's order
/// (ties in cost keep it). `builtin_rules! {}` makes [`Kind`] (see [`registry!`](crate::registry));
/// more entries after the braces' opening add rules after these (a test's own rule).
#[macro_export]
macro_rules! builtin_rules {
    ($($extra:tt)*) => {
        $crate::registry! {
            /// A stage whose longest task ran far longer than its median one.
            Skew => $crate::rules::skew,
            /// A stage that spilled to disk.
            Spill => $crate::rules::spill,
            /// A stage whose tasks spent much of their time in GC.
            GcPressure => $crate::rules::gc_pressure,
            /// Executors lost (not removed by the driver), and the tasks that failed.
            ExecutorLoss => $crate::rules::executor_loss,
            /// A shuffled join (sort-merge, shuffled hash) whose smaller side was small enough
            /// to broadcast.
            JoinStrategy => $crate::rules::join_strategy,
            /// One description ran with more than one plan shape.
            PlanChange => $crate::rules::plan_change,
            /// A cached dataset not fully in the cache.
            PartialCache => $crate::rules::partial_cache,
            /// Many tasks ran far from their data.
            Locality => $crate::rules::locality,
            /// Tasks waited long for the scheduler.
            SchedulerDelay => $crate::rules::scheduler_delay,
            /// Streaming batches near or over their trigger interval.
            StreamingTrigger => $crate::rules::streaming_trigger,
            /// Cores the application held but did not use.
            IdleCores => $crate::rules::idle_cores,
            $($extra)*
        }
    };
}

/// Stages listed as bottlenecks.
const BOTTLENECKS: usize = 5;

/// Diagnose one application from its view and the details of its stage attempts (in
/// `(stage_id, attempt)` order): every step, the findings most costly first.
pub fn diagnose_app(
    app: &AppView<'_>,
    stages: &[StageDetail],
    cfg: &DiagnoseConfig,
    links: &Links,
) -> AppReport {
    Procedure::<Kind>::diagnose_app(app, stages, cfg, links)
}

/// The findings of one stage attempt, final once it settles: skew, spill, GC pressure.
pub fn stage_findings(
    app: &AppView<'_>,
    s: &StageDetail,
    cfg: &DiagnoseConfig,
    links: &Links,
) -> Vec<Finding> {
    Procedure::<Kind>::stage_findings(app, s, cfg, links)
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
    Procedure::<Kind>::end_findings(app, digest, cfg, links)
}

/// The findings over a window of what ran so far, which change while the application runs:
/// locality and scheduler delay per job group, streaming batches near their trigger.
pub fn window_findings(app: &AppView<'_>, cfg: &DiagnoseConfig, links: &Links) -> Vec<Finding> {
    Procedure::<Kind>::window_findings(app, cfg, links)
}

/// The procedure over the rules of registry `K` (the built-in one: [`Kind`]), each level's
/// rules in the registry's order.
pub struct Procedure<K>(PhantomData<K>);

impl<K: RuleKind> Procedure<K> {
    /// Diagnose one application from its view and the details of its stage attempts (in
    /// `(stage_id, attempt)` order): every rule, the findings most costly first.
    pub fn diagnose_app(
        app: &AppView<'_>,
        stages: &[StageDetail],
        cfg: &DiagnoseConfig,
        links: &Links,
    ) -> AppReport<K> {
        let groups = app.groups();
        let summary = summary(app, stages, &groups);
        let mut findings = vec![];
        for s in stages {
            findings.extend(Self::stage_findings(app, s, cfg, links));
        }
        findings.extend(Self::end_findings(app, &digest(stages), cfg, links));
        findings.extend(Self::window_findings(app, cfg, links));
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
        let cx = Cx { cfg, links, app };
        AppReport {
            group_times,
            what_if: None,
            notes: K::KINDS
                .iter()
                .filter_map(|k| k.rule().notes)
                .flat_map(|n| n(&cx))
                .collect(),
            app_id: app.id().to_string(),
            app_name: app.name().to_string(),
            spark_version: app.spark_version().to_string(),
            start_ms: app.start_ms(),
            end_ms: app.end_ms(),
            bottlenecks: bottlenecks(stages, summary.task_seconds, links, app),
            summary,
            findings,
            settings: vec![],
        }
    }

    /// The findings of one stage attempt, final once it settles ([`Level::Stage`]).
    pub fn stage_findings(
        app: &AppView<'_>,
        s: &StageDetail,
        cfg: &DiagnoseConfig,
        links: &Links,
    ) -> Vec<Finding<K>> {
        let cx = Cx { cfg, links, app };
        let t = cfg.for_group(&s.group.0);
        let found = K::KINDS.iter().flat_map(|&k| match k.rule().find {
            Find::Stage(f) => finished(k, f(&cx, s, t)),
            _ => vec![],
        });
        worth(found, cfg)
    }

    /// The findings of an ended application as a whole and of its descriptions, final once
    /// every source has delivered it ([`Level::End`]; the join rule reads its stages'
    /// `digest`).
    pub fn end_findings(
        app: &AppView<'_>,
        digest: &BTreeMap<GroupKey, StageDigest>,
        cfg: &DiagnoseConfig,
        links: &Links,
    ) -> Vec<Finding<K>> {
        let cx = Cx { cfg, links, app };
        let groups = app.groups();
        let sql = app.sql();
        let summary = summary(app, &[], &groups);
        let end = End {
            groups: &groups,
            sql: &sql,
            digest,
            summary: &summary,
        };
        let found = K::KINDS.iter().flat_map(|&k| match k.rule().find {
            Find::End(f) => finished(k, f(&cx, &end)),
            _ => vec![],
        });
        worth(found, cfg)
    }

    /// The findings over a window of what ran so far, which change while the application runs
    /// ([`Level::Window`]): each job group's, then the application's.
    pub fn window_findings(
        app: &AppView<'_>,
        cfg: &DiagnoseConfig,
        links: &Links,
    ) -> Vec<Finding<K>> {
        let cx = Cx { cfg, links, app };
        let mut found = vec![];
        for g in &app.groups() {
            let t = cfg.for_group(&g.key.0);
            for &k in K::KINDS {
                if let Find::Group(f) = k.rule().find {
                    found.extend(finished(k, f(&cx, g, t)));
                }
            }
        }
        for &k in K::KINDS {
            if let Find::Window(f) = k.rule().find {
                found.extend(finished(k, f(&cx)));
            }
        }
        worth(found, cfg)
    }
}

/// A rule's drafts as findings of its kind `k`, with its remedy where they have none.
fn finished<K: RuleKind>(k: K, drafts: Vec<Draft>) -> Vec<Finding<K>> {
    drafts
        .into_iter()
        .map(|d| Finding {
            kind: k,
            title: d.title,
            cost_seconds: d.cost_seconds,
            at: d.at,
            numbers: d.numbers,
            remedy: d.remedy.unwrap_or_else(|| k.rule().remedy.to_string()),
            url: d.url,
            suggestions: vec![],
            code: vec![],
        })
        .collect()
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
pub fn counted<K: RuleKind>(f: &Finding<K>) -> Found {
    let s = |v: &Option<String>| -> Arc<str> { Arc::from(v.as_deref().unwrap_or("")) };
    (
        FindingKey {
            kind: Arc::from(f.kind.rule().id),
            job_group: s(&f.at.job_group),
            job_description: s(&f.at.description),
            query: s(&f.at.query),
        },
        f.cost_seconds,
    )
}

/// The findings worth reporting: costs below `min_cost` are noise, for the kinds that have a
/// cost.
fn worth<K: RuleKind>(
    found: impl IntoIterator<Item = Finding<K>>,
    cfg: &DiagnoseConfig,
) -> Vec<Finding<K>> {
    found
        .into_iter()
        .filter(|f| {
            !f.kind.rule().has_cost
                || f.cost_seconds
                    >= cfg
                        .for_group(f.at.job_group.as_deref().unwrap_or(""))
                        .min_cost
                        .as_secs_f64()
        })
        .collect()
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

#[cfg(test)]
pub(crate) mod tests;
