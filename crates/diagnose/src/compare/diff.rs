//! A run against its baseline: the measures aligned like for like ([`super::profile`]), ranked
//! by their share of the task-time difference, the settings, plans and findings apart.

use std::collections::{BTreeMap, BTreeSet};

use super::profile::{GroupProfile, Measures, Profile, MEASURES, TASKS, TASK_SECONDS};
use super::types::*;
use crate::advice::spark::known;

/// A change smaller than this share of the larger side is noise.
const RELATIVE: f64 = 0.05;

/// Most entries of each list (the ranked changes, groups, added, gone, settings).
pub const MAX_LISTED: usize = 20;

/// Keys that differ between any two runs, left out of the settings compared: exact keys ...
pub const ALWAYS_DIFFER: &[&str] = &[
    "spark.app.id",
    "spark.app.name",
    "spark.app.startTime",
    "spark.app.submitTime",
    "spark.app.attempt.id",
    "spark.app.initial.jar.urls",
    "spark.app.initial.file.urls",
    "spark.driver.host",
    "spark.driver.appUIAddress",
    "spark.executor.id",
    "spark.repl.class.uri",
    "spark.repl.class.outputDir",
    "spark.sql.warehouse.dir",
    "spark.eventLog.dir",
    "spark.kubernetes.driver.pod.name",
    "spark.kubernetes.executor.podNamePrefix",
    "spark.yarn.app.id",
    "spark.yarn.app.container.log.dir",
    "spark.ui.proxyBase",
    "spark.org.apache.hadoop.yarn.server.webproxy.amfilter.AmIpFilter.param.PROXY_HOSTS",
    "spark.org.apache.hadoop.yarn.server.webproxy.amfilter.AmIpFilter.param.PROXY_URI_BASES",
];

/// ... and keys with these endings (ports, hosts, paths and submission ids).
pub const ALWAYS_DIFFER_SUFFIXES: &[&str] = &[
    ".port",
    ".host",
    ".hostname",
    ".submission.id",
    ".submissionId",
    "sparkStagingDir",
];

/// Whether `key` always differs between runs (so is not compared).
pub fn always_differs(key: &str) -> bool {
    ALWAYS_DIFFER.contains(&key) || ALWAYS_DIFFER_SUFFIXES.iter().any(|s| key.ends_with(s))
}

/// `a` and `b` differ by more than noise in `unit`.
fn changed(unit: &str, a: f64, b: f64) -> bool {
    let d = (b - a).abs();
    let floor = match unit {
        "s" => 0.5,
        "B" => 1_048_576.0,
        _ => 0.5,
    };
    d > floor && d >= RELATIVE * a.abs().max(b.abs())
}

fn delta(baseline: f64, run: f64) -> Delta {
    Delta {
        baseline,
        run,
        change: run - baseline,
        ratio: (baseline != 0.0).then(|| run / baseline),
    }
}

/// The measures of `a` and `b` that changed, but those at `skip`.
fn measure_diffs(a: &Measures, b: &Measures, skip: &[usize]) -> Vec<MeasureDiff> {
    MEASURES
        .iter()
        .enumerate()
        .filter(|(i, (_, unit, _))| !skip.contains(i) && changed(unit, a.0[*i], b.0[*i]))
        .map(|(i, (name, unit, _))| MeasureDiff {
            measure: (*name).into(),
            unit: (*unit).into(),
            delta: delta(a.0[i], b.0[i]),
        })
        .collect()
}

