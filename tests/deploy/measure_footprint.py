"""Measure the exporter's footprint the way the sidecar runs: RSS and CPU while idle, and while
it follows a live Spark application and is scraped. Everything stays on loopback and every
loop is bounded. Prints a Markdown table for deploy/README.md "Measurements".

  python tests/deploy/measure_footprint.py --exporter target/release/spark-exporter \
      [--pyspark-python .venv/bin/python] [--seconds 60] [--scrapes-per-second 2]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

CLK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_stats(pid: int) -> tuple[int, int, float]:
    """(VmRSS KiB, VmHWM KiB, CPU seconds so far) of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(next(l for l in status.splitlines() if l.startswith("VmRSS:")).split()[1])
    hwm = int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK
    return rss, hwm, cpu


def wait_http(url: str, timeout: float) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return True
        except Exception:
            time.sleep(0.5)
    return False


def window(pid, seconds, scrape_url=None, rate=0.0):
    """Sample over `seconds`; scrape at `rate` per second if given. Returns a dict."""
    _, _, cpu0 = proc_stats(pid)
    t0 = time.time()
    n, size, rss_max = 0, 0, 0
    while time.time() - t0 < seconds:
        if scrape_url:
            size = len(urllib.request.urlopen(scrape_url, timeout=5).read())
            n += 1
            time.sleep(1 / rate)
        else:
            time.sleep(1)
        rss_max = max(rss_max, proc_stats(pid)[0])
    rss, hwm, cpu1 = proc_stats(pid)
    wall = time.time() - t0
    return {"rss_mib": rss / 1024, "rss_max_mib": rss_max / 1024, "hwm_mib": hwm / 1024,
            "cpu_m": 1000 * (cpu1 - cpu0) / wall, "scrapes": n, "bytes": size}


SPARK_JOB = """
import sys, time
from pyspark.sql import SparkSession
s = (SparkSession.builder.master("local[1]").appName("footprint")
     .config("spark.ui.port", sys.argv[1]).config("spark.eventLog.enabled", "true")
     .config("spark.eventLog.dir", "file://" + sys.argv[2]).config("spark.sql.shuffle.partitions", "4")
     .getOrCreate())
end = time.time() + float(sys.argv[3])
i = 0
while time.time() < end:            # bounded: a small job with a shuffle every ~2 s
    s.range(20000).selectExpr("id % 7 as k").groupBy("k").count().collect()
    i += 1
    time.sleep(2)
s.stop()
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--pyspark-python")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--scrapes-per-second", type=float, default=2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="deploy-footprint-"))
    events = tmp / "events"
    events.mkdir()
    ui_port, port = free_port(), free_port()
    exporter = subprocess.Popen(
        [a.exporter, "--web.listen-address", f"127.0.0.1:{port}", "--spark.url", f"http://127.0.0.1:{ui_port}",
         "--event-log.dir", str(events), "--log.level", "warn"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "exporter.log", "w"))
    rows = []
    spark = None
    try:
        metrics = f"http://127.0.0.1:{port}/metrics"
        assert wait_http(f"http://127.0.0.1:{port}/healthz", 30), "exporter did not start"
        time.sleep(5)
        rows.append(("idle: no Spark UI answering, empty event-log dir", window(exporter.pid, a.seconds / 2)))
        rows.append(("idle, scraped", window(exporter.pid, a.seconds / 2, metrics, a.scrapes_per_second)))
        if a.pyspark_python:
            job = tmp / "job.py"
            job.write_text(textwrap.dedent(SPARK_JOB))
            spark = subprocess.Popen([a.pyspark_python, str(job), str(ui_port), str(events), str(a.seconds + 60)],
                                     stdout=subprocess.DEVNULL, stderr=open(tmp / "spark.log", "w"),
                                     env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
            assert wait_http(f"http://127.0.0.1:{ui_port}/api/v1/applications", 120), "Spark UI did not come up"
            time.sleep(20)  # let the exporter follow a few polls and event-log lines
            rows.append(("live Spark app (local[1], a shuffle job every 2 s), scraped",
                         window(exporter.pid, a.seconds, metrics, a.scrapes_per_second)))
    finally:
        if spark:
            spark.terminate()
            spark.wait(60)
        exporter.terminate()
        code = exporter.wait(30)
    print(f"exporter: {a.exporter} ({os.path.getsize(a.exporter) / 2**20:.1f} MiB); exit code on SIGTERM: {code}")
    print("| phase | RSS at end | RSS max | peak (VmHWM) | CPU (millicores) | scrapes | /metrics bytes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in rows:
        print(f"| {name} | {r['rss_mib']:.1f} MiB | {r['rss_max_mib']:.1f} MiB | {r['hwm_mib']:.1f} MiB | "
              f"{r['cpu_m']:.1f}m | {r['scrapes']} | {r['bytes']} |")
    print(f"logs in {tmp}")


if __name__ == "__main__":
    sys.exit(main())
