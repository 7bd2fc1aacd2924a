#!/usr/bin/env python3
"""Recompress zstd event logs, in place, framed as Spark writes them (BENCHMARKS.md, *Cold start
at the reader's speed*, step 4): zstd level 1, no checksum, a frame per flush. Spark's event-log
writer closes a zstd frame at every flush (SPARK-29322) and flushes after every event but
EnvironmentUpdate, StageSubmitted, TaskStart, TaskEnd, TaskGettingResult and
StageExecutorMetrics (checked on the committed Spark 3.5.5 and 4.1.1 zstd logs: 180 frames, each
ending after one of the others). The zstd CLI, which made the fleet bench's data, writes one frame
with a checksum. Needs the zstd CLI.

    scripts/zstd-as-spark.py FILE.zstd ...
"""
import os
import re
import subprocess
import sys
import tempfile

NO_FLUSH = {b"SparkListenerEnvironmentUpdate", b"SparkListenerStageSubmitted", b"SparkListenerTaskStart",
            b"SparkListenerTaskEnd", b"SparkListenerTaskGettingResult", b"SparkListenerStageExecutorMetrics"}
EVENT = re.compile(rb'^\{"Event":"([^"]*)"')


def frames(text):
    """The text cut after each line that Spark flushes after."""
    out, cur = [], []
    for line in text.splitlines(keepends=True):
        cur.append(line)
        m = EVENT.match(line)
        if not (m and m.group(1) in NO_FLUSH):
            out.append(b"".join(cur))
            cur = []
    if cur:
        out.append(b"".join(cur))
    return out


def main(paths):
    for path in paths:
        text = subprocess.run(["zstd", "-qdc", path], check=True, capture_output=True).stdout
        with tempfile.TemporaryDirectory() as d:
            names = []
            for i, chunk in enumerate(frames(text)):
                name = os.path.join(d, f"{i:07d}")
                with open(name, "wb") as f:
                    f.write(chunk)
                names.append(name)
            # One zstd process compresses every piece (each its own frame), then they are joined.
            subprocess.run(["zstd", "-q", "-1", "--no-check", "--rm"] + names, check=True)
            with open(path + ".tmp", "wb") as out:
                for name in names:
                    with open(name + ".zst", "rb") as f:
                        out.write(f.read())
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main(sys.argv[1:])
