//! The review as one self-contained HTML page (`--format html`): inline CSS and SVG, no script,
//! no font, image or request from elsewhere, so it opens from a file or a mail attachment,
//! fits a laptop's screen and prints on A4.
//!
//! Its charts: the cost by kind over every application reviewed, the top application names
//! with their costliest kinds, and the stage timeline of the worst run; then the tables of the
//! text. Every chart is an `<svg class="chart" data-chart="…">` whose bars are `rect.bar`, with
//! a `<title>` each (the browser's tooltip): the tests count them as Chromium draws them.

use std::fmt::Write;

use super::ranking::{KindCost, NameRow, Review, Run, StageSpan};
use super::text::{amount, cost, money_amount};
use crate::page::{bar, close, colour, cut, esc, label, open, rfc3339, span, svg_open, W};
use crate::report::Kind;

/// Top names charted (the table lists them all).
const CHART_NAMES: usize = 10;

/// Kinds charted per name.
const CHART_KINDS_PER_NAME: usize = 3;

/// Stage attempts on the worst run's timeline: its longest (the JSON holds up to 200).
const CHART_STAGES: usize = 60;

/// Job groups listed in the page's table.
const TABLE_GROUPS: usize = 40;

/// `1,234 task-seconds · 12.34 EUR`.
fn cost_text(seconds: f64, unit: &str, money: Option<f64>, currency: Option<&str>) -> String {
    let mut t = cost(seconds, unit);
    if let (Some(m), Some(c)) = (money, currency) {
        let _ = write!(t, " · {} {c}", money_amount(m));
    }
    t
}

/// What a chart's bar measures: money in a priced review, else seconds of the kind's unit.
fn measure(k: &KindCost) -> f64 {
    k.money.unwrap_or(k.cost_seconds)
}

/// The review as a self-contained HTML page.
pub fn render_html(r: &Review) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let cur = r.currency.as_deref();
    let title = format!("Spark review of {}", inputs(&r.source.inputs));
    open(&mut o, &title, "");
    header(&mut o, r);
    let _ = writeln!(
        o,
        "<p class=\"note\">Costs are per finding kind: the time a kind's findings explain, in \
         its unit{}. Costs of different kinds overlap (a skewed stage that spills counts in \
         both): never add them up. Rows are ranked by their costliest kind{}.</p>",
        if cur.is_some() {
            ", and its money, an estimate: each finding's core time at its application's \
             core-hour price"
        } else {
            ""
        },
        if cur.is_some() { ", in money" } else { "" }
    );
    cost_by_kind(&mut o, r);
    top_names(&mut o, r);
    match r.worst_runs.first() {
        Some(run) => {
            timeline(&mut o, run, cur);
            if let Some(w) = &run.what_if {
                crate::whatif::render::html(&mut o, w);
            }
        }
        None => o.push_str(
            "<section id=\"timeline\"><h2>Stage timeline of the worst run</h2>\
             <p class=\"empty\">No run with findings.</p></section>\n",
        ),
    }
    tables(&mut o, r);
    close(
        &mut o,
        &r.generator,
        "diagnose --review --format html",
        "review",
        "diagnose-review",
        r.schema_version,
    );
    o
}

