#!/usr/bin/env python3
"""The advice checked against Spark (issue 50): apply what `diagnose` suggests to a real workload,
run it again, and the findings the suggestions address cost at least half as much.

    python3 tests/advice_rerun.py [--repeat N] [--groups G,G] [--markdown FILE] [--keep]

1. Before: scripts/diagnosis_workload.py (application `diagnosis`, job groups --groups, default
   join_smj, spill, tiny_partitions: a join that the run's -1 threshold kept from broadcasting, a
   window whose spill threshold was lowered, 200 tiny shuffle partitions with adaptive execution
   off) on local-cluster[2,1,1024], --repeat times (default 2: timings on 2 cores are noisy).
2. `spark-exporter diagnose --format json` of each run's event log. The first run's settings
   (`applications[0].settings`: one value per property per scope) become the settings file the
   workload takes (--settings): the application's go to its session, a job group's are set when
   the group starts, over the workload's own.
3. After: the workload again with those settings, --repeat times, and `diagnose` of each.
4. For every finding (kind, job group) that got a suggestion in the first run, idle cores left
   out (how many executors a 2-core machine holds is not what the settings change): it must be
   found in every before run (else the check proves nothing), and the median of its cost over the
   after runs (0 where it is not found) must be at most half the median over the before runs.
   The table also gives each such job group's task run time (medians, from Spark's own event
   log), before and after.

Prints one line per assertion and the before/after table (also written as Markdown to
--markdown, for docs/diagnose.md); exit 1 if an assertion failed, 2 if a prerequisite is missing.
About 3 minutes at --repeat 2.
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import e2e_main, free_port  # noqa: E402

WORKLOAD = os.path.join(ROOT, "scripts", "diagnosis_workload.py")
GROUPS = "join_smj,spill,tiny_partitions"
# Kinds whose cost the settings are not meant to change on this machine.
LEFT_OUT = {"idle_cores"}


def flags(ap):
    ap.add_argument("--from", dest="reuse", help="a kept folder of an earlier run: its logs "
                    "are diagnosed again instead of running the workload (for the table)")
    ap.add_argument("--repeat", type=int, default=2, help="runs before and after (default 2)")
    ap.add_argument("--groups", default=GROUPS, help=f"job groups of the workload (default {GROUPS})")
    ap.add_argument("--markdown", help="write the before/after table here")


def workload(a, tmp, name, settings):
    """One run of the workload; its event-log folder."""
    if a.reuse:
        return os.path.join(a.reuse, name, "eventlog")
    events = os.path.join(tmp, name, "eventlog")
    os.makedirs(events)
    argv = [a.python, WORKLOAD, "--apps", "diagnosis", "--only", a.groups,
            "--event-log-dir", events, "--ui-port", str(free_port())]
    if settings:
        argv += ["--settings", settings]
    with open(os.path.join(tmp, name, "workload.log"), "w") as log:
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=True, timeout=600)
    return events


def diagnose(a, events):
    """The one application's report of `diagnose --format json` on `events`."""
    out = subprocess.run([a.exporter, "diagnose", "--event-log", events, "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"diagnose exited {out.returncode}: {out.stderr[-2000:]}")
    apps = json.loads(out.stdout)["applications"]
    if len(apps) != 1:
        raise RuntimeError(f"{len(apps)} applications in {events}")
    return apps[0]


def costs(app):
    """Cost per (kind, job group), summed over the group's findings of that kind."""
    out = {}
    for f in app["findings"]:
        k = (f["kind"], f.get("job_group") or "")
        out[k] = out.get(k, 0.0) + f["cost_seconds"]
    return out


def group_seconds(events, group):
    """The task run time (s) of job group `group`, from Spark's own event log in `events` (its
    jobs' `spark.jobGroup.id`, their stages, the tasks' `Executor Run Time`), not the exporter's."""
    stages, ms = set(), 0
    lines = []
    for d, _, files in os.walk(events):
        for f in sorted(files):
            if f.startswith("events_"):
                p = os.path.join(d, f)
                out = subprocess.run(["zstd", "-dc", p], capture_output=True, check=True).stdout \
                    if p.endswith(".zstd") else open(p, "rb").read()
                lines += out.decode().splitlines()
    for line in lines:
        if '"SparkListenerJobStart"' in line[:40]:
            e = json.loads(line)
            if (e.get("Properties") or {}).get("spark.jobGroup.id") == group:
                stages.update(e.get("Stage IDs") or [])
        elif '"SparkListenerTaskEnd"' in line[:40]:
            e = json.loads(line)
            if e.get("Stage ID") in stages:
                ms += (e.get("Task Metrics") or {}).get("Executor Run Time", 0)
    return ms / 1000


def settings_file(app, path):
    """The report's settings as the workload's --settings file; the settings, as lines."""
    s = {"application": {}, "job_groups": {}}
    lines = []
    for c in app.get("settings", []):
        if c["scope"] == "application":
            s["application"][c["key"]] = c["to_try"]
            lines.append(f"--conf {c['key']}={c['to_try']}")
        else:
            s["job_groups"].setdefault(c["job_group"], {})[c["key"]] = c["to_try"]
            lines.append(f"[{c['job_group']}] spark.conf.set(\"{c['key']}\", \"{c['to_try']}\")")
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
    return lines


def addressed(app):
    """The (kind, job group) of the findings with a suggestion, and each one's settings."""
    out = {}
    for f in app["findings"]:
        if f["kind"] in LEFT_OUT or not f.get("suggestions"):
            continue
        k = (f["kind"], f.get("job_group") or "")
        for s in f["suggestions"]:
            line = f"{s['key']}={s['to_try']} (ran with {s['ran_with']})"
            if line not in out.setdefault(k, []):
                out[k].append(line)
    return out


def run(a, tmp, res, procs):
    logs_before = [workload(a, tmp, f"before-{i}", None) for i in range(a.repeat)]
    before = [diagnose(a, e) for e in logs_before]
    applied = settings_file(before[0], os.path.join(tmp, "settings.json"))
    res.add("the first run got settings to try", bool(applied), "; ".join(applied))
    logs_after = [workload(a, tmp, f"after-{i}", os.path.join(tmp, "settings.json"))
                  for i in range(a.repeat)]
    after = [diagnose(a, e) for e in logs_after]
    targets = addressed(before[0])
    res.add("the first run has findings with a suggestion", bool(targets),
            ", ".join(f"{k}/{g}" for k, g in targets))
    rows = ["| finding (kind, job group) | settings applied | cost before (task-s) | cost after "
            "(task-s) | the group's task time before → after (s) |", "|---|---|---|---|---|"]
    for key, lines in sorted(targets.items()):
        b = [costs(r).get(key) for r in before]
        res.add(f"{key[0]} of {key[1]!r} is found in every run before", all(x is not None for x in b),
                f"costs {b}")
        b = statistics.median([x or 0.0 for x in b])
        af = [costs(r).get(key, 0.0) for r in after]
        m = statistics.median(af)
        res.add(f"{key[0]} of {key[1]!r} costs at most half after", m <= 0.5 * b,
                f"median {b:.2f} -> {m:.2f} task-seconds (runs before "
                f"{[round(costs(r).get(key) or 0, 2) for r in before]}, after {[round(x, 2) for x in af]})")
        tb = statistics.median(group_seconds(e, key[1]) for e in logs_before)
        ta = statistics.median(group_seconds(e, key[1]) for e in logs_after)
        rows.append(f"| {key[0]}, `{key[1]}` | {'; '.join(f'`{x}`' for x in lines)} | {b:.2f} | "
                    f"{m:.2f} | {tb:.1f} → {ta:.1f} |")
    table = "\n".join(rows)
    print(table)
    res.info = {"table": table, "settings": applied}
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table + "\n")


def main():
    return e2e_main("advice-rerun", __doc__, run, flags=flags, tools=(), modules=("pyspark",))


if __name__ == "__main__":
    sys.exit(main())
