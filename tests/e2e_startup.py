#!/usr/bin/env python3
"""End-to-end: restarts and the start-up read (docs/internals.md "Restarts and the start-up read").

    python3 tests/e2e_startup.py [--apps N] [--cycles K] [--seed S] [--exporter PATH] [--keep]

Store: N plain copies of the real 51 MB log tests/data/bench/eventlog-10k-tasks.json.zst, each
with its own application id (as scripts/eventlog-many-apps.sh makes them: 10,005 tasks, 10 jobs,
10 stages each), made once in target/e2e-startup/N/ and reused. The truth is
`spark-exporter dump --spark.url= --event-log STORE` (every application read to its end).

One run, one port, exporter processes in turn (`--spark.url= --event-log.dir STORE`, default
settings otherwise), each started once the previous one has exited:
  P1  cold start: runs until its start-up read is complete (T seconds), and a few seconds more;
      then SIGTERM (a restart after the read)
  then --cycles times (default 3) three processes:
      SIGTERM at a random point in [0, 1.5 T] after its start: during its start-up read or after
      SIGKILL at a random point in [0, 1.5 T]
      SIGTERM or SIGKILL (random) at a random point in [0.05, 0.7 T]: during its start-up read
  last: runs until its start-up read is complete, and a few seconds more (SIGTERM)
A scraper thread GETs /metrics, /readyz and /readyz?complete every 0.1 s throughout, and a real
Prometheus (scrape_interval 200ms) scrapes the same port. Asserts:
  1. no per-application counter series (spark_tasks_total, spark_jobs_total,
     spark_stages_total: the series with an app_id label) in any scrape is lower than in an
     earlier scrape of the same series, across processes too
  2. none is partial: whenever an application appears in a scrape (any series with its app_id),
     its series of those three families are exactly the truth's (same series, same values), and
     its spark_tasks_total summed over statuses is 10,005; no application outside the store
  3. once spark_exporter_startup_complete is 1, all N applications are served
  4. cold start (P1): /readyz?complete answers 503 at least once before the start-up read is
     complete and 200 from then on; spark_exporter_startup_complete goes 0 -> 1; it never goes
     back to 0 in any process; the last process reaches 1 and answers 200 from then on (its 0s
     and 503s are reported, not asserted: over a warm page cache its read may end before the
     first scrape)
  5. every SIGTERM ends in exit 0 (the drain); the run exercised a restart during a start-up read
  6. Prometheus: resets(spark_tasks_total[window]) is 0 for every series, and
     resets({__name__=~"spark_.*_total"}[window]) is 0 for every per-application series and
     every other spark_ series but the exporter's own process counters (spark_exporter_*, which
     start from zero with each process: listed, not asserted); at the end
     sum by (app_id) (spark_tasks_total) is 10,005 for each of the N applications
Prints PASS/FAIL per check and a summary; exit 1 if any failed, 2 if a prerequisite is missing.
Artefacts (exporter and Prometheus logs, the scrape record, report.json) stay in
target/e2e-startup/run-<pid>/; Prometheus' config and data go to a temporary folder (kept on
failure or with --keep). The exporter is target/release/spark-exporter unless --exporter says.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, Prom, e2e_main, free_port, wait_for  # noqa: E402

BENCH = os.path.join(ROOT, "tests", "data", "bench", "eventlog-10k-tasks.json.zst")
TASKS_PER_APP = 10005  # the bench log's SparkListenerTaskEnd events
FAMILIES = ("spark_tasks_total", "spark_jobs_total", "spark_stages_total")
SCRAPE_EVERY = 0.1
# Prometheus' scrape interval: short enough that it scrapes some process during its start-up
# read, which takes 0.1 to 0.3 s over the 8 logs since issue 38 (at 1 s, one CI run in several
# saw none: its check below failed).
PROM_SCRAPE = "200ms"
PROM_SCRAPE_S = 0.2
HOLD = 3.5  # seconds a process that runs to the end of its read keeps running after it

LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
APP_ID = re.compile(r'app_id="((?:[^"\\]|\\.)*)"')
COMPLETE = re.compile(r"^spark_exporter_startup_complete(?:\{[^}]*\})?\s+(\S+)", re.M)


def log(msg):
    print(f"e2e-startup: {msg}", flush=True)


# --- the store and the truth ---------------------------------------------------------------

def make_store(n):
    """target/e2e-startup/N/: N renumbered plain copies of the bench log (made once)."""
    store = os.path.join(ROOT, "target", "e2e-startup", str(n))
    if os.path.isfile(os.path.join(store, ".done")):
        return store, 0.0
    t0 = time.time()
    shutil.rmtree(store, ignore_errors=True)
    tmp = store + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    plain = subprocess.run(["zstd", "-dc", BENCH], check=True, capture_output=True).stdout
    app = re.search(rb'"App ID":"([^"]*)"', plain).group(1)
    for i in range(1, n + 1):
        new = f"local-17959812{i:05d}".encode()
        with open(os.path.join(tmp, new.decode()), "wb") as f:
            f.write(plain.replace(app, new))
    open(os.path.join(tmp, ".done"), "w").close()
    os.rename(tmp, store)
    return store, time.time() - t0


def series_key(name, labels):
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def parse(body):
    """(apps present: every app_id of any series, {app_id: {series key: value}} of FAMILIES,
    startup_complete or None)."""
    apps = set(APP_ID.findall(body))
    per_app = {}
    for line in body.splitlines():
        if not line.startswith(FAMILIES):
            continue
        m = LINE.match(line)
        if not m or m.group(1) not in FAMILIES:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        app = labels.get("app_id")
        if app is None:
            continue
        per_app.setdefault(app, {})[series_key(m.group(1), labels)] = float(m.group(3))
    c = COMPLETE.search(body)
    return apps, per_app, (float(c.group(1)) if c else None)


def tasks_sum(series):
    return sum(v for k, v in series.items() if k.startswith("spark_tasks_total{"))


# --- the scraper ---------------------------------------------------------------------------

def get(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except OSError as e:
        return None, str(e)


class Scraper(threading.Thread):
    """GETs /metrics, /readyz, /readyz?complete every SCRAPE_EVERY s; checks every scrape
    against the truth and against every earlier scrape, as it goes."""

    def __init__(self, port, truth, run_dir):
        super().__init__(daemon=True)
        self.base = f"http://127.0.0.1:{port}"
        self.truth = truth
        self.gen = 0  # the exporter process now running (1-based; set by the main thread)
        self.stop_flag = threading.Event()
        self.rounds = []  # compact record of each round
        self.last = {}  # series key -> (value, time, gen)
        self.decreases = []
        self.partials = []
        self.unknown_apps = []
        self.missing_after_complete = []
        self.errors = []
        self.scrapes_ok = 0
        self.samples_checked = 0
        self.app_views = 0
        self.record = open(os.path.join(run_dir, "scrapes.jsonl"), "w")
        self.lock = threading.Lock()

    def run(self):
        while not self.stop_flag.is_set():
            t0 = time.time()
            try:
                self.round()
            except Exception as e:  # noqa: BLE001 - keep scraping, report at the end
                self.errors.append(f"{t0:.3f}: {type(e).__name__}: {e}")
            left = SCRAPE_EVERY - (time.time() - t0)
            if left > 0:
                time.sleep(left)

    def round(self):
        g0, t0 = self.gen, time.time()
        status, body = get(self.base + "/metrics")
        t1 = time.time()
        rz, _ = get(self.base + "/readyz", timeout=2)
        rzc, rzc_body = get(self.base + "/readyz?complete", timeout=2)
        g1, t2 = self.gen, time.time()
        r = {"t0": round(t0, 3), "t1": round(t1, 3), "t2": round(t2, 3), "gen": g0 if g0 == g1 else None,
             "metrics": status, "readyz": rz, "readyz_complete": rzc,
             "readyz_complete_body": rzc_body.strip()[:60] if rzc else None}
        if status == 200:
            self.scrapes_ok += 1
            apps, per_app, complete = parse(body)
            r.update(complete=complete, apps=len(apps), bytes=len(body))
            self.check(t1, g0 if g0 == g1 else f"{g0}/{g1}", apps, per_app, complete)
        with self.lock:
            self.rounds.append(r)
        self.record.write(json.dumps(r) + "\n")

    def check(self, t, gen, apps, per_app, complete):
        for app in sorted(apps):
            if app not in self.truth:
                self.unknown_apps.append({"t": t, "gen": gen, "app": app})
                continue
            self.app_views += 1
            got, want = per_app.get(app, {}), self.truth[app]
            if got != want:
                missing = sorted(set(want) - set(got))
                extra = sorted(set(got) - set(want))
                diff = sorted((k, got[k], want[k]) for k in set(got) & set(want) if got[k] != want[k])
                self.partials.append({"t": round(t, 3), "gen": gen, "app": app,
                                      "tasks_sum": tasks_sum(got), "series": len(got), "want_series": len(want),
                                      "missing": missing[:5], "n_missing": len(missing),
                                      "extra": extra[:5], "n_extra": len(extra),
                                      "differ": diff[:5], "n_differ": len(diff)})
        if complete == 1:
            gone = sorted(set(self.truth) - apps)
            if gone:
                self.missing_after_complete.append({"t": round(t, 3), "gen": gen, "missing": gone[:5],
                                                    "n_missing": len(gone)})
        for app, series in per_app.items():
            for k, v in series.items():
                self.samples_checked += 1
                prev = self.last.get(k)
                if prev is not None and v < prev[0]:
                    self.decreases.append({"series": k, "before": prev[0], "before_t": round(prev[1], 3),
                                           "before_gen": prev[2], "after": v, "after_t": round(t, 3),
                                           "after_gen": gen})
                self.last[k] = (v, t, gen)

    def of(self, gen):
        with self.lock:
            return [r for r in self.rounds if r["gen"] == gen]


# --- the exporter processes ----------------------------------------------------------------

class Run:
    def __init__(self, a, store, port, run_dir, scraper, prom):
        self.a, self.store, self.port, self.run_dir, self.scraper = a, store, port, run_dir, scraper
        self.prom = prom
        self.procs = []  # dicts: gen, proc, start, signal, signal_t, exit, exit_t, complete_t

    def start(self):
        gen = len(self.procs) + 1
        argv = [self.a.exporter, "--spark.url=", "--event-log.dir", self.store,
                "--web.listen-address", f"127.0.0.1:{self.port}"]
        self.scraper.gen = gen
        p = Proc(f"exporter-{gen}", argv, self.run_dir)
        d = {"gen": gen, "proc": p, "start": time.time(), "pid": p.p.pid, "signal": None, "signal_t": None,
             "exit": None, "exit_t": None, "complete_t": None, "complete_at_signal": None}
        self.procs.append(d)
        log(f"P{gen} started (pid {p.p.pid}): {' '.join(argv)}")
        return d

    def complete_seen(self, d):
        for r in self.scraper.of(d["gen"]):
            if r.get("complete") == 1:
                return r["t1"]
        return None

    def wait_complete(self, d, timeout):
        t = wait_for(lambda: self.complete_seen(d), timeout, f"P{d['gen']}'s start-up read", every=0.05)
        d["complete_t"] = t
        log(f"P{d['gen']}: start-up read complete after {t - d['start']:.2f}s")
        return t

    def kill(self, d, sig, timeout=40):
        rs = [r for r in self.scraper.of(d["gen"]) if r.get("complete") is not None]
        d["complete_at_signal"] = rs[-1]["complete"] if rs else None
        d["signal"], d["signal_t"] = sig.name, time.time()
        try:
            d["proc"].p.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            d["exit"] = d["proc"].p.wait(timeout)
        except subprocess.TimeoutExpired:
            d["proc"].stop()
            d["exit"] = d["proc"].p.wait(5)
            d["exit"] = f"hung, killed ({d['exit']})"
        d["exit_t"] = time.time()
        log(f"P{d['gen']}: {sig.name} {d['signal_t'] - d['start']:.2f}s after its start (last scrape: "
            f"startup_complete={d['complete_at_signal']}), exit {d['exit']} {d['exit_t'] - d['signal_t']:.2f}s later")

    def align(self, lead=0.1):
        """Sleep until `lead` s before one of Prometheus' scrapes (its scrapes of a target keep
        their phase), so that Prometheus scrapes the process started next early in its read."""
        last = wait_for(lambda: last_scrape(self.prom), 30, "a Prometheus scrape of the target", every=0.1)
        step = PROM_SCRAPE_S
        nxt = last + step
        while nxt - lead < time.time() + 0.05:
            nxt += step
        time.sleep(nxt - lead - time.time())

    def at(self, d, seconds):
        left = d["start"] + seconds - time.time()
        if left > 0:
            time.sleep(left)


# --- Prometheus ----------------------------------------------------------------------------

def start_prometheus(tmp, run_dir, procs, exp_port, prom_port):
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: {PROM_SCRAPE}
  scrape_timeout: {PROM_SCRAPE}
scrape_configs:
  - job_name: spark-exporter
    static_configs:
      - targets: ["127.0.0.1:{exp_port}"]
""")
    shutil.copy(cfg, os.path.join(run_dir, "prometheus.yml"))
    argv = ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/prom-data",
            f"--web.listen-address=127.0.0.1:{prom_port}", "--storage.tsdb.retention.time=1d"]
    version = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    log("Prometheus: " + (version.stdout + version.stderr).splitlines()[0])
    log("Prometheus flags: " + " ".join(argv[1:]))
    p = Proc("prometheus", argv, run_dir)
    procs.append(p)
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    wait_for(lambda: prom.api("status/buildinfo").get("status") == "success", 30, "Prometheus")
    return prom, (version.stdout + version.stderr).strip(), argv


