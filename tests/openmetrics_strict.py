#!/usr/bin/env python3
"""The OpenMetrics output against a strict OpenMetrics parser (prometheus_client's), with and
without `_created` samples (issue 13).

    python tests/openmetrics_strict.py [--exporter target/debug/spark-exporter]

For every real Spark event-log fixture under tests/data/ (every codec, both layouts, Spark 3.5
and 4.1), `spark-exporter dump --event-log ... --openmetrics`:
  1. with --web.openmetrics-created: parses with prometheus_client.openmetrics.parser (which
     rejects what the OpenMetrics 1.0 text format does not allow), and every series of every
     counter and histogram family has a `_created` sample with its labels, after the
     application's start and not in the future
  2. without the flag: parses too, and has no `_created` sample at all
Needs a Python with prometheus_client (scripts/test.sh installs it into .venv). Exit 1 on any
failure.
"""
import argparse
import glob
import os
import subprocess
import sys
import time

from prometheus_client.openmetrics.parser import text_string_to_metric_families

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def dump(exe, log, created):
    argv = [exe, "dump", "--spark.url=", "--model.summary-level", "full", "--event-log", log, "--openmetrics"]
    if created:
        argv.append("--web.openmetrics-created")
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def check(exe, log):
    problems = []
    families = list(text_string_to_metric_families(dump(exe, log, True)))
    start = None
    for f in families:
        if f.name == "spark_app_start_time_seconds" and f.samples:
            start = f.samples[0].value
    now = time.time()
    checked = 0
    for f in families:
        if f.type not in ("counter", "histogram"):
            if any(s.name.endswith("_created") for s in f.samples):
                problems.append(f"{f.name}: _created on a {f.type}")
            continue
        series, created = set(), {}
        for s in f.samples:
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            if s.name.endswith("_created"):
                created[labels] = s.value
            else:
                series.add(labels)
        for labels in series:
            checked += 1
            c = created.get(labels)
            if c is None:
                problems.append(f"{f.name}{dict(labels)}: no _created")
            elif c > now + 1 or (start is not None and f.name.startswith("spark_")
                                  and not f.name.startswith("spark_exporter") and c < start):
                problems.append(f"{f.name}{dict(labels)}: _created {c} outside [{start}, {now}]")
    plain = list(text_string_to_metric_families(dump(exe, log, False)))
    if any(s.name.endswith("_created") for f in plain for s in f.samples):
        problems.append("_created without --web.openmetrics-created")
    return checked, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exporter", default=os.path.join(ROOT, "target", "debug", "spark-exporter"))
    a = ap.parse_args()
    logs = sorted(p for p in glob.glob(os.path.join(ROOT, "tests", "data", "eventlogs", "*", "*"))
                  if not p.endswith(".json"))
    logs += glob.glob(os.path.join(ROOT, "tests", "data", "spark-4.1.1-basic", "eventlog", "eventlog*"))
    if not logs:
        print("no event-log fixtures found", file=sys.stderr)
        return 1
    failed = 0
    for log in logs:
        checked, problems = check(a.exporter, log)
        name = os.path.relpath(log, ROOT)
        if problems or checked == 0:
            failed += 1
            print(f"FAIL  {name}: {checked} series checked; " + "; ".join(problems[:5] or ["nothing checked"]))
        else:
            print(f"PASS  {name}: {checked} counter and histogram series, each with _created")
    print(f"openmetrics-strict: {len(logs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
