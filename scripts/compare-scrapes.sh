#!/usr/bin/env bash
# Live scrapes of two builds of the exporter, compared: both follow the same event-log folder
# (REST off), each is scraped once it has read everything, in both text formats, and the two
# bodies must be identical once the values of clock-derived families (stall seconds, event-log
# lag, poll durations) are masked. For refactorings meant not to change the exposition.
#
#   scripts/compare-scrapes.sh OLD_BIN NEW_BIN [EVENT_LOG_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
old="${1:?usage: scripts/compare-scrapes.sh OLD_BIN NEW_BIN [EVENT_LOG_DIR]}"
new="${2:?usage: scripts/compare-scrapes.sh OLD_BIN NEW_BIN [EVENT_LOG_DIR]}"
dir="${3:-$root/tests/data/spark-4.1.1-basic/eventlog}"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

start() { # BIN PORT
    "$1" --spark.url= --event-log.dir "$dir" --web.listen-address "127.0.0.1:$2" \
        --web.max-staleness 0s --log.level warn >"$work/$2.log" 2>&1 &
}
scrape() { # PORT ACCEPT
    curl -sf -H "Accept: $2" "http://127.0.0.1:$1/metrics"
}
settled() { # PORT: every log read to its end (files finished, none active)
    local t
    t="$(scrape "$1" text/plain)" || return 1
    grep -Eq '^spark_exporter_eventlog_files\{state="finished"\} [1-9]' <<<"$t" &&
        grep -Eq '^spark_exporter_eventlog_files\{state="active"\} 0$' <<<"$t"
}
mask() { # clock-derived families' values -> <clock>
    sed -E 's/^((spark_stage_stalled_seconds|spark_exporter_eventlog_lag_seconds|spark_exporter_scrape_duration_seconds|process_[a-z_]+)(\{[^}]*\})?) .*/\1 <clock>/'
}

p_old=$((20000 + RANDOM % 10000)); p_new=$((p_old + 1))
start "$old" "$p_old"
start "$new" "$p_new"
for p in "$p_old" "$p_new"; do
    for _ in $(seq 1 100); do settled "$p" 2>/dev/null && break; sleep 0.2; done
done
status=0
for accept in "text/plain" "application/openmetrics-text; version=1.0.0"; do
    scrape "$p_old" "$accept" | mask >"$work/old"
    scrape "$p_new" "$accept" | mask >"$work/new"
    if cmp -s "$work/old" "$work/new"; then
        echo "identical ($accept): $(wc -l <"$work/new") lines"
    else
        echo "DIFFERENT ($accept):"
        diff "$work/old" "$work/new" | head -20
        status=1
    fi
done
exit "$status"