def parse_time(stamp):
    """Epoch seconds of an RFC 3339 time as Prometheus writes it (nanoseconds, `Z`)."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", stamp)
    if not m:
        return 0
    zone = "+00:00" if m[3] == "Z" else m[3]
    return datetime.fromisoformat(m[1] + zone).timestamp() + float(m[2] or 0)


def last_scrape(prom):
    """Time (epoch s) of Prometheus' last scrape of the exporter (answered or not), or 0."""
    for t in prom.api("targets").get("data", {}).get("activeTargets", []):
        ls = t.get("lastScrape", "")
        if ls and not ls.startswith("0001"):
            return parse_time(ls)
    return 0


def vector(prom, expr):
    r = prom.query(expr)
    if r.get("status") != "success":
        raise RuntimeError(f"query {expr}: {r}")
    return [(s["metric"], float(s["value"][1])) for s in r["data"]["result"]]


def label_str(m):
    name = m.get("__name__", "")
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(m.items()) if k != "__name__") + "}"


# --- the test ------------------------------------------------------------------------------

def main():
    return e2e_main("e2e-startup", __doc__, run, flags=flags, tools=("prometheus", "zstd"), modules=(),
                    exporter_default=os.path.join(ROOT, "target", "release", "spark-exporter"), finish=finish)


