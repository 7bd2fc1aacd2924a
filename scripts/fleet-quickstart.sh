#!/usr/bin/env bash
# Fleet mode on your machine, in one command: builds the release binary, then runs a fleet of
# sharded exporters over a folder of Spark event logs, as the Helm chart's StatefulSet does
# (deploy/helm/spark-exporter, mode: fleet), and prints where to curl /metrics.
#
#   scripts/fleet-quickstart.sh [--shards N] [--port P] [DIR] [-- EXPORTER FLAGS...]
#
#   DIR      spark.eventLog.dir to read: a folder of logs (single files and rolling eventlog_v2_*
#            folders), or a folder of such folders (the exporter reads 3 levels of subfolders,
#            --event-log.depth); or an object-store URL (s3://, gs://, az://, ... with
#            credentials in the environment).
#            Default: tests/data/eventlogs, the repository's 16 real Spark 3.5.5 and 4.1.1
#            applications, one folder per codec and layout.
#   --shards N  exporters, each with --shard.count=N and HOSTNAME=spark-exporter-fleet-<i>: the
#            exporter takes its shard from the name's ordinal, as a StatefulSet pod does (default 2)
#   --port P    shard i listens on 127.0.0.1:P+i (default 9809); each port must be free (exit 1
#            naming the port otherwise), and a shard that exits or is not ready is exit 1 with its
#            log
#   after --  more exporter flags, e.g. -- --model.aggregate-by app_name
#
# No REST polling (--spark.url=): the event logs are the only source. Logs of the exporters go to
# target/fleet-quickstart/shard-<i>.log. Ctrl-C stops the fleet. EXPORTER_BIN=<path> uses
# that binary instead of building one (cargo build --release; CARGO_TARGET_DIR is honoured). (Not
# SPARK_EXPORTER_BIN: the exporter reads every SPARK_EXPORTER_* variable as configuration.)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

shards=2
port=9809
dir=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shards) shards="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [[ -z "$dir" ]] || { echo "one DIR only" >&2; exit 2; }; dir="$1"; shift ;;
  esac
done
dir="${dir:-tests/data/eventlogs}"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "--shards must be a positive integer" >&2; exit 2; }

# The folder to read: the exporter reads its subfolders too (event_log.depth, 3 levels).
if [[ ! "$dir" =~ ^[A-Za-z][A-Za-z0-9+.-]*:// || "$dir" == file://* ]]; then
  [[ -d "${dir#file://}" ]] || { echo "no such folder: $dir" >&2; exit 2; }
fi
dirs=("$dir")

# Each shard's port must be free: a shard that cannot listen exits, and another process answering
# on its port would be counted in its place.
for ((i = 0; i < shards; i++)); do
  p=$((port + i))
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "fleet-quickstart: port $p (shard $i) is in use by another process; stop it or pick other ports with --port" >&2
    exit 1
  fi
done

if [[ -n "${EXPORTER_BIN:-}" ]]; then
  exe="$EXPORTER_BIN"
else
  echo "fleet-quickstart: cargo build --release" >&2
  cargo build --release --locked --quiet
  exe="${CARGO_TARGET_DIR:-$root/target}/release/spark-exporter"
fi
[[ -x "$exe" ]] || { echo "no exporter binary at $exe" >&2; exit 1; }

logs="$root/target/fleet-quickstart"
mkdir -p "$logs"
args=(--spark.url= --shard.count="$shards")
for d in "${dirs[@]}"; do args+=(--event-log.dir "$d"); done

pids=()
stop() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

for ((i = 0; i < shards; i++)); do
  HOSTNAME="spark-exporter-fleet-$i" "$exe" "${args[@]}" --web.listen-address="127.0.0.1:$((port + i))" \
    "${extra[@]}" >"$logs/shard-$i.log" 2>&1 &
  pids+=("$!")
done

# Ready once every source has made its first attempt (/readyz); a shard that exits, or that
# never says it serves on its own address, is an error (whatever else may answer on its port).
shard_failed() {
  echo "fleet-quickstart: shard $1 $2; its log, $logs/shard-$1.log:" >&2
  tail -20 "$logs/shard-$1.log" >&2
  exit 1
}
for ((i = 0; i < shards; i++)); do
  for ((t = 0; ; t++)); do
    kill -0 "${pids[$i]}" 2>/dev/null || shard_failed "$i" "exited"
    if grep -q "Serving metrics" "$logs/shard-$i.log" 2>/dev/null \
        && curl -fs "http://127.0.0.1:$((port + i))/readyz" >/dev/null 2>&1; then
      break
    fi
    ((t > 300)) && shard_failed "$i" "was not ready within 30 s"
    sleep 0.1
  done
done
sleep 1  # a poll interval, for the logs' first reads to land
for ((i = 0; i < shards; i++)); do
  kill -0 "${pids[$i]}" 2>/dev/null || shard_failed "$i" "exited"
done

echo "A fleet of $shards exporters reads ${dir}; each exports its share of the applications:"
# spark_app_info: one series per application, or per name (no app_id) with model.aggregate_by
# app_name, where shards go by name.
counts=()
what=applications
key=app_id
for ((i = 0; i < shards; i++)); do
  info=$(curl -fs "http://127.0.0.1:$((port + i))/metrics" | grep '^spark_app_info{' || true)
  counts+=("$(grep -c . <<<"$info" || true)")
  if [[ -n "$info" ]] && ! grep -q 'app_id=' <<<"$info"; then what=names key=app_name; fi
done
total=0
for ((i = 0; i < shards; i++)); do
  total=$((total + counts[i]))
  printf '  shard %d (HOSTNAME=spark-exporter-fleet-%d): %3d %s so far   curl -s http://127.0.0.1:%d/metrics\n' \
    "$i" "$i" "${counts[$i]}" "$what" "$((port + i))"
done
echo "  $total in all; each is in exactly one shard (XXH32($key) mod $shards)."
echo
echo "Try:"
echo "  curl -s http://127.0.0.1:$port/metrics | grep -E '^spark_(app_info|jobs_total)'"
echo "Logs: $logs/shard-<i>.log. Ctrl-C stops the fleet."
wait
