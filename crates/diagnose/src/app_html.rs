//! One diagnosis as a self-contained HTML page (`diagnose --format html` without `--review`):
//! per application, where the time went (a chart of the job groups' task time), the cost of its
//! findings by kind (a chart per unit: task-seconds and idle core-seconds never share an axis),
//! then every finding with where it is, its numbers, the setting to change (the value the run
//! had and where it came from, the value to try, what that is based on), the code to change and
//! the kind's remedy, and at the end the settings to paste (`--conf` lines, a SparkApplication's
//! `sparkConf:`, `spark.conf.set` per job group).
//!
//! The charts follow [`crate::page`]: `svg.chart` with `data-chart` (`group-times`,
//! `cost-by-kind`) and `data-unit`, bars `rect.bar` with a tooltip each.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::advice::apply::paste_block;
use crate::page::{bar, close, colour, cut, esc, label, open, rfc3339, svg_open, W};
use crate::report::{AppReport, Finding, Kind, Report};
use crate::text::{amount, count, duration, group, numbers, percent, place, ran_with, whole};

/// Job groups charted (the rest as one bar).
const CHART_GROUPS: usize = 12;

/// The report as a self-contained HTML page.
pub fn render_app_html(r: &Report) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let title = match r.applications.as_slice() {
        [a] => format!("Spark diagnosis of {} ({})", a.app_name, a.app_id),
        v => format!("Spark diagnosis of {} applications", v.len()),
    };
    open(&mut o, &title, APP_CSS);
    if r.applications.is_empty() {
        o.push_str("<h1>Spark diagnosis</h1>\n<p class=\"empty\">No application found.</p>\n");
    }
    if r.source.read_errors > 0 {
        let _ = writeln!(
            o,
            "<p class=\"warn\">{} unreadable event-log line(s), block(s) or file(s) were \
             skipped; the rest is diagnosed.</p>",
            r.source.read_errors
        );
    }
    for a in &r.applications {
        app(&mut o, a);
    }
    close(
        &mut o,
        &r.generator,
        "diagnose --format html",
        "diagnosis",
        "diagnose-report",
        r.schema_version,
    );
    o
}

/// One application: header, charts, findings, settings.
fn app(o: &mut String, a: &AppReport) {
    let s = &a.summary;
    let _ = write!(
        o,
        "<article class=\"app\" id=\"app-{}\">\n<header>\n<h1>{} <code>{}</code></h1>\n\
         <p class=\"source\">Spark {}, {}{}</p>\n<dl class=\"counts\">\n",
        esc(&a.app_id),
        esc(&a.app_name),
        esc(&a.app_id),
        esc(&a.spark_version),
        if a.end_ms.is_some() {
            "ended"
        } else {
            "running"
        },
        a.start_ms
            .map(|t| format!(", started {}", esc(&rfc3339(t))))
            .unwrap_or_default()
    );
    let mut card = |label: &str, v: String| {
        let _ = writeln!(o, "<div><dt>{label}</dt><dd>{v}</dd></div>");
    };
    card("jobs", whole(s.jobs as f64));
    card("stage attempts", whole(s.stages as f64));
    card("tasks", whole(s.tasks as f64));
    card("task time", duration(s.task_seconds));
    if s.task_seconds > 0.0 {
        card("of it in GC", percent(s.gc_seconds / s.task_seconds));
    }
    if let Some(u) = s.core_utilization {
        card("core-seconds held", whole(s.allocated_core_seconds));
        card("cores busy", percent(u));
    }
    card("findings", a.findings.len().to_string());
    o.push_str("</dl>\n</header>\n");
    for n in &a.notes {
        let _ = writeln!(o, "<p class=\"warn\">{}</p>", esc(n));
    }
    group_times(o, a);
    cost_by_kind(o, &a.findings);
    findings(o, a);
    if let Some(w) = &a.what_if {
        crate::whatif::render::html(o, w);
    }
    settings(o, a);
    o.push_str("</article>\n");
}

