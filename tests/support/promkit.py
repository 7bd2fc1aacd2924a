"""What the Python end-to-end tests with a real Prometheus share (tests/e2e_prometheus.py,
tests/e2e_drain.py): free ports, a Prometheus API client, child processes in their own process
group with their output in a log file, assertion results, and waiting."""
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