/// Compare `run` with `base` (made of `baseline`'s runs).
pub fn compare(run: &Profile, base: &Profile, baseline: Baseline, generator: &str) -> Comparison {
    let task = delta(base.totals.0[TASK_SECONDS], run.totals.0[TASK_SECONDS]);
    let (groups, mut added, mut gone) = groups(run, base);
    let mut ranked = ranked(run, base, &groups, &added, &gone, task.change);
    let (q_added, q_gone, plans) = plans(run, base);
    added.extend(q_added);
    gone.extend(q_gone);
    let (findings_new, findings_gone) = findings(run, base);
    let settings = settings(run, base);
    let capacity = capacity(run, base);
    let measures = measure_diffs(&base.totals, &run.totals, &[]);
    let wall_seconds = match (base.wall_seconds, run.wall_seconds) {
        (Some(a), Some(b)) => Some(delta(a, b)),
        _ => None,
    };
    let wall_changed = wall_seconds.is_some_and(|d| changed("s", d.baseline, d.run));
    let spark_version = (run.spark_version != base.spark_version).then(|| TextDiff {
        baseline: base.spark_version.clone(),
        run: run.spark_version.clone(),
    });
    let mut notes = vec![];
    if run.props.is_none() || base.props.is_none() {
        notes.push(
            "a log without its environment event: settings compared where both sides have them"
                .into(),
        );
    }
    if !run.groups.is_empty()
        && !base.groups.is_empty()
        && !run.groups.keys().any(|k| base.groups.contains_key(k))
    {
        notes.push(
            "no job group and description of the run is in the baseline: are these runs of one \
             application?"
                .into(),
        );
    }
    ranked.truncate(MAX_LISTED);
    let unchanged = ranked.is_empty()
        && !wall_changed
        && settings.is_empty()
        && spark_version.is_none()
        && capacity.is_empty()
        && measures.is_empty()
        && plans.is_empty()
        && findings_new.is_empty()
        && findings_gone.is_empty()
        && groups.is_empty()
        && added.is_empty()
        && gone.is_empty();
    Comparison {
        schema_version: COMPARE_SCHEMA_VERSION,
        document: "comparison".into(),
        generator: generator.into(),
        run: RunRef {
            app_id: run.app_id.clone(),
            app_name: run.app_name.clone(),
            spark_version: run.spark_version.clone(),
            start_ms: run.start_ms,
        },
        baseline,
        unchanged,
        wall_seconds,
        task_seconds: task,
        ranked,
        settings,
        spark_version,
        capacity,
        measures,
        plans,
        findings_new,
        findings_gone,
        groups: groups.into_iter().take(MAX_LISTED).collect(),
        added: added.into_iter().take(MAX_LISTED).collect(),
        gone: gone.into_iter().take(MAX_LISTED).collect(),
        notes,
    }
}

/// The job groups on both sides that changed (most task time first), and what only one side
/// has: job groups, and stages of the groups both have.
fn groups(run: &Profile, base: &Profile) -> (Vec<GroupChange>, Vec<Unmatched>, Vec<Unmatched>) {
    let (mut changes, mut added, mut gone) = (vec![], vec![], vec![]);
    let unmatched = |what: &str, (g, d): &(String, String), at: Option<String>, s: f64| Unmatched {
        what: what.into(),
        job_group: g.clone(),
        description: d.clone(),
        at,
        task_seconds: s,
    };
    for (k, r) in &run.groups {
        let Some(b) = base.groups.get(k) else {
            added.push(unmatched("job_group", k, None, r.m.0[TASK_SECONDS]));
            continue;
        };
        let stage_at = |(j, p): (u32, u32), id: u64, name: &str| {
            Some(format!("job {j}, stage {p}: id {id} {name}"))
        };
        for (p, s) in &r.stages {
            if !b.stages.contains_key(p) {
                let at = stage_at(*p, s.stage_id, &s.name);
                added.push(unmatched("stage", k, at, s.m.0[TASK_SECONDS]));
            }
        }
        for (p, s) in &b.stages {
            if !r.stages.contains_key(p) {
                let at = stage_at(*p, s.stage_id, &s.name);
                gone.push(unmatched("stage", k, at, s.m.0[TASK_SECONDS]));
            }
        }
        if let Some(c) = group_change(k, r, b) {
            changes.push(c);
        }
    }
    for (k, b) in &base.groups {
        if !run.groups.contains_key(k) {
            gone.push(unmatched("job_group", k, None, b.m.0[TASK_SECONDS]));
        }
    }
    changes.sort_by(|a, b| {
        b.task_seconds
            .change
            .abs()
            .total_cmp(&a.task_seconds.change.abs())
    });
    let by_time = |a: &Unmatched, b: &Unmatched| b.task_seconds.total_cmp(&a.task_seconds);
    added.sort_by(by_time);
    gone.sort_by(by_time);
    (changes, added, gone)
}