def flags(ap):
    ap.add_argument("--apps", type=int, default=8)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--cycles", type=int, default=3, help="restart cycles (SIGTERM, SIGKILL, either) after P1")


def artefacts():
    """target/e2e-startup/run-<pid>/: logs, the scrape record, the truth and report.json, kept."""
    run_dir = os.path.join(ROOT, "target", "e2e-startup", f"run-{os.getpid()}")
    os.makedirs(run_dir, exist_ok=True)
    return run_dir


def finish(a, tmp, res):
    """report.json in the artefacts folder, every check again (after the run's log lines), and
    the summary's end."""
    run_dir = artefacts()
    res.info["wall_seconds"] = round(time.time() - res.started, 1)
    with open(os.path.join(run_dir, "report.json"), "w") as f:
        json.dump({"info": res.info, "checks": res.items}, f, indent=2)
    print()
    for i in res.items:
        print(f"{'PASS' if i['ok'] else 'FAIL'}  {i['assertion']}")
    return f", {res.info['wall_seconds']}s; artefacts in {run_dir}"


def run(a, tmp, res, procs):
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    run_dir = artefacts()
    log(f"{a.apps} applications, seed {seed}, artefacts in {run_dir}, Prometheus data in {tmp}")
    info = res.info
    info.update(seed=seed, apps=a.apps)
    n = a.apps
    store, took = make_store(n)
    size = sum(os.path.getsize(os.path.join(store, f)) for f in os.listdir(store))
    log(f"store {store}: {n} logs, {size / 1e9:.2f} GB" + (f" (made in {took:.1f}s)" if took else " (reused)"))
    info.update(store=store, store_bytes=size, store_made_seconds=round(took, 1))

    t0 = time.time()
    dump = subprocess.run([a.exporter, "dump", "--spark.url=", "--event-log", store],
                          capture_output=True, text=True, cwd=ROOT)
    info["dump_seconds"] = round(time.time() - t0, 2)
    open(os.path.join(run_dir, "truth.prom"), "w").write(dump.stdout)
    if dump.returncode != 0:
        raise RuntimeError(f"dump exit {dump.returncode}: {dump.stderr[-500:]}")
    apps, truth, _ = parse(dump.stdout)
    log(f"truth: dump in {info['dump_seconds']}s, {len(truth)} applications, "
        f"{sum(len(s) for s in truth.values())} series of {', '.join(FAMILIES)}")
    sums = {app: tasks_sum(s) for app, s in truth.items()}
    res.add(f"truth: the dump has all {n} applications, each with {TASKS_PER_APP} tasks",
            len(truth) == n and apps == set(truth) and all(v == TASKS_PER_APP for v in sums.values()),
            f"{len(truth)} applications, task sums {sorted(set(sums.values()))}")
    shapes = {frozenset((k.replace(app, "APP"), v) for k, v in s.items()) for app, s in truth.items()}
    res.add("truth: every application has the same series and values (copies of one log)", len(shapes) == 1,
            f"{len(shapes)} distinct shapes")

    port, prom_port = free_port(), free_port()
    prom, version, argv = start_prometheus(tmp, run_dir, procs, port, prom_port)
    info.update(prometheus_version=version, prometheus_argv=argv)
    prom_t0 = time.time()

    scraper = Scraper(port, truth, run_dir)
    r = Run(a, store, port, run_dir, scraper, prom)
    scraper.start()
    try:
        drive(r, rng, procs, info)
    finally:
        scraper.stop_flag.set()
        scraper.join(10)
        scraper.record.close()

    check_scrapes(res, r, scraper, n, info)
    check_prometheus(res, prom, n, truth, prom_t0, info)


