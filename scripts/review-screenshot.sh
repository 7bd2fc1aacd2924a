#!/usr/bin/env bash
# The pages of docs/diagnose.md: the review page, `diagnose --review --format html` over a fleet
# made of the committed event logs (every fixture of tests/data/eventlogs and the diagnosis run's
# three applications) plus renumbered copies (every other one renamed `<name>-nightly`), priced
# in EUR; and one application's page, `diagnose --format html` of the diagnosis run's main
# application; and a comparison's page, `diagnose --compare` of the comparison fixture's run with
# adaptive execution off against its base run. Each checked and photographed by headless
# Chromium (tests/review_page.py), the screenshots reduced to a palette with pngquant.
#
#   scripts/review-screenshot.sh            write docs/img/review.png, docs/img/diagnose.png and
#                                           docs/img/compare.png (and the pages in target/review/)
#   scripts/review-screenshot.sh --check    write the pages and check them, no screenshot
#
# Needs python3 and chromium (Debian's), and builds the exporter (debug).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
shot="docs/img/review.png"
app_shot="docs/img/diagnose.png"
compare_shot="docs/img/compare.png"
[ "${1:-}" = "--check" ] && shot="" && app_shot="" && compare_shot=""
work="$root/target/review"
rm -rf "$work"
mkdir -p "$work/logs"

if [ -n "$shot" ] && ! command -v pngquant >/dev/null; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq pngquant
fi
cargo build --quiet --bin spark-exporter
python3 - "$work/logs" <<'EOF'
import json, pathlib, shutil, subprocess, sys

out = pathlib.Path(sys.argv[1])
srcs = sorted(pathlib.Path("tests/data/eventlogs").glob("*/*")) + sorted(pathlib.Path("tests/data/diagnosis-4.1.1/eventlog").glob("*"))
n = 0
for src in srcs:
    if not src.name.startswith(("local-", "app-", "eventlog_v2_")):
        continue
    dst = out / f"{src.parent.name}-{src.name}" if src.is_file() else out / src.name
    if dst.exists():
        continue
    (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    parts = sorted(src.glob("events_*"), key=lambda p: int(p.name.split("_")[1])) if src.is_dir() else [src]
    if any(p.suffix not in ("", ".zstd") for p in parts):
        continue
    text = "".join((subprocess.run(["zstd", "-dc", p], capture_output=True, check=True).stdout if p.suffix == ".zstd"
                    else p.read_bytes()).decode() for p in parts)
    start = json.loads(next(l for l in text.splitlines() if '"SparkListenerApplicationStart"' in l))
    for k in range(3):
        n += 1
        new = f"local-{1796100000000 + n * 7919:013d}"
        copy = text.replace(start["App ID"], new)
        if k % 2 == 1:
            copy = copy.replace(f'"{start["App Name"]}"', f'"{start["App Name"]}-nightly"')
        (out / new).write_text(copy)
print(f"review fleet: {len(list(out.iterdir()))} logs in {out}")
EOF
cat >"$work/prices.yaml" <<'EOF'
cost:
  currency: EUR
  prices:
    - core_hour: 0.05
      gib_hour: 0.006
EOF
target/debug/spark-exporter --config.file "$work/prices.yaml" --log.level error \
    diagnose --review --event-log "$work/logs" --format html --top 5 >"$work/review.html"
echo "review page: $work/review.html ($(wc -c <"$work/review.html") bytes)"
if [ -n "$shot" ]; then
    python3 tests/review_page.py "$work/review.html" --screenshot "$shot" --pdf "$work/review.pdf"
else
    python3 tests/review_page.py "$work/review.html" --pdf "$work/review.pdf"
fi
app_id="$(python3 -c 'import json; print(json.load(open("tests/data/diagnosis-4.1.1/meta.json"))["apps"]["diagnosis"])')"
target/debug/spark-exporter --log.level error diagnose --event-log tests/data/diagnosis-4.1.1/eventlog \
    --app-id "$app_id" --format html >"$work/app.html"
echo "application page: $work/app.html ($(wc -c <"$work/app.html") bytes)"
cmp=tests/data/compare-4.1.1/eventlog
target/debug/spark-exporter --log.level error diagnose --event-log "$cmp/aqe_off" --compare "$cmp/base" \
    --format html >"$work/compare.html"
echo "comparison page: $work/compare.html ($(wc -c <"$work/compare.html") bytes)"
if [ -n "$compare_shot" ]; then
    python3 tests/review_page.py "$work/compare.html" --compare --screenshot "$compare_shot" --pdf "$work/compare.pdf"
else
    python3 tests/review_page.py "$work/compare.html" --compare --pdf "$work/compare.pdf"
fi
if [ -n "$app_shot" ]; then
    python3 tests/review_page.py "$work/app.html" --app --screenshot "$app_shot" --pdf "$work/app.pdf"
    for png in "$shot" "$app_shot" "$compare_shot"; do
        pngquant --force --skip-if-larger --quality 60-90 --output "$png" "$png"
    done
else
    python3 tests/review_page.py "$work/app.html" --app --pdf "$work/app.pdf"
fi
