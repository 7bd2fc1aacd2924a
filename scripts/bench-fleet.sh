#!/usr/bin/env bash
# Fleet mode at scale (BENCHMARKS.md, "1,000 applications (fleet mode)"): one exporter following
# a folder of N finished applications' event logs, at each summary level, measured from outside
# as an operator sees it:
#   - cold start: from the process start until every log is read. Nothing scrapes meanwhile
#     (a scrape renders, and would slow the read): the end is when the process has read() as many
#     bytes as the logs hold (/proc/PID/io rchar), then one scrape confirms
#     spark_exporter_eventlog_files{state="finished"} == N. Wall and CPU seconds (the machine is
#     shared, so CPU is the stable figure);
#   - RSS right after the read (VmRSS), peak RSS over the whole run with its scrapes (VmHWM), and
#     per application: (RSS after the read - RSS of the same exporter over an empty folder) / N;
#   - series (sample lines) and size (text, gzip) of the OpenMetrics exposition;
#   - render time: the exporter's own trace line "Rendered the exposition." (one render of the
#     whole exposition straight into gzip, what a scrape waits for), median and max over the
#     renders after the read; the CPU time of one render (the renderer thread's CPU time over
#     those renders, divided by their number: what a render costs on an idle core); and the
#     first scrape's wall time as curl sees it (a render plus the transfer).
#
#   scripts/bench-fleet.sh [N=1000]            every configuration, a Markdown table
#   scripts/bench-fleet.sh --check [N=100]     the default configuration only (CI): exits
#                                              non-zero unless peak RSS < 100 MiB, every
#                                              render < 1 s and the cold start reads at least
#                                              100 MB decoded per CPU-second
#
# Data: N logs made from the repository's real Spark logs: the eventlog-fixture workload (12
# jobs, SQL, a streaming query) from Spark 3.5.5 and 4.1.1, seven runs, the acceptance-basic
# workload (4 job groups, a failed job), and every 200th application the 51 MB 10,005-task log.
# Each gets its own application id (replaced everywhere in the file; the file named by it as
# Spark names it) and one of 20 application names, a platform's daily jobs (one workload per
# name). Spread over each name's runs: about half plain single files, 30 % zstd single files,
# 20 % zstd rolling folders (zstd level 1, as Spark writes it). PLAIN=1: every log a plain single file (same
# applications; target/bench-fleet/N-plain). Made once (a .done marker); delete to remake.
#
# The release binary is built with cargo (CARGO_TARGET_DIR is honoured), or taken from $EXE.
# SCRAPE_SECS (default 12): seconds of one scrape a second after the read, for more renders.
# PORT (default 19870). CONFIGS: a subset of "full groups app name" (default all).
#
#   CONFIGS=restart scripts/bench-fleet.sh [N]  restarts from a checkpoint (issue 34), at the
#                                              default level: read everything with a checkpoint,
#                                              then SIGTERM and start again, then SIGKILL (after a
#                                              periodic checkpoint) and start again. Each restart:
#                                              the event-log bytes it read (decoded, and raw from
#                                              /proc/PID/io less the checkpoint file), the time
#                                              until the model is complete (readyz?complete) and
#                                              until the first scrape that serves every
#                                              application (with the series the first process
#                                              served) has been answered.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
n="${1:-$([[ $check == 1 ]] && echo 100 || echo 1000)}"
scrape_secs="${SCRAPE_SECS:-12}"
port="${PORT:-19870}"
plain="${PLAIN:-0}"
configs="${CONFIGS:-full groups app name}"
[[ $check == 1 ]] && configs=groups
data="target/bench-fleet"
dir="$data/$n$([[ $plain == 1 ]] && echo -plain || true)"
src="$data/src"
run="$data/run"
# Targets of issue 15, with the default settings.
max_rss_mib=100
max_render_ms=1000
min_cold_mb_per_cpu_s=100

