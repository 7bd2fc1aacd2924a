#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ one after another (BENCHMARKS.md "Fuzzing").
#
#   scripts/fuzz-run.sh                    # every target, 180 s each
#   scripts/fuzz-run.sh 30 codecs          # one target, 30 s
#
# cargo-fuzz passes -Z flags (sanitizers, coverage) to rustc, which only nightly accepts; this
# machine has the stable toolchain only, so the build runs with RUSTC_BOOTSTRAP=1. Targets are
# optimised but keep debug assertions and overflow checks (-O -a), so an arithmetic overflow on
# hostile input is a crash, not a silent wrap. Seed corpora
# come from the repository's own fixtures (real Spark event logs in every codec, REST
# snapshots); corpora grow in fuzz/corpus/<target> and crashes land in fuzz/artifacts/<target>
# (both git-ignored). A crash input becomes a test in tests/it/fuzz_regressions.rs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SECS="${1:-180}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(parse_line eventlog_model codecs rest_decode)
export RUSTC_BOOTSTRAP=1

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo fuzz build -O -a --fuzz-dir fuzz

data=tests/data
seed() { # target: fill fuzz/corpus/<target> from the fixtures, once
    local t="$1" dir="fuzz/corpus/$1"
    [ -d "$dir" ] && return
    mkdir -p "$dir"
    case "$t" in
    parse_line)
        # One file per distinct event kind (first line of each), from plain logs.
        cat "$data"/eventlogs/*-none-*/local-* "$data"/eventlogs/*-none-rolling/*/events_* 2>/dev/null |
            awk -F'"' '!seen[$4]++' | split -l 1 -a 4 - "$dir/line-"
        ;;
    eventlog_model)
        # Slices of real plain logs, 8 lines each, without the multi-kilobyte SQL plans (the
        # target renders the model per input: small inputs keep it at hundreds of runs/s).
        for f in "$data"/eventlogs/*-none-*/local-*; do
            grep -v 'SparkListenerSQLAdaptive\|physicalPlanDescription' "$f" |
                split -l 8 -a 3 - "$dir/$(basename "$f")-"
        done
        ;;
    codecs)
        # Byte 0 picks the codec (1 zstd, 2 lz4, 3 snappy, 4 lzf; see the target), byte 1 the
        # piece sizes; then the first 8 KiB of a real compressed log.
        local n=0 c f
        for f in $(find "$data/eventlogs" -type f \( -name '*.zstd' -o -name '*.lz4' -o -name '*.snappy' -o -name '*.lzf' \)); do
            case "$f" in *.zstd) c=1 ;; *.lz4) c=2 ;; *.snappy) c=3 ;; *.lzf) c=4 ;; esac
            { printf "\\x$(printf %02x "$c")\\x$(printf %02x $((n * 37 % 256)))"; head -c 8192 "$f"; } >"$dir/seed-$n"
            n=$((n + 1))
        done
        ;;
    rest_decode)
        local n=0 f
        for f in "$data"/spark-4.1.1-basic/rest-snapshots/000[0-3]/*.json; do
            head -c 16384 "$f" >"$dir/seed-$n"
            n=$((n + 1))
        done
        ;;
    esac
}

failed=()
for t in "${TARGETS[@]}"; do
    seed "$t"
    dict="" max_len=65536
    case "$t" in
    parse_line) dict="-dict=fuzz/dict/eventlog.dict" ;;
    eventlog_model) dict="-dict=fuzz/dict/eventlog.dict" max_len=8192 ;;
    rest_decode) dict="-dict=fuzz/dict/rest.dict" ;;
    esac
    echo "=== $t: ${SECS}s, seeds $(ls "fuzz/corpus/$t" | wc -l)"
    # One job on one core: the machine is shared. -max_len bounds the slowest inputs.
    cargo fuzz run -O -a --fuzz-dir fuzz "$t" -- -max_total_time="$SECS" -max_len="$max_len" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 $dict >"fuzz/$t.log" 2>&1 ||
        failed+=("$t")
    grep -E 'DONE|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)|panicked|SUMMARY|Test unit written' \
        "fuzz/$t.log" || true
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
