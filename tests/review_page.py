#!/usr/bin/env python3
"""A diagnose HTML page as headless Chromium draws it: the review's (`diagnose --review --format
html`), with --app one application's (`diagnose --format html`), with --compare a comparison's
(`diagnose --compare BASELINE --format html`: its chart of the job groups that changed).

    tests/review_page.py PAGE.html [--app|--compare] [--screenshot OUT.png] [--pdf OUT.pdf]

Checks, with Debian's `chromium --headless --no-sandbox`:
- the page is self-contained: no script, no external URL (src, href, url(...), @import);
- on a laptop's screen (1366 x 900): each chart (the review's: cost by kind, top names, the worst
  run's stage timeline; one application's: where the time went, cost by kind) is an SVG at least
  600 px wide with every bar drawn (a box of non-zero size, as the layout engine measured it,
  read back from a copy of the page with a measuring script), each chart names one unit
  (`data-unit`: costs of different units never share an axis), and nothing is wider than the
  window;
- with --what-if: the what-if's two charts (predicted time, and core-seconds or money, against
  the executor count) are drawn too, each of its own unit;
- with --app: every finding is drawn, each kind's section ends with its remedy, and every
  suggested setting is a row of its finding's table;
- on paper: it prints to a PDF (A4) of at least one page.
Exits 1 naming each failure. With --screenshot, also writes a 1366 px wide screenshot.
"""

from __future__ import annotations

import argparse
import html
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

CHARTS = ("cost-by-kind", "top-names", "timeline")
APP_CHARTS = ("group-times", "cost-by-kind")
WHAT_IF_CHARTS = ("what-if-time", "what-if-cost")
COMPARE_CHARTS = ("compare-groups",)

MEASURE = """
<script>
const out = {charts: {}};
for (const svg of document.querySelectorAll('svg.chart')) {
  const bars = [...svg.querySelectorAll('rect.bar')];
  const drawn = bars.filter(b => { const r = b.getBoundingClientRect(); return r.width > 0.5 && r.height > 0.5; });
  const box = svg.getBoundingClientRect();
  const key = svg.dataset.chart + ' / ' + (svg.dataset.unit || '');
  out.charts[key] = {bars: bars.length, drawn: drawn.length, width: box.width, height: box.height,
                     unit: svg.dataset.unit || ''};
}
const seen = el => { const r = el.getBoundingClientRect(); return r.width > 0.5 && r.height > 0.5; };
out.findings = [...document.querySelectorAll('.finding')].filter(seen).length;
out.kinds = [...document.querySelectorAll('section.kind')].map(k =>
  ({kind: k.dataset.kind, remedy: !!k.querySelector('p.remedy'),
    findings: k.querySelectorAll('.finding').length}));
out.settingRows = [...document.querySelectorAll('table.advice tbody tr')].filter(seen).length;
out.scrollWidth = document.documentElement.scrollWidth;
out.innerWidth = window.innerWidth;
document.body.setAttribute('data-measured', JSON.stringify(out));
</script>
"""


def chromium() -> str:
    for c in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(c):
            return c
    sys.exit("review page: no chromium on PATH (apt-get install -y chromium)")


def run(browser: str, work: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
           f"--user-data-dir={work / 'profile'}", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--app", action="store_true", help="one application's page")
    ap.add_argument("--compare", action="store_true", help="a comparison's page")
    ap.add_argument("--what-if", action="store_true",
                    help="the what-if's charts (time, and cost) must be drawn too")
    ap.add_argument("--findings", type=int, help="with --app: the findings the page must show")
    ap.add_argument("--settings", type=int, help="with --app: the suggestions it must show")
    ap.add_argument("--screenshot")
    ap.add_argument("--pdf")
    a = ap.parse_args()
    page = pathlib.Path(a.page).resolve()
    text = page.read_text(encoding="utf-8")
    browser = chromium()
    fails = []
    if "<script" in text.lower():
        fails.append("the page has a script")
    external = re.findall(r'(?:src|href)\s*=\s*"(?!#)([^"]+)"|url\(([^)#][^)]*)\)|@import', text)
    if external:
        fails.append(f"the page refers outside itself: {external[:5]}")
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        measured = work / "measured.html"
        measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
        r = run(browser, work, "--window-size=1366,900", "--dump-dom", measured.as_uri())
        m = re.search(r'data-measured="([^"]*)"', r.stdout)
        if r.returncode != 0 or not m:
            fails.append(f"chromium exited {r.returncode} without measuring the page: {r.stderr[-800:]}")
        else:
            got = json.loads(html.unescape(m.group(1)))
            which = "application" if a.app else "comparison" if a.compare else "review"
            print(f"{which} page (headless {browser}, 1366 px): {json.dumps(got)}", flush=True)
            charts = APP_CHARTS if a.app else COMPARE_CHARTS if a.compare else CHARTS
            for c in charts + (WHAT_IF_CHARTS if a.what_if else ()):
                drawn = {k: g for k, g in got["charts"].items() if k.split(" / ")[0] == c}
                if not drawn:
                    fails.append(f"chart {c}: missing")
                for k, g in drawn.items():
                    if not g["unit"]:
                        fails.append(f"chart {k}: names no unit")
                    if g["bars"] == 0 or g["drawn"] != g["bars"]:
                        fails.append(f"chart {k}: {g['drawn']} of {g['bars']} bars drawn")
                    if g["width"] < 600 or g["height"] < 20:
                        fails.append(f"chart {k}: {g['width']:.0f} x {g['height']:.0f} px")
            if a.app:
                if a.findings is not None and got["findings"] != a.findings:
                    fails.append(f"{got['findings']} findings drawn, want {a.findings}")
                for k in got["kinds"]:
                    if not k["remedy"] or not k["findings"]:
                        fails.append(f"kind {k['kind']}: {k['findings']} findings, remedy {k['remedy']}")
                if a.settings is not None and got["settingRows"] != a.settings:
                    fails.append(f"{got['settingRows']} suggestion rows drawn, want {a.settings}")
            if got["scrollWidth"] > got["innerWidth"]:
                fails.append(f"wider than the window: {got['scrollWidth']} > {got['innerWidth']} px")
        pdf = pathlib.Path(a.pdf).resolve() if a.pdf else work / "review.pdf"
        r = run(browser, work, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri())
        data = pdf.read_bytes() if pdf.exists() else b""
        pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
        if not data.startswith(b"%PDF") or pages < 1:
            fails.append(f"printing: no PDF ({r.returncode}): {r.stderr[-500:]}")
        else:
            print(f"review page printed: {pages} page(s), {len(data)} bytes", flush=True)
        if a.screenshot:
            out = pathlib.Path(a.screenshot).resolve()
            out.parent.mkdir(parents=True, exist_ok=True)
            r = run(browser, work, "--window-size=1366,2200", f"--screenshot={out}", page.as_uri())
            if r.returncode != 0 or not out.exists():
                fails.append(f"screenshot: chromium exited {r.returncode}: {r.stderr[-500:]}")
            else:
                print(f"screenshot: {out}", flush=True)
    for f in fails:
        print(f"review page: {f}", file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
