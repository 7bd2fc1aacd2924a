//! The report for a human: per application, its totals, where the time went (by job group, then
//! the costliest stages), then the findings grouped by kind and job group, costliest group
//! first, each group's remedy once, every number with its unit.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::{AppReport, Finding, Kind, Place, Report};

/// Most job groups listed in "where the time went"; the rest are summed on one line.
const GROUPS_LISTED: usize = 8;

/// The whole report as text.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    if r.applications.is_empty() {
        o.push_str("No application found.\n");
    }
    if r.source.read_errors > 0 {
        let _ = writeln!(
            o,
            "note: {} unreadable event-log line(s), block(s) or file(s) were skipped; the rest \
             is diagnosed\n",
            r.source.read_errors
        );
    }
    for a in &r.applications {
        app(&mut o, a);
    }
    o
}

/// `n thing` or `n things`.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `12,345`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn app(o: &mut String, a: &AppReport) {
    let s = &a.summary;
    let state = if a.end_ms.is_some() {
        "ended"
    } else {
        "running"
    };
    let _ = writeln!(
        o,
        "== {} ({}), Spark {}, {state}",
        a.app_id, a.app_name, a.spark_version
    );
    let gc_share = if s.task_seconds > 0.0 {
        format!(" ({})", percent(s.gc_seconds / s.task_seconds))
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "   {}, {}, {}; task time {}, of it GC {}{gc_share}",
        count(s.jobs, "job", "jobs"),
        count(s.stages, "stage attempt", "stage attempts"),
        count(s.tasks, "task", "tasks"),
        duration(s.task_seconds),
        duration(s.gc_seconds),
    );
    if let Some(u) = s.core_utilization {
        let _ = writeln!(
            o,
            "   cores: {} core-seconds held, {} used ({})",
            whole(s.allocated_core_seconds),
            whole(s.used_core_seconds),
            percent(u)
        );
    }
    where_the_time_went(o, a);
    for n in &a.notes {
        let _ = writeln!(o, "\nnote: {n}");
    }
    if a.findings.is_empty() {
        o.push_str("\nNo findings.\n");
    } else {
        findings(o, &a.findings);
    }
    if let Some(w) = &a.what_if {
        o.push_str(&crate::whatif::render::text(w));
    }
    let block = crate::advice::apply::paste_block(a);
    if !block.is_empty() {
        o.push('\n');
        o.push_str(&block);
    }
    o.push('\n');
}

fn where_the_time_went(o: &mut String, a: &AppReport) {
    let total = a.summary.task_seconds;
    let share = |x: f64| {
        if total > 0.0 {
            percent(x / total)
        } else {
            "-".into()
        }
    };
    if !a.group_times.is_empty() {
        o.push_str("\nWhere the time went, by job group and description (task time):\n");
        for g in a.group_times.iter().take(GROUPS_LISTED) {
            let _ = writeln!(
                o,
                "  {:>10} {:>5}  {}  ({})",
                duration(g.task_seconds),
                share(g.task_seconds),
                group(&g.job_group, &g.description),
                count(g.jobs, "job", "jobs")
            );
        }
        let rest = &a.group_times[a.group_times.len().min(GROUPS_LISTED)..];
        if !rest.is_empty() {
            let t: f64 = rest.iter().map(|g| g.task_seconds).sum();
            let _ = writeln!(
                o,
                "  {:>10} {:>5}  {} more",
                duration(t),
                share(t),
                count(rest.len() as u64, "group", "groups")
            );
        }
    }
    if !a.bottlenecks.is_empty() {
        o.push_str("\nThe stages with the most task time:\n");
        for (i, b) in a.bottlenecks.iter().enumerate() {
            let wall = b
                .duration_seconds
                .map(|d| format!(", {} wall-clock", duration(d)))
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  {}. {}: {} task time ({}){wall}",
                i + 1,
                place(&b.at),
                duration(b.task_seconds),
                share(b.task_seconds),
            );
        }
    }
}

/// The unit of a kind's cost (its rule's).
fn cost_unit(kind: Kind) -> &'static str {
    kind.rule().unit
}

