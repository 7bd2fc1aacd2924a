"""What the Python end-to-end tests share (tests/e2e_*.py with a real Prometheus, and
tests/objstore_e2e.py): free ports, a Prometheus API client, child processes in their own process
group with their output in a log file, assertion results, waiting, and the scripts' one `main()`
(`e2e_main`)."""
import json
import math
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Prom:
    def __init__(self, base):
        self.base = base

    def api(self, path, post=False, **params):
        """GET (or POST, for long queries) an API endpoint; errors come back as the API's JSON."""
        url = f"{self.base}/api/v1/{path}"
        data = urllib.parse.urlencode(params, doseq=True)
        try:
            if post:
                r = urllib.request.urlopen(url, data=data.encode(), timeout=30)
            else:
                r = urllib.request.urlopen(url + ("?" + data if data else ""), timeout=30)
            with r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            body = e.read().decode()
            try:
                return json.loads(body)
            except ValueError:
                return {"status": "error", "error": f"HTTP {e.code}: {body[:200]}"}

    def query(self, expr, t=None):
        return self.api("query", post=True, query=expr, **({"time": t} if t else {}))

    def query_range(self, expr, start, end, step=2):
        return self.api("query_range", post=True, query=expr, start=start, end=end, step=step)

    def alerts(self):
        return self.api("alerts").get("data", {}).get("alerts", [])


class Proc:
    """A child process in its own process group, its output in a log file."""

    def __init__(self, name, argv, logdir, env=None, lines=None):
        self.name = name
        self.log = os.path.join(logdir, f"{name}.log")
        out = open(self.log, "w")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE if lines else out, stderr=out,
                                  env=env, start_new_session=True, text=True, cwd=ROOT)
        if lines is not None:
            def pump():
                for line in self.p.stdout:
                    out.write(line)
                    out.flush()
                    lines.put((time.time(), line.rstrip("\n")))
                lines.put((time.time(), None))
            threading.Thread(target=pump, daemon=True).start()

    def stop(self, timeout=20):
        if self.p.poll() is not None:
            return
        try:
            os.killpg(self.p.pid, signal.SIGTERM)
            self.p.wait(timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def tail(self, n=30):
        try:
            return "".join(open(self.log).readlines()[-n:])
        except OSError:
            return ""


class Results:
    """The assertions of a run, and `info`: what the run records beside them (the report)."""

    def __init__(self):
        self.items = []
        self.info = {}
        self.started = time.time()

    def add(self, name, ok, detail=""):
        self.items.append({"assertion": name, "ok": bool(ok), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail else ""), flush=True)

    @property
    def failed(self):
        return [i for i in self.items if not i["ok"]]


def wait_for(pred, timeout, what, every=0.5):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = pred()
            if v:
                return v
        except (OSError, ValueError):
            pass
        time.sleep(every)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def finite_values(result):
    """Finite sample values of a query_range matrix result."""
    out = []
    for series in result:
        for _, v in series.get("values", []) + ([series["value"]] if "value" in series else []):
            f = float(v)
            if not math.isnan(f) and not math.isinf(f):
                out.append(f)
    return out


# What to do about a missing tool, when it is not `apt-get install -y <tool>`.
TOOL_HINTS = {"promtool": "apt-get install -y prometheus", "java": "Spark needs Java 17"}


def e2e_main(name, doc, run, *, flags=None, tools=("prometheus",), modules=("pyspark",),
             exporter_default=None, prerequisites=None, finish=None):
    """The one `main()` of the end-to-end scripts: the flags every one takes (`--exporter`,
    `--python`, `--keep`) plus its own (`flags(argparse parser)`), the prerequisites (a missing one
    is an error, exit 2, not a skip: the `tools` on PATH, the exporter built, the `modules` the
    Python imports, then whatever `prerequisites(args)` lists), a temporary folder, then
    `run(args, tmp, results, procs)`: a run that breaks is a failed assertion with the last lines
    of every process's log, and every process in `procs` is stopped at the end. Writes
    report.json in the temporary folder (the assertions; with `results.info`, that too), calls
    `finish(args, tmp, results)` if given (after every process stopped; what it returns ends the
    summary line), prints the summary; exit 1 when an assertion failed.

    `run` may also be a list of (part, function) pairs: the parts run in turn, each with its own
    processes (stopped when it ends), one that breaks is the failed assertion "<part>: run
    completed" and the next part still runs; `--only PART` runs one. `modules` may be a function
    of the parsed arguments. `exporter_default`: the `--exporter` default (target/debug's
    binary if None; one in target/release is asked to be built with --release)."""
    import argparse
    import shutil
    import sys
    import tempfile
    exporter = exporter_default or os.path.join(ROOT, "target", "debug", "spark-exporter")
    release = os.path.basename(os.path.dirname(os.path.abspath(exporter))) == "release"
    parts = list(run) if isinstance(run, (list, tuple)) else [(None, run)]
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exporter", default=exporter)
    ap.add_argument("--python", default=os.environ.get("SPARK_E2E_PYTHON", os.path.join(ROOT, ".venv", "bin", "python")))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    if len(parts) > 1:
        ap.add_argument("--only", choices=[p for p, _ in parts], help="run only this part")
    if flags:
        flags(ap)
    a = ap.parse_args()
    missing = [f"{t} not on PATH ({TOOL_HINTS.get(t, f'apt-get install -y {t}')})" for t in tools if not shutil.which(t)]
    if not os.access(a.exporter, os.X_OK):
        missing.append(f"{a.exporter} missing (cargo build{' --release --bin spark-exporter' if release else ''})")
    for m in (modules(a) if callable(modules) else modules):
        if not os.access(a.python, os.X_OK) or \
                subprocess.run([a.python, "-c", f"import {m}"], capture_output=True).returncode != 0:
            hint = "set SPARK_E2E_PYTHON" if m == "pyspark" else f"pip install {m}"
            missing.append(f"{a.python} cannot import {m} ({hint})")
            break
    if prerequisites:
        missing += prerequisites(a)
    if missing:
        print(f"{name} prerequisites missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix=f"{name}-")
    print(f"{name}: temporary folder {tmp}", flush=True)
    res = Results()
    for part, fn in parts:
        if part is not None and getattr(a, "only", None) not in (None, part):
            continue
        if part is not None:
            print(f"\n{name}: {part}", flush=True)
        procs = []
        try:
            fn(a, tmp, res, procs)
        except Exception as e:  # a broken run is a failed assertion, with the logs to look at
            res.add(f"{part}: run completed" if part else "run completed", False, f"{type(e).__name__}: {e}")
            for p in procs:
                print(f"--- last lines of {p.log}\n{p.tail()}", file=sys.stderr)
        finally:
            for p in reversed(procs):
                p.stop()
    with open(os.path.join(tmp, "report.json"), "w") as f:
        report = {"info": res.info, "results": res.items, "passed": not res.failed} if res.info else res.items
        json.dump(report, f, indent=2)
    tail = (finish(a, tmp, res) if finish else None) or ""
    print(f"\n{name}: {len(res.items) - len(res.failed)} passed, {len(res.failed)} failed{tail}")
    if res.failed or a.keep:
        print(f"{name}: kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if res.failed else 0
