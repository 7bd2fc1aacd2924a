#!/usr/bin/env bash
# Scrape load bench (BENCHMARKS.md "Scrape load and cardinality").
#
# Builds the load-bench harness (crates/bench/benches/load-bench.rs, via scripts/bench-bin.sh), starts it in
# `serve` mode (a model filled to 2,000 retained stages, 500 executors, 200 job groups, served by
# the real server while it keeps changing like a polled application), then:
#   1. wrk, 100 connections, closed loop for $SECS s (each connection scrapes again as soon as
#      its last scrape ends), with Prometheus's headers (gzip): latency percentiles, errors;
#   2. for each "interval_ms:gzip|plain" in $SCRAPES, the bench's own client: 100 scrapers each
#      scraping once per interval (open loop, spread over the interval);
# and reads the server's VmRSS/VmHWM from /proc after each. Extra arguments go to `serve`
# (e.g. `--churn-ms 50` for a model changing as fast as a busy event log, `--stages 500`).
#
#   scripts/load-bench.sh                               # 60 s per run
#   SECS=10 SCRAPES="1000:gzip" scripts/load-bench.sh   # shorter
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SECS="${SECS:-60}"
CONNS="${CONNS:-100}"
SCRAPES="${SCRAPES:-15000:gzip 1000:gzip 1000:plain}"
ADDR="${ADDR:-127.0.0.1:9899}"
OUT="${OUT:-target/load-bench}"
mkdir -p "$OUT"

if ! command -v wrk >/dev/null; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq wrk
fi
bench="$(scripts/bench-bin.sh load-bench)"

rss() { awk '/^VmRSS|^VmHWM/ {printf "%s=%.1fMiB ", $1, $2/1024} END {print ""}' "/proc/$1/status"; }

"$bench" serve --addr "$ADDR" "$@" >"$OUT/serve.log" 2>&1 &
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

for run in $SCRAPES; do
    interval="${run%%:*}"
    enc=(--gzip false); [ "${run##*:}" = gzip ] && enc=(--gzip true)
    echo "--- load-bench scrape: $CONNS scrapers, one scrape each per ${interval}ms (${run##*:}), ${SECS}s"
    "$bench" scrape --url "http://$ADDR/metrics" --connections "$CONNS" \
        --secs "$SECS" --interval-ms "$interval" "${enc[@]}" | tee "$OUT/scrape-$interval-${run##*:}.txt"
    echo "server after scrape: $(rss "$pid")"
done

kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