names=(orders-daily-etl customer-360-build fraud-scoring-hourly inventory-snapshot
  clickstream-sessionize marketing-attribution finance-ledger-close search-index-refresh
  recommendations-train sensor-rollup-5m billing-usage-aggregate churn-features
  ads-bid-report supply-forecast hr-payroll-export risk-var-nightly catalog-dedup
  logistics-eta-model support-ticket-nlp nightly-biglog)

# The real logs, decoded once: eight small or medium ones and the 51 MB one.
make_sources() {
  [[ -f "$src/.done" ]] && return
  rm -rf "$src" && mkdir -p "$src"
  local e=tests/data/eventlogs
  cp "$e"/spark-3.5.5-none-single/local-* "$src/s0"
  cp "$e"/spark-4.1.1-none-single/local-* "$src/s1"
  cp "$e"/spark-4.1.1-none-rolling/eventlog_v2_*/events_1_* "$src/s2"
  zstd -qdc "$e"/spark-3.5.5-zstd-single/local-*.zstd >"$src/s3"
  zstd -qdc "$e"/spark-3.5.5-zstd-rolling/eventlog_v2_*/events_1_*.zstd >"$src/s4"
  zstd -qdc "$e"/spark-4.1.1-zstd-single/local-*.zstd >"$src/s5"
  zstd -qdc "$e"/spark-4.1.1-zstd-rolling/eventlog_v2_*/events_1_*.zstd >"$src/s6"
  zstd -qdc tests/data/spark-4.1.1-basic/eventlog/eventlog_v2_*/events_1_*.zstd >"$src/s7"
  zstd -qdc tests/data/bench/eventlog-10k-tasks.json.zst >"$src/big"
  touch "$src/.done"
}

# Application i (1..N): its source log, name, id and layout.
make_app() {
  local i=$1 s name id old layout
  if (( i % 200 == 100 )); then
    s=big
    name=${names[19]}
  else
    local k=$(( i % 19 ))
    name=${names[$k]}
    s=s$(( k % 8 ))
  fi
  id="local-$(( 1796000000000 + i * 60000 ))"
  old=$(grep -o -m1 '"App ID":"[^"]*"' "$src/$s" | cut -d'"' -f4)
  local rewrite=(sed -e "s/$old/$id/g"
    -e "s/\"App Name\":\"[^\"]*\"/\"App Name\":\"$name\"/"
    -e "s/\"spark.app.name\":\"[^\"]*\"/\"spark.app.name\":\"$name\"/")
  layout=$(( (i / 19) % 10 ))
  if (( layout < 5 )) || [[ $plain == 1 ]]; then
    "${rewrite[@]}" "$src/$s" >"$dir/$id"
  elif (( layout < 8 )); then
    "${rewrite[@]}" "$src/$s" | zstd -q -1 -o "$dir/$id.zstd"
  else
    mkdir -p "$dir/eventlog_v2_$id"
    "${rewrite[@]}" "$src/$s" | zstd -q -1 -o "$dir/eventlog_v2_$id/events_1_$id.zstd"
    : >"$dir/eventlog_v2_$id/appstatus_$id"
  fi
}

make_data() {
  [[ -f "$dir/.done" ]] && return
  make_sources
  rm -rf "$dir" && mkdir -p "$dir"
  echo "making $n event logs in $dir ..." >&2
  local i
  for i in $(seq 1 "$n"); do
    make_app "$i" &
    # Two at a time: sed and zstd use one core each.
    if (( i % 2 == 0 )); then wait; fi
  done
  wait
  touch "$dir/.done"
}

make_data
mkdir -p "$data/empty" "$run"

if [[ -n "${EXE:-}" ]]; then
  exe="$EXE"
else
  cargo build --release --quiet --bin spark-exporter
  exe="${CARGO_TARGET_DIR:-target}/release/spark-exporter"
fi
# A link of our own, so a rebuild of a shared target during the run changes nothing.
bin="$run/spark-exporter"
rm -f "$bin"
ln "$exe" "$bin" 2>/dev/null || cp "$exe" "$bin"

