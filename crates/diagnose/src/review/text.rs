//! The review for a human: what was read and skipped, then the names' and the job groups'
//! tables (a row per kind, aligned) and the worst runs, every cost with its kind and unit.

use std::fmt::Write;

use super::ranking::{KindCost, Review};

/// The review for a human: what was read, then the names, the job groups and the worst runs,
/// each as an aligned table, every cost with its kind and unit.
pub fn render(r: &Review) -> String {
    let mut o = String::new();
    let c = &r.counts;
    let _ = writeln!(
        o,
        "Review of {} ({}): {} reviewed ({} running), {} left out by filters, {} skipped as \
         unreadable",
        r.source.inputs.join(", "),
        r.source.kind.replace('_', " "),
        plural(c.reviewed, "application", "applications"),
        c.running,
        c.filtered,
        c.failed,
    );
    if c.read_errors > 0 {
        let _ = writeln!(
            o,
            "note: {} unreadable event-log line(s), block(s) or file(s) inside the reviewed logs \
             were skipped",
            c.read_errors
        );
    }
    if let Some(cur) = &r.currency {
        let _ = writeln!(
            o,
            "Money in {cur}: an estimate, each finding's core time at its application's core-hour \
             price{}",
            if c.unpriced > 0 {
                format!(
                    " ({} with no price, no money)",
                    plural(c.unpriced, "application", "applications")
                )
            } else {
                String::new()
            }
        );
    }
    for f in &r.failures {
        let _ = writeln!(o, "skipped: {}: {}", f.input, f.error);
    }
    if (c.failed as usize) > r.failures.len() {
        let _ = writeln!(o, "skipped: {} more", c.failed as usize - r.failures.len());
    }
    let _ = writeln!(
        o,
        "\nCosts are per kind (the time a kind's findings explain, in its unit). Costs of \
         different kinds overlap (a skewed stage that spills counts in both): never add them up. \
         Rows are ranked by their costliest kind{}.",
        if r.currency.is_some() {
            ", in money"
        } else {
            ""
        }
    );
    o.push_str("\nApplication names, the costliest first:\n");
    let money = r.currency.is_some();
    let mut t = Table::new(
        &["name", "runs", "findings", "kind", "n", "cost", "unit"],
        money,
    );
    for n in &r.names {
        t.rows_of(
            &[
                n.app_name.clone(),
                n.runs.to_string(),
                n.findings.to_string(),
            ],
            &n.kinds,
        );
    }
    t.render(&mut o);
    o.push_str("\nJob groups, the costliest first (runs: with a finding in the group):\n");
    let mut t = Table::new(
        &[
            "name",
            "job group",
            "runs",
            "findings",
            "kind",
            "n",
            "cost",
            "unit",
        ],
        money,
    );
    for g in &r.groups {
        t.rows_of(
            &[
                g.app_name.clone(),
                format!("{:?}", g.job_group),
                g.runs.to_string(),
                g.findings.to_string(),
            ],
            &g.kinds,
        );
    }
    t.render(&mut o);
    settings(&mut o, r);
    worst_runs(&mut o, r);
    o
}

/// Settings listed per name.
const SETTINGS_PER_NAME: usize = 5;

/// The settings most worth changing, per name: each with the runs it was suggested in and the
/// cost of the findings it serves.
fn settings(o: &mut String, r: &Review) {
    let names: Vec<_> = r.names.iter().filter(|n| !n.settings.is_empty()).collect();
    if names.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nSettings most worth changing, per application name (the cost of the findings each \
         serves, over its runs; at most {SETTINGS_PER_NAME} a name):"
    );
    for n in names {
        let _ = writeln!(o, "  {}:", n.app_name);
        for s in n.settings.iter().take(SETTINGS_PER_NAME) {
            let set = match &s.job_group {
                Some(g) => format!("[{g}] spark.conf.set({:?}, {:?})", s.key, s.to_try),
                None => format!("--conf {}={}", s.key, s.to_try),
            };
            let ran: Vec<&str> = s
                .ran_with
                .iter()
                .map(|v| v.as_deref().unwrap_or("unset"))
                .collect();
            let _ = writeln!(
                o,
                "    {set}  (ran with {}; {} of {} runs, {}, {}{})",
                ran.join(" or "),
                s.runs,
                n.runs,
                plural(s.findings, "finding", "findings"),
                cost(s.cost_seconds, &s.unit),
                in_money(s.money, r.currency.as_deref())
            );
        }
    }
}