/// The findings grouped by kind (costliest kind first), then by job group and description
/// (costliest first), each kind's remedy once.
fn findings(o: &mut String, all: &[Finding]) {
    type Group<'a> = (Option<&'a str>, Option<&'a str>);
    type Groups<'a> = Vec<(Group<'a>, Vec<&'a Finding>)>;
    let mut kinds: BTreeMap<Kind, BTreeMap<Group<'_>, Vec<&Finding>>> = BTreeMap::new();
    for f in all {
        let g = (f.at.job_group.as_deref(), f.at.description.as_deref());
        kinds
            .entry(f.kind)
            .or_default()
            .entry(g)
            .or_default()
            .push(f);
    }
    let cost = |v: &[&Finding]| v.iter().map(|f| f.cost_seconds).sum::<f64>();
    let mut kinds: Vec<(Kind, Groups<'_>)> = kinds
        .into_iter()
        .map(|(k, groups)| {
            let mut groups: Vec<_> = groups.into_iter().collect();
            groups.sort_by(|(ga, a), (gb, b)| cost(b).total_cmp(&cost(a)).then(ga.cmp(gb)));
            (k, groups)
        })
        .collect();
    let kind_cost =
        |groups: &[(Group<'_>, Vec<&Finding>)]| groups.iter().map(|(_, v)| cost(v)).sum::<f64>();
    // Ties keep the procedure's order.
    kinds.sort_by(|(ka, a), (kb, b)| kind_cost(b).total_cmp(&kind_cost(a)).then(ka.cmp(kb)));
    o.push_str("\nFindings by kind, most costly first (cost: the time a finding explains):\n");
    for (i, (kind, groups)) in kinds.iter().enumerate() {
        let unit = cost_unit(*kind);
        let n: usize = groups.iter().map(|(_, v)| v.len()).sum();
        let named = groups.iter().filter(|((g, _), _)| g.is_some()).count();
        let spread = if named > 0 {
            format!(" in {}", count(named as u64, "job group", "job groups"))
        } else {
            String::new()
        };
        let total = kind_cost(groups);
        let total = if total > 0.0 {
            format!(", cost {} {unit}", amount(total))
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "\n  {}. [{}] {}{spread}{total}",
            i + 1,
            kind.as_str(),
            count(n as u64, "finding", "findings"),
        );
        let mut remedies: Vec<&str> = vec![];
        // What a suggestion or code change is based on, said once per kind.
        let mut said: Vec<String> = vec![];
        for ((g, d), fs) in groups {
            let indent = if let Some(g) = g {
                let c = cost(fs);
                let c = if c > 0.0 {
                    format!(": {} {unit}", amount(c))
                } else {
                    String::new()
                };
                let _ = writeln!(o, "     {}{c}", group(g, d.unwrap_or("")));
                "       "
            } else {
                "     "
            };
            for f in fs {
                finding(o, f, indent, fs.len() > 1, unit, &mut said);
                if !remedies.contains(&f.remedy.as_str()) {
                    remedies.push(&f.remedy);
                }
            }
        }
        // One remedy per kind, unless it follows a finding's severity (a streaming query
        // behind, or close to it).
        for r in remedies {
            let _ = writeln!(o, "     remedy:  {r}");
        }
    }
}

/// One finding: its title (with its cost when its group has several), where, its numbers and
/// thresholds, its UI page.
fn finding(
    o: &mut String,
    f: &Finding,
    indent: &str,
    own_cost: bool,
    unit: &str,
    said: &mut Vec<String>,
) {
    let c = if own_cost && f.cost_seconds > 0.0 {
        format!("  ({} {unit})", amount(f.cost_seconds))
    } else {
        String::new()
    };
    let _ = writeln!(o, "{indent}- {}{c}", f.title);
    let at = place(&Place {
        job_group: None,
        description: None,
        ..f.at.clone()
    });
    if !at.is_empty() {
        let _ = writeln!(o, "{indent}  where:   {at}");
    }
    let (nums, limits) = numbers(f);
    if !nums.is_empty() {
        let _ = writeln!(o, "{indent}  numbers: {nums}");
    }
    if !limits.is_empty() {
        let _ = writeln!(o, "{indent}  limit:   {limits}");
    }
    if let Some(u) = &f.url {
        let _ = writeln!(o, "{indent}  ui:      {u}");
    }
    let mut basis = |b: &str| {
        if said.iter().any(|x| x == b) {
            "as above".to_string()
        } else {
            said.push(b.to_string());
            b.to_string()
        }
    };
    for s in &f.suggestions {
        let b = basis(&s.basis);
        let _ = writeln!(
            o,
            "{indent}  try:     {}={} (ran with {}); {b}",
            s.key,
            s.to_try,
            ran_with(s),
        );
    }
    for c in &f.code {
        let b = basis(&c.basis);
        let _ = writeln!(o, "{indent}  code:    {}; {b}", c.change);
    }
}

/// The value a suggestion's run had, and where it came from.
pub(crate) fn ran_with(s: &crate::advice::types::Suggestion) -> String {
    use crate::advice::types::Origin;
    let v = s.ran_with.as_deref().unwrap_or("unset");
    match (s.origin, s.execution_id) {
        (Origin::SqlExecution, Some(e)) => format!("{v}, SQL execution {e}'s session setting"),
        (Origin::SqlExecution, None) => format!("{v}, a session setting"),
        (Origin::Application, _) => format!("{v}, the application's"),
        (Origin::SparkDefault, _) => format!("{v}, Spark's default"),
        (Origin::Assumed, _) => format!("{v}, Spark's default assumed: the log has no environment"),
    }
}

/// `group "g" / "d"`.
pub(crate) fn group(g: &str, d: &str) -> String {
    format!("group {g:?} / {d:?}")
}

/// `group "g" / "description", stage 3.0 (name), SQL execution 7, query q`.
pub(crate) fn place(p: &Place) -> String {
    let mut parts = vec![];
    if let Some(g) = &p.job_group {
        parts.push(group(g, p.description.as_deref().unwrap_or("")));
    }
    if let Some(id) = p.stage_id {
        let name = p
            .stage_name
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        parts.push(format!("stage {id}.{}{name}", p.stage_attempt.unwrap_or(0)));
    }
    if let Some(e) = p.execution_id {
        parts.push(format!("SQL execution {e}"));
    }
    if let Some(q) = &p.query {
        parts.push(format!("query {q:?}"));
    }
    if let Some(s) = &p.subject {
        parts.push(s.clone());
    }
    parts.join(", ")
}

/// How a finding's number reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// Seconds of time: `1.2 s`, `3 min 4 s`.
    Seconds,
    /// Core-seconds.
    CoreSeconds,
    /// Bytes: `1.5 MiB`.
    Bytes,
    /// A share: `42%`.
    Percent,
    /// A multiple: `11.7x`.
    Times,
    /// A count: `1,234`.
    Count,
}

/// The label and unit of a finding's number, by its name in the report; `None` for a name this
/// table does not know (printed as it is; a test keeps the table complete).
pub fn label(name: &str) -> Option<(String, Unit, bool)> {
    if let Some((_, l, u, t)) = TABLE.iter().find(|(n, ..)| *n == name) {
        return Some(((*l).to_string(), *u, *t));
    }
    // shape_<i>_first_execution: where each plan shape first ran.
    let i = name
        .strip_prefix("shape_")?
        .strip_suffix("_first_execution")?;
    Some((format!("shape {i} first in execution"), Unit::Count, false))
}

/// A number's place in [`TABLE`] (unknown names after every known one).
fn order(name: &str) -> usize {
    TABLE
        .iter()
        .position(|(n, ..)| *n == name)
        .unwrap_or(if name.starts_with("shape_") {
            TABLE.len()
        } else {
            TABLE.len() + 1
        })
}

/// Each number a finding may carry, in the order it is printed: (name in the report, label,
/// unit, a threshold rather than a measure).
const TABLE: &[(&str, &str, Unit, bool)] = {
    use Unit::*;
    &[
        ("longest_task_seconds", "longest task", Seconds, false),
        ("median_task_seconds", "median task", Seconds, false),
        ("skew_ratio", "longest/median", Times, false),
        ("tasks", "tasks", Count, false),
        ("task_seconds", "task time", Seconds, false),
        ("disk_spilled_bytes", "spilled to disk", Bytes, false),
        ("memory_spilled_bytes", "spilled from memory", Bytes, false),
        ("input_bytes", "input", Bytes, false),
        ("shuffle_read_bytes", "shuffle read", Bytes, false),
        ("gc_seconds", "GC", Seconds, false),
        ("gc_ratio", "GC share of task time", Percent, false),
        (
            "peak_execution_memory_bytes",
            "peak execution memory, summed over tasks",
            Bytes,
            false,
        ),
        ("executors_lost", "executors lost", Count, false),
        ("failed_tasks", "failed tasks", Count, false),
        ("removed_lost", "removed as lost", Count, false),
        (
            "removed_heartbeat_timeout",
            "removed for a heartbeat timeout",
            Count,
            false,
        ),
        ("removed_exited", "removed as exited", Count, false),
        ("sort_merge_joins", "sort-merge joins", Count, false),
        ("shuffled_hash_joins", "shuffled hash joins", Count, false),
        ("broadcast_hash_joins", "broadcast hash joins", Count, false),
        (
            "smallest_shuffle_write_bytes",
            "smallest shuffle write",
            Bytes,
            false,
        ),
        ("broadcast_max_bytes", "broadcast up to", Bytes, true),
        ("executions", "executions", Count, false),
        ("plan_shapes", "plan shapes", Count, false),
        ("cached_fraction", "cached", Percent, false),
        ("memory_bytes", "in memory", Bytes, false),
        ("disk_bytes", "on disk", Bytes, false),
        ("process_local", "PROCESS_LOCAL", Count, false),
        ("node_local", "NODE_LOCAL", Count, false),
        ("rack_local", "RACK_LOCAL", Count, false),
        ("no_pref", "NO_PREF", Count, false),
        ("any", "ANY", Count, false),
        ("remote_ratio", "rack-local or any", Percent, false),
        ("scheduler_delay_seconds", "scheduler delay", Seconds, false),
        ("ratio", "delay share of task time", Percent, false),
        (
            "deserialize_seconds",
            "task deserialization",
            Seconds,
            false,
        ),
        ("trigger_interval_seconds", "trigger", Seconds, false),
        ("recent_batches", "recent batches", Count, false),
        ("batches_near_trigger", "near the trigger", Count, false),
        ("batches_over_trigger", "over the trigger", Count, false),
        ("longest_batch_seconds", "longest batch", Seconds, false),
        ("batches", "batches in all", Count, false),
        ("allocated_core_seconds", "held", CoreSeconds, false),
        ("used_core_seconds", "used", CoreSeconds, false),
        ("idle_core_seconds", "idle", CoreSeconds, false),
        ("core_utilization", "busy", Percent, false),
    ]
};

/// A finding's measures and its thresholds, each `label value unit`, comma-separated.
pub(crate) fn numbers(f: &Finding) -> (String, String) {
    let (mut nums, mut limits) = (vec![], vec![]);
    // In the table's order (the measure first, then its context), names it does not know last.
    let mut named: Vec<(&String, &f64)> = f.numbers.iter().collect();
    named.sort_by_key(|(n, _)| (order(n), (*n).clone()));
    for (name, v) in named {
        let (text, threshold) = match label(name) {
            Some((l, u, t)) => (format!("{l} {}", value(*v, u)), t),
            None => (format!("{name} {}", plain(*v)), false),
        };
        if threshold {
            limits.push(text);
        } else {
            nums.push(text);
        }
    }
    (nums.join(", "), limits.join(", "))
}

/// A value in its unit.
pub fn value(v: f64, u: Unit) -> String {
    match u {
        Unit::Seconds => duration(v),
        Unit::CoreSeconds => format!("{} core-seconds", amount(v)),
        Unit::Bytes => crate::rules::human_bytes(v.max(0.0) as u64),
        Unit::Percent => percent(v),
        Unit::Times => format!("{v:.1}x"),
        Unit::Count => thousands(v.max(0.0).round() as u64),
    }
}

pub use crate::units::duration;

/// An amount of seconds of some kind (task-, core-): `7.6`, `1,234`.
pub(crate) fn amount(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1}")
    } else {
        whole(v)
    }
}

