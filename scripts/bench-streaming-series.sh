#!/usr/bin/env bash
# Series of a streaming application over time (BENCHMARKS.md, "Streaming: per-stage series";
# issue 17 item 3): a live PySpark streaming query at several micro-batches a second
# (scripts/streaming_series_workload.py: rate source, stateful aggregation, noop sink, 150 ms
# trigger, local[2], event log and UI on), followed by the release exporter through both its REST
# API (--spark.url) and its event log (--event-log.dir), with the default configuration.
# /metrics is scraped every 10 s, as Prometheus would; each scrape records:
#   - series: sample lines of the exposition (every histogram bucket counts, as in Prometheus'
#     head), and those with a stage_id label;
#   - distinct series seen since the start (cumulative), and those with a stage_id: their growth
#     after warm-up, per hour, is what the application makes Prometheus create;
#   - micro-batches completed (spark_streaming_batches_total) and the exporter's RSS.
#
#   scripts/bench-streaming-series.sh [--minutes N]   (default 10) a table for BENCHMARKS.md
#   scripts/bench-streaming-series.sh --check         2 minutes; exits non-zero if any scrape
#                                                     exceeds BOUND series, or the exposition
#                                                     grows after WARMUP_SECS
#
# Env: BOUND (default 400: the documented bound), WARMUP_SECS (default 60), SLACK (default 15:
# the series a few active stages add or take at a scrape), PYTHON (a python with pyspark; default
# $SPARK_E2E_PYTHON, else .venv/bin/python), UI_PORT (default 4047), PORT (default 19877).
# Output: target/bench-streaming-series/ (scrapes.csv, the exporter's and Spark's logs).
# The release binary is built with cargo, or taken from $EXE.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
minutes=10
check=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --check) check=1; minutes="${CHECK_MINUTES:-2}"; shift ;;
    *) echo "usage: $0 [--minutes N] [--check]" >&2; exit 64 ;;
  esac
done
bound="${BOUND:-400}"
warmup="${WARMUP_SECS:-60}"
slack="${SLACK:-15}"
ui_port="${UI_PORT:-4047}"
port="${PORT:-19877}"
python="${PYTHON:-${SPARK_E2E_PYTHON:-$root/.venv/bin/python}}"
if ! "$python" -c "import pyspark" 2>/dev/null; then
  echo "bench-streaming-series: $python has no pyspark (set PYTHON)" >&2
  exit 2
fi
export PYSPARK_PYTHON="$python"

out="target/bench-streaming-series"
rm -rf "$out"
mkdir -p "$out/eventlog"
if [[ -z "${EXE:-}" ]]; then
  cargo build --release --quiet
  EXE="${CARGO_TARGET_DIR:-target}/release/spark-exporter"
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

secs=$((minutes * 60))
# The application outlives the measurement by a minute (start-up included).
"$python" scripts/streaming_series_workload.py --event-log-dir "$out/eventlog" \
  --ui-port "$ui_port" --seconds $((secs + 90)) >"$out/spark.log" 2>&1 &
pids+=($!)
spark_pid=$!
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$ui_port/api/v1/applications" >/dev/null && break
  kill -0 "$spark_pid" 2>/dev/null || { echo "the workload died:" >&2; tail -20 "$out/spark.log" >&2; exit 1; }
  sleep 1
done
"$EXE" --spark.url "http://127.0.0.1:$ui_port" --event-log.dir "$out/eventlog" \
  --web.listen-address "127.0.0.1:$port" >"$out/exporter.log" 2>&1 &
pids+=($!)
exporter_pid=$!

echo "t_s,series,stage_series,distinct,distinct_stage,batches,rss_kib" >"$out/scrapes.csv"
: >"$out/seen.txt"
start=$(date +%s)
while :; do
  now=$(date +%s)
  t=$((now - start))
  if curl -sf "http://127.0.0.1:$port/metrics" -o "$out/last.prom"; then
    grep -v '^#' "$out/last.prom" | grep -v '^$' | sed -E 's/ [^ ]+$//' >"$out/ids.txt"
    sort -u "$out/seen.txt" "$out/ids.txt" -o "$out/seen.txt"
    series=$(wc -l <"$out/ids.txt")
    stage=$(grep -c 'stage_id="' "$out/ids.txt" || true)
    distinct=$(wc -l <"$out/seen.txt")
    dstage=$(grep -c 'stage_id="' "$out/seen.txt" || true)
    batches=$(awk '/^spark_streaming_batches_total/ {s += $NF} END {print s + 0}' "$out/last.prom")
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$exporter_pid/status")
    echo "$t,$series,$stage,$distinct,$dstage,$batches,$rss" >>"$out/scrapes.csv"
    echo "t=${t}s series=$series stage_series=$stage distinct=$distinct distinct_stage=$dstage batches=$batches rss=${rss}KiB" >&2
  fi
  [[ $t -ge $secs ]] && break
  kill -0 "$spark_pid" 2>/dev/null || { echo "the workload ended early:" >&2; tail -20 "$out/spark.log" >&2; exit 1; }
  sleep $((10 - ($(date +%s) - now) > 0 ? 10 - ($(date +%s) - now) : 1))
done

python3 - "$out/scrapes.csv" "$bound" "$warmup" "$slack" "$check" <<'EOF'
import csv, sys
path, bound, warmup, slack, check = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open(path))]
after = [r for r in rows if r["t_s"] >= warmup]
if not after:
    sys.exit("no scrape after the warm-up")
end = rows[-1]
first = after[0]
span_h = max(end["t_s"] - first["t_s"], 1) / 3600
created = (end["distinct"] - first["distinct"]) / span_h
created_stage = (end["distinct_stage"] - first["distinct_stage"]) / span_h
batches_per_s = (end["batches"] - first["batches"]) / max(end["t_s"] - first["t_s"], 1)
print("| minute | series | with stage_id | distinct so far | with stage_id | batches | exporter RSS |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    if r["t_s"] % 60 < 10 or r is end:
        print(f"| {r['t_s'] / 60:.1f} | {r['series']} | {r['stage_series']} | {r['distinct']} | "
              f"{r['distinct_stage']} | {r['batches']} | {r['rss_kib'] / 1024:.1f} MiB |")
top = max(r["series"] for r in rows)
print()
print(f"scrapes: {len(rows)}; most series in one scrape: {top} (bound {bound}); "
      f"after {warmup}s: min {min(r['series'] for r in after)}, max {max(r['series'] for r in after)}")
print(f"micro-batches per second after {warmup}s: {batches_per_s:.2f}")
print(f"series created per hour after {warmup}s: {created:.0f} ({created_stage:.0f} with stage_id)")
if check:
    # Growth: the last 30 s against the first 30 s after warm-up, both at their highest.
    early = max(r["series"] for r in after if r["t_s"] < first["t_s"] + 30)
    late = max(r["series"] for r in rows if r["t_s"] > end["t_s"] - 30)
    fails = []
    if top > bound:
        fails.append(f"{top} series in one scrape, over the bound of {bound}")
    if late > early + slack:
        fails.append(f"the exposition grew after warm-up: {early} -> {late} series (slack {slack})")
    if batches_per_s < 1:
        fails.append(f"only {batches_per_s:.2f} micro-batches a second: not the workload measured")
    if fails:
        print("bench-streaming-series --check FAILED: " + "; ".join(fails))
        sys.exit(1)
    print("bench-streaming-series --check ok")
EOF