/// Where the time went: a bar per job group and description (task-seconds).
fn group_times(o: &mut String, a: &AppReport) {
    o.push_str("<section class=\"group-times\">\n<h2>Where the time went</h2>\n");
    if a.group_times.is_empty() {
        o.push_str("<p class=\"empty\">No task time.</p>\n</section>\n");
        return;
    }
    let mut rows: Vec<(String, f64, u64)> = a
        .group_times
        .iter()
        .take(CHART_GROUPS)
        .map(|g| (group(&g.job_group, &g.description), g.task_seconds, g.jobs))
        .collect();
    let rest = &a.group_times[a.group_times.len().min(CHART_GROUPS)..];
    if !rest.is_empty() {
        rows.push((
            format!("{} more", count(rest.len() as u64, "group", "groups")),
            rest.iter().map(|g| g.task_seconds).sum(),
            rest.iter().map(|g| g.jobs).sum(),
        ));
    }
    let _ = writeln!(
        o,
        "<p class=\"note\">Task time by job group and description, of {} in all.</p>",
        duration(a.summary.task_seconds)
    );
    let row = 22.0;
    let h = 8.0 + row * rows.len() as f64;
    svg_open(
        o,
        "group-times",
        "task-seconds",
        h,
        "Task time by job group and description",
    );
    let (x0, x1) = (380.0, W - 170.0);
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    for (i, (name, secs, jobs)) in rows.iter().enumerate() {
        let y = 4.0 + row * i as f64;
        let w = (x1 - x0) * secs / max;
        let text = format!("{} · {}", duration(*secs), count(*jobs, "job", "jobs"));
        label(o, x0 - 8.0, y + 14.0, "end", "kind", &cut(name, 60));
        bar(
            o,
            x0,
            y + 3.0,
            w,
            row - 7.0,
            "#0072B2",
            &format!("{name}: {text}"),
        );
        label(o, x0 + w.max(1.0) + 6.0, y + 14.0, "start", "value", &text);
    }
    o.push_str("</svg>\n</section>\n");
}

/// Per kind: findings and cost, the costliest first (ties in the procedure's order).
fn kinds(all: &[Finding]) -> Vec<(Kind, Vec<&Finding>, f64)> {
    let mut by: BTreeMap<Kind, Vec<&Finding>> = BTreeMap::new();
    for f in all {
        by.entry(f.kind).or_default().push(f);
    }
    let mut v: Vec<(Kind, Vec<&Finding>, f64)> = by
        .into_iter()
        .map(|(k, fs)| {
            let c = fs.iter().map(|f| f.cost_seconds).sum();
            (k, fs, c)
        })
        .collect();
    v.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    v
}

/// The cost of the findings by kind: a chart per unit (the rule's), the kinds without a cost
/// (plan changes, partial caches) named beside.
fn cost_by_kind(o: &mut String, all: &[Finding]) {
    o.push_str("<section class=\"cost-by-kind\">\n<h2>Cost by kind</h2>\n");
    let ks = kinds(all);
    if ks.is_empty() {
        o.push_str("<p class=\"empty\">No findings.</p>\n</section>\n");
        return;
    }
    o.push_str(
        "<p class=\"note\">The time a kind's findings explain, in its unit. Kinds overlap (a \
         skewed stage that spills counts in both): never add them up.</p>\n",
    );
    let mut units: Vec<&str> = vec![];
    for (k, _, c) in &ks {
        let u = k.rule().unit;
        if *c > 0.0 && !units.contains(&u) {
            units.push(u);
        }
    }
    for u in &units {
        let mine: Vec<&(Kind, Vec<&Finding>, f64)> = ks
            .iter()
            .filter(|(k, _, c)| k.rule().unit == *u && *c > 0.0)
            .collect();
        if units.len() > 1 {
            let _ = writeln!(o, "<h3>In {}</h3>", esc(u));
        }
        let row = 26.0;
        let h = 10.0 + row * mine.len() as f64;
        svg_open(
            o,
            "cost-by-kind",
            u,
            h,
            &format!("Cost of the findings by kind, in {u}"),
        );
        let (x0, x1) = (180.0, W - 300.0);
        let max = mine.iter().map(|m| m.2).fold(0.0, f64::max).max(1e-9);
        for (i, (k, fs, c)) in mine.iter().enumerate() {
            let y = 5.0 + row * i as f64;
            let w = (x1 - x0) * c / max;
            let text = format!(
                "{} {u} · {}",
                amount(*c),
                count(fs.len() as u64, "finding", "findings")
            );
            label(o, x0 - 8.0, y + 15.0, "end", "kind", k.as_str());
            bar(
                o,
                x0,
                y + 3.0,
                w,
                row - 8.0,
                colour(*k),
                &format!("{}: {text}", k.as_str()),
            );
            label(o, x0 + w.max(1.0) + 6.0, y + 15.0, "start", "value", &text);
        }
        o.push_str("</svg>\n");
    }
    let free: Vec<String> = ks
        .iter()
        .filter(|(_, _, c)| *c <= 0.0)
        .map(|(k, fs, _)| {
            format!(
                "{} ({})",
                k.as_str(),
                count(fs.len() as u64, "finding", "findings")
            )
        })
        .collect();
    if !free.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">Without a cost: {}.</p>",
            esc(&free.join(", "))
        );
    }
    o.push_str("</section>\n");
}

