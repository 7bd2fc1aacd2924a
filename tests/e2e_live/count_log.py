#!/usr/bin/env python3
"""Counts the events of one Spark event log directly, as the ground truth of tests/it/jvm/eventlog_live.rs.

Reads a rolling log folder (`eventlog_v2_<app>/`, parts `events_<N>_...` in N order) or a single
file, decompressing zstd parts with `zstd -dc`, parses every line with Python's json module (not
the exporter's parser) and prints one JSON object:

  app_id, app_end_ms (ApplicationEnd, or null), parts (file names), events (by name),
  jobs    {"<group>\\t<status>": n}   status: succeeded | failed           (JobEnd)
  stages  {"<group>\\t<status>": n}   status: complete | failed | skipped  (StageCompleted; a stage
                                      of an ended job that was never submitted is skipped, as
                                      Spark's status store decides at job end)
  tasks   {"<group>\\t<status>": n}   status: succeeded | killed | failed  (TaskEnd "Reason":
                                      Success, TaskKilled, anything else)
  executor_task_ms {"<executor id>": sum of Finish Time - Launch Time over its TaskEnds}

The group of a job is what the exporter's default rule gives (tests/support/groups.py: its
`spark.jobGroup.id`, else the user's tag, else its call site); that of a stage or task is the
group of the job whose `Stage IDs` list the stage.

Usage: count_log.py PATH
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from groups import log_job_group  # noqa: E402


def parts_of(path):
    if os.path.isdir(path):
        names = []
        for n in os.listdir(path):
            m = re.match(r"events_(\d+)_", n)
            if m and not n.endswith(".compact"):
                names.append((int(m.group(1)), n))
        return [os.path.join(path, n) for _, n in sorted(names)]
    return [path]


def read(part):
    base = part[: -len(".inprogress")] if part.endswith(".inprogress") else part
    if base.endswith(".zstd") or base.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", part], check=True, capture_output=True).stdout
    if re.search(r"\.(lz4|snappy|lzf)$", base):
        sys.exit(f"count_log.py: codec of {part} not supported here")
    with open(part, "rb") as f:
        return f.read()


def main():
    path = sys.argv[1]
    parts = parts_of(path)
    events = Counter()
    app_id, app_end = None, None
    job_group = {}          # job id -> group
    stage_group = {}        # stage id -> group
    job_stages = {}         # job id -> stage ids
    submitted = set()       # stage ids ever submitted
    jobs, stages, tasks = Counter(), Counter(), Counter()
    exec_ms = defaultdict(int)
    for part in parts:
        data = read(part)
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            ev = json.loads(line)
            name = ev["Event"]
            events[name] += 1
            if name == "SparkListenerApplicationStart":
                app_id = ev.get("App ID")
            elif name == "SparkListenerApplicationEnd":
                app_end = ev["Timestamp"]
            elif name == "SparkListenerJobStart":
                g = log_job_group(ev)
                job_group[ev["Job ID"]] = g
                job_stages[ev["Job ID"]] = list(ev["Stage IDs"])
                for s in ev["Stage IDs"]:
                    stage_group.setdefault(s, g)
            elif name == "SparkListenerJobEnd":
                jid = ev["Job ID"]
                ok = ev["Job Result"]["Result"] == "JobSucceeded"
                jobs[f"{job_group.get(jid, '')}\t{'succeeded' if ok else 'failed'}"] += 1
                for s in job_stages.get(jid, []):
                    if s not in submitted:
                        submitted.add(s)  # counted once, like a status-store entry
                        stages[f"{stage_group.get(s, '')}\tskipped"] += 1
            elif name == "SparkListenerStageSubmitted":
                submitted.add(ev["Stage Info"]["Stage ID"])
            elif name == "SparkListenerStageCompleted":
                info = ev["Stage Info"]
                status = "failed" if info.get("Failure Reason") is not None else "complete"
                stages[f"{stage_group.get(info['Stage ID'], '')}\t{status}"] += 1
            elif name == "SparkListenerTaskEnd":
                reason = ev["Task End Reason"]["Reason"]
                status = {"Success": "succeeded", "TaskKilled": "killed"}.get(reason, "failed")
                tasks[f"{stage_group.get(ev['Stage ID'], '')}\t{status}"] += 1
                info = ev["Task Info"]
                exec_ms[info["Executor ID"]] += info["Finish Time"] - info["Launch Time"]
    json.dump(
        {
            "app_id": app_id,
            "app_end_ms": app_end,
            "parts": [os.path.basename(p) for p in parts],
            "events": events,
            "jobs": jobs,
            "stages": stages,
            "tasks": tasks,
            "executor_task_ms": exec_ms,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )


main()
