//! The status page at `/`: what a person opening the exporter in a browser wants to know. The
//! exporter (version, build, phase, readiness), its sources and their state (up or down, last
//! success, last error), the applications it follows (the newest [`MAX_APPS`]), its effective
//! configuration (secrets redacted, as `check-config` prints it) and links: the metrics, the
//! probes, and the documentation, dashboards and alert rules the binary carries ([`ASSETS`],
//! served under `/docs/`, `/dashboards/` and `/alerts/`). Behind the web config's
//! authentication like every path but the probes.

use std::fmt::Write;

use crate::clock::{system_now_ms, EpochMs};
use crate::config::Settings;
use crate::health::Health;
use crate::model::Model;
use crate::sources::PlaceStatus;

/// What the page reads: the server's handles, and its state.
pub struct Ctx<'a> {
    /// The configuration in effect.
    pub settings: &'a Settings,
    /// The sources' health.
    pub health: &'a Health,
    /// The model.
    pub model: &'a Model,
    /// The drain has begun.
    pub draining: bool,
    /// `/readyz` would answer 200.
    pub ready: bool,
}

/// Most applications listed; a fleet's others are counted, not listed.
pub const MAX_APPS: usize = 100;

/// A file the binary carries and serves: (path, content type, content).
pub type Asset = (&'static str, &'static str, &'static str);

const MD: &str = "text/markdown; charset=utf-8";
const JSON: &str = "application/json";
const YAML: &str = "application/yaml";

/// The documentation, dashboards and alert rules, as in the repository (a test keeps the list
/// complete).
pub const ASSETS: &[Asset] = &[
    (
        "/docs/metrics.md",
        MD,
        include_str!("../../docs/metrics.md"),
    ),
    (
        "/docs/configuration.md",
        MD,
        include_str!("../../docs/configuration.md"),
    ),
    (
        "/docs/runbook.md",
        MD,
        include_str!("../../docs/runbook.md"),
    ),
    (
        "/docs/diagnose.md",
        MD,
        include_str!("../../docs/diagnose.md"),
    ),
    (
        "/dashboards/spark-overview.json",
        JSON,
        include_str!("../../dashboards/spark-overview.json"),
    ),
    (
        "/dashboards/spark-jobs.json",
        JSON,
        include_str!("../../dashboards/spark-jobs.json"),
    ),
    (
        "/dashboards/spark-stages.json",
        JSON,
        include_str!("../../dashboards/spark-stages.json"),
    ),
    (
        "/dashboards/spark-executors.json",
        JSON,
        include_str!("../../dashboards/spark-executors.json"),
    ),
    (
        "/dashboards/spark-sql-streaming.json",
        JSON,
        include_str!("../../dashboards/spark-sql-streaming.json"),
    ),
    (
        "/dashboards/spark-diagnosis.json",
        JSON,
        include_str!("../../dashboards/spark-diagnosis.json"),
    ),
    (
        "/dashboards/spark-fleet.json",
        JSON,
        include_str!("../../dashboards/spark-fleet.json"),
    ),
    (
        "/dashboards/spark-efficiency.json",
        JSON,
        include_str!("../../dashboards/spark-efficiency.json"),
    ),
    (
        "/alerts/spark-exporter.rules.yml",
        YAML,
        include_str!("../../alerts/spark-exporter.rules.yml"),
    ),
];

/// The asset at `path`.
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.0 == path)
}

/// `<`, `>`, `&`, `"` escaped.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

/// `3 s ago`, `5 min ago`, `2 h ago`, `4 d ago`.
fn ago(then: EpochMs, now: EpochMs) -> String {
    let s = (now - then).max(0) / 1000;
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        7200..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}

