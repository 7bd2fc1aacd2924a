//! The small vocabulary the catalogue's readers are written in: "one sample per job group",
//! "one per executor and status", "a histogram per status"... Each helper walks the rows of
//! every application in order, so every family lists its samples in the same order: by
//! application, then by the row's labels.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::rows::{AppRows, Ctx, StageRow};
use super::sample::{plus, plus1, Labels, Sample, SampleLabels, Value};
use crate::model::findings::Tally;
use crate::model::hist::Hist;
use crate::model::plan::PlanAgg;
use crate::model::view::{ExecutorView, GroupView, RddView, SqlView};
use crate::model::StreamAgg;

/// How a catalogue entry reads its samples.
pub type Read = fn(&Ctx<'_>, &mut Vec<Sample>);

/// Milliseconds as seconds.
pub fn secs(ms: u64) -> Value {
    Value::Float(ms as f64 / 1000.0)
}

/// A histogram's value.
pub fn hist(h: &Hist) -> Value {
    Value::Hist(h.cumulative(), h.sum(), h.count())
}

fn push(out: &mut Vec<Sample>, created_ms: i64, labels: impl Into<SampleLabels>, value: Value) {
    out.push(Sample {
        labels: labels.into(),
        value,
        created_ms,
    });
}

/// One sample per application, where `f` gives one.
pub fn per_app(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&AppRows) -> Option<(Labels, Value)>) {
    for a in &c.apps {
        if let Some((l, v)) = f(a) {
            push(out, a.app.created_ms(), l, v);
        }
    }
}

/// One sample per application and key, with the key under `label`.
pub fn per_app_by<'a, I: IntoIterator<Item = (&'static str, u64)>>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    label: &'static str,
    f: impl Fn(&AppRows<'a>) -> I,
) {
    for a in &c.apps {
        for (k, n) in f(a) {
            push(
                out,
                a.app.created_ms(),
                plus1(&a.base, label, k),
                Value::Int(n),
            );
        }
    }
}

/// One count per Spark Connect client application, user and status.
pub fn per_connect_client(c: &Ctx, out: &mut Vec<Sample>) {
    for a in &c.apps {
        for (client, user, status, n) in a.app.connect_jobs() {
            let extra = [
                ("client_app", Arc::from(client)),
                ("user", Arc::from(user)),
                ("status", Arc::from(status)),
            ];
            push(
                out,
                a.app.created_ms(),
                plus(&a.base, &extra),
                Value::Int(n),
            );
        }
    }
}

/// One sample per job group.
pub fn per_group(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&GroupView) -> Value) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            push(out, a.app.created_ms(), l.clone(), f(g));
        }
    }
}

/// One sample per job group, read with its application's row.
pub fn per_group_app<'a>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    f: impl Fn(&AppRows<'a>, &GroupView) -> Value,
) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            push(out, a.app.created_ms(), l.clone(), f(a, g));
        }
    }
}

/// One sample per cached dataset (`rdd_id`, `rdd_name`).
pub fn per_rdd(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&RddView) -> Value) {
    for a in &c.apps {
        for r in a.app.cached_datasets() {
            let ids = [
                ("rdd_id", Arc::from(r.rdd_id.to_string())),
                ("rdd_name", r.name.clone()),
            ];
            push(out, a.app.created_ms(), plus(&a.base, &ids), f(&r));
        }
    }
}

/// One count per job group and status.
pub fn per_group_status<const N: usize>(
    c: &Ctx,
    out: &mut Vec<Sample>,
    f: impl Fn(&GroupView) -> [(&'static str, u64); N],
) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            for (status, n) in f(g) {
                push(
                    out,
                    a.app.created_ms(),
                    SampleLabels::with(l, "status", status),
                    Value::Int(n),
                );
            }
        }
    }
}

/// One histogram per job group and status observed.
pub fn per_group_hists<'a>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    f: impl Fn(&GroupView<'a>) -> Option<&'a BTreeMap<&'static str, Hist>>,
) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            for (status, h) in f(g).into_iter().flatten() {
                push(
                    out,
                    a.app.created_ms(),
                    SampleLabels::with(l, "status", status),
                    hist(h),
                );
            }
        }
    }
}

/// One sample per stage attempt, where `f` gives one.
pub fn per_stage(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&StageRow) -> Option<(Labels, Value)>) {
    for a in &c.apps {
        for s in &a.stages {
            if let Some((l, v)) = f(s) {
                push(out, a.app.created_ms(), l, v);
            }
        }
    }
}

/// One sample per executor, where `f` gives a value.
pub fn per_executor(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&ExecutorView) -> Option<Value>) {
    for a in &c.apps {
        for (l, e) in &a.executors {
            if let Some(v) = f(e) {
                push(out, a.app.created_ms(), l.clone(), v);
            }
        }
    }
}