def drive(r, rng, procs, info):
    """P1, the cycles, the last process (see the module docs)."""
    read_timeout = 300
    r.align()
    p1 = r.start()
    procs.append(p1["proc"])
    t1 = r.wait_complete(p1, read_timeout)
    T = t1 - p1["start"]
    info["cold_read_seconds"] = round(T, 2)
    time.sleep(HOLD)
    r.kill(p1, signal.SIGTERM)

    plan = []
    for _ in range(r.a.cycles):
        # Not in the first 20 ms: a signal before the process has run its first instructions
        # (the exporter holds SIGTERM back from the first line of main until its handler is in)
        # ends any program.
        plan += [(signal.SIGTERM, max(0.02, rng.uniform(0, 1.5) * T)),
                 (signal.SIGKILL, rng.uniform(0, 1.5) * T),
                 (rng.choice([signal.SIGTERM, signal.SIGKILL]), rng.uniform(0.05, 0.7) * T)]
    info["plan"] = [(s.name, round(at, 3)) for s, at in plan]
    log("plan: " + ", ".join(f"P{i + 2} {s.name} at {at:.2f}s" for i, (s, at) in enumerate(plan)))
    for sig, at in plan:
        d = r.start()
        procs.append(d["proc"])
        r.at(d, at)
        r.kill(d, sig)
    r.align()
    last = r.start()
    procs.append(last["proc"])
    r.wait_complete(last, read_timeout)
    time.sleep(HOLD)
    r.kill(last, signal.SIGTERM)
    info["processes"] = [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in d.items() if k != "proc"}
                         for d in r.procs]