/// Every finding, by kind: where, numbers, the settings to try, the code, the remedy.
fn findings(o: &mut String, a: &AppReport) {
    o.push_str("<section class=\"findings\">\n<h2>Findings</h2>\n");
    let ks = kinds(&a.findings);
    if ks.is_empty() {
        o.push_str("<p class=\"empty\">No findings.</p>\n");
    }
    for (k, fs, c) in &ks {
        let _ = writeln!(
            o,
            "<section class=\"kind\" data-kind=\"{k}\">\n<h3><i style=\"background:{}\"></i>{k}: \
             {}{}</h3>",
            colour(*k),
            count(fs.len() as u64, "finding", "findings"),
            if *c > 0.0 {
                format!(", {} {}", amount(*c), k.rule().unit)
            } else {
                String::new()
            },
            k = k.as_str(),
        );
        let mut remedies: Vec<&str> = vec![];
        for f in fs {
            finding(o, f);
            if !remedies.contains(&f.remedy.as_str()) {
                remedies.push(&f.remedy);
            }
        }
        for r in remedies {
            let _ = writeln!(o, "<p class=\"remedy\"><b>Remedy</b>: {}</p>", esc(r));
        }
        o.push_str("</section>\n");
    }
    o.push_str("</section>\n");
}

/// One finding.
fn finding(o: &mut String, f: &Finding) {
    let unit = f.kind.rule().unit;
    let _ = writeln!(
        o,
        "<div class=\"finding\">\n<p class=\"title\">{}{}</p>",
        esc(&f.title),
        if f.cost_seconds > 0.0 {
            format!(
                " <span class=\"sub\">({} {unit})</span>",
                amount(f.cost_seconds)
            )
        } else {
            String::new()
        }
    );
    let at = place(&f.at);
    let (nums, limits) = numbers(f);
    o.push_str("<dl class=\"facts\">\n");
    let mut fact = |k: &str, v: String| {
        if !v.is_empty() {
            let _ = writeln!(o, "<dt>{k}</dt><dd>{v}</dd>");
        }
    };
    fact("where", esc(&at));
    fact("numbers", esc(&nums));
    fact("limit", esc(&limits));
    if let Some(u) = &f.url {
        fact(
            "Spark UI",
            format!("<a href=\"{}\">{}</a>", esc(u), esc(&cut(u, 90))),
        );
    }
    o.push_str("</dl>\n");
    if !f.suggestions.is_empty() {
        o.push_str(
            "<table class=\"advice\"><thead><tr><th>setting</th><th>ran with</th><th>try</th>\
             <th>for</th><th>based on</th></tr></thead><tbody>\n",
        );
        for s in &f.suggestions {
            let _ = writeln!(
                o,
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td>\
                 <td>{}</td></tr>",
                esc(&s.key),
                esc(&ran_with(s)),
                esc(&s.to_try),
                match &s.job_group {
                    Some(g) => format!("job group <code>{}</code>", esc(g)),
                    None => "the application".into(),
                },
                esc(&s.basis)
            );
        }
        o.push_str("</tbody></table>\n");
    }
    for c in &f.code {
        let _ = writeln!(
            o,
            "<p class=\"code\"><b>Code</b>: <code>{}</code> <span class=\"sub\">{}</span></p>",
            esc(&c.change),
            esc(&c.basis)
        );
    }
    o.push_str("</div>\n");
}

/// The settings to paste, as the text report has them.
fn settings(o: &mut String, a: &AppReport) {
    let block = paste_block(a);
    o.push_str("<section class=\"settings\">\n<h2>What to change</h2>\n");
    if block.is_empty() {
        o.push_str("<p class=\"empty\">No setting or code to change.</p>\n</section>\n");
        return;
    }
    let _ = writeln!(
        o,
        "<p class=\"note\">One value per property per scope, for every finding it serves; \
         settings of one job group are SQL session settings, set before its queries.</p>\n\
         <pre>{}</pre>\n</section>",
        esc(&block)
    );
}

/// What this page adds to the shared style.
const APP_CSS: &str = "
h3{font-size:16px;margin:18px 0 4px}
article.app+article.app{margin-top:40px;border-top:3px solid var(--line)}
.finding{margin:8px 0 12px;padding:6px 10px;border-left:3px solid var(--line)}
.finding .title{margin:0 0 2px;font-weight:600}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:1px 10px;margin:0;font-size:13px}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
table.advice{margin:6px 0}
table.advice code{word-break:normal;overflow-wrap:anywhere}
table.advice td:nth-child(3) code{white-space:nowrap}
.remedy,.code{font-size:13px;margin:4px 0}
pre{background:var(--band);padding:10px 12px;border-radius:6px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::SourceInfo;

    #[test]
    fn an_empty_report_is_a_page() {
        let r = Report {
            schema_version: 1,
            generator: "spark-exporter <x>".into(),
            source: SourceInfo {
                kind: "event_log".into(),
                inputs: vec!["a".into()],
                read_errors: 2,
            },
            applications: vec![],
        };
        let html = render_app_html(&r);
        assert!(html.starts_with("<!doctype html>"));
        assert!(html.contains("No application found."));
        assert!(html.contains("2 unreadable event-log line(s)"));
        assert!(html.contains("spark-exporter &lt;x&gt;"));
        assert!(!html.contains("<script"));
    }
}
