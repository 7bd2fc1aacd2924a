#!/usr/bin/env python3
"""End-to-end: the end of an application is never lost (issue 12).

    python3 tests/e2e_drain.py [--keep]

One real PySpark application (tests/e2e_drain_workload.py: two jobs succeed, then, right after a
Prometheus scrape, a last job fails and the application ends) is followed by five real exporters:

  A  REST + event logs, SIGTERM the moment the application ends; scraped only by a real
     Prometheus (Debian's) every 10 s, with the shipped rules evaluated every 30 s (as
     kube-prometheus-stack does)
  B  event logs alone, SIGTERM at the end
  C  REST alone, SIGTERM at the end
  D  REST + event logs in classic mode (--lifecycle.exit-when-app-ends), no signal
  E  REST alone in classic mode, --lifecycle.rest-unreachable-after=3s, no signal

B to E are scraped by this test every 100 ms until they exit; their last scrape is their final
state. Every exporter runs with the default grace period (25 s) and drain scrapes (1).

Asserts:
  1. every exporter exits 0 by itself (A, B, C after the SIGTERM, D and E without one) within
     the grace period, and says why its drain ended (a scrape of the final state)
  2. the final scrape of B to E shows what Spark's own REST API reported for the application
     just before it ended: jobs by (job group, status), with the failed job, and tasks by (job
     group, status: succeeded, failed, killed)
  3. their spark_app_end_time_seconds is Spark's ApplicationEnd time (event logs: B, D), or for
     REST alone (C, E) the last good poll: after the failure was known, not after the end
  4. Prometheus recorded the failed job of A with the final value, in exactly one sample taken
     after the application ended (the application ended between two scrapes: no scrape before
     saw the failure), and spark_app_end_time_seconds
  5. SparkJobFailed fires for it, although the series went stale one scrape later
Prints one line per assertion; exit 1 if any failed, 2 if a prerequisite is missing. The
temporary folder (logs, scrapes, Prometheus data) is kept on failure or with --keep.
"""
import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, Prom, Results, e2e_main, free_port, wait_for  # noqa: E402

WORKLOAD = os.path.join(ROOT, "tests", "e2e_drain_workload.py")
RULES = os.path.join(ROOT, "alerts", "spark-exporter.rules.yml")
GRACE = 25.0  # the default lifecycle.grace_period
SCRAPE_INTERVAL = 10
EVALUATION_INTERVAL = 30


def scrape(port):
    """(status, body) of /metrics, or (None, error)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError as e:
        return None, str(e)


def samples(text):
    """Exposition text to [(name, {label: value}, value)]."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, labels = head, {}
        if "{" in head:
            name, _, rest = head.partition("{")
            for part in rest.rstrip("}").split('",'):
                if "=" in part:
                    k, _, v = part.partition("=")
                    labels[k.strip()] = v.strip().strip('"')
        out.append((name, labels, float(value)))
    return out


def by_group_status(smp, name, app_id):
    """{"group\\tstatus": value} of `name` for `app_id`, zeros left out."""
    out = {}
    for n, labels, v in smp:
        if n == name and labels.get("app_id") == app_id and v:
            k = f"{labels.get('job_group', '')}\t{labels.get('status')}"
            out[k] = out.get(k, 0) + v
    return out


def value(smp, name, app_id):
    for n, labels, v in smp:
        if n == name and labels.get("app_id") == app_id:
            return v
    return None


def application_end_ms(events_dir):
    """Spark's own ApplicationEnd timestamp, from the (uncompressed) event log: a single file or
    the parts of a rolling `eventlog_v2_*` folder (Spark 4's default)."""
    for folder, _, files in os.walk(events_dir):
        for f in files:
            for line in open(os.path.join(folder, f), errors="replace"):
                if '"SparkListenerApplicationEnd"' in line:
                    return json.loads(line)["Timestamp"]
    return None


