//! What the HTML pages share (the review's, `review::render_html`, and one application's,
//! [`crate::app_html`]): escaping, the kinds' colours, SVG bars and labels, and the style. The
//! pages are self-contained: inline CSS and SVG, no script, no font, image or request from
//! elsewhere.
//!
//! A chart is an `<svg class="chart" data-chart="…" data-unit="…">` whose bars are `rect.bar`,
//! each with a `<title>` (the browser's tooltip). One chart has one unit: costs of different
//! units (task-seconds, core-seconds, money) are never drawn on one axis.

use std::fmt::Write;

use crate::report::Kind;

/// Width of every chart's coordinate system (scaled to the page's width).
pub const W: f64 = 960.0;

/// The colour of a kind: a palette readable by the colour-blind (Okabe and Ito's, then more),
/// by the kind's place in the procedure.
pub fn colour(k: Kind) -> &'static str {
    const PALETTE: [&str; 12] = [
        "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D31", "#332288",
        "#117733", "#AA4499", "#44AA99", "#882255",
    ];
    PALETTE[Kind::ALL.iter().position(|x| *x == k).unwrap_or(0) % PALETTE.len()]
}

/// Text made safe inside HTML and SVG, content or attribute.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// At most `n` characters of `s`, with `…` when cut.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut o: String = s.chars().take(n.saturating_sub(1)).collect();
        o.push('…');
        o
    }
}

/// A duration for an axis: `45 s`, `12 min`, `2.5 h`.
pub fn span(ms: f64) -> String {
    let s = ms / 1000.0;
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `2026-12-01T10:00:00Z`, from epoch ms (UTC, to the second).
pub fn rfc3339(ms: i64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// One horizontal bar with its tooltip.
pub fn bar(o: &mut String, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
    let _ = writeln!(
        o,
        "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\" \
         fill=\"{fill}\"><title>{}</title></rect>",
        w.max(1.0),
        esc(tip)
    );
}

/// Text at (x, y); `anchor`: `start`, `end` or `middle`.
pub fn label(o: &mut String, x: f64, y: f64, anchor: &str, class: &str, t: &str) {
    let _ = writeln!(
        o,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" class=\"{class}\">{}</text>",
        esc(t)
    );
}

/// A page's opening, to its `<main>`: `title`, the shared style and `css` after it.
pub fn open(o: &mut String, title: &str, css: &str) {
    let _ = write!(
        o,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}{css}</style>\n</head>\n<body>\n<main>\n",
        esc(title)
    );
}

/// A page's end: who made it with which command, and the same as JSON (`schema`, version).
pub fn close(
    o: &mut String,
    generator: &str,
    command: &str,
    what: &str,
    schema: &str,
    version: u32,
) {
    let _ = write!(
        o,
        "<footer>Made by {} (<code>{command}</code>). The same {what} as JSON: <code>--format \
         json</code>, schema <code>{schema}.v{version}</code>.</footer>\n</main>\n</body>\n</html>\n",
        esc(generator)
    );
}

/// The opening of a chart's SVG of height `h`, whose bars all measure `unit`.
pub fn svg_open(o: &mut String, chart: &str, unit: &str, h: f64, what: &str) {
    let _ = write!(
        o,
        "<svg class=\"chart\" data-chart=\"{chart}\" data-unit=\"{}\" viewBox=\"0 0 {W} {h:.0}\" \
         role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>{}</title>\n",
        esc(unit),
        esc(what),
        esc(what)
    );
}

/// The page's style: a column of at most 1,100 px, system fonts; on paper, A4 with the charts
/// kept whole.
pub const CSS: &str = "
:root{color-scheme:light;--fg:#1d2530;--muted:#5b6775;--line:#d8dee6;--bg:#fff;--band:#f4f6f9}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:19px;margin:28px 0 6px;padding-top:10px;border-top:1px solid var(--line)}
.source{margin:0 0 12px;color:var(--muted)}
.counts{display:flex;flex-wrap:wrap;gap:10px;margin:0 0 8px}
.counts div{background:var(--band);border-radius:6px;padding:6px 12px;min-width:120px}
.counts dt{font-size:12px;color:var(--muted)}
.counts dd{margin:0;font-size:20px;font-weight:600}
.note,.legend,footer{color:var(--muted);font-size:13px}
.warn{color:#8a4b00;font-size:13px}
.empty{color:var(--muted);font-style:italic}
svg.chart{display:block;width:100%;height:auto;margin:6px 0}
svg text{font-family:inherit;font-size:12px;fill:var(--fg)}
svg text.sub,svg text.value{fill:var(--muted);font-size:11px}
svg text.name{font-weight:600}
svg .grid{stroke:var(--line);stroke-width:1}
svg .rule{stroke:var(--band);stroke-width:1}
svg rect.failed{fill:none;stroke:#C00000;stroke-width:1.5}
.legend span{margin-right:12px;white-space:nowrap}
i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:baseline}
i.failed{border:1.5px solid #C00000;background:none}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid var(--band);vertical-align:top}
th{border-bottom:1px solid var(--line);color:var(--muted);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.first td{border-top:1px solid var(--line)}
code{font-size:12px;background:var(--band);padding:0 3px;border-radius:3px;word-break:break-all}
ol li{margin:6px 0}
ol ul{margin:2px 0 0;padding-left:18px;list-style:none}
footer{margin-top:32px;border-top:1px solid var(--line);padding-top:8px}
@media (max-width:700px){main{padding:12px}.counts div{min-width:0}}
@page{size:A4;margin:12mm}
@media print{body{font-size:10pt}main{max-width:none;padding:0}h2{break-after:avoid}
section{break-inside:avoid-page}svg.chart{break-inside:avoid}tr{break-inside:avoid}
details{display:block}details>*{display:block}}
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_dates_are_civil() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_981_136_444), "2026-11-29T19:38:56Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(span(45_000.0), "45 s");
        assert_eq!(span(720_000.0), "12 min");
    }
}
