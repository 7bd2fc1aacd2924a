#!/usr/bin/env bash
# A/B benchmark of two builds of spark-exporter (BENCHMARKS.md "Before and after a refactoring"):
# event-log ingest, render time and scrape latency at the load-bench scale, RUNS runs of each,
# the two builds interleaved run by run so machine noise falls on both alike; prints medians.
#
#   scripts/bench-compare.sh OLD_DIR NEW_DIR [LOG]
#
# OLD_DIR and NEW_DIR each hold the two harness executables `load-bench` and `eventlog-bench`
# (older commits built them as src/bin targets: `cargo build --release --bin load-bench --bin
# eventlog-bench`, then target/release/; newer ones as benches: `scripts/bench-bin.sh NAME` prints
# the path). LOG is an event log to ingest (default: the decompressed 51 MB
# tests/data/bench/eventlog-10k-tasks.json.zst). Env: RUNS (5), SECS (10, per scrape run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
old="${1:?usage: scripts/bench-compare.sh OLD_DIR NEW_DIR [LOG]}"
new="${2:?usage: scripts/bench-compare.sh OLD_DIR NEW_DIR [LOG]}"
RUNS="${RUNS:-5}"
SECS="${SECS:-10}"
work="$(mktemp -d)"
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT
log="${3:-}"
if [ -z "$log" ]; then
    log="$work/local-1700000000000"
    zstd -dc "$root/tests/data/bench/eventlog-10k-tasks.json.zst" >"$log"
fi

# ingest: CPU seconds (user + system) of one `eventlog-bench ingest` of $log.
ingest() {
    /usr/bin/time -f '%U %S' -o "$work/time" "$1/eventlog-bench" ingest "$log" >/dev/null
    awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}

# render: collect_ms (families), openmetrics_ms (text) and gzip6_openmetrics_ms (text straight
# into gzip, as the server renders) of one `load-bench render`.
render() {
    "$1/load-bench" render >"$work/render" 2>&1
    cat "$work/render" >>"$work/render.all"
    python3 - "$work/render" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
def ms(key):
    m = re.search(r"\b" + key + r"=([0-9.]+)", text)
    return m.group(1) if m else "nan"
print(ms("collect_ms"), ms("openmetrics_ms"), ms("gzip6_openmetrics_ms"))
EOF
}

# scrape: p50 and p99 (ms) of 100 scrapers at one gzip scrape each per second, for $SECS s,
# against `load-bench serve` (2,000 stages, 500 executors, 200 groups).
scrape() {
    local port=$((20000 + RANDOM % 20000))
    "$1/load-bench" serve --addr "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 150); do
        grep -q '^serving' "$work/serve.log" 2>/dev/null && break
        sleep 0.2
    done
    "$1/load-bench" scrape --url "http://127.0.0.1:$port/metrics" --connections 100 \
        --secs "$SECS" --interval-ms 1000 --gzip true >"$work/scrape" 2>&1 || true
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    cat "$work/scrape" >>"$work/scrape.all"
    python3 - "$work/scrape" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
def pct(p):
    m = re.search(r"\b" + p + r"_ms=([0-9.]+)", text)
    return m.group(1) if m else "nan"
print(pct("p50"), pct("p99"))
EOF
}

for r in $(seq 1 "$RUNS"); do
    for side in old new; do
        dir="$old"; [ "$side" = new ] && dir="$new"
        echo "$side ingest $(ingest "$dir")" | tee -a "$work/results"
        echo "$side render $(render "$dir")" | tee -a "$work/results"
        echo "$side scrape $(scrape "$dir")" | tee -a "$work/results"
    done
done

python3 - "$work/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(side, what, i):
    v = [float(r[2 + i]) for r in rows if r[0] == side and r[1] == what and r[2 + i] != "nan"]
    return statistics.median(v) if v else float("nan")
print("\nmedians                      old        new     change")
for what, i, label in [("ingest", 0, "ingest CPU s"), ("render", 0, "render families ms"),
                       ("render", 1, "render OpenMetrics ms"), ("render", 2, "render into gzip ms"),
                       ("scrape", 0, "scrape p50 ms"), ("scrape", 1, "scrape p99 ms")]:
    o, n = med("old", what, i), med("new", what, i)
    print(f"{label:24} {o:10.3f} {n:10.3f} {100 * (n - o) / o:+8.1f} %")
EOF