/// One count per executor and key, with the key under `label`.
pub fn per_executor_by<'a, K: AsRef<str>, I: IntoIterator<Item = (K, u64)>>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    label: &'static str,
    f: impl Fn(&ExecutorView<'a>) -> I,
) {
    for a in &c.apps {
        for (l, e) in &a.executors {
            for (k, n) in f(e) {
                push(
                    out,
                    a.app.created_ms(),
                    plus1(l, label, k.as_ref()),
                    Value::Int(n),
                );
            }
        }
    }
}

/// One sample per SQL description.
pub fn per_sql(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&SqlView) -> Value) {
    for a in &c.apps {
        for (l, q) in &a.sql {
            push(out, a.app.created_ms(), l.clone(), f(q));
        }
    }
}

/// One count per SQL job group, description and status. A running execution whose group is
/// not known yet (no job so far) has only its active gauge: its counters are born under its
/// real group.
pub fn per_sql_status(c: &Ctx, out: &mut Vec<Sample>) {
    for a in &c.apps {
        for (l, q) in &a.sql {
            if q.duration.is_none() {
                continue;
            }
            for (status, n) in q.ended {
                push(
                    out,
                    a.app.created_ms(),
                    SampleLabels::with(l, "status", status),
                    Value::Int(n),
                );
            }
        }
    }
}

/// One histogram per SQL description and status observed.
pub fn per_sql_hists(c: &Ctx, out: &mut Vec<Sample>) {
    for a in &c.apps {
        for (l, q) in &a.sql {
            for (status, h) in q.duration.into_iter().flatten() {
                push(
                    out,
                    a.app.created_ms(),
                    SampleLabels::with(l, "status", status),
                    hist(h),
                );
            }
        }
    }
}

/// One count per SQL job group and description with counters (the keys of
/// [`per_sql_status`]), from its final plans: at zero until a plan counts.
pub fn per_sql_plan(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&PlanAgg) -> u64) {
    for a in &c.apps {
        for (l, q) in &a.sql {
            if let Some(p) = q.plans {
                push(out, a.app.created_ms(), l.clone(), Value::Int(f(p)));
            }
        }
    }
}

/// Like [`per_sql_plan`], one count per value of `label` (`names[i]` gets `f(..)[i]`).
pub fn per_sql_plan_by<const N: usize>(
    c: &Ctx,
    out: &mut Vec<Sample>,
    label: &'static str,
    names: &'static [&'static str; N],
    f: impl Fn(&PlanAgg) -> [u64; N],
) {
    for a in &c.apps {
        for (l, q) in &a.sql {
            if let Some(p) = q.plans {
                for (name, n) in names.iter().zip(f(p)) {
                    push(
                        out,
                        a.app.created_ms(),
                        SampleLabels::with(l, label, name),
                        Value::Int(n),
                    );
                }
            }
        }
    }
}

/// The plan fingerprint of the latest ended execution per application name, job group and
/// description, across the applications read (the runs of one name in a fleet, or a name's
/// state across runs): exactly one sample per label set, without `app_id`, so `changes()` spans
/// runs. Latest by end time, then application id, then execution id.
pub fn per_sql_fingerprint(c: &Ctx, out: &mut Vec<Sample>) {
    /// `app_name`, `job_group`, `description`.
    type Key = (Arc<str>, Arc<str>, Arc<str>);
    /// End time, application id, execution id: the latest is the greatest.
    type Rank<'a> = (Option<i64>, &'a str, u64);
    /// The latest execution's rank, fingerprint, and its application's `_created`.
    type Best<'a> = (Rank<'a>, u64, i64);
    let mut best: BTreeMap<Key, Best> = BTreeMap::new();
    for a in &c.apps {
        for (group, desc, l, fp) in a.app.plan_fingerprints() {
            let key = (a.app.name().clone(), Arc::from(group), desc.clone());
            let rank = (l.end_ms(), &**a.app.id(), l.execution_id());
            let e = best.entry(key).or_insert((rank, fp, a.app.created_ms()));
            if rank > e.0 {
                *e = (rank, fp, a.app.created_ms());
            }
        }
    }
    for ((name, group, desc), (_, fp, created)) in best {
        let labels: Labels = Arc::new([
            ("app_name", name),
            ("job_group", group),
            ("description", desc),
        ]);
        push(out, created, labels, Value::Int(fp));
    }
}

/// One sample per streaming query.
pub fn per_stream(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&StreamAgg) -> Value) {
    for a in &c.apps {
        for (l, s) in &a.streams {
            push(out, a.app.created_ms(), l.clone(), f(s));
        }
    }
}

/// One sample per streaming query where `f` gives a value.
pub fn per_stream_opt(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&StreamAgg) -> Option<Value>) {
    for a in &c.apps {
        for (l, s) in &a.streams {
            if let Some(v) = f(s) {
                push(out, a.app.created_ms(), l.clone(), v);
            }
        }
    }
}

