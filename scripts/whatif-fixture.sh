#!/usr/bin/env bash
# Writes tests/data/whatif-<version>/ from REAL PySpark runs of scripts/whatif_workload.py: the
# same application on local-cluster[1,1,1024] and on local-cluster[2,1,1024] (about 2 minutes),
# its tasks sleeping in the JVM. tests/it/whatif.rs checks that each run's what-if prediction of
# the other's wall time is within 20%. Their zstd rolling event logs (eventlog/) and meta.json.
#
#   scripts/whatif-fixture.sh [PYTHON [OUT]]   # default .venv/bin/python, tests/data/whatif-<version>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${1:-$root/.venv/bin/python}"
version="$("$py" -c 'import pyspark; print(pyspark.__version__)')"
out="${2:-$root/tests/data/whatif-$version}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/scripts/whatif_workload.py" --event-log-dir "$tmp/ev" --meta-out "$tmp/meta.json" \
  --ui-port "${UI_PORT:-4111}"
rm -rf "$out" && mkdir -p "$out"
cp -r "$tmp/ev" "$out/eventlog" && cp "$tmp/meta.json" "$out/"
cat >"$out/README.md" <<MD
# What-if fixture (PySpark $version)

Written by \`scripts/whatif-fixture.sh\` from real runs of \`scripts/whatif_workload.py\`: the same
application (\`whatif-1\` on local-cluster[1,1,1024], \`whatif-2\` on local-cluster[2,1,1024]),
its tasks sleeping in the JVM (the workload's docstring lists its jobs). Do not edit by hand:
regenerate.

- \`meta.json\`: application name -> id.
- \`eventlog/\`: Spark's own event logs (rolling \`eventlog_v2_*\` folders, zstd).
MD
du -sh "$out"/*
echo "wrote $out"
