#!/usr/bin/env bash
# Makes the README's picture (docs/img/quickstart.png) from a real run, nothing typed in:
#   1. runs the release binary on the embedded default (the README's first command, on a port of
#      its own), waits for its start-up read, takes its /metrics, and stops it;
#   2. runs `spark-exporter diagnose` on the diagnosis run (tests/data/diagnosis-4.1.1);
#   3. writes an HTML page: on the left the /metrics lines the README's quick start shows (each
#      must be in this run's output, else the script fails), on the right the first lines of the
#      diagnose report as printed; a caption says what it is, with the version and commit from
#      spark_exporter_build_info;
#   4. renders it with Debian's headless Chromium at 1200x800, reduces the PNG to a palette with
#      pngquant (both installed with apt-get when missing), and fails if it is 300 KB or more.
# Usage: scripts/readme-picture.sh [OUT.png]   (default docs/img/quickstart.png)
# The Grafana dashboards are not shown: they cannot be rendered here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${1:-docs/img/quickstart.png}"
port="${README_PICTURE_PORT:-19809}"
diagnose_lines="${README_PICTURE_DIAGNOSE_LINES:-18}"

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v pngquant >/dev/null || need+=(pngquant)
if [ ${#need[@]} -gt 0 ]; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}"
fi

cargo build --release --quiet --bin spark-exporter
bin="$root/target/release/spark-exporter"
work="$(mktemp -d)"
exporter=""
cleanup() {
    if [ -n "$exporter" ] && kill -0 "$exporter" 2>/dev/null; then kill -KILL "$exporter"; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin" --spark.url= --event-log.dir tests/data/spark-4.1.1-basic/eventlog \
    --web.listen-address "127.0.0.1:$port" >"$work/exporter.log" 2>&1 &
exporter=$!
for _ in $(seq 1 300); do
    if curl -fs -o /dev/null "http://127.0.0.1:$port/readyz?complete"; then break; fi
    kill -0 "$exporter" 2>/dev/null || { cat "$work/exporter.log" >&2; echo "the exporter exited" >&2; exit 1; }
    sleep 0.2
done
curl -fs "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"
# SIGTERM starts the drain; one more scrape of the final state ends it.
kill -TERM "$exporter"
for _ in $(seq 1 100); do
    kill -0 "$exporter" 2>/dev/null || break
    curl -fs -o /dev/null "http://127.0.0.1:$port/metrics" || true
    sleep 0.2
done
wait "$exporter" || true
exporter=""

"$bin" diagnose --event-log tests/data/diagnosis-4.1.1/eventlog >"$work/diagnose.txt"

python3 - "$work" "$diagnose_lines" <<'PY'
import html, re, sys
work, n_diag = sys.argv[1], int(sys.argv[2])
metrics = open(f"{work}/metrics.txt").read().split("\n")
report = open(f"{work}/diagnose.txt").read().rstrip("\n").split("\n")

# The README's quick start lines: the output block after `curl .../metrics`.
readme = open("README.md").read().split("\n")
want, i = [], 0
while i < len(readme):
    if readme[i].strip() == "<!-- quickstart: output -->" and any("/metrics" in l for l in readme[max(0, i - 8):i]):
        j = i + 2
        while not readme[j].startswith("```"):
            if readme[j].strip():
                want.append(readme[j])
            j += 1
        break
    i += 1
if not want:
    sys.exit("README.md: no quick start output block after the curl of /metrics")
missing = [w for w in want if w not in metrics]
if missing:
    sys.exit("not in this run's /metrics:\n  " + "\n  ".join(missing))

build = next(l for l in metrics if l.startswith("spark_exporter_build_info{"))
version = re.search(r'version="([^"]*)"', build).group(1)
revision = re.search(r'revision="([^"]*)"', build).group(1)
samples = sum(1 for l in metrics if l and not l.startswith("#"))

def metric_html(line):
    m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
    if not m:
        return html.escape(line)
    name, labels, value = m.groups()
    out = f'<span class="n">{html.escape(name)}</span>'
    if labels:
        labels = html.escape(labels)
        labels = re.sub(r'([a-z_]+)=(&quot;.*?&quot;)', r'<span class="k">\1</span>=<span class="v">\2</span>', labels)
        out += labels
    return out + f' <span class="x">{html.escape(value)}</span>'

def report_html(line):
    e = html.escape(line)
    e = re.sub(r"^(==.*)$", r'<span class="h">\1</span>', e)
    e = re.sub(r"\[([a-z_]+)\]", r'[<span class="n">\1</span>]', e)
    e = re.sub(r"cost ([0-9.,]+ [a-z-]+)", r'cost <span class="x">\1</span>', e)
    e = re.sub(r"^(\s+)(where|numbers|limit|remedy|ui):", r'\1<span class="k">\2</span>:', e)
    return e

shown = report[:n_diag]
page = f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #fff; color: #1f2328; font: 13px/1.35 sans-serif; }}
header {{ padding: 12px 18px 8px; border-bottom: 1px solid #d0d7de; }}
header b {{ font-size: 15px; }}
header p {{ margin: 4px 0 0; color: #57606a; }}
main {{ display: flex; gap: 14px; padding: 10px 14px; }}
section {{ flex: 1 1 0; min-width: 0; border: 1px solid #d0d7de; border-radius: 6px; background: #f6f8fa; }}
section h2 {{ margin: 0; padding: 6px 10px; font: 600 12px sans-serif; border-bottom: 1px solid #d0d7de; background: #eaeef2; }}
pre {{ margin: 0; padding: 8px 10px; font: 12px/1.4 "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-all; }}
pre div {{ margin-bottom: 3px; }}
.m div {{ padding-left: 2em; text-indent: -2em; }}
.n {{ color: #0550ae; font-weight: 600; }} .k {{ color: #6e7781; }} .v {{ color: #0a3069; }}
.x {{ color: #cf222e; font-weight: 700; }} .h {{ color: #116329; font-weight: 700; }}
.more {{ color: #6e7781; font-style: italic; }}
</style></head><body>
<header><b>spark-exporter {html.escape(version)} ({html.escape(revision[:12])}): real output of this repository's recorded Spark 4.1.1 runs</b>
<p>Not a mock-up and not a Grafana dashboard. Made by scripts/readme-picture.sh, which ran both commands and rendered this page with headless Chromium.</p></header>
<main>
<section><h2>GET /metrics of <code>spark-exporter --spark.url= --event-log.dir tests/data/spark-4.1.1-basic/eventlog</code>: {len(want)} of its {samples} samples (the README's quick start lines)</h2>
<pre class="m">{"".join(f"<div>{metric_html(l)}</div>" for l in want)}</pre></section>
<section><h2><code>spark-exporter diagnose --event-log tests/data/diagnosis-4.1.1/eventlog</code>: its first {len(shown)} of {len(report)} lines</h2>
<pre>{"".join(f"<div>{report_html(l) or '&nbsp;'}</div>" for l in shown)}<div class="more">… {len(report) - len(shown)} more lines: more findings, and two more applications</div></pre></section>
</main></body></html>"""
open(f"{work}/page.html", "w").write(page)
PY

mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/chromium" --hide-scrollbars \
    --screenshot="$(realpath -m "$out")" --window-size=1200,800 "file://$work/page.html" >"$work/chromium.log" 2>&1 \
    || { cat "$work/chromium.log" >&2; exit 1; }
pngquant --force --skip-if-larger --strip --output "$out" -- "$out" || [ $? -eq 98 ]
size=$(stat -c %s "$out")
echo "$out: $size bytes"
if [ "$size" -ge 300000 ]; then
    echo "$out is $size bytes, over the 300 KB budget" >&2
    exit 1
fi