/// A job group's change, when its task time or task count changed.
fn group_change(k: &(String, String), r: &GroupProfile, b: &GroupProfile) -> Option<GroupChange> {
    let (ts, tn) = (TASK_SECONDS, TASKS);
    if !changed("s", b.m.0[ts], r.m.0[ts]) && !changed("", b.m.0[tn], r.m.0[tn]) {
        return None;
    }
    let stage = r
        .stages
        .iter()
        .filter_map(|(p, s)| b.stages.get(p).map(|o| (p, s, o)))
        .max_by(|x, y| {
            let d = |(_, s, o): &(
                _,
                &super::profile::StageProfile,
                &super::profile::StageProfile,
            )| { (s.m.0[ts] - o.m.0[ts]).abs() };
            d(x).total_cmp(&d(y))
        })
        .map(|(p, s, o)| {
            let mut grew = measure_diffs(&o.m, &s.m, &[ts]);
            if let (Some(a), Some(b)) = (o.skew, s.skew) {
                if changed("", a, b) {
                    grew.push(MeasureDiff {
                        measure: "skew".into(),
                        unit: String::new(),
                        delta: delta(a, b),
                    });
                }
            }
            StageChange {
                job: p.0,
                position: p.1,
                stage_ids: [o.stage_id, s.stage_id],
                name: s.name.clone(),
                task_seconds: delta(o.m.0[ts], s.m.0[ts]),
                grew,
            }
        });
    Some(GroupChange {
        job_group: k.0.clone(),
        description: k.1.clone(),
        task_seconds: delta(b.m.0[ts], r.m.0[ts]),
        tasks: delta(b.m.0[tn], r.m.0[tn]),
        grew: measure_diffs(&b.m, &r.m, &[ts, tn]),
        stage,
    })
}

/// The ranked list: each changed, added or gone job group and each part of task time that
/// changed, by its seconds' share of `total` (the task-time change).
fn ranked(
    run: &Profile,
    base: &Profile,
    groups: &[GroupChange],
    added: &[Unmatched],
    gone: &[Unmatched],
    total: f64,
) -> Vec<Change> {
    let share = |s: f64| (total.abs() > 1e-9).then(|| s / total);
    let mut v = vec![];
    for g in groups {
        let mut detail = format!(
            "task time {:.1} s -> {:.1} s, tasks {} -> {}",
            g.task_seconds.baseline, g.task_seconds.run, g.tasks.baseline, g.tasks.run
        );
        if let Some(s) = &g.stage {
            detail.push_str(&format!(
                "; most in job {} stage {} (id {}): {:+.1} s",
                s.job, s.position, s.stage_ids[1], s.task_seconds.change
            ));
        }
        v.push(Change {
            kind: "job_group".into(),
            job_group: Some(g.job_group.clone()),
            description: Some(g.description.clone()),
            seconds: g.task_seconds.change,
            share: share(g.task_seconds.change),
            detail,
        });
    }
    let sides = [
        (added, "job_group_added", 1.0),
        (gone, "job_group_gone", -1.0),
    ];
    for (list, kind, sign) in sides {
        for u in list.iter().filter(|u| u.what == "job_group") {
            v.push(Change {
                kind: kind.into(),
                job_group: Some(u.job_group.clone()),
                description: Some(u.description.clone()),
                seconds: sign * u.task_seconds,
                share: share(sign * u.task_seconds),
                detail: format!("{:.1} s of task time", u.task_seconds),
            });
        }
    }
    for (i, (name, unit, part)) in MEASURES.iter().enumerate() {
        let (a, b) = (base.totals.0[i], run.totals.0[i]);
        if *part && changed(unit, a, b) {
            v.push(Change {
                kind: (*name).into(),
                job_group: None,
                description: None,
                seconds: b - a,
                share: share(b - a),
                detail: format!("{a:.1} s -> {b:.1} s over the run"),
            });
        }
    }
    v.sort_by(|a, b| b.seconds.abs().total_cmp(&a.seconds.abs()));
    v
}