accept='application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2'
pid=""
# Measured already when stopped: SIGKILL, no drain (it would wait for a final scrape).
stop() { if [[ -n "$pid" ]]; then kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
trap stop EXIT

now() { date +%s.%N; }
status_kib() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
rchar() { awk '$1 == "rchar:" { print $2 }' "/proc/$pid/io"; }
# CPU ticks of the renderer thread ("exposition"), which does every render and nothing else.
render_ticks() {
  local t
  for t in /proc/"$pid"/task/*; do
    if [[ "$(cat "$t/comm" 2>/dev/null)" == exposition ]]; then awk '{ print $14 + $15 }' "$t/stat"; return; fi
  done
  echo 0
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$pid/stat"; }
mib() { echo "scale=1; $1 / 1024" | bc; }
# GET /metrics as Prometheus does (OpenMetrics, gzip) into file $1; prints the wall seconds.
scrape() {
  curl -sf -H "Accept: $accept" -H 'Accept-Encoding: gzip' -o "$1" -w '%{time_total}\n' \
    "http://127.0.0.1:$port/metrics"
}
sample() { # gzip file, metric line prefix -> value
  gzip -dc "$1" | awk -v p="$2" 'index($0, p) == 1 { print $NF; exit }'
}

# Start the exporter on folder $1 with the extra flags $2...; sets pid and t0.
start() {
  local folder=$1
  shift
  t0=$(now)
  "$bin" --spark.url= --event-log.dir "$folder" --web.listen-address "127.0.0.1:$port" \
    --model.app-retention 24h --web.max-staleness 0s --log.level trace "$@" 2>"$run/exporter.log" &
  pid=$!
}

alive() { kill -0 "$pid" 2>/dev/null || { cat "$run/exporter.log" >&2; echo "exporter exited" >&2; exit 1; }; }

# Baseline: the same exporter over an empty folder, once ready.
start "$data/empty"
until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do alive; sleep 0.05; done
sleep 1
base_kib=$(status_kib VmRSS)
stop

files_bytes=$(find "$dir" -type f ! -name .done -printf '%s\n' | awk '{ s += $1 } END { print s }')
decoded=0
echo "baseline (empty folder): VmRSS $(mib "$base_kib") MiB; data: $n applications, $(( files_bytes / 1000000 )) MB on disk; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

rows=()
failed=0
# One configuration: label, flags...
measure() {
  local label=$1
  shift
  start "$dir" "$@"
  # The read: poll what the process has read from files (cheap, no scrape).
  local deadline=$(( $(date +%s) + 600 ))
  until (( $(rchar 2>/dev/null || echo 0) >= files_bytes )); do
    alive
    if (( $(date +%s) > deadline )); then
      echo "$label: read $(rchar) of $files_bytes bytes in 10 minutes; giving up" >&2
      exit 1
    fi
    sleep 0.02
  done
  local read_s cpu_read rss_read hwm_read
  read_s=$(echo "$(now) - $t0" | bc)
  cpu_read=$(cpu_s)
  rss_read=$(status_kib VmRSS)
  hwm_read=$(status_kib VmHWM)
  local mark ticks0
  mark=$(wc -l <"$run/exporter.log")
  ticks0=$(render_ticks)
  local body="$run/body.gz" first files apps
  first=$(scrape "$body")
  files=$(sample "$body" 'spark_exporter_eventlog_files{state="finished"}')
  # Every byte read should mean every log finished; if not, say so and wait for it.
  while [[ "$files" != "$n" ]]; do
    echo "$label: all bytes read but $files of $n logs finished; waiting" >&2
    sleep 0.5
    first=$(scrape "$body")
    files=$(sample "$body" 'spark_exporter_eventlog_files{state="finished"}')
    read_s="$(echo "$(now) - $t0" | bc)"
  done
  decoded=$(sample "$body" 'spark_exporter_eventlog_bytes_total')
  # One spark_app_info per application, or per name with --model.aggregate-by app_name.
  apps=$(gzip -dc "$body" | grep -c '^spark_app_info{' || true)
  if [[ "$*" != *app_name* && "$apps" != "$n" ]]; then
    echo "$label: $apps applications exported, not $n" >&2
    failed=1
  fi
  local series text gz
  series=$(gzip -dc "$body" | grep -vc '^#' || true)
  text=$(gzip -dc "$body" | wc -c)
  gz=$(stat -c %s "$body")
  # Keep scraping once a second: the renderer renders again after a change, or at least every
  # 5 s while a format is scraped.
  local i
  for i in $(seq 1 "$scrape_secs"); do
    sleep 1
    scrape "$body" >/dev/null
  done
  local hwm rss_end med max count ticks1
  ticks1=$(render_ticks)
  hwm=$(status_kib VmHWM)
  rss_end=$(status_kib VmRSS)
  read -r med max count <<<"$(tail -n +"$((mark + 1))" "$run/exporter.log" |
    grep 'Rendered the exposition' | grep -o ' ms=[0-9.]*' | cut -d= -f2 | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "- - 0"; else printf "%.0f %.0f %d\n", v[int((NR + 1) / 2)], v[NR], NR }')"
  stop
  local per_app cpu_render=-
  per_app=$(( (rss_read - base_kib) / n ))
  if (( count > 0 )); then
    cpu_render=$(( (ticks1 - ticks0) * 1000 / $(getconf CLK_TCK) / count ))
  fi
  rows+=("| $label | $(printf '%.1f' "$read_s") | $cpu_read | $(mib "$rss_read") | $(mib "$hwm") | $(mib "$rss_end") | $per_app | $apps | $series | $med / $max ($count) | $cpu_render | $(printf '%.0f' "$(echo "$first * 1000" | bc)") | $(( text / 1000 )) | $(( gz / 1000 )) |")
  echo "${rows[-1]}" >&2
  if [[ $check == 1 ]]; then
    if (( hwm / 1024 >= max_rss_mib )); then
      echo "FAIL: peak RSS $(mib "$hwm") MiB, not under $max_rss_mib MiB" >&2
      failed=1
    fi
    if [[ "$max" == "-" ]] || (( max >= max_render_ms )); then
      echo "FAIL: slowest render $max ms, not under $max_render_ms ms" >&2
      failed=1
    fi
    # The cold start's read rate, decoded MB per CPU-second: a floor far below what it does
    # (BENCHMARKS.md, "Cold start at the reader's speed"), so only a large regression fails.
    local rate
    rate=$(echo "$decoded / 1000000 / $cpu_read" | bc)
    if (( rate < min_cold_mb_per_cpu_s )); then
      echo "FAIL: cold start read $rate MB per CPU-second, not at least $min_cold_mb_per_cpu_s" >&2
      failed=1
    fi
  fi
}

restart_rows=()
# Spark series of an exposition (gzip file $1), sorted, without the exporter's own.
spark_series() { gzip -dc "$1" | grep '^spark_' | grep -v '^spark_exporter_' | sort; }
# Restart from a checkpoint: $1 = TERM or KILL.
restart_once() {
  local sig=$1 ckpt=$2 want=$3
  if [[ $sig == TERM ]]; then
    kill -TERM "$pid"
  else
    kill -KILL "$pid"
  fi
  wait "$pid" 2>/dev/null || true
  pid=""
  local ck_bytes
  ck_bytes=$(stat -c %s "$ckpt")
  start "$dir" --checkpoint.path "$ckpt" --checkpoint.interval 5s --lifecycle.drain-scrapes 0
  local body="$run/restart.gz" apps=0 deadline=$(( $(date +%s) + 120 )) ready_s served_s t_end
  # When the model is complete (readiness with every source's start-up read), then scrape until
  # every application is served: the time is when that scrape's answer had arrived.
  until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz?complete"; do alive; sleep 0.01; done
  ready_s=$(echo "$(now) - $t0" | bc)
  until [[ "$apps" == "$n" ]]; do
    alive
    (( $(date +%s) > deadline )) && { echo "restart after SIG$sig: $apps of $n applications in 2 minutes" >&2; exit 1; }
    if scrape "$body" >/dev/null 2>&1; then
      t_end=$(now)
      apps=$(gzip -dc "$body" | grep -c '^spark_app_info{' || true)
    fi
    [[ "$apps" == "$n" ]] || sleep 0.02
  done
  served_s=$(echo "$t_end - $t0" | bc)
  local raw decoded_r same=yes
  sleep 1
  scrape "$body" >/dev/null
  raw=$(( $(rchar) - ck_bytes ))
  decoded_r=$(sample "$body" 'spark_exporter_eventlog_bytes_total')
  if ! diff -q <(spark_series "$body") "$want" >/dev/null; then
    same=no
    failed=1
    echo "restart after SIG$sig: the series differ from before:" >&2
    diff <(spark_series "$body") "$want" | head -5 >&2
  fi
  restart_rows+=("| SIG$sig | $(printf '%.2f' "$ready_s") | $(printf '%.2f' "$served_s") | $(( ck_bytes / 1000 )) | $decoded_r | $raw | $(echo "scale=3; 100 * $raw / $files_bytes" | bc) | $same |")
  echo "${restart_rows[-1]}" >&2
}
measure_restart() {
  local ckpt="$run/restart.ckpt"
  rm -f "$ckpt"
  start "$dir" --checkpoint.path "$ckpt" --checkpoint.interval 5s --lifecycle.drain-scrapes 0
  until (( $(rchar 2>/dev/null || echo 0) >= files_bytes )); do alive; sleep 0.05; done
  local body="$run/before.gz" files=0
  until [[ "$files" == "$n" ]]; do
    sleep 0.5
    scrape "$body" >/dev/null
    files=$(sample "$body" 'spark_exporter_eventlog_files{state="finished"}')
  done
  spark_series "$body" >"$run/want.txt"
  echo "restart: $(wc -l <"$run/want.txt") Spark series before" >&2
  restart_once TERM "$ckpt" "$run/want.txt"
  # A periodic checkpoint of the restarted process, then SIGKILL.
  sleep 6
  restart_once KILL "$ckpt" "$run/want.txt"
  stop
}

for c in $configs; do
  case $c in
    restart) measure_restart; continue ;;
    full) measure "full" --model.summary-level full ;;
    groups) measure "groups (default)" ;;
    app) measure "app" --model.summary-level app ;;
    name) measure "groups, aggregate_by app_name" --model.aggregate-by app_name ;;
    *) echo "unknown configuration $c" >&2; exit 2 ;;
  esac
done

if (( ${#restart_rows[@]} > 0 )); then
  echo
  echo "Restarts from a checkpoint, $n applications, $files_bytes bytes of logs on disk:"
  echo
  echo "| restart after | model complete s (readyz?complete) | first full scrape answered s | checkpoint KB | event-log bytes decoded | raw bytes read (less the checkpoint) | % of the logs | series as before |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${restart_rows[@]}"
  (( ${#rows[@]} == 0 )) && exit "$failed"
fi
echo
echo "$n applications: $(( files_bytes / 1000000 )) MB of logs on disk, $(( decoded / 1000000 )) MB decoded; baseline RSS (empty folder) $(mib "$base_kib") MiB; $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| summary level | cold start s (wall) | CPU s | RSS after read MiB | peak RSS MiB | RSS at end MiB | KiB per application | spark_app_info | series | render ms median / max (renders) | render CPU ms | first scrape ms | text KB | gzip KB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [[ $check == 1 && $n != 1000 ]]; then
  echo "(the targets are for 1,000 applications; RSS grows with the applications held, so check 1,000 too: scripts/bench-fleet.sh --check 1000)"
fi
if [[ $check == 1 ]]; then
  if [[ $failed == 0 ]]; then
    echo "check: met (peak RSS < $max_rss_mib MiB, every render < $max_render_ms ms, cold start at least $min_cold_mb_per_cpu_s MB decoded per CPU-second)"
  else
    echo "check: FAILED" >&2
  fi
fi
exit "$failed"