/// One sample per streaming query and key (operator, phase, source), the key under `label`.
pub fn per_stream_by<'a, K: AsRef<str>, I: IntoIterator<Item = (K, Value)>>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    label: &'static str,
    f: impl Fn(&'a StreamAgg) -> I,
) {
    for a in &c.apps {
        for (l, s) in &a.streams {
            for (k, v) in f(s) {
                push(out, a.app.created_ms(), plus1(l, label, k.as_ref()), v);
            }
        }
    }
}

/// One sample per key of a self-metric map, the key under `label`.
pub fn per_key<'m, K: AsRef<str> + 'm, V: Copy + 'm>(
    c: &Ctx,
    out: &mut Vec<Sample>,
    label: &'static str,
    map: impl IntoIterator<Item = (&'m K, &'m V)>,
    value: impl Fn(V) -> Value,
) {
    for (k, v) in map {
        push(
            out,
            c.tele.started_ms,
            [(label, Arc::from(k.as_ref()))],
            value(*v),
        );
    }
}

/// One unlabelled sample.
pub fn single(c: &Ctx, out: &mut Vec<Sample>, value: Value) {
    push(out, c.tele.started_ms, [], value);
}

/// One unlabelled sample of the process's resources, when `/proc` gave it.
pub fn process(c: &Ctx, out: &mut Vec<Sample>, value: Option<Value>) {
    if let Some(v) = value {
        single(c, out, v);
    }
}

/// One sample per application and place of its final diagnosis findings (`window`: of the
/// latest evaluation of its window findings, per run only), with `kind`, `job_group`,
/// `job_description` (and `query` for the window).
pub fn per_finding(c: &Ctx, out: &mut Vec<Sample>, window: bool, f: impl Fn(&Tally) -> Value) {
    for a in &c.apps {
        let found = a.app.findings();
        let map = match window {
            false => found.total(),
            true if a.app.by_name() => continue,
            true => found.window(),
        };
        for (k, t) in map {
            let mut labels = vec![
                ("kind", k.kind.clone()),
                ("job_group", k.job_group.clone()),
                ("job_description", k.job_description.clone()),
            ];
            if window {
                labels.push(("query", k.query.clone()));
            }
            push(out, a.app.created_ms(), plus(&a.base, &labels), f(t));
        }
    }
}

/// The money families (`cost.prices`): per application and `currency`, one sample per
/// `(extra labels, value)` `f` gives; nothing without prices.
pub fn per_app_money<'a, I: IntoIterator<Item = (&'static [(&'static str, &'static str)], f64)>>(
    c: &Ctx<'a>,
    out: &mut Vec<Sample>,
    f: impl Fn(&AppRows<'a>) -> Option<I>,
) {
    for a in &c.apps {
        let Some(items) = f(a) else {
            continue;
        };
        let currency: Arc<str> = Arc::from(a.app.currency());
        for (extra, v) in items {
            let mut labels = vec![("currency", currency.clone())];
            labels.extend(extra.iter().map(|(k, v)| (*k, Arc::from(*v))));
            push(
                out,
                a.app.created_ms(),
                plus(&a.base, &labels),
                Value::Float(v),
            );
        }
    }
}

/// The money of each final finding (`spark_diagnosis_cost_total`): per application with a
/// price, its findings' estimate, with `currency`.
pub fn per_finding_money(c: &Ctx, out: &mut Vec<Sample>) {
    for a in &c.apps {
        if a.app.cost().money.is_none() {
            continue;
        }
        let currency: Arc<str> = Arc::from(a.app.currency());
        for (k, t) in a.app.findings().total() {
            let labels = [
                ("kind", k.kind.clone()),
                ("job_group", k.job_group.clone()),
                ("job_description", k.job_description.clone()),
                ("currency", currency.clone()),
            ];
            push(
                out,
                a.app.created_ms(),
                plus(&a.base, &labels),
                Value::Float(t.money),
            );
        }
    }
}

/// One sample per job group where `f` gives a value.
pub fn per_group_opt(c: &Ctx, out: &mut Vec<Sample>, f: impl Fn(&GroupView) -> Option<Value>) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            if let Some(v) = f(g) {
                push(out, a.app.created_ms(), l.clone(), v);
            }
        }
    }
}

/// One count per job group and key, with the key under `label`.
pub fn per_group_by<I: IntoIterator<Item = (&'static str, u64)>>(
    c: &Ctx,
    out: &mut Vec<Sample>,
    label: &'static str,
    f: impl Fn(&GroupView) -> I,
) {
    for a in &c.apps {
        for (l, g) in &a.groups {
            for (k, n) in f(g) {
                push(
                    out,
                    a.app.created_ms(),
                    SampleLabels::with(l, label, k),
                    Value::Int(n),
                );
            }
        }
    }
}