/// SQL executions only the run has, only the baseline has, and those whose plan changed.
fn plans(run: &Profile, base: &Profile) -> (Vec<Unmatched>, Vec<Unmatched>, Vec<PlanChange>) {
    let one = |(d, n): &(String, u32), g: &str| Unmatched {
        what: "sql".into(),
        job_group: g.into(),
        description: d.clone(),
        at: Some(format!("#{n}")),
        task_seconds: 0.0,
    };
    let added = run
        .queries
        .iter()
        .filter(|(k, _)| !base.queries.contains_key(*k))
        .map(|(k, q)| one(k, &q.group))
        .collect();
    let gone = base
        .queries
        .iter()
        .filter(|(k, _)| !run.queries.contains_key(*k))
        .map(|(k, q)| one(k, &q.group))
        .collect();
    let mut changes = vec![];
    for (k, r) in &run.queries {
        let Some(b) = base.queries.get(k) else {
            continue;
        };
        let (Some(rp), Some(bp)) = (r.plan, b.plan) else {
            continue;
        };
        let mut what = vec![];
        let (aqe_b, aqe_r) = (adaptive(base, &b.settings), adaptive(run, &r.settings));
        if aqe_b != aqe_r {
            let on = |v: bool| if v { "on" } else { "off" };
            what.push(format!("adaptive execution {} -> {}", on(aqe_b), on(aqe_r)));
        }
        let mut count = |name: &str, a: u64, b: u64| {
            if a != b {
                what.push(format!("{name} {a} -> {b}"));
            }
        };
        use spark_exporter_core::model::plan::{AQE, EXCHANGES, STRATEGIES};
        for (i, s) in STRATEGIES.iter().enumerate() {
            count(s, bp.joins[i], rp.joins[i]);
        }
        count("skew-split joins", bp.skew_joins, rp.skew_joins);
        for (i, s) in EXCHANGES.iter().enumerate() {
            count(&format!("{s} exchanges"), bp.exchanges[i], rp.exchanges[i]);
        }
        let names = ["coalesced", "skewed", "skew-split"];
        for (i, s) in names.iter().enumerate().take(AQE.len()) {
            count(&format!("adaptive {s} partitions"), bp.aqe[i], rp.aqe[i]);
        }
        if rp.fingerprint == bp.fingerprint && what.is_empty() {
            continue;
        }
        changes.push(PlanChange {
            description: k.0.clone(),
            order: k.1,
            job_group: r.group.clone(),
            execution_ids: [b.execution_id, r.execution_id],
            fingerprints: [bp.fingerprint, rp.fingerprint],
            changes: what,
        });
    }
    (added, gone, changes)
}

/// Whether adaptive execution ran a SQL execution with these session settings in `p`: its own
/// `spark.sql.adaptive.enabled`, else the application's, else Spark's default (on).
fn adaptive(p: &Profile, session: &BTreeMap<String, String>) -> bool {
    let k = "spark.sql.adaptive.enabled";
    session
        .get(k)
        .or_else(|| p.props.as_ref().and_then(|a| a.get(k)))
        .and_then(|v| crate::advice::spark::boolean(v))
        .unwrap_or(true)
}

/// Findings only the run has, and only the baseline has.
fn findings(run: &Profile, base: &Profile) -> (Vec<FindingDiff>, Vec<FindingDiff>) {
    let only = |a: &Profile, b: &Profile| -> Vec<FindingDiff> {
        let mut v: Vec<FindingDiff> = a
            .findings
            .iter()
            .filter(|(k, _)| !b.findings.contains_key(*k))
            .map(|((kind, g, d), (n, cost, title))| FindingDiff {
                kind: kind.clone(),
                job_group: g.clone(),
                description: d.clone(),
                count: *n,
                cost_seconds: *cost,
                title: title.clone(),
            })
            .collect();
        v.sort_by(|x, y| y.cost_seconds.total_cmp(&x.cost_seconds));
        v.truncate(MAX_LISTED);
        v
    };
    (only(run, base), only(base, run))
}

