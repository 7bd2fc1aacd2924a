"""What the Python end-to-end tests with a real Prometheus share (tests/e2e_*.py): free ports, a
Prometheus API client, child processes in their own process group with their output in a log
file, assertion results, waiting, and the scripts' one `main()` (`e2e_main`)."""
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
    def __init__(self):
        self.items = []

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


def e2e_main(name, doc, run, *, flags=None, tools=("prometheus",), modules=("pyspark",)):
    """The one `main()` of the end-to-end scripts: the flags every one takes (`--exporter`,
    `--python`, `--keep`) plus its own (`flags(argparse parser)`), the prerequisites (a missing one
    is an error, exit 2, not a skip: the `tools` on PATH, the exporter built, the `modules` the
    Python imports), a temporary folder, then `run(args, tmp, results, procs)`: a run that breaks
    is a failed assertion with the last lines of every process's log, and every process in
    `procs` is stopped at the end. Prints the summary; exit 1 when an assertion failed."""
    import argparse
    import shutil
    import sys
    import tempfile
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exporter", default=os.path.join(ROOT, "target", "debug", "spark-exporter"))
    ap.add_argument("--python", default=os.environ.get("SPARK_E2E_PYTHON", os.path.join(ROOT, ".venv", "bin", "python")))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    if flags:
        flags(ap)
    a = ap.parse_args()
    missing = [f"{t} not on PATH (apt-get install -y {t})" for t in tools if not shutil.which(t)]
    if not os.access(a.exporter, os.X_OK):
        missing.append(f"{a.exporter} missing (cargo build)")
    for m in modules:
        if subprocess.run([a.python, "-c", f"import {m}"], capture_output=True).returncode != 0:
            hint = "set SPARK_E2E_PYTHON" if m == "pyspark" else f"pip install {m}"
            missing.append(f"{a.python} cannot import {m} ({hint})")
            break
    if missing:
        print(f"{name} prerequisites missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix=f"{name}-")
    print(f"{name}: temporary folder {tmp}", flush=True)
    res, procs = Results(), []
    try:
        run(a, tmp, res, procs)
    except Exception as e:  # a broken run is a failed assertion, with the logs to look at
        res.add("run completed", False, f"{type(e).__name__}: {e}")
        for p in procs:
            print(f"--- last lines of {p.log}\n{p.tail()}", file=sys.stderr)
    finally:
        for p in reversed(procs):
            p.stop()
    with open(os.path.join(tmp, "report.json"), "w") as f:
        json.dump(res.items, f, indent=2)
    print(f"\n{name}: {len(res.items) - len(res.failed)} passed, {len(res.failed)} failed")
    if res.failed or a.keep:
        print(f"{name}: kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if res.failed else 0