class Exporter:
    def __init__(self, name, port, args, tmp, procs, exe):
        self.name, self.port = name, port
        self.proc = Proc(name, [exe, f"--web.listen-address=127.0.0.1:{port}", "--log.level=debug"] + args, tmp)
        procs.append(self.proc)
        self.signalled = None
        self.last = None  # (time, body) of the last 200 scrape
        self.exit = None  # (time, code)

    def healthy(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def sigterm(self):
        self.signalled = time.time()
        self.proc.p.send_signal(15)

    def step(self, scraped):
        """One round: record an exit, else scrape (if `scraped`)."""
        if self.exit is not None:
            return
        code = self.proc.p.poll()
        if code is not None:
            self.exit = (time.time(), code)
            return
        if scraped:
            status, body = scrape(self.port)
            if status == 200:
                self.last = (time.time(), body)


def main():
    return e2e_main("e2e-drain", __doc__, run)



def start_prometheus(tmp, procs, exp_port, prom_port):
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: {SCRAPE_INTERVAL}s
  evaluation_interval: {EVALUATION_INTERVAL}s
rule_files:
  - {RULES}
scrape_configs:
  - job_name: spark-exporter
    static_configs:
      - targets: ["127.0.0.1:{exp_port}"]
""")
    p = Proc("prometheus", ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/prom-data",
                            f"--web.listen-address=127.0.0.1:{prom_port}"], tmp)
    procs.append(p)
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    wait_for(lambda: prom.api("status/buildinfo").get("status") == "success", 30, "Prometheus")
    return prom


def parse_time(stamp):
    """Epoch seconds of an RFC 3339 time as Prometheus writes it (nanoseconds, `Z`)."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", stamp)
    if not m:
        return 0
    zone = "+00:00" if m[3] == "Z" else m[3]
    return datetime.fromisoformat(m[1] + zone).timestamp() + float(m[2] or 0)


def last_scrape(prom):
    """Time (epoch s) of Prometheus' last scrape of the exporter, or 0."""
    for t in prom.api("targets").get("data", {}).get("activeTargets", []):
        ls = t.get("lastScrape", "")
        if ls and not ls.startswith("0001"):
            return parse_time(ls)
    return 0


def run(a, tmp, res, procs):
    ui, prom_port = free_port(), free_port()
    events = os.path.join(tmp, "events")
    os.makedirs(events)
    truth_file, go = os.path.join(tmp, "truth.json"), os.path.join(tmp, "go")
    ui_url = f"--spark.url=http://127.0.0.1:{ui}"
    common_rest = [ui_url, "--spark.poll-interval=1s"]
    logs = [f"--event-log.dir={events}", "--event-log.poll-interval=200ms"]
    specs = {
        "A": common_rest + logs,
        "B": ["--spark.url="] + logs,
        "C": common_rest,
        "D": common_rest + logs + ["--lifecycle.exit-when-app-ends"],
        "E": common_rest + ["--lifecycle.exit-when-app-ends", "--lifecycle.rest-unreachable-after=3s"],
    }
    ex = {n: Exporter(n, free_port(), args, tmp, procs, a.exporter) for n, args in specs.items()}
    for e in ex.values():
        wait_for(e.healthy, 30, f"exporter {e.name} healthy")
    prom = start_prometheus(tmp, procs, ex["A"].port, prom_port)

    workload = Proc("workload", [a.python, WORKLOAD, "--ui-port", str(ui), "--events", events,
                                 "--truth", truth_file, "--go", go], tmp)
    procs.append(workload)
    wait_for(lambda: "READY" in open(workload.log).read(), 240, "the workload's first jobs")
    # The last job runs right after a Prometheus scrape of A: the application then ends well
    # within one scrape interval, between two scrapes.
    ready_at = time.time()
    wait_for(lambda: last_scrape(prom) > ready_at, 3 * SCRAPE_INTERVAL, "a Prometheus scrape after READY", every=0.05)
    open(go, "w").close()
    go_at = time.time()
    print(f"e2e-drain: go at {go_at:.3f} (last scrape {last_scrape(prom):.3f})", flush=True)

    # Scrape B..E until the application ends; then SIGTERM A, B and C, and go on scraping B..E
    # until every exporter has exited.
    end_at = None
    deadline = go_at + 120
    while time.time() < deadline:
        if end_at is None and workload.p.poll() is not None:
            end_at = time.time()
            for n in "ABC":
                ex[n].sigterm()
            print(f"e2e-drain: application ended at {end_at:.3f}, exit {workload.p.returncode}; SIGTERM to A, B, C", flush=True)
        for n, e in ex.items():
            e.step(scraped=n != "A")
        if end_at is not None and all(e.exit for e in ex.values()):
            break
        time.sleep(0.1)
    res.add("the workload ended with exit 0", workload.p.returncode == 0, f"exit {workload.p.returncode}")
    truth = json.load(open(truth_file))
    app = truth["app_id"]
    app_end = application_end_ms(events)
    res.add("Spark's ApplicationEnd is in the event log", app_end is not None)
    res.add("Spark's REST API saw every job end", not truth["running"], json.dumps(truth))
    res.add("the last job failed", truth["jobs"].get("report\tfailed") == 1, json.dumps(truth["jobs"]))

    check_exits(res, ex, end_at, app_end)
    for n, e in ex.items():
        if n == "A":
            continue
        if e.last is None:
            res.add(f"{n}: a final scrape", False)
            continue
        with open(os.path.join(tmp, f"final-{n}.prom"), "w") as f:
            f.write(e.last[1])
        smp = samples(e.last[1])
        jobs = by_group_status(smp, "spark_jobs_total", app)
        res.add(f"{n}: final jobs by group and status = Spark's", jobs == truth["jobs"],
                f"got {jobs}, Spark {truth['jobs']}")
        tasks = by_group_status(smp, "spark_tasks_total", app)
        res.add(f"{n}: final tasks by group and status = Spark's", tasks == truth["tasks"],
                f"got {tasks}, Spark {truth['tasks']}")
        end = value(smp, "spark_app_end_time_seconds", app)
        if n in "BD":
            ok = end is not None and app_end is not None and round(end * 1000) == app_end
            res.add(f"{n}: spark_app_end_time_seconds = ApplicationEnd", ok, f"{end} vs {app_end}")
        else:
            ok = end is not None and app_end is not None and truth["failed_known_ms"] - 1000 <= end * 1000 <= app_end + 1000
            res.add(f"{n}: spark_app_end_time_seconds = last good poll, within the failure and the end",
                    ok, f"{end} vs failure known {truth['failed_known_ms']}, end {app_end}")
    check_prometheus(res, prom, truth, app, app_end, end_at)


