//! The comparison as text (a short ranked list first, the tables after) and as an HTML page
//! (the same, with a chart of the job groups' task time on both sides).

use std::fmt::Write;

use super::types::*;
use crate::page::{bar, esc, label, svg_open, W};
use crate::units::duration;

/// Ranked changes the text lists first.
const SHORT: usize = 5;

/// `v` in `unit`: a duration, a size, or a number.
fn value(unit: &str, v: f64) -> String {
    match unit {
        "s" => duration(v.abs()),
        "B" => crate::rules::human_bytes(v.abs() as u64),
        "core-s" => format!("{:.0} core-s", v.abs()),
        _ if v.fract() == 0.0 => format!("{}", v.abs() as i64),
        _ => format!("{:.2}", v.abs()),
    }
}

/// `a -> b (+d, xr)`.
fn arrow(unit: &str, d: &Delta) -> String {
    let sign = if d.change < 0.0 { "-" } else { "+" };
    let ratio = d.ratio.map(|r| format!(", x{r:.2}")).unwrap_or_default();
    format!(
        "{} -> {} ({sign}{}{ratio})",
        value(unit, d.baseline),
        value(unit, d.run),
        value(unit, d.change)
    )
}

/// `"group" / "description"`, or `(no job group)`.
fn group(g: &str, d: &str) -> String {
    let g = if g.is_empty() {
        "(no job group)".to_string()
    } else {
        format!("{g:?}")
    };
    if d.is_empty() {
        g
    } else {
        format!("{g} / {:?}", crate::page::cut(d, 80))
    }
}

fn measure(m: &MeasureDiff) -> String {
    format!("{} {}", m.measure, arrow(&m.unit, &m.delta))
}

/// One line per ranked change.
fn change_line(i: usize, c: &Change) -> String {
    let share = c
        .share
        .map(|s| format!("{:>4.0}%", s * 100.0))
        .unwrap_or_else(|| "    ".into());
    let what = match (&c.job_group, &c.description) {
        (Some(g), Some(d)) => {
            let tag = match c.kind.as_str() {
                "job_group_added" => " (only in the run)",
                "job_group_gone" => " (only in the baseline)",
                _ => "",
            };
            format!("job group {}{tag}", group(g, d))
        }
        _ => c.kind.replace('_', " "),
    };
    let sign = if c.seconds < 0.0 { "-" } else { "+" };
    format!(
        "  {:>2}. {sign}{:<9} {share}  {what}: {}",
        i + 1,
        duration(c.seconds.abs()),
        c.detail
    )
}

/// The comparison as text.
pub fn text(c: &Comparison) -> String {
    let mut o = String::new();
    let b = &c.baseline;
    let of = if b.kind == "median" {
        format!(
            "the median of {} previous runs (closest: {})",
            b.runs.len(),
            b.closest
        )
    } else {
        format!("run {}", b.closest)
    };
    let _ = writeln!(
        o,
        "What changed: {} {} against {of}",
        c.run.app_name, c.run.app_id
    );
    if let Some(w) = &c.wall_seconds {
        let _ = write!(o, "  wall time {}; ", arrow("s", w));
    }
    let _ = writeln!(o, "task time {}", arrow("s", &c.task_seconds));
    if c.unchanged {
        let _ = writeln!(
            o,
            "\nNo change: the run matches its baseline (nothing moved by 5% and more than \
             0.5 s, 1 MiB or one task)."
        );
        notes(&mut o, c);
        return o;
    }
    if !c.ranked.is_empty() {
        let _ = writeln!(o, "\nRanked by share of the task-time difference:");
        for (i, r) in c.ranked.iter().take(SHORT).enumerate() {
            let _ = writeln!(o, "{}", change_line(i, r));
        }
    }
    lists(&mut o, c);
    if c.ranked.len() > SHORT {
        let _ = writeln!(o, "\nEvery ranked change:");
        for (i, r) in c.ranked.iter().enumerate() {
            let _ = writeln!(o, "{}", change_line(i, r));
        }
    }
    tables(&mut o, c);
    notes(&mut o, c);
    o
}

/// The settings, version, capacity, plans and findings.
fn lists(o: &mut String, c: &Comparison) {
    if !c.settings.is_empty() {
        let _ = writeln!(o, "\nSettings that differ (those the advice knows first):");
        for s in &c.settings {
            let side = |v: &Option<String>| match (v, &s.default) {
                (Some(v), _) => v.clone(),
                (None, Some(d)) => format!("{d} (default)"),
                (None, None) => "unset".into(),
            };
            let scope = match &s.query {
                Some(q) => format!("SQL {:?}", crate::page::cut(q, 60)),
                None => s.scope.clone(),
            };
            let _ = writeln!(
                o,
                "  {} ({scope}): {} -> {}",
                s.key,
                side(&s.baseline),
                side(&s.run)
            );
        }
    }
    if let Some(v) = &c.spark_version {
        let _ = writeln!(o, "\nSpark's version: {} -> {}", v.baseline, v.run);
    }
    if !c.capacity.is_empty() {
        let parts: Vec<String> = c.capacity.iter().map(measure).collect();
        let _ = writeln!(o, "\nCapacity: {}", parts.join("; "));
    }
    if !c.plans.is_empty() {
        let _ = writeln!(
            o,
            "\nPlans that changed (SQL executions by description and order):"
        );
        for p in &c.plans {
            let what = if p.changes.is_empty() {
                "the plan's shape (same joins and exchanges)".to_string()
            } else {
                p.changes.join(", ")
            };
            let _ = writeln!(
                o,
                "  {:?} #{} in {}: {what}",
                crate::page::cut(&p.description, 60),
                p.order,
                group(&p.job_group, "")
            );
        }
    }
    for (title, list) in [
        ("Findings new in the run", &c.findings_new),
        ("Findings gone since the baseline", &c.findings_gone),
    ] {
        if !list.is_empty() {
            let _ = writeln!(o, "\n{title}:");
            for f in list {
                let _ = writeln!(
                    o,
                    "  {} in {} ({}): {}",
                    f.kind,
                    group(&f.job_group, &f.description),
                    duration(f.cost_seconds),
                    f.title
                );
            }
        }
    }
}

