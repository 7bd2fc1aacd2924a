#!/usr/bin/env bash
# Builds a >= 1 GiB realistic event log for the ingest bench by repeating the real 51 MB log
# (tests/data/bench/eventlog-10k-tasks.json.zst: 5 jobs, 10,005 tasks) with job, stage, task and
# SQL execution ids renumbered per copy so they stay unique. Writes, under OUT (default
# target/eventlog-bench):
#   local-bench          uncompressed single-file log
#   local-bench.zstd     the same, zstd level 1 (Spark's default level) in one frame
# Usage: scripts/eventlog-bench-data.sh [OUT] [MIN_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/eventlog-bench}"
MIN_MIB="${2:-1024}"
mkdir -p "$OUT"
zstd -dc tests/data/bench/eventlog-10k-tasks.json.zst | python3 -c '
import re, sys
base = sys.stdin.buffer.read()
lines = base.split(b"\n")
min_bytes = int(sys.argv[1]) * 1024 * 1024
once = (b"SparkListenerLogStart", b"SparkListenerApplicationStart", b"SparkListenerEnvironmentUpdate",
        b"SparkListenerBlockManagerAdded", b"SparkListenerResourceProfileAdded",
        b"SparkListenerExecutorAdded")
def name(l):
    return l[10:l.find(b"\"", 10)] if l.startswith(b"{\"Event\":\"") else b""
head = [l for l in lines if name(l) in once]
end = [l for l in lines if name(l) == b"SparkListenerApplicationEnd"]
body = b"\n".join(l for l in lines if l and name(l) not in once and name(l) != b"SparkListenerApplicationEnd") + b"\n"
def top(pat):
    return max(int(m) for m in re.findall(pat, body)) + 1
jobs = top(rb"\"Job ID\":(\d+)")
stages = top(rb"\"Stage ID\":(\d+)")
tasks = top(rb"\"Task ID\":(\d+)")
sqls = top(rb"\"executionId\":(\d+)")
ids = re.compile(rb"\"(Job ID|Stage ID|Task ID|executionId|rootExecutionId)\":(\d+)|\"(Stage IDs|Parent IDs)\":\[([\d,]*)\]|\"spark\.sql\.execution\.id\":\"(\d+)\"")
out = sys.stdout.buffer
out.write(b"\n".join(head) + b"\n")
written, k = 0, 0
while written < min_bytes:
    off = {b"Job ID": jobs * k, b"Stage ID": stages * k, b"Task ID": tasks * k,
           b"executionId": sqls * k, b"rootExecutionId": sqls * k}
    def sub(m):
        if m.group(1):
            return b"\"%s\":%d" % (m.group(1), int(m.group(2)) + off[m.group(1)])
        if m.group(3):
            nums = b",".join(b"%d" % (int(x) + stages * k) for x in m.group(4).split(b",") if x)
            return b"\"%s\":[%s]" % (m.group(3), nums)
        return b"\"spark.sql.execution.id\":\"%d\"" % (int(m.group(5)) + sqls * k)
    chunk = ids.sub(sub, body) if k else body
    out.write(chunk)
    written += len(chunk)
    k += 1
out.write(b"\n".join(end) + b"\n")
print(f"{k} copies, {written / 2**20:.0f} MiB, {tasks * k} tasks", file=sys.stderr)
' "$MIN_MIB" > "$OUT/local-bench"
zstd -q -f -1 "$OUT/local-bench" -o "$OUT/local-bench.zstd"
ls -l "$OUT"
