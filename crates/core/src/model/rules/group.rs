//! The job group a job or stage counts under (label rules, streaming queries, call sites), and
//! how a broadcast placeholder's counts move to its query's group.

use std::sync::Arc;

use crate::config::GroupSource;
use crate::model::app::{AppDetail, AppSummary};
use crate::model::group::{GroupAgg, GroupKey};
use crate::model::labels::Labeler;
use crate::telemetry::Telemetry;

pub(in crate::model) fn group_key(
    labeler: &Labeler,
    d: &mut AppDetail,
    t: &Telemetry,
    group: Option<&str>,
    desc: Option<&str>,
) -> GroupKey {
    // A streaming micro-batch's job or stage counts under its query (streaming_labels.rs).
    let runs = &mut d.stream_runs;
    if let Some(k) =
        crate::model::streaming_labels::group_key(labeler, &mut d.label_sets, runs, t, group, desc)
    {
        return k;
    }
    (
        labeler.value(&mut d.label_sets, t, "job_group", group),
        labeler.value(&mut d.label_sets, t, "job_description", desc),
    )
}

/// The group key of a job whose group came from `source`: a call site keeps its line number
/// (the rewrite rules would make every line of a file one group), only capped.
pub(in crate::model) fn job_group_key(
    labeler: &Labeler,
    d: &mut AppDetail,
    t: &Telemetry,
    group: Option<&(std::borrow::Cow<'_, str>, GroupSource)>,
    desc: Option<&str>,
) -> GroupKey {
    match group {
        Some((g, GroupSource::CallSite)) => (
            labeler.value_verbatim(&mut d.label_sets, t, "job_group", g),
            labeler.value(&mut d.label_sets, t, "job_description", desc),
        ),
        g => group_key(labeler, d, t, g.map(|(g, _)| &**g), desc),
    }
}

/// The job group's aggregate, created on first sight (a job or stage starting) with every
/// histogram at zero for every status, so each series exists before its first observation.
pub(in crate::model) fn group_agg<'a>(
    s: &'a mut AppSummary,
    key: &GroupKey,
    (dur_bounds, task_bounds): (&Arc<[f64]>, &Arc<[f64]>),
) -> &'a mut GroupAgg {
    s.groups
        .entry(key.clone())
        .or_insert_with(|| crate::model::group::zero_group(dur_bounds, task_bounds))
}

/// Move what placeholder `from` counted into group `to`: its aggregate, and its live stages,
/// stage-to-group entries and running job.
pub(in crate::model) fn resolve_broadcast(
    s: &mut AppSummary,
    d: &mut AppDetail,
    from: &GroupKey,
    to: &GroupKey,
    zero: impl FnOnce() -> GroupAgg,
) {
    if let Some(agg) = s.groups.remove(from) {
        merge(s.groups.entry(to.clone()).or_insert_with(zero), &agg);
    }
    for st in d.stages.values_mut().filter(|s| &s.group == from) {
        st.group = to.clone();
        d.resolved.extend(st.settle_resolved());
    }
    for g in d.stage_groups.values_mut().filter(|g| *g == from) {
        *g = to.clone();
    }
    for j in d.running_jobs.values_mut().filter(|j| &j.group == from) {
        j.group = to.clone();
    }
}

/// Add every counter and histogram of `from` to `into`.
fn merge(into: &mut GroupAgg, from: &GroupAgg) {
    for (s, n) in &from.jobs {
        *into.jobs.entry(s).or_default() += n;
    }
    for (s, n) in &from.stages {
        *into.stages.entry(s).or_default() += n;
    }
    for (into_h, from_h) in [
        (&mut into.job_duration, &from.job_duration),
        (&mut into.stage_duration, &from.stage_duration),
    ] {
        for (s, h) in from_h {
            match into_h.get_mut(s) {
                Some(a) => a.merge(h),
                None => {
                    into_h.insert(s, h.clone());
                }
            }
        }
    }
    into.retired_counts.add(&from.retired_counts);
    into.retired_totals.add(&from.retired_totals);
    match (&mut into.task_duration, &from.task_duration) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => into.task_duration = Some(b.clone()),
        _ => {}
    }
    match (&mut into.skew_ratio, &from.skew_ratio) {
        (Some(a), Some(b)) => a.merge(b),
        (None, Some(b)) => into.skew_ratio = Some(b.clone()),
        _ => {}
    }
    for (n, m) in into.locality.iter_mut().zip(from.locality) {
        *n += m;
    }
}
