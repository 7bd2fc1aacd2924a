#!/usr/bin/env bash
# Cold start over many applications (BENCHMARKS.md, "Cold start over many applications"): the
# time `spark-exporter dump --event-log DIR` takes to read N applications' logs, with one reader
# thread and with one per core (event_log.threads), against the target
#   wall(all cores) <= 1.25 x bytes / (single-core ingest rate x cores).
#
#   scripts/eventlog-many-apps.sh [N=16] [RUNS=3]
#
# Data: N plain-text copies of the real 51 MB log tests/data/bench/eventlog-10k-tasks.json.zst,
# each with its own application id (so the model holds N applications), in
# target/bench-many-apps/ (made once). Needs zstd and /usr/bin/time; builds the release binary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
n="${1:-16}"
runs="${2:-3}"
dir="target/bench-many-apps/$n"
src=tests/data/bench/eventlog-10k-tasks.json.zst
if [[ ! -f "$dir/.done" ]]; then
  rm -rf "$dir" && mkdir -p "$dir"
  plain="$(zstd -dc "$src")"
  app="$(grep -o '"App ID":"[^"]*"' <<<"$plain" | head -1 | cut -d'"' -f4)"
  for i in $(seq 1 "$n"); do
    id="local-17959812$(printf '%05d' "$i")"
    sed "s/$app/$id/g" <<<"$plain" >"$dir/$id"
  done
  touch "$dir/.done"
fi
cargo build --release --quiet --bin spark-exporter
exe=target/release/spark-exporter
bytes=$(cat "$dir"/local-* | wc -c)
cores=$(nproc)
echo "data: $n applications, $bytes bytes (decoded), $cores cores"
measure() { # threads -> "wall cpu" (medians of $runs)
  local t=$1 walls=() cpus=()
  for _ in $(seq 1 "$runs"); do
    out=$( { /usr/bin/time -f '%e %U %S' "$exe" dump --spark.url= --event-log "$dir" --event-log.threads="$t" >/dev/null; } 2>&1 | tail -1)
    read -r w u s <<<"$out"
    walls+=("$w"); cpus+=("$(echo "$u + $s" | bc)")
  done
  local mw mc
  mw=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  mc=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  echo "$mw $mc"
}
read -r w1 c1 <<<"$(measure 1)"
read -r wn cn <<<"$(measure "$cores")"
rate1=$(echo "scale=1; $bytes / 1000000 / $w1" | bc)
target=$(echo "scale=2; 1.25 * $bytes / 1000000 / ($rate1 * $cores)" | bc)
echo "threads=1:      wall ${w1}s, cpu ${c1}s, ${rate1} MB/s"
echo "threads=$cores:      wall ${wn}s, cpu ${cn}s, $(echo "scale=1; $bytes / 1000000 / $wn" | bc) MB/s"
echo "target: wall <= ${target}s (1.25 x bytes / (single-core rate x $cores cores)); speed-up $(echo "scale=2; $w1 / $wn" | bc)x"