/// The title, what was read and the counts.
fn header(o: &mut String, r: &Review) {
    let c = &r.counts;
    let _ = write!(
        o,
        "<header>\n<h1>Spark applications: the review</h1>\n<p class=\"source\">{} of <b>{}</b>",
        if r.source.kind == "rest" {
            "History Server"
        } else {
            "Event logs"
        },
        esc(&inputs(&r.source.inputs))
    );
    let mut filters = vec![];
    if let Some(ms) = r.source.since_ms {
        filters.push(format!("ended since {}", esc(&rfc3339(ms))));
    }
    if let Some(n) = &r.source.app_name {
        filters.push(format!("names matching <code>{}</code>", esc(n)));
    }
    if let Some(g) = &r.source.job_group {
        filters.push(format!("job groups matching <code>{}</code>", esc(g)));
    }
    if !filters.is_empty() {
        let _ = write!(o, "; {}", filters.join(", "));
    }
    o.push_str("</p>\n<dl class=\"counts\">\n");
    let findings: u64 = r.names.iter().map(|n| n.findings).sum();
    let mut card = |label: &str, v: String| {
        let _ = writeln!(o, "<div><dt>{label}</dt><dd>{v}</dd></div>");
    };
    card("applications reviewed", c.reviewed.to_string());
    card("still running", c.running.to_string());
    card("application names", r.names.len().to_string());
    card("findings", findings.to_string());
    card("left out by filters", c.filtered.to_string());
    card("skipped as unreadable", c.failed.to_string());
    if let Some(cur) = &r.currency {
        card("currency", esc(cur));
    }
    o.push_str("</dl>\n");
    if c.read_errors > 0 {
        let _ = writeln!(
            o,
            "<p class=\"warn\">{} unreadable event-log line(s), block(s) or file(s) inside the \
             reviewed logs were skipped.</p>",
            c.read_errors
        );
    }
    if c.unpriced > 0 {
        let _ = writeln!(
            o,
            "<p class=\"warn\">{} application(s) had no price: their findings carry no money.</p>",
            c.unpriced
        );
    }
    if !r.failures.is_empty() {
        o.push_str("<details class=\"warn\"><summary>Skipped inputs</summary><ul>\n");
        for f in &r.failures {
            let _ = writeln!(
                o,
                "<li><code>{}</code>: {}</li>",
                esc(&f.input),
                esc(&f.error)
            );
        }
        if (c.failed as usize) > r.failures.len() {
            let _ = writeln!(o, "<li>{} more</li>", c.failed as usize - r.failures.len());
        }
        o.push_str("</ul></details>\n");
    }
    o.push_str("</header>\n");
}

/// The inputs, the first three named: `a, b, c and 14 more`.
fn inputs(v: &[String]) -> String {
    match v.len() {
        0..=3 => v.join(", "),
        n => format!("{} and {} more", v[..3].join(", "), n - 3),
    }
}

/// The axis a kind's cost is drawn on: its money's currency in a priced review, else its unit.
/// Costs of different axes never share a chart.
fn axis<'a>(k: &'a KindCost, cur: Option<&'a str>) -> &'a str {
    match (k.money, cur) {
        (Some(_), Some(c)) => c,
        _ => &k.unit,
    }
}

/// The axes of `kinds`, each once, in order of first appearance.
fn axes<'a>(kinds: impl Iterator<Item = &'a KindCost>, cur: Option<&'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = vec![];
    for k in kinds {
        let a = axis(k, cur);
        if !v.contains(&a) {
            v.push(a);
        }
    }
    v
}

/// Cost by kind over every application reviewed: a bar per kind, a chart per axis.
fn cost_by_kind(o: &mut String, r: &Review) {
    let cur = r.currency.as_deref();
    // A kind's total over the names (each finding is in exactly one name's row).
    let mut totals: Vec<KindCost> = vec![];
    for n in &r.names {
        for k in &n.kinds {
            match totals.iter_mut().find(|t| t.kind == k.kind) {
                Some(t) => {
                    t.findings += k.findings;
                    t.cost_seconds += k.cost_seconds;
                    t.money = t.money.map(|m| m + k.money.unwrap_or(0.0));
                }
                None => totals.push(k.clone()),
            }
        }
    }
    totals.sort_by(|a, b| measure(b).total_cmp(&measure(a)).then(a.kind.cmp(&b.kind)));
    o.push_str("<section id=\"cost-by-kind\">\n<h2>Cost by kind</h2>\n");
    if totals.is_empty() {
        o.push_str("<p class=\"empty\">No findings.</p>\n</section>\n");
        return;
    }
    let all = axes(totals.iter(), cur);
    for a in &all {
        let mine: Vec<&KindCost> = totals.iter().filter(|k| axis(k, cur) == *a).collect();
        if all.len() > 1 {
            let _ = writeln!(o, "<h3>In {}</h3>", esc(a));
        }
        kind_bars(o, &mine, a, cur);
    }
    o.push_str("</section>\n");
}

/// One chart of `kinds`, all of axis `a`: a bar per kind.
fn kind_bars(o: &mut String, kinds: &[&KindCost], a: &str, cur: Option<&str>) {
    let row = 26.0;
    let h = 10.0 + row * kinds.len() as f64;
    svg_open(
        o,
        "cost-by-kind",
        a,
        h,
        &format!("Cost of the findings by kind, in {a}"),
    );
    let (x0, x1) = (180.0, W - 300.0);
    let max = kinds
        .iter()
        .map(|k| measure(k))
        .fold(0.0, f64::max)
        .max(1e-9);
    for (i, k) in kinds.iter().enumerate() {
        let y = 5.0 + row * i as f64;
        let w = (x1 - x0) * measure(k) / max;
        let text = format!(
            "{} · {} finding{}",
            cost_text(k.cost_seconds, &k.unit, k.money, cur),
            k.findings,
            if k.findings == 1 { "" } else { "s" }
        );
        label(o, x0 - 8.0, y + 15.0, "end", "kind", k.kind.as_str());
        bar(
            o,
            x0,
            y + 3.0,
            w,
            row - 8.0,
            colour(k.kind),
            &format!("{}: {text}", k.kind.as_str()),
        );
        label(o, x0 + w.max(1.0) + 6.0, y + 15.0, "start", "value", &text);
    }
    o.push_str("</svg>\n");
}

