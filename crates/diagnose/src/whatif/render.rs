//! The what-if for a human: one short table in the text report, and for the HTML page two
//! charts against the executor count, one of time and one of core-seconds (or money): different
//! units, never one axis.

use std::fmt::Write;

use super::types::{WhatIf, WhatIfRow};
use crate::page::{bar, esc, label, svg_open, W};

/// `12.3 s`, `4 min 5 s`.
fn secs(s: f64) -> String {
    crate::units::duration(s)
}

/// The row's executors, `dynamic (up to 6)` for dynamic allocation.
fn who(r: &WhatIfRow) -> String {
    if r.dynamic {
        format!("dynamic (up to {})", r.executors)
    } else {
        r.executors.to_string()
    }
}

/// The what-if as text: how close the replay came, the table, the answers, the notes.
pub fn text(w: &WhatIf) -> String {
    let currency = w.currency.as_deref();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nWhat if (the run replayed on other executor counts, from its event log):\n  the run: \
         {} executor{} x {} core{}, {}; replayed on them: {} ({:.1}% off{})",
        w.executors,
        if w.executors == 1 { "" } else { "s" },
        w.cores,
        if w.cores == 1 { "" } else { "s" },
        secs(w.real_seconds),
        secs(w.replayed_seconds),
        w.replay_error * 100.0,
        if w.trusted {
            ""
        } else {
            ": read the rows as rough"
        }
    );
    if !w.rows.is_empty() {
        let money = w.rows.iter().any(|r| r.money.is_some());
        let _ = writeln!(
            o,
            "  {:>18}  {:>12}  {:>14}{}",
            "executors",
            "time",
            "core-seconds",
            if money {
                format!("  {:>10}", currency.unwrap_or("money"))
            } else {
                String::new()
            }
        );
        for r in w.rows.iter().chain(&w.dynamic) {
            let mark = if !r.dynamic && r.executors == w.executors {
                " (the run's)"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "  {:>18}  {:>12}  {:>14.0}{}{mark}",
                who(r),
                secs(r.seconds),
                r.core_seconds,
                r.money.map_or(String::new(), |m| format!("  {m:>10.4}"))
            );
        }
    }
    if let Some(n) = w.fewest_within_10pct {
        let _ = writeln!(o, "  fewest executors within 10% of the fastest: {n}");
    }
    if let Some(t) = w.target_seconds {
        match w.cheapest_within_target {
            Some(n) => {
                let _ = writeln!(o, "  cheapest within {}: {n} executors", secs(t));
            }
            None => {
                let _ = writeln!(o, "  no executor count predicted within {}", secs(t));
            }
        }
    }
    for n in &w.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

/// The what-if's section of the HTML page: the replay, then time and core-seconds (or money)
/// against executors, each its own chart.
pub fn html(o: &mut String, w: &WhatIf) {
    let currency = w.currency.as_deref();
    let _ = writeln!(
        o,
        "<section class=\"what-if\">\n<h2>What if: other executor counts</h2>\n<p class=\"note\">\
         The run: {} executor(s) × {} core(s), {}. Replayed on them by the simulation: {} \
         ({:.1}% off{}).</p>",
        w.executors,
        w.cores,
        esc(&secs(w.real_seconds)),
        esc(&secs(w.replayed_seconds)),
        w.replay_error * 100.0,
        if w.trusted {
            ""
        } else {
            ": read the charts as rough"
        }
    );
    let rows: Vec<&WhatIfRow> = w.rows.iter().chain(&w.dynamic).collect();
    if rows.is_empty() {
        for n in &w.notes {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
        }
        o.push_str("</section>\n");
        return;
    }
    let money = currency.filter(|_| rows.iter().all(|r| r.money.is_some()));
    chart(
        o,
        &rows,
        w,
        "what-if-time",
        "seconds",
        "Predicted time",
        |r| (r.seconds, secs(r.seconds)),
    );
    match money {
        Some(c) => chart(o, &rows, w, "what-if-cost", c, "Predicted cost", |r| {
            let m = r.money.unwrap_or(0.0);
            (m, format!("{m:.4} {c}"))
        }),
        None => chart(
            o,
            &rows,
            w,
            "what-if-cost",
            "core-seconds",
            "Predicted core-seconds held",
            |r| {
                (
                    r.core_seconds,
                    format!("{:.0} core-seconds", r.core_seconds),
                )
            },
        ),
    }
    let mut answers = vec![];
    if let Some(n) = w.fewest_within_10pct {
        answers.push(format!(
            "fewest executors within 10% of the fastest: <b>{n}</b>"
        ));
    }
    if let (Some(t), Some(n)) = (w.target_seconds, w.cheapest_within_target) {
        answers.push(format!("cheapest within {}: <b>{n}</b>", esc(&secs(t))));
    }
    if !answers.is_empty() {
        let _ = writeln!(o, "<p>{}</p>", answers.join("; "));
    }
    for n in &w.notes {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
    }
    o.push_str("</section>\n");
}

/// One chart: a bar per row, of `value`.
fn chart(
    o: &mut String,
    rows: &[&WhatIfRow],
    w: &WhatIf,
    id: &str,
    unit: &str,
    what: &str,
    value: impl Fn(&WhatIfRow) -> (f64, String),
) {
    let _ = writeln!(o, "<h3>{} by executor count</h3>", esc(what));
    let row = 22.0;
    let h = 8.0 + row * rows.len() as f64;
    svg_open(o, id, unit, h, &format!("{what} by executor count"));
    let (x0, x1) = (200.0, W - 200.0);
    let max = rows
        .iter()
        .map(|r| value(r).0)
        .fold(0.0, f64::max)
        .max(1e-9);
    for (i, r) in rows.iter().enumerate() {
        let (v, text) = value(r);
        let y = 4.0 + row * i as f64;
        let wd = (x1 - x0) * v / max;
        let own = !r.dynamic && r.executors == w.executors;
        let name = format!(
            "{} executors{}",
            who(r),
            if own { " (the run's)" } else { "" }
        );
        label(o, x0 - 8.0, y + 14.0, "end", "kind", &name);
        let fill = if own { "#D55E00" } else { "#0072B2" };
        bar(
            o,
            x0,
            y + 3.0,
            wd,
            row - 7.0,
            fill,
            &format!("{name}: {text}"),
        );
        label(o, x0 + wd.max(1.0) + 6.0, y + 14.0, "start", "value", &text);
    }
    o.push_str("</svg>\n");
}