def check_scrapes(res, r, s, n, info):
    ok_rounds = [x for x in s.rounds if x["metrics"] == 200]
    info.update(scrape_rounds=len(s.rounds), scrapes_ok=s.scrapes_ok, samples_checked=s.samples_checked,
                app_views=s.app_views)
    log(f"scraper: {len(s.rounds)} rounds, {s.scrapes_ok} scrapes answered, {s.app_views} application views, "
        f"{s.samples_checked} counter samples checked; largest body "
        f"{max((x.get('bytes', 0) for x in ok_rounds), default=0)} bytes")
    if s.errors:
        res.add("scraper: no errors", False, "; ".join(s.errors[:3]))
    res.add("scrapes: every per-application counter series never lower than in an earlier scrape (across processes)",
            not s.decreases and s.samples_checked > 0,
            f"{len(s.decreases)} decreases" + (f", first {json.dumps(s.decreases[:3])}" if s.decreases else
                                                f" in {s.samples_checked} samples"))
    res.add("scrapes: every application that appears has exactly the truth's series and values (none partial)",
            not s.partials and s.app_views > 0,
            f"{len(s.partials)} partial views" + (f", first {json.dumps(s.partials[:3])}" if s.partials else
                                                  f" in {s.app_views} application views"))
    bad_sums = [p for p in s.partials if p["tasks_sum"] != TASKS_PER_APP]
    res.add(f"scrapes: every application that appears has spark_tasks_total summed over statuses = {TASKS_PER_APP}",
            not bad_sums and s.app_views > 0,
            f"{len(bad_sums)} views with another sum" + (f", first {json.dumps(bad_sums[:3])}" if bad_sums else ""))
    res.add("scrapes: no application outside the store", not s.unknown_apps, json.dumps(s.unknown_apps[:3]))
    res.add(f"scrapes: once spark_exporter_startup_complete is 1, all {n} applications are served",
            not s.missing_after_complete, json.dumps(s.missing_after_complete[:3]))

    # Per process: startup_complete and /readyz?complete.
    for d in r.procs:
        g = d["gen"]
        rounds = [x for x in s.of(g) if x["metrics"] == 200]
        # Rounds over before the signal (whose /readyz answers cannot be the drain's).
        before_signal = [x for x in s.of(g) if d["signal_t"] is None or x["t2"] < d["signal_t"]]
        values = [x.get("complete") for x in rounds if x.get("complete") is not None]
        back = any(a == 1 and b == 0 for a, b in zip(values, values[1:]))
        first_complete = next((x["t1"] for x in rounds if x.get("complete") == 1), None)
        seen_zero = 0 in values
        apps_during = [x["apps"] for x in rounds if x.get("complete") == 0]
        d["read_seconds"] = round(first_complete - d["start"], 2) if first_complete else None
        d["scrapes"] = len(rounds)
        d["apps_served_during_read"] = sorted(set(apps_during))
        res.add(f"P{g}: spark_exporter_startup_complete never goes back from 1 to 0", not back,
                f"values {compress(values)}")
        if d["complete_t"] is not None:
            pre = [x for x in before_signal if first_complete is None or x["t0"] < first_complete]
            post = [x for x in before_signal if first_complete is not None and x["t0"] > first_complete]
            codes_pre = [x["readyz_complete"] for x in pre]
            bodies = sorted({x["readyz_complete_body"] for x in pre if x["readyz_complete"] == 503})
            zero_one = f"values {compress(values)}; read complete after {d['read_seconds']}s; " \
                       f"application counts served while 0: {d['apps_served_during_read']}"
            pre_503 = f"codes before complete {compress(codes_pre)}; 503 bodies {bodies}"
            if g == 1:  # the cold start: asserted
                res.add(f"P{g} (cold start): spark_exporter_startup_complete goes 0 -> 1",
                        seen_zero and first_complete is not None, zero_one)
                res.add(f"P{g} (cold start): /readyz?complete answers 503 before the start-up read is complete",
                        503 in codes_pre, pre_503)
            else:  # a restart over a warm page cache may finish before the first scrape: reported
                log(f"P{g}: startup_complete {zero_one}; /readyz?complete {pre_503}")
                res.add(f"P{g}: spark_exporter_startup_complete reaches 1", first_complete is not None, zero_one)
            codes_post = [x["readyz_complete"] for x in post]
            res.add(f"P{g}: /readyz?complete answers 200 once the start-up read is complete (until the signal)",
                    bool(codes_post) and all(c == 200 for c in codes_post), f"codes after {compress(codes_post)}")
        if d["signal"] == "SIGTERM":
            res.add(f"P{g}: exit 0 after SIGTERM ({d['signal_t'] - d['start']:.2f}s after its start)",
                    d["exit"] == 0, f"exit {d['exit']} {d['exit_t'] - d['signal_t']:.2f}s after the signal")
    during = [d for d in r.procs if d["signal"] and d["complete_at_signal"] != 1]
    res.add("the run restarted an exporter during its start-up read at least once",
            bool(during), ", ".join(f"P{d['gen']} {d['signal']} at {d['signal_t'] - d['start']:.2f}s "
                                    f"(last scrape startup_complete={d['complete_at_signal']})" for d in during))
    for d in r.procs:
        log(f"P{d['gen']}: signal {d['signal']} at "
            f"{(d['signal_t'] - d['start']) if d['signal_t'] else float('nan'):.2f}s, exit {d['exit']}, "
            f"read complete after {d['read_seconds']}s, {d['scrapes']} scrapes, "
            f"application counts served while startup_complete=0: {d['apps_served_during_read']}")