/// The top names, each with its costliest kinds: a chart per axis, one scale each.
fn top_names(o: &mut String, r: &Review) {
    let cur = r.currency.as_deref();
    let names: Vec<_> = r.names.iter().filter(|n| !n.kinds.is_empty()).collect();
    let _ = write!(
        o,
        "<section id=\"top-names\">\n<h2>Top application names</h2>\n<p class=\"note\">The \
         {CHART_NAMES} costliest names at most (of {}), each with its {CHART_KINDS_PER_NAME} \
         costliest kinds, over all their runs.</p>\n",
        r.names.len(),
    );
    if names.is_empty() {
        o.push_str("<p class=\"empty\">No findings.</p>\n</section>\n");
        return;
    }
    let all = axes(names.iter().flat_map(|n| n.kinds.iter()), cur);
    for a in &all {
        let rows: Vec<(&NameRow, Vec<&KindCost>)> = names
            .iter()
            .map(|n| {
                let k: Vec<&KindCost> = n
                    .kinds
                    .iter()
                    .filter(|k| axis(k, cur) == *a)
                    .take(CHART_KINDS_PER_NAME)
                    .collect();
                (*n, k)
            })
            .filter(|(_, k)| !k.is_empty())
            .take(CHART_NAMES)
            .collect();
        if all.len() > 1 {
            let _ = writeln!(o, "<h3>In {}</h3>", esc(a));
        }
        name_bars(o, &rows, a, cur);
    }
    o.push_str("</section>\n");
}

/// One chart of the top names' kinds, all of axis `a`.
fn name_bars(o: &mut String, rows: &[(&NameRow, Vec<&KindCost>)], a: &str, cur: Option<&str>) {
    let bar_h = 14.0;
    let heights: Vec<f64> = rows
        .iter()
        .map(|(_, k)| (12.0 + bar_h * k.len() as f64).max(36.0))
        .collect();
    let h = 8.0 + heights.iter().sum::<f64>();
    svg_open(
        o,
        "top-names",
        a,
        h,
        &format!("The costliest application names by kind, in {a}"),
    );
    let (x0, x1) = (260.0, W - 300.0);
    let max = rows
        .iter()
        .flat_map(|(_, k)| k.iter().map(|k| measure(k)))
        .fold(0.0, f64::max)
        .max(1e-9);
    let mut y = 6.0;
    for ((n, kinds), hgt) in rows.iter().zip(&heights) {
        label(o, x0 - 8.0, y + 14.0, "end", "name", &cut(&n.app_name, 36));
        label(
            o,
            x0 - 8.0,
            y + 27.0,
            "end",
            "sub",
            &format!("{} run{}", n.runs, if n.runs == 1 { "" } else { "s" }),
        );
        for (i, k) in kinds.iter().enumerate() {
            let by = y + 4.0 + bar_h * i as f64;
            let w = (x1 - x0) * measure(k) / max;
            let text = format!(
                "{} {}",
                k.kind.as_str(),
                cost_text(k.cost_seconds, &k.unit, k.money, cur)
            );
            bar(
                o,
                x0,
                by,
                w,
                bar_h - 3.0,
                colour(k.kind),
                &format!("{}: {text}", n.app_name),
            );
            label(o, x0 + w.max(1.0) + 6.0, by + 10.0, "start", "value", &text);
        }
        y += hgt;
        let _ = writeln!(
            o,
            "<line x1=\"0\" x2=\"{W}\" y1=\"{:.1}\" y2=\"{:.1}\" class=\"rule\"/>",
            y - 2.0,
            y - 2.0
        );
    }
    o.push_str("</svg>\n");
}

