#!/usr/bin/env bash
# End-to-end test of restarts and the start-up read (docs/internals.md "Restarts and the start-up read"):
# N applications (default 8; 40 is the issue's full case, 2 GB) as renumbered copies of the real
# 51 MB bench log in target/e2e-startup/N/ (made once), five exporter processes in turn on one
# port (cold start, SIGTERM and SIGKILL restarts, some during the start-up read), a scraper at
# 0.1 s and a real Prometheus at 0.2 s. See tests/e2e_startup.py for what it asserts and needs
# (prometheus, zstd). Artefacts in target/e2e-startup/run-<pid>/. Under 3 minutes for N=8.
#
#   scripts/e2e-startup.sh [N] [tests/e2e_startup.py options: --seed S, --keep]
set -euo pipefail
cd "$(dirname "$0")/.."
n=8
if [[ $# -gt 0 && "$1" =~ ^[0-9]+$ ]]; then n="$1"; shift; fi
command -v prometheus >/dev/null || { echo "prometheus not on PATH (apt-get install -y prometheus)" >&2; exit 2; }
cargo build --release --quiet --bin spark-exporter
exec python3 tests/e2e_startup.py --apps "$n" --exporter target/release/spark-exporter "$@"