def check_exits(res, ex, end_at, app_end):
    """Exit codes and times: from the SIGTERM (A, B, C), or from Spark's ApplicationEnd (D, E,
    which may be gone before the workload's Python process is)."""
    for n, e in ex.items():
        ok = e.exit is not None and e.exit[1] == 0
        res.add(f"{n}: exited 0 by itself", ok, f"{e.exit}")
        if e.exit is None or end_at is None or app_end is None:
            continue
        start = e.signalled if e.signalled else app_end / 1000
        took = e.exit[0] - start
        # D and E first need to see the end (E: 3 s unreachable after its third failed poll).
        limit = GRACE + (0 if e.signalled else 10)
        res.add(f"{n}: exit {took:.1f}s after {'SIGTERM' if e.signalled else 'ApplicationEnd'} (< {limit:.0f}s)",
                0 <= took < limit)
        log = open(e.proc.log).read()
        res.add(f"{n}: the drain ended on a scrape of the final state", "ended=Scrapes" in log,
                [line for line in log.splitlines() if "Drained" in line][-1:])


def check_prometheus(res, prom, truth, app, app_end, end_at):
    sel = f'spark_jobs_total{{status="failed",job_group="report",app_id="{app}"}}'
    r = prom.query(f"{sel}[10m]")
    series = r.get("data", {}).get("result", [])
    points = [(float(t), float(v)) for s in series for t, v in s.get("values", [])]
    want = truth["jobs"].get("report\tfailed")
    res.add("Prometheus: the failed job recorded with its final value", bool(points) and points[-1][1] == want,
            f"{points} want {want}")
    res.add("Prometheus: in one sample, taken after the application ended (no earlier scrape saw it)",
            len(points) == 1 and end_at is not None and points[0][0] >= end_at - 0.5,
            f"samples {points}, application ended {end_at}")
    r = prom.query(f'spark_app_end_time_seconds{{app_id="{app}"}}[10m]')
    ends = [float(v) for s in r.get("data", {}).get("result", []) for _, v in s.get("values", [])]
    res.add("Prometheus: spark_app_end_time_seconds recorded = ApplicationEnd",
            bool(ends) and app_end is not None and round(ends[-1] * 1000) == app_end, f"{ends} vs {app_end}")

    def firing():
        for al in prom.alerts():
            lb = al.get("labels", {})
            if lb.get("alertname") == "SparkJobFailed" and lb.get("job_group") == "report" and al.get("state") == "firing":
                return al
        return None
    try:
        al = wait_for(firing, EVALUATION_INTERVAL * 2 + 15, "SparkJobFailed firing")
        res.add("Prometheus: SparkJobFailed fires for the failed job", True, al.get("annotations", {}).get("description", ""))
    except TimeoutError as e:
        res.add("Prometheus: SparkJobFailed fires for the failed job", False, str(e))
    def gone():
        r = prom.query('up{job="spark-exporter"}').get("data", {}).get("result", [])
        return bool(r) and float(r[0]["value"][1]) == 0
    try:
        wait_for(gone, SCRAPE_INTERVAL * 2 + 5, "up == 0")
        res.add("Prometheus: the exporter is gone afterwards (its series went stale)", True)
    except TimeoutError as e:
        res.add("Prometheus: the exporter is gone afterwards (its series went stale)", False, str(e))

if __name__ == "__main__":
    sys.exit(main())
