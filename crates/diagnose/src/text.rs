//! The report for a human: per application, its totals, where the time went, then the
//! findings most costly first, each with where, the numbers, the remedy and a UI link.

use std::fmt::Write;

use crate::report::{AppReport, Place, Report};

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
    let _ = writeln!(
        o,
        "   {} jobs, {} stage attempts, {} tasks; task time {:.1} s, of it GC {:.1} s",
        s.jobs, s.stages, s.tasks, s.task_seconds, s.gc_seconds
    );
    if let Some(u) = s.core_utilization {
        let _ = writeln!(
            o,
            "   cores: {:.0} core-s held, {:.0} used ({:.0}%)",
            s.allocated_core_seconds,
            s.used_core_seconds,
            u * 100.0
        );
    }
    if !a.bottlenecks.is_empty() {
        o.push_str("\nWhere the time went (stages by task time):\n");
        for (i, b) in a.bottlenecks.iter().enumerate() {
            let wall = b
                .duration_seconds
                .map(|d| format!(", {d:.1} s wall"))
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  {}. {}: {:.1} s task time ({:.0}%){wall}",
                i + 1,
                place(&b.at),
                b.task_seconds,
                b.share * 100.0
            );
        }
    }
    if a.findings.is_empty() {
        o.push_str("\nNo findings.\n\n");
        return;
    }
    o.push_str("\nFindings, most costly first:\n");
    for (i, f) in a.findings.iter().enumerate() {
        let _ = writeln!(
            o,
            "\n  {}. [{}] {}  (cost {:.1} s)",
            i + 1,
            f.kind.as_str(),
            f.title,
            f.cost_seconds
        );
        let at = place(&f.at);
        if !at.is_empty() {
            let _ = writeln!(o, "     where:   {at}");
        }
        let nums: Vec<String> = f
            .numbers
            .iter()
            .map(|(k, v)| format!("{k}={}", num(*v)))
            .collect();
        let _ = writeln!(o, "     numbers: {}", nums.join(" "));
        let _ = writeln!(o, "     remedy:  {}", f.remedy);
        if let Some(u) = &f.url {
            let _ = writeln!(o, "     ui:      {u}");
        }
    }
    o.push('\n');
}

/// `group "g" / "description", stage 3.0 (name), SQL execution 7, query q`.
fn place(p: &Place) -> String {
    let mut parts = vec![];
    if let Some(g) = &p.job_group {
        let d = p.description.as_deref().unwrap_or("");
        parts.push(format!("group {g:?} / {d:?}"));
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

/// A number: integers without decimals, others with up to 3.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