/// `1,234`.
pub(crate) fn whole(v: f64) -> String {
    thousands(v.max(0.0).round() as u64)
}

/// `42%` (`0.4%` below 1%).
pub(crate) fn percent(r: f64) -> String {
    let p = r * 100.0;
    if p > 0.0 && p < 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// A number without a unit: integers without decimals, others with up to 3.
fn plain(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_as_people_write_them() {
        assert_eq!(duration(0.25), "250 ms");
        assert_eq!(duration(7.61), "7.6 s");
        assert_eq!(duration(184.0), "3 min 4 s");
        assert_eq!(duration(7500.0), "2 h 5 min");
        assert_eq!(duration(119.6), "2 min 0 s");
        assert_eq!(duration(59.97), "1 min 0 s");
        assert_eq!(value(10_485_760.0, Unit::Bytes), "10.0 MiB");
        assert_eq!(value(0.274, Unit::Percent), "27%");
        assert_eq!(value(11.694, Unit::Times), "11.7x");
        assert_eq!(value(12345.0, Unit::Count), "12,345");
        assert_eq!(count(1, "job", "jobs"), "1 job");
        assert_eq!(count(2, "job", "jobs"), "2 jobs");
        assert_eq!(
            label("shape_2_first_execution").map(|l| l.0),
            Some("shape 2 first in execution".to_string())
        );
        assert_eq!(label("nonsense"), None);
    }
}
