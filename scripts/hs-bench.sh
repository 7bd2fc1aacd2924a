#!/usr/bin/env bash
# spark-exporter vs the Spark History Server, replaying the same >= 1 GB event log on the same
# machine, one after the other (BENCHMARKS.md, "History Server replay comparison").
#
#   1. Builds the log if missing (scripts/eventlog-bench-data.sh: 1,076 MB, 210 jobs, 210,105
#      tasks, uncompressed and zstd) and a second copy of it whose only difference is its App ID,
#      so one History Server JVM can replay two applications (cold, then warm JIT).
#   2. spark-exporter (release build): `dump --event-log LOG`, RUNS times per format; wall, user
#      and system time from /usr/bin/time.
#   3. History Server (pyspark's jars, Java 17): scripts/hs-bench-replay.py, RUNS fresh JVMs per
#      format; each JVM replays the log (cold JIT), then the copy (warm JIT). Timed from the
#      moment the log is linked into its (watched, initially empty) folder until
#      /api/v1/applications/<id>/jobs returns all 210 jobs; see that script for the details.
#
# Prints one line per measurement and a summary: decoded MB (10^6 bytes) per wall second and per
# CPU second, medians, and the ratios.
#
# Usage: scripts/hs-bench.sh            (env: OUT=target/eventlog-bench RUNS=3 HS_HEAP=4g
#                                              FORMATS="zstd plain" SPARK_E2E_PYTHON=.venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-target/eventlog-bench}
RUNS=${RUNS:-3}
HS_HEAP=${HS_HEAP:-4g}
FORMATS=${FORMATS:-"zstd plain"}
PY=${SPARK_E2E_PYTHON:-.venv/bin/python}
APP=local-1795981295516
APP2=local-1795981295517

for cmd in java zstd /usr/bin/time; do
    command -v "$cmd" >/dev/null || { echo "hs-bench: $cmd not found" >&2; exit 1; }
done
JARS=$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
[ -f "$JARS/spark-core_2.13-4.1.1.jar" ] || { echo "hs-bench: no Spark 4.1.1 jars in $JARS" >&2; exit 1; }

# 1. Data.
if [ ! -f "$OUT/local-bench" ] || [ ! -f "$OUT/local-bench.zstd" ]; then
    scripts/eventlog-bench-data.sh "$OUT"
fi
COPY="$OUT/hs-copy"
if [ ! -f "$COPY/local-bench-b" ] || [ ! -f "$COPY/local-bench-b.zstd" ]; then
    mkdir -p "$COPY"
    python3 - "$OUT/local-bench" "$COPY/local-bench-b" "$APP" "$APP2" <<'EOF'
import shutil, sys
src, dst, old, new = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
with open(src, "rb") as i, open(dst, "wb") as o:
    for line in i:
        if line.startswith(b'{"Event":"SparkListenerApplicationStart"'):
            o.write(line.replace(b'"App ID":"' + old + b'"', b'"App ID":"' + new + b'"'))
            break
        o.write(line)
    shutil.copyfileobj(i, o, 1 << 22)
EOF
    zstd -q -f -1 "$COPY/local-bench-b" -o "$COPY/local-bench-b.zstd"
fi
BYTES=$(stat -c %s "$OUT/local-bench")
JOBS=$(grep -c '"Event":"SparkListenerJobEnd"' "$OUT/local-bench")
TASKS=$(grep -c '"Event":"SparkListenerTaskEnd"' "$OUT/local-bench")
echo "hs-bench: log $BYTES decoded bytes, $JOBS jobs, $TASKS tasks; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"

cargo build --release --bin spark-exporter 2>&1 | tail -1
echo "hs-bench: spark-exporter at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' + uncommitted src changes'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
EXPORTER=target/release/spark-exporter
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT

for fmt in $FORMATS; do
    case $fmt in
        zstd) log="$OUT/local-bench.zstd"; copy="$COPY/local-bench-b.zstd" ;;
        plain) log="$OUT/local-bench"; copy="$COPY/local-bench-b" ;;
        *) echo "hs-bench: unknown format $fmt" >&2; exit 1 ;;
    esac
    cat "$log" "$copy" > /dev/null # page cache, for both sides

    # 2. The exporter.
    for run in $(seq "$RUNS"); do
        t=$( { /usr/bin/time -f '%e %U %S %M' "$EXPORTER" dump --event-log "$log" > "$RESULTS.dump"; } 2>&1 | tail -1)
        read -r wall user sys rss <<<"$t"
        jobs=$(awk '/^spark_jobs_total/ {s += $NF} END {print s}' "$RESULTS.dump")
        tasks=$(awk '/^spark_tasks_total/ {s += $NF} END {print s}' "$RESULTS.dump")
        if [ "$jobs" != "$JOBS" ] || [ "$tasks" != "$TASKS" ]; then
            echo "hs-bench: exporter counted $jobs jobs, $tasks tasks; expected $JOBS, $TASKS" >&2
            exit 1
        fi
        cpu=$(echo "$user + $sys" | bc)
        echo "exporter $fmt run $run: wall ${wall}s cpu ${cpu}s rss ${rss}KiB"
        echo "exporter $fmt - $wall $cpu" >> "$RESULTS"
    done

    # 3. The History Server.
    for run in $(seq "$RUNS"); do
        "$PY" scripts/hs-bench-replay.py --jars "$JARS" --work "target/hs-bench" --heap "$HS_HEAP" \
            --expected-jobs "$JOBS" --expected-tasks "$TASKS" "$log:$APP" "$copy:$APP2" |
        while read -r line; do
            echo "history-server $fmt run $run: $line"
            "$PY" -c 'import json, sys; d = json.loads(sys.argv[1]); print("hs", sys.argv[2], d["jit"], d["total_s"], d["cpu_s"])' \
                "$line" "$fmt" >> "$RESULTS"
        done
    done
done
rm -f "$RESULTS.dump"

# Summary: medians per (side, format, jit).
echo
echo "hs-bench: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$RESULTS" "$BYTES" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
mb = int(sys.argv[2]) / 1e6
med = {}
for side, fmt, jit, wall, cpu in rows:
    med.setdefault((side, fmt, jit), []).append((float(wall), float(cpu)))
print(f"{'side':<10} {'format':<6} {'jit':<5} {'runs':>4} {'wall s':>8} {'MB/s':>7} {'cpu s':>7} {'MB/cpu-s':>9}")
res = {}
for (side, fmt, jit), v in sorted(med.items()):
    w = statistics.median(x[0] for x in v)
    c = statistics.median(x[1] for x in v)
    res[(side, fmt, jit)] = (w, c)
    print(f"{side:<10} {fmt:<6} {jit:<5} {len(v):>4} {w:>8.2f} {mb / w:>7.0f} {c:>7.2f} {mb / c:>9.0f}")
for fmt in sorted({k[1] for k in res}):
    e = res.get(("exporter", fmt, "-"))
    for jit in ("cold", "warm"):
        h = res.get(("hs", fmt, jit))
        if e and h:
            print(f"ratio {fmt} vs History Server ({jit} JIT): wall {h[0] / e[0]:.1f}x, cpu {h[1] / e[1]:.1f}x")
EOF