/// The worst runs, each with its per-kind costs and top findings.
fn worst_runs(o: &mut String, r: &Review) {
    o.push_str("\nWorst runs, the costliest first:\n");
    for (i, run) in r.worst_runs.iter().enumerate() {
        let kinds: Vec<String> = run
            .kinds
            .iter()
            .map(|k| {
                format!(
                    "{} {}{}",
                    k.kind.as_str(),
                    cost(k.cost_seconds, &k.unit),
                    in_money(k.money, r.currency.as_deref())
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "  {}. {} ({}{}): {}",
            i + 1,
            run.app_name,
            run.app_id,
            if run.end_ms.is_none() {
                ", running"
            } else {
                ""
            },
            kinds.join("; ")
        );
        if let Some(w) = &run.what_if {
            let _ = writeln!(
                o,
                "     what if: it ran on {} executor(s); the fewest within 10% of the fastest \
                 predicted: {} (replay {:.1}% off)",
                w.executors,
                w.fewest_within_10pct
                    .map_or("-".to_string(), |n| n.to_string()),
                w.replay_error * 100.0
            );
        }
        for f in &run.top_findings {
            let unit = f.kind.rule().unit;
            let _ = writeln!(
                o,
                "     - [{}] {}  ({}{})",
                f.kind.as_str(),
                f.title,
                cost(f.cost_seconds, unit),
                in_money(f.money, r.currency.as_deref())
            );
        }
    }
    if r.worst_runs.is_empty() {
        o.push_str("  (no run with findings)\n");
    }
}

/// `, 12.34 EUR` with money, else nothing.
fn in_money(m: Option<f64>, currency: Option<&str>) -> String {
    match (m, currency) {
        (Some(m), Some(c)) => format!(", {} {c}", money_amount(m)),
        _ => String::new(),
    }
}

/// `0.000041`, `0.0123`, `12.34`, `1,234`: money with two decimals, two significant digits
/// below 0.01.
pub(super) fn money_amount(v: f64) -> String {
    if v >= 1000.0 {
        amount(v)
    } else if v >= 0.01 || v <= 0.0 {
        format!("{v:.2}")
    } else {
        let decimals = (1 - v.log10().floor() as i64).clamp(2, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// `n thing` or `n things`.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `12.3 task-seconds`, `1,234 core-seconds`, `no cost`.
pub(super) fn cost(v: f64, unit: &str) -> String {
    if v <= 0.0 {
        "no cost".into()
    } else {
        format!("{} {unit}", amount(v))
    }
}

/// `12.3`, `1,234`.
pub(super) fn amount(v: f64) -> String {
    if v < 100.0 {
        return format!("{v:.1}");
    }
    let s = (v.round() as u64).to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A text table: left-aligned text, right-aligned numbers, a row per kind of each entry (the
/// entry's own columns on its first row only).
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
    /// A money column after the unit.
    money: bool,
}

impl Table {
    fn new(head: &[&str], money: bool) -> Table {
        let mut head: Vec<String> = head.iter().map(ToString::to_string).collect();
        if money {
            head.push("money".into());
        }
        Table {
            head,
            rows: vec![],
            money,
        }
    }

    /// The rows of an entry with columns `own` and its kinds (one row per kind).
    fn rows_of(&mut self, own: &[String], kinds: &[KindCost]) {
        if kinds.is_empty() {
            let mut row = own.to_vec();
            row.extend(["-".to_string(), String::new(), String::new(), String::new()]);
            if self.money {
                row.push(String::new());
            }
            self.rows.push(row);
        }
        for (i, k) in kinds.iter().enumerate() {
            let mut row: Vec<String> = if i == 0 {
                own.to_vec()
            } else {
                vec![String::new(); own.len()]
            };
            row.push(k.kind.as_str().to_string());
            row.push(k.findings.to_string());
            if k.cost_seconds > 0.0 {
                row.push(amount(k.cost_seconds));
                row.push(k.unit.clone());
            } else {
                row.extend(["-".to_string(), "(no cost)".to_string()]);
            }
            if self.money {
                row.push(k.money.map(money_amount).unwrap_or_default());
            }
            self.rows.push(row);
        }
    }

    fn render(&self, o: &mut String) {
        if self.rows.is_empty() {
            o.push_str("  (none)\n");
            return;
        }
        let width = |i: usize| {
            self.rows
                .iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(self.head[i].len()))
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.head.len()).map(width).collect();
        // Numbers are right-aligned; names, kinds and units left.
        let numeric = |h: &str| matches!(h, "runs" | "findings" | "n" | "cost" | "money");
        let line = |cells: &[String], o: &mut String| {
            let mut s = String::from(" ");
            for (i, c) in cells.iter().enumerate() {
                let w = widths[i];
                if numeric(&self.head[i]) {
                    let _ = write!(s, " {c:>w$}");
                } else {
                    let _ = write!(s, " {c:<w$}");
                }
            }
            o.push_str(s.trim_end());
            o.push('\n');
        };
        line(&self.head, o);
        for r in &self.rows {
            line(r, o);
        }
    }
}
