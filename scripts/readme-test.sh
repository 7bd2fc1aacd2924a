#!/usr/bin/env bash
# The README's quick start, run as written (tests/readme_quickstart.py): the release binary is
# built, the README's marked commands run (the exporter on the embedded default in the
# background, curl of its /metrics, diagnose of the diagnosis run), and every sample line the
# README shows must be in their output, and the status page in headless Chromium lists the
# application and its source. Needs curl, python3, chromium and port 9809 free.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --quiet --bin spark-exporter
exec python3 tests/readme_quickstart.py "$@"