/// The job groups, what only one side has, the whole run's measures.
fn tables(o: &mut String, c: &Comparison) {
    if !c.groups.is_empty() {
        let _ = writeln!(o, "\nJob groups that changed (most task time first):");
        for g in &c.groups {
            let _ = writeln!(
                o,
                "  {}: task time {}; tasks {}",
                group(&g.job_group, &g.description),
                arrow("s", &g.task_seconds),
                arrow("", &g.tasks)
            );
            if !g.grew.is_empty() {
                let parts: Vec<String> = g.grew.iter().map(measure).collect();
                let _ = writeln!(o, "      also: {}", parts.join("; "));
            }
            if let Some(s) = &g.stage {
                let _ = writeln!(
                    o,
                    "      most in job {} stage {} (ids {} -> {}, {}): task time {}",
                    s.job,
                    s.position,
                    s.stage_ids[0],
                    s.stage_ids[1],
                    crate::page::cut(&s.name, 50),
                    arrow("s", &s.task_seconds)
                );
                if !s.grew.is_empty() {
                    let parts: Vec<String> = s.grew.iter().map(measure).collect();
                    let _ = writeln!(o, "        there: {}", parts.join("; "));
                }
            }
        }
    }
    for (title, list) in [
        ("Only in the run", &c.added),
        ("Only in the baseline", &c.gone),
    ] {
        if !list.is_empty() {
            let _ = writeln!(o, "\n{title}:");
            for u in list {
                let at =
                    u.at.as_deref()
                        .map(|a| format!(" {}", crate::page::cut(a, 70)))
                        .unwrap_or_default();
                let _ = writeln!(
                    o,
                    "  {} {}{at}: {} of task time",
                    u.what.replace('_', " "),
                    group(&u.job_group, &u.description),
                    duration(u.task_seconds)
                );
            }
        }
    }
    if !c.measures.is_empty() {
        let _ = writeln!(o, "\nThe whole run:");
        for m in &c.measures {
            let _ = writeln!(o, "  {}", measure(m));
        }
    }
}

fn notes(o: &mut String, c: &Comparison) {
    for n in &c.notes {
        let _ = writeln!(o, "note: {n}");
    }
}

/// The comparison as a section of a page: the text's lists, and a chart of each changed job
/// group's task time, baseline and run.
pub fn html(o: &mut String, c: &Comparison) {
    let _ = writeln!(o, "<section class=\"compare\">\n<h2>What changed</h2>");
    if !c.groups.is_empty() {
        chart(o, c);
    }
    let _ = writeln!(o, "<pre>{}</pre>", esc(&text(c)));
    o.push_str("</section>\n");
}

/// Two bars per changed job group: the baseline's task time and the run's.
fn chart(o: &mut String, c: &Comparison) {
    let _ = writeln!(
        o,
        "<h3>Task time of the job groups that changed</h3>\n<p class=\"note\">Grey: the \
         baseline; orange: the run.</p>"
    );
    let row = 40.0;
    let h = 8.0 + row * c.groups.len() as f64;
    svg_open(
        o,
        "compare-groups",
        "seconds",
        h,
        "Task time per job group, baseline and run",
    );
    let (x0, x1) = (260.0, W - 160.0);
    let max = c
        .groups
        .iter()
        .map(|g| g.task_seconds.baseline.max(g.task_seconds.run))
        .fold(0.0, f64::max)
        .max(1e-9);
    for (i, g) in c.groups.iter().enumerate() {
        let y = 4.0 + row * i as f64;
        let name = crate::page::cut(&group(&g.job_group, &g.description), 40);
        label(o, x0 - 8.0, y + 20.0, "end", "kind", &name);
        for (j, (side, v, fill)) in [
            ("baseline", g.task_seconds.baseline, "#999999"),
            ("run", g.task_seconds.run, "#D55E00"),
        ]
        .into_iter()
        .enumerate()
        {
            let wd = (x1 - x0) * v / max;
            let yy = y + 3.0 + 16.0 * j as f64;
            let tip = format!("{name}, {side}: {}", duration(v));
            bar(o, x0, yy, wd, 14.0, fill, &tip);
            label(
                o,
                x0 + wd.max(1.0) + 6.0,
                yy + 11.0,
                "start",
                "value",
                &duration(v),
            );
        }
    }
    o.push_str("</svg>\n");
}

/// The comparison as a page of its own.
pub fn page(c: &Comparison) -> String {
    let mut o = String::new();
    let title = format!("What changed: {} {}", c.run.app_name, c.run.app_id);
    crate::page::open(&mut o, &title, "pre{white-space:pre-wrap;font-size:13px}");
    let _ = writeln!(o, "<h1>{}</h1>", esc(&title));
    html(&mut o, c);
    crate::page::close(
        &mut o,
        &c.generator,
        "spark-exporter diagnose --compare",
        "comparison",
        "diagnose-compare",
        COMPARE_SCHEMA_VERSION,
    );
    o
}