/// `2026-12-02 10:26:45 UTC`.
fn when(ms: EpochMs) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = crate::sources::rest::convert::civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The page.
pub fn page(ctx: &Ctx<'_>) -> String {
    let now = system_now_ms();
    let s = &ctx.settings;
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>spark-exporter</title><style>\
         body{{font:14px/1.4 sans-serif;margin:1.5em;color:#1f2328}}\
         table{{border-collapse:collapse;margin:.5em 0}}\
         td,th{{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}}\
         th{{background:#f6f8fa}} .up{{color:#116329;font-weight:600}}\
         .down{{color:#cf222e;font-weight:600}} .wait{{color:#9a6700}}\
         pre{{background:#f6f8fa;padding:.8em;overflow:auto}}</style></head><body>\
         <h1>spark-exporter {}</h1>",
        esc(env!("CARGO_PKG_VERSION"))
    );
    let phase = if ctx.draining { "draining" } else { "serving" };
    let is_ready = ctx.ready;
    let startup = ctx.model.view(|v| v.startup_complete());
    let _ = write!(
        o,
        "<p id=\"exporter\">Build {} &middot; {phase} &middot; {} &middot; start-up read {}</p>",
        esc(env!("SE_BUILD_REVISION")),
        if is_ready { "ready" } else { "not ready" },
        if startup { "complete" } else { "in progress" },
    );
    let _ = write!(
        o,
        "<p><a href=\"{p}\">{p}</a> &middot; <a href=\"/healthz\">/healthz</a> &middot; \
         <a href=\"/readyz\">/readyz</a> &middot; <a \
             href=\"/readyz?complete\">/readyz?complete</a></p>",
        p = esc(&s.web.telemetry_path)
    );
    sources(&mut o, ctx, now);
    apps(&mut o, ctx, now);
    labels(&mut o, ctx);
    let _ = write!(
        o,
        "<h2>Configuration</h2><p>In effect, secrets redacted (as <code>spark-exporter \
         check-config</code> prints it; <code>--config.file</code> reads it back).</p>\
         <pre id=\"config\">{}</pre>",
        esc(&crate::config::print::yaml(s))
    );
    o.push_str("<h2>Documentation, dashboards, alerts</h2><ul id=\"links\">");
    for (path, ..) in ASSETS {
        let _ = write!(o, "<li><a href=\"{p}\">{p}</a></li>", p = esc(path));
    }
    o.push_str(
        "</ul><p>Import a dashboard in Grafana (Dashboards &rarr; New &rarr; Import); load the \
         rules file in Prometheus (<code>rule_files</code>); the runbook explains each alert.</p>\
         </body></html>\n",
    );
    o
}

fn sources(o: &mut String, ctx: &Ctx<'_>, now: EpochMs) {
    let list: Vec<PlaceStatus> = crate::sources::status(ctx.settings, ctx.health);
    places(o, "Sources", "sources", "source", &list, now);
    let outputs: Vec<PlaceStatus> = crate::sinks::status(ctx.settings, ctx.health);
    places(o, "Outputs", "sinks", "sink", &outputs, now);
}

/// A table of places (a source's targets and folders, a sink's destination) and their state.
fn places(o: &mut String, title: &str, id: &str, class: &str, list: &[PlaceStatus], now: EpochMs) {
    let _ = write!(o, "<h2>{title}</h2>");
    if list.is_empty() {
        let _ = write!(o, "<p id=\"{id}\">None configured.</p>");
        return;
    }
    let _ = write!(
        o,
        "<table id=\"{id}\"><tr><th>Kind</th><th>Where</th><th>State</th>\
         <th>Last success</th><th>Last error</th></tr>"
    );
    for src in list {
        let (state_class, state) = match src.state.up() {
            Some(true) => ("up", "up"),
            Some(false) => ("down", "down"),
            None => ("wait", "waiting for the first attempt"),
        };
        let ok = src
            .state
            .last_ok_ms
            .map(|t| format!("{} ({})", when(t), ago(t, now)))
            .unwrap_or_else(|| "never".into());
        let err = src
            .state
            .last_error
            .as_ref()
            .map(|(t, e)| format!("{}: {}", ago(*t, now), esc(e)))
            .unwrap_or_default();
        let _ = write!(
            o,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td class=\"{state_class}\">{state}</td>\
             <td>{ok}</td><td>{err}</td></tr>",
            src.title,
            esc(&src.place)
        );
    }
    o.push_str("</table>");
}

fn apps(o: &mut String, ctx: &Ctx<'_>, now: EpochMs) {
    struct Row {
        id: String,
        name: String,
        version: String,
        start: Option<EpochMs>,
        end: Option<EpochMs>,
        outcome: &'static str,
        groups: usize,
        running: usize,
    }
    let (mut rows, total) = ctx.model.view(|v| {
        let mut rows: Vec<Row> = v
            .apps()
            .filter(|a| !a.by_name())
            .map(|a| Row {
                id: a.id().to_string(),
                name: a.name().to_string(),
                version: a.spark_version().to_string(),
                start: a.start_ms(),
                end: a.end_ms(),
                outcome: a
                    .runs()
                    .iter()
                    .find(|(_, n)| *n > 0)
                    .map_or("", |(s, _)| *s),
                groups: a.group_count(),
                running: a.running_job_count(),
            })
            .collect();
        let total = rows.len();
        // The newest first: the running ones, then by start.
        rows.sort_by(|a, b| {
            (a.end.is_some(), std::cmp::Reverse(a.start), &a.id).cmp(&(
                b.end.is_some(),
                std::cmp::Reverse(b.start),
                &b.id,
            ))
        });
        (rows, total)
    });
    rows.truncate(MAX_APPS);
    let _ = write!(o, "<h2>Applications ({total})</h2>");
    if total == 0 {
        o.push_str("<p id=\"apps\">None yet.</p>");
        return;
    }
    o.push_str(
        "<table id=\"apps\"><tr><th>Application</th><th>Name</th><th>Spark</th><th>State</th>\
         <th>Started</th><th>Job groups</th><th>Jobs running</th></tr>",
    );
    for r in &rows {
        let state = match r.end {
            None => "running".to_string(),
            Some(e) if r.outcome.is_empty() => format!("ended {}", ago(e, now)),
            Some(e) => format!("ended {}, {}", ago(e, now), r.outcome),
        };
        let _ = write!(
            o,
            "<tr class=\"app\"><td>{}</td><td>{}</td><td>{}</td><td>{state}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&r.id),
            esc(&r.name),
            esc(&r.version),
            r.start.map(when).unwrap_or_default(),
            r.groups,
            r.running
        );
    }
    o.push_str("</table>");
    if total > rows.len() {
        let _ = write!(
            o,
            "<p>The newest {} of {total} are listed; <a href=\"{}\">the metrics</a> have every \
             one.</p>",
            rows.len(),
            esc(&ctx.settings.web.telemetry_path)
        );
    }
}

/// The label values the caps folded (`spark_exporter_label_overflow_total`): a value the
/// rewrite rules let through (an id in a job group) shows here first.
fn labels(o: &mut String, ctx: &Ctx<'_>) {
    let folded = ctx.model.telemetry().snapshot().label_overflow;
    let cap = ctx.settings.labels.max_values_per_label;
    o.push_str("<h2>Labels</h2>");
    if folded.is_empty() {
        let _ = write!(
            o,
            "<p id=\"labels\">No label value was folded into <code>__other__</code>: every label \
             holds at most {cap} values per application (<code>labels.max_values_per_label</code>).</p>"
        );
        return;
    }
    let _ = write!(
        o,
        "<p>Values past a label's {cap} per application (or per application name across runs) \
         were folded into <code>__other__</code> (<code>spark_exporter_label_overflow_total</code>): \
         a value that still holds an id or a count escaped the rewrite rules \
         (<code>labels.rewrite_rules</code>, docs/configuration.md).</p>\
         <table id=\"labels\"><tr><th>Label</th><th>Values folded</th></tr>"
    );
    for (label, n) in &folded {
        let _ = write!(o, "<tr><td>{}</td><td>{n}</td></tr>", esc(label));
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_dates() {
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(when(1_796_300_805_000), "2026-12-03 12:26:45 UTC");
        assert_eq!(ago(0, 5_000), "5 s ago");
        assert_eq!(ago(0, 600_000), "10 min ago");
        assert_eq!(
            esc("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    /// Every dashboard and rules file of the repository is served, and every asset is a file
    /// of it.
    #[test]
    fn every_dashboard_and_rules_file_is_served() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["dashboards", "alerts"] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                let served =
                    name.ends_with(".json") && dir == "dashboards" || name.ends_with(".rules.yml");
                if served {
                    let path = format!("/{dir}/{name}");
                    assert!(
                        asset(&path).is_some(),
                        "{path} is not served by the status page"
                    );
                }
            }
        }
        for (path, ..) in ASSETS {
            assert!(root.join(&path[1..]).is_file(), "{path}");
        }
    }
}
