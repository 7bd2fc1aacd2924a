//! The baseline over many runs: per measure, the median over a name's previous runs; the run
//! closest to those medians stands for the plans, settings and findings.

use std::collections::BTreeMap;

use super::profile::{GroupProfile, Measures, Profile, StageProfile, MEASURES, TASK_SECONDS};

/// The median of `v` (the mean of the middle two for an even count); `None` when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Per measure, the median of `ms`.
fn median_measures<'a>(ms: impl Iterator<Item = &'a Measures> + Clone) -> Measures {
    let mut out = Measures::default();
    for (i, v) in out.0.iter_mut().enumerate() {
        *v = median(ms.clone().map(|m| m.0[i]).collect()).unwrap_or(0.0);
    }
    out
}

/// The baseline of `runs` (at least one) and the index of the run closest to it: wall and task
/// time nearest their medians (by ratio).
pub fn median_of(runs: &[Profile]) -> (Profile, usize) {
    let wall = median(runs.iter().filter_map(|r| r.wall_seconds).collect());
    let tasks = median(runs.iter().map(|r| r.totals.0[TASK_SECONDS]).collect()).unwrap_or(0.0);
    let off = |a: f64, m: f64| ((a.max(1e-3)) / m.max(1e-3)).ln().abs();
    let closest = (0..runs.len())
        .min_by(|a, b| {
            let d = |r: &Profile| {
                off(r.totals.0[TASK_SECONDS], tasks)
                    + match (r.wall_seconds, wall) {
                        (Some(w), Some(m)) => off(w, m),
                        _ => 0.0,
                    }
            };
            d(&runs[*a]).total_cmp(&d(&runs[*b]))
        })
        .unwrap_or(0);
    let mut base = runs[closest].clone();
    base.wall_seconds = wall;
    base.totals = median_measures(runs.iter().map(|r| &r.totals));
    base.core_seconds = median(runs.iter().map(|r| r.core_seconds).collect()).unwrap_or(0.0);
    // A job group (and a stage place in it) is the baseline's when at least half the runs had it.
    let half = runs.len().div_ceil(2);
    let mut keys: BTreeMap<_, Vec<&GroupProfile>> = BTreeMap::new();
    for r in runs {
        for (k, g) in &r.groups {
            keys.entry(k.clone()).or_default().push(g);
        }
    }
    base.groups = keys
        .into_iter()
        .filter(|(_, gs)| gs.len() >= half)
        .map(|(k, gs)| {
            let g = GroupProfile {
                m: median_measures(gs.iter().map(|g| &g.m)),
                jobs: median(gs.iter().map(|g| f64::from(g.jobs)).collect()).unwrap_or(0.0) as u32,
                stages: median_stages(&gs),
            };
            (k, g)
        })
        .collect();
    debug_assert_eq!(MEASURES.len(), base.totals.0.len());
    (base, closest)
}

/// The stage places at least half of `gs` have, each the median of theirs.
fn median_stages(gs: &[&GroupProfile]) -> BTreeMap<(u32, u32), StageProfile> {
    let half = gs.len().div_ceil(2);
    let mut places: BTreeMap<(u32, u32), Vec<&StageProfile>> = BTreeMap::new();
    for g in gs {
        for (p, s) in &g.stages {
            places.entry(*p).or_default().push(s);
        }
    }
    places
        .into_iter()
        .filter(|(_, ss)| ss.len() >= half)
        .map(|(p, ss)| {
            let s = StageProfile {
                stage_id: ss[0].stage_id,
                name: ss[0].name.clone(),
                m: median_measures(ss.iter().map(|s| &s.m)),
                skew: median(ss.iter().filter_map(|s| s.skew).collect()),
            };
            (p, s)
        })
        .collect()
}
