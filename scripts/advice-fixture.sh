#!/usr/bin/env bash
# Writes tests/data/advice-<version>/ from a REAL PySpark run of scripts/diagnosis_workload.py
# (application `diagnosis`, local-cluster[2,1,1024], about a minute) for the advice tests
# (issue 50): the job groups join_smj and its broadcast twin, spill and no_spill, gc_pressure and
# tiny_partitions (200 shuffle partitions of a few KB with adaptive execution off), with the
# executors' peak memory recorded (spark.eventLog.logStageExecutorMetrics and
# spark.executor.processTreeMetrics.enabled on, as diagnose suggests where a log lacks them).
# Its zstd rolling event log (eventlog/) and meta.json (the application's id).
#
#   scripts/advice-fixture.sh [PYTHON [OUT]]   # default .venv/bin/python, tests/data/advice-<version>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-$root/.venv/bin/python}"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
out="${2:-$root/tests/data/advice-$version}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/settings.json" <<'JSON'
{"application": {"spark.eventLog.logStageExecutorMetrics": "true",
                 "spark.executor.processTreeMetrics.enabled": "true"}}
JSON
"$py" "$root/scripts/diagnosis_workload.py" --apps diagnosis \
  --only join_smj,join_broadcast,spill,no_spill,gc_pressure,tiny_partitions \
  --settings "$tmp/settings.json" --event-log-dir "$tmp/ev" --meta-out "$tmp/meta.json" \
  --ui-port "${UI_PORT:-4099}"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp "$tmp/meta.json" "$out/"
cat >"$out/README.md" <<MD
# Advice fixture (PySpark $version, local-cluster[2,1,1024])

Written by \`scripts/advice-fixture.sh\` from a real run of \`scripts/diagnosis_workload.py\`
(application \`diagnosis\`; job groups join_smj, join_broadcast, spill, no_spill, gc_pressure,
tiny_partitions; the workload's docstring says what each provokes), with
\`spark.eventLog.logStageExecutorMetrics\` and \`spark.executor.processTreeMetrics.enabled\` on, so
its log holds the executors' peak memory per stage. Do not edit by hand: regenerate.

- \`meta.json\`: application name -> id.
- \`eventlog/\`: Spark's own event log (a rolling \`eventlog_v2_*\` folder, zstd).
MD
du -sh "$out"/*
echo "wrote $out"