def compress(xs):
    """[0, 0, 0, 1, 1] -> '0x3 1x2'."""
    out = []
    for x in xs:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return " ".join(f"{x}x{c}" for x, c in out)


def check_prometheus(res, prom, n, truth, prom_t0, info):
    # Let Prometheus take in the last scrapes, then query over the whole test window.
    time.sleep(2)
    window = int(time.time() - prom_t0) + 10
    info["prometheus_window_seconds"] = window
    tasks = vector(prom, f"resets(spark_tasks_total[{window}s])")
    bad = [(label_str(m), v) for m, v in tasks if v != 0]
    res.add(f"Prometheus: resets(spark_tasks_total[{window}s]) = 0 for every series",
            bool(tasks) and not bad, f"{len(tasks)} series, {len(bad)} with resets" + (f": {bad[:5]}" if bad else ""))
    # resets() drops the metric name, so one query over every name would clash: one per name.
    end = time.time()
    names = prom.api("label/__name__/values", **{"match[]": '{__name__=~"spark_.*_total"}',
                                                 "start": prom_t0 - 5, "end": end}).get("data", [])
    every = []
    for name in names:
        every += [(dict(m, __name__=name), v) for m, v in vector(prom, f"resets({name}[{window}s])")]
    info["prometheus_total_families"] = len(names)
    per_app = [(m, v) for m, v in every if "app_id" in m]
    own = [(m, v) for m, v in every if "app_id" not in m and m.get("__name__", "").startswith("spark_exporter_")]
    other = [(m, v) for m, v in every if "app_id" not in m and not m.get("__name__", "").startswith("spark_exporter_")]
    app_names = sorted({m["__name__"] for m, _ in per_app})
    bad = [(label_str(m), v) for m, v in per_app + other if v != 0]
    res.add(f'Prometheus: resets({{__name__=~"spark_.*_total"}}[{window}s]) = 0 for every per-application '
            f"and every other spark_ series", bool(per_app) and not bad,
            f"{len(names)} spark_.*_total names; {len(per_app)} per-application series of "
            f"{len(app_names)} families, {len(other)} other; "
            f"{len(bad)} with resets" + (f": {bad[:5]}" if bad else ""))
    own_reset = sorted({m["__name__"] for m, v in own if v})
    log(f"Prometheus: {len(own)} series of the exporter's own counters, {len(own_reset)} families reset by the "
        f"restarts (process counters, not asserted): {', '.join(own_reset)}")
    info.update(prometheus_per_app_families=app_names, prometheus_own_counters_reset=own_reset)
    # Every sample Prometheus holds of the three families is the truth's value: min and max over
    # the window.
    bad, seen = [], 0
    for fam in FAMILIES:
        for fn in ("min_over_time", "max_over_time"):
            for m, v in vector(prom, f"{fn}({fam}[{window}s])"):
                labels = {k: x for k, x in m.items() if k not in ("job", "instance", "__name__")}
                key = series_key(fam, labels)
                want = truth.get(labels.get("app_id"), {}).get(key)
                seen += 1
                if want != v:
                    bad.append((key, fn, v, want))
    res.add(f"Prometheus: every sample of {', '.join(FAMILIES)} over the window is the truth's value (min and max)",
            seen > 0 and not bad, f"{seen // 2} series, {len(bad)} off" + (f": {bad[:5]}" if bad else ""))
    zeros = [float(v) for s in prom.query(f"spark_exporter_startup_complete[{window}s]").get("data", {}).get("result", [])
             for _, v in s.get("values", [])]
    res.add("Prometheus: scraped an exporter during its start-up read (a spark_exporter_startup_complete sample of 0)",
            0.0 in zeros, f"samples {compress(zeros)}")
    sums = vector(prom, f"sum by (app_id) (last_over_time(spark_tasks_total[{window}s]))")
    res.add(f"Prometheus: at the end sum by (app_id) (last_over_time(spark_tasks_total)) = {TASKS_PER_APP} "
            f"for all {n} applications",
            len(sums) == n and all(v == TASKS_PER_APP for _, v in sums),
            f"{len(sums)} applications, sums {sorted({v for _, v in sums})}")
    ups = vector(prom, f"count_over_time(up[{window}s])")
    info["prometheus_scrapes"] = [v for _, v in ups]
    log(f"Prometheus: {ups[0][1] if ups else 0:.0f} scrapes of the exporter in the window")


if __name__ == "__main__":
    sys.exit(main())