/// The executors, their cores and the core-seconds held, where any differs.
fn capacity(run: &Profile, base: &Profile) -> Vec<MeasureDiff> {
    let mut v = vec![];
    let mut one = |measure: &str, unit: &str, a: Option<f64>, b: Option<f64>, differs: bool| {
        if let (Some(a), Some(b)) = (a, b) {
            if differs {
                v.push(MeasureDiff {
                    measure: measure.into(),
                    unit: unit.into(),
                    delta: delta(a, b),
                });
            }
        }
    };
    let f = |n: Option<u64>| n.map(|n| n as f64);
    one(
        "executors",
        "",
        f(base.executors),
        f(run.executors),
        base.executors != run.executors,
    );
    one(
        "cores",
        "",
        f(base.cores),
        f(run.cores),
        base.cores != run.cores,
    );
    let held = changed("", base.core_seconds, run.core_seconds);
    one(
        "core_seconds",
        "core-s",
        Some(base.core_seconds),
        Some(run.core_seconds),
        held,
    );
    v
}

/// The settings that differ: the application's properties, then the SQL executions' session
/// settings (matched executions); those the advice knows first. A property one side leaves
/// unset counts at Spark's default where the advice knows it.
fn settings(run: &Profile, base: &Profile) -> Vec<SettingDiff> {
    let mut v = vec![];
    if let (Some(rp), Some(bp)) = (&run.props, &base.props) {
        let keys: BTreeSet<&String> = rp.keys().chain(bp.keys()).collect();
        for k in keys.into_iter().filter(|k| !always_differs(k)) {
            if let Some(d) = setting(k, "application", None, bp.get(k), rp.get(k)) {
                v.push(d);
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (q, r) in &run.queries {
        let Some(b) = base.queries.get(q) else {
            continue;
        };
        let keys: BTreeSet<&String> = r.settings.keys().chain(b.settings.keys()).collect();
        for k in keys.into_iter().filter(|k| !always_differs(k)) {
            // A session setting a query leaves as the application has it.
            let eff = |s: &BTreeMap<String, String>, p: &Option<BTreeMap<String, String>>| {
                s.get(k)
                    .or_else(|| p.as_ref().and_then(|p| p.get(k)))
                    .cloned()
            };
            let (a, b2) = (eff(&b.settings, &base.props), eff(&r.settings, &run.props));
            let label = format!("{} #{}", q.0, q.1);
            if let Some(d) = setting(k, "sql", Some(label), a.as_ref(), b2.as_ref()) {
                if seen.insert((d.key.clone(), d.baseline.clone(), d.run.clone())) {
                    v.push(d);
                }
            }
        }
    }
    v.sort_by_key(|d| (!d.known, d.scope != "application", d.key.clone()));
    v.truncate(MAX_LISTED * 2);
    v
}

/// `key` when its values differ (a side unset counts at the advice's known default).
fn setting(
    key: &str,
    scope: &str,
    query: Option<String>,
    base: Option<&String>,
    run: Option<&String>,
) -> Option<SettingDiff> {
    let k = known(key);
    let default = k.and_then(|k| k.default).map(str::to_string);
    let eff = |v: Option<&String>| v.cloned().or_else(|| default.clone());
    let norm = |v: Option<String>| v.map(|s| s.trim().to_ascii_lowercase());
    if norm(eff(base)) == norm(eff(run)) {
        return None;
    }
    Some(SettingDiff {
        key: key.into(),
        scope: scope.into(),
        query,
        baseline: base.cloned(),
        run: run.cloned(),
        default,
        known: k.is_some(),
    })
}