/// `skew 12.3 task-seconds · 0.01 EUR; spill …`: a run's per-kind costs.
fn kinds_text(kinds: &[KindCost], cur: Option<&str>) -> String {
    kinds
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                k.kind.as_str(),
                cost_text(k.cost_seconds, &k.unit, k.money, cur)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Where a time of the timeline is drawn: `t0..t1` onto `x0..x1`.
#[derive(Clone, Copy)]
struct Axis {
    t0: i64,
    t1: i64,
    x0: f64,
    x1: f64,
}

impl Axis {
    fn x(self, t: i64) -> f64 {
        self.x0 + (self.x1 - self.x0) * (t - self.t0) as f64 / (self.t1 - self.t0) as f64
    }

    /// Five ticks from the run's start, as gridlines from `top` to `bottom`.
    fn draw(self, o: &mut String, top: f64, bottom: f64) {
        for i in 0..=4 {
            let t = self.t0 + (self.t1 - self.t0) * i / 4;
            let xi = self.x(t);
            let _ = writeln!(
                o,
                "<line x1=\"{xi:.1}\" x2=\"{xi:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" \
                    class=\"grid\"/>"
            );
            let anchor = match i {
                0 => "start",
                4 => "end",
                _ => "middle",
            };
            let t = format!("+{}", span((t - self.t0) as f64));
            label(o, xi, 12.0, anchor, "sub", &t);
        }
    }
}

/// The stage attempts a timeline draws: the [`CHART_STAGES`] longest with both ends, by
/// start, and how many of the run's attempts are not drawn.
fn drawn_stages(run: &Run) -> (Vec<&StageSpan>, u64) {
    let mut stages: Vec<&StageSpan> = run
        .stages
        .iter()
        .filter(|s| s.start_ms.is_some() && s.end_ms.is_some())
        .collect();
    let dropped = (run.stages.len() - stages.len()) as u64
        + stages.len().saturating_sub(CHART_STAGES) as u64
        + run.stages_left_out;
    let wall = |s: &StageSpan| s.end_ms.unwrap_or(0) - s.start_ms.unwrap_or(0);
    stages.sort_by_key(|s| std::cmp::Reverse(wall(s)));
    stages.truncate(CHART_STAGES);
    stages.sort_by_key(|s| (s.start_ms, s.stage_id, s.attempt));
    (stages, dropped)
}

/// The stage timeline of `run`: a bar per stage attempt from its submission to its completion,
/// coloured by its findings' kind (grey without), failed attempts outlined.
fn timeline(o: &mut String, run: &Run, cur: Option<&str>) {
    let _ =
        writeln!(
        o,
        "<section id=\"timeline\">\n<h2>Stage timeline of the worst run</h2>\n<p class=\"note\">\
         <b>{}</b> (<code>{}</code>{}): {}.</p>",
        esc(&run.app_name),
        esc(&run.app_id),
        if run.end_ms.is_none() { ", running" } else { "" },
        esc(&kinds_text(&run.kinds, cur))
    );
    let (stages, dropped) = drawn_stages(run);
    if stages.is_empty() {
        o.push_str("<p class=\"empty\">No stage with a start and an end.</p>\n</section>\n");
        return;
    }
    let t0 = run
        .start_ms
        .into_iter()
        .chain(stages.iter().filter_map(|s| s.start_ms))
        .min()
        .unwrap_or(0);
    let t1 = run
        .end_ms
        .into_iter()
        .chain(stages.iter().filter_map(|s| s.end_ms))
        .max()
        .unwrap_or(t0)
        .max(t0 + 1);
    let (row, top) = (13.0, 22.0);
    let h = top + row * stages.len() as f64 + 8.0;
    svg_open(o, "timeline", "time", h, "Stage timeline of the worst run");
    let axis = Axis {
        t0,
        t1,
        x0: 70.0,
        x1: W - 20.0,
    };
    axis.draw(o, top - 4.0, h - 4.0);
    for (i, s) in stages.iter().enumerate() {
        let y = top + row * i as f64;
        let (a, b) = (s.start_ms.unwrap_or(t0), s.end_ms.unwrap_or(t0));
        let kinds: Vec<&str> = s.kinds.iter().map(|k| k.as_str()).collect();
        let tip = format!(
            "stage {}.{} {}: {}, {}, {} tasks, {:.1} task-seconds{}",
            s.stage_id,
            s.attempt,
            s.name,
            s.status,
            span((b - a) as f64),
            s.tasks,
            s.task_seconds,
            if kinds.is_empty() {
                String::new()
            } else {
                format!("; findings: {}", kinds.join(", "))
            }
        );
        let id = format!("{}.{}", s.stage_id, s.attempt);
        label(o, axis.x0 - 6.0, y + 9.5, "end", "sub", &id);
        let fill = s.kinds.first().map_or(NO_FINDING, |k| colour(*k));
        let (xa, w) = (axis.x(a), axis.x(b) - axis.x(a));
        bar(o, xa, y + 1.0, w, row - 3.0, fill, &tip);
        if s.status == "failed" {
            let _ = writeln!(
                o,
                "<rect class=\"failed\" x=\"{xa:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
                    height=\"{:.1}\"/>",
                y + 1.0,
                w.max(1.0),
                row - 3.0
            );
        }
    }
    o.push_str("</svg>\n");
    legend(o, &stages, dropped);
    o.push_str("</section>\n");
}

/// The grey of a stage attempt without findings.
const NO_FINDING: &str = "#9AA5B1";

/// The timeline's legend: the kinds drawn, no finding, failed, and what was left out.
fn legend(o: &mut String, stages: &[&StageSpan], dropped: u64) {
    o.push_str("<p class=\"legend\">");
    let mut seen: Vec<Kind> = stages.iter().flat_map(|s| s.kinds.clone()).collect();
    seen.sort();
    seen.dedup();
    for k in seen {
        let _ = write!(
            o,
            "<span><i style=\"background:{}\"></i>{}</span> ",
            colour(k),
            k.as_str()
        );
    }
    let _ = write!(
        o,
        "<span><i style=\"background:{NO_FINDING}\"></i>no finding</span> \
         <span><i class=\"failed\"></i>failed attempt</span>"
    );
    if dropped > 0 {
        let _ = write!(o, " <span>({dropped} other attempts not drawn)</span>");
    }
    o.push_str("</p>\n");
}

/// The cells of one kind of a row: kind, findings, cost, unit (and money).
fn kind_cells(o: &mut String, k: &KindCost, cur: Option<&str>) {
    let _ = write!(
        o,
        "<td><i style=\"background:{}\"></i>{}</td><td class=\"n\">{}</td>\
         <td class=\"n\">{}</td><td>{}</td>",
        colour(k.kind),
        k.kind.as_str(),
        k.findings,
        if k.cost_seconds > 0.0 {
            amount(k.cost_seconds)
        } else {
            "-".into()
        },
        esc(&k.unit)
    );
    if cur.is_some() {
        let _ = write!(
            o,
            "<td class=\"n\">{}</td>",
            k.money.map(money_amount).unwrap_or_default()
        );
    }
}

/// A table's rows: per entry, its own cells (spanning its kinds' rows), then a row per kind.
fn kind_rows(o: &mut String, own: &[String], kinds: &[KindCost], cur: Option<&str>) {
    let span = kinds.len().max(1);
    o.push_str("<tr class=\"first\">");
    for c in own {
        let _ = write!(o, "<td rowspan=\"{span}\"{c}</td>");
    }
    if kinds.is_empty() {
        let _ = writeln!(
            o,
            "<td colspan=\"{}\">no findings</td></tr>",
            4 + usize::from(cur.is_some())
        );
    }
    for (i, k) in kinds.iter().enumerate() {
        if i > 0 {
            o.push_str("<tr>");
        }
        kind_cells(o, k, cur);
        o.push_str("</tr>\n");
    }
}

/// The names', the job groups' and the worst runs' tables, as the text has them.
fn tables(o: &mut String, r: &Review) {
    let cur = r.currency.as_deref();
    let money_col = cur.map_or(String::new(), |c| {
        format!("<th class=\"n\">{}</th>", esc(c))
    });
    let _ = writeln!(
        o,
        "<section id=\"names\">\n<h2>Application names</h2>\n<table>\n<thead><tr><th>name</th>\
         <th class=\"n\">runs</th><th class=\"n\">findings</th><th>kind</th><th class=\"n\">n</th>\
         <th class=\"n\">cost</th><th>unit</th>{money_col}</tr></thead>\n<tbody>"
    );
    // Each cell's text after its `<td rowspan="…"`: the attributes' end and the content.
    let num = |n: u64| format!(" class=\"n\">{n}");
    for n in &r.names {
        let own = [
            format!(">{}", esc(&n.app_name)),
            num(n.runs),
            num(n.findings),
        ];
        kind_rows(o, &own, &n.kinds, cur);
    }
    o.push_str("</tbody></table>\n</section>\n");
    let _ = writeln!(
        o,
        "<section id=\"groups\">\n<h2>Job groups</h2>\n<p class=\"note\">Runs: with a finding in \
         the group. The application-wide kinds have no group: they are in the names' table only.\
         {}</p>\n<table>\n<thead><tr><th>name</th><th>job group</th><th class=\"n\">runs</th>\
         <th class=\"n\">findings</th><th>kind</th><th class=\"n\">n</th><th class=\"n\">cost</th>\
         <th>unit</th>{money_col}</tr></thead>\n<tbody>",
        if r.groups.len() > TABLE_GROUPS {
            format!(
                " The {TABLE_GROUPS} costliest of {} (the JSON has them all).",
                r.groups.len()
            )
        } else {
            String::new()
        }
    );
    for g in r.groups.iter().take(TABLE_GROUPS) {
        let own = [
            format!(">{}", esc(&g.app_name)),
            format!("><code>{}</code>", esc(&g.job_group)),
            num(g.runs),
            num(g.findings),
        ];
        kind_rows(o, &own, &g.kinds, cur);
    }
    o.push_str("</tbody></table>\n</section>\n");
    settings(o, r);
    worst_runs(o, r);
}

/// The settings most worth changing, per name, as the text lists them.
fn settings(o: &mut String, r: &Review) {
    let cur = r.currency.as_deref();
    let rows: Vec<_> = r
        .names
        .iter()
        .flat_map(|n| n.settings.iter().take(5).map(move |s| (n, s)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let money_col = cur.map_or(String::new(), |c| {
        format!("<th class=\"n\">{}</th>", esc(c))
    });
    let _ = writeln!(
        o,
        "<section id=\"settings\">\n<h2>Settings most worth changing</h2>\n<p class=\"note\">What \
         the runs' diagnoses suggested, per application name (at most 5 a name): the cost of the \
         findings each serves, over the runs it was suggested in.</p>\n<table>\n<thead><tr>\
         <th>name</th><th>setting</th><th>try</th><th>for</th><th>ran with</th>\
         <th class=\"n\">runs</th><th class=\"n\">findings</th><th class=\"n\">cost</th>\
         <th>unit</th>{money_col}</tr></thead>\n<tbody>"
    );
    for (n, s) in rows {
        let ran: Vec<&str> = s
            .ran_with
            .iter()
            .map(|v| v.as_deref().unwrap_or("unset"))
            .collect();
        let _ =
            write!(
            o,
            "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td>\
             <td class=\"n\">{} of {}</td><td class=\"n\">{}</td><td \
                 class=\"n\">{}</td><td>{}</td>",
            esc(&n.app_name),
            esc(&s.key),
            esc(&s.to_try),
            s.job_group.as_ref().map_or("the application".into(), |g| format!(
                "job group <code>{}</code>",
                esc(g)
            )),
            esc(&ran.join(" or ")),
            s.runs,
            n.runs,
            s.findings,
            amount(s.cost_seconds),
            esc(&s.unit)
        );
        if cur.is_some() {
            let _ = write!(
                o,
                "<td class=\"n\">{}</td>",
                s.money.map(money_amount).unwrap_or_default()
            );
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody></table>\n</section>\n");
}

/// The worst runs, each with its per-kind costs and top findings.
fn worst_runs(o: &mut String, r: &Review) {
    let cur = r.currency.as_deref();
    o.push_str("<section id=\"worst-runs\">\n<h2>Worst runs</h2>\n<ol>\n");
    for run in &r.worst_runs {
        let _ = writeln!(
            o,
            "<li><b>{}</b> <code>{}</code>{}: {}<ul>",
            esc(&run.app_name),
            esc(&run.app_id),
            if run.end_ms.is_none() {
                " (running)"
            } else {
                ""
            },
            esc(&kinds_text(&run.kinds, cur))
        );
        for f in &run.top_findings {
            let _ = writeln!(
                o,
                "<li><i style=\"background:{}\"></i>[{}] {} <span class=\"sub\">({})</span></li>",
                colour(f.kind),
                f.kind.as_str(),
                esc(&f.title),
                esc(&cost_text(f.cost_seconds, f.kind.rule().unit, f.money, cur))
            );
        }
        o.push_str("</ul></li>\n");
    }
    if r.worst_runs.is_empty() {
        o.push_str("<li>No run with findings.</li>\n");
    }
    o.push_str("</ol>\n</section>\n");
}
