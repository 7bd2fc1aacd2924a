#!/usr/bin/env bash
# Scrape load bench (BENCHMARKS.md "Scrape load and cardinality").
#
# Builds target/release/load-bench, starts it in `serve` mode (a model filled to 2,000 retained
# stages, 500 executors, 200 job groups, served by the real server), then:
#   1. wrk, 100 connections, closed loop for $SECS s (each connection scrapes again as soon as
#      its last scrape ends): latency percentiles, errors, throughput;
#   2. the bench's own client, 100 scrapers each scraping once per $INTERVAL_MS (open loop);
# and reads the server's VmRSS/VmHWM from /proc after each. Extra arguments go to `serve`
# (e.g. `--cache-ms 1000` for the render-cache prototype, `--stages 500` for another scale).
#
#   scripts/load-bench.sh                     # the real server
#   scripts/load-bench.sh --cache-ms 1000     # prototype: shared render cache
#   SECS=10 scripts/load-bench.sh             # shorter
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SECS="${SECS:-60}"
CONNS="${CONNS:-100}"
INTERVAL_MS="${INTERVAL_MS:-1000}"
ADDR="${ADDR:-127.0.0.1:9899}"
OUT="${OUT:-target/load-bench}"
mkdir -p "$OUT"

if ! command -v wrk >/dev/null; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq wrk
fi
cargo build --release --bin load-bench

rss() { awk '/^VmRSS|^VmHWM/ {printf "%s=%.1fMiB ", $1, $2/1024} END {print ""}' "/proc/$1/status"; }

target/release/load-bench serve --addr "$ADDR" "$@" >"$OUT/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    grep -q '^serving' "$OUT/serve.log" 2>/dev/null && break
    sleep 0.2
done
cat "$OUT/serve.log"
echo "server pid=$pid idle: $(rss "$pid")"

echo "--- wrk: $CONNS connections, closed loop, ${SECS}s"
wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 60s --latency -s scripts/load-wrk.lua \
    "http://$ADDR/metrics" | tee "$OUT/wrk.txt"
echo "server after wrk: $(rss "$pid")"

echo "--- load-bench scrape: $CONNS scrapers, one scrape each per ${INTERVAL_MS}ms, ${SECS}s"
target/release/load-bench scrape --url "http://$ADDR/metrics" --connections "$CONNS" \
    --secs "$SECS" --interval-ms "$INTERVAL_MS" | tee "$OUT/scrape.txt"
echo "server after scrape: $(rss "$pid")"

kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
