#!/usr/bin/env bash
# Builds one benchmark harness of crates/bench/benches/ (bench profile = release, as `cargo bench` does) and
# prints the path of its executable, so scripts and BENCHMARKS.md's commands can run it directly
# (its RSS and CPU time are then its own, not cargo's):
#   bin=$(scripts/bench-bin.sh load-bench)        # or eventlog-bench
#   "$bin" render
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name="${1:?usage: scripts/bench-bin.sh load-bench|eventlog-bench}"
cargo bench --no-run -p spark-exporter-bench --bench "$name" --message-format=json-render-diagnostics |
    python3 -c '
import json, sys
name = sys.argv[1]
exes = [m["executable"] for m in map(json.loads, sys.stdin)
        if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name
        and m.get("executable")]
if not exes:
    sys.exit(f"bench-bin: cargo built no executable for bench {name!r}")
print(exes[-1])
' "$name"
