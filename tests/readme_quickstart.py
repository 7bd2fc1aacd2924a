#!/usr/bin/env python3
"""The README's quick start, run as a reader would (scripts/readme-test.sh runs this).

README.md marks the fenced blocks of its quick start with an HTML comment on the line before:

- `<!-- quickstart: serve -->` before a ```sh block: the exporter, started in the background
  before the other commands (the release binary in place of `cargo run --release --`, the same
  command; readme-test.sh builds it). The test waits until the exporter listens and its
  start-up read is complete (`/readyz?complete` answers 200).
- `<!-- quickstart -->` before a ```sh block: a command, run with bash from the repository's
  root (`cargo run --release --` likewise replaced); it must exit 0.
- `<!-- quickstart: output -->` before a ```text block: lines the preceding command printed.
  Every non-blank line must appear in that output as a whole line, in the order shown. A line
  that is only `…` marks lines left out and is not checked; a `…` inside a line stands for any
  value (a run of characters without spaces), for values that vary between runs.

Then the served exporter's status page at `/`, rendered by headless Chromium (Debian's
`chromium`), must list the application and its event-log source, up.

Fails (exit 1), naming each difference, when a command fails, when an expected line is not in
the output, or when the README has no quick start blocks at all. Port 9809 must be free: the
README's command listens there, and a test that scraped someone else's exporter would prove
nothing.
"""
import os
import html as html_mod
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BINARY = os.environ.get("QUICKSTART_EXPORTER", os.path.join(ROOT, "target/release/spark-exporter"))
CARGO_RUN = "cargo run --release --"
PORT = 9809
MARK = re.compile(r"^<!-- quickstart(?::\s*(serve|output))?\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(text):
    """The marked blocks, in order: (kind, language, lines, line number of the marker)."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        kind = m.group(1) or "run"
        start = i + 1
        while start < len(lines) and not lines[start].strip():
            start += 1
        f = FENCE.match(lines[start]) if start < len(lines) else None
        if not f:
            sys.exit(f"README.md:{i + 1}: a quickstart marker must be followed by a fenced block")
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        out.append((kind, f.group(1), lines[start + 1:end], i + 1))
        i = end + 1
    return out


def command(lines):
    """The shell text of a block, with `cargo run --release --` as the built binary."""
    text = "\n".join(lines)
    return text.replace(CARGO_RUN, shlex.quote(BINARY))


def expected_matches(want, got_lines):
    """The expected lines not found, in order, in `got_lines`."""
    missing = []
    pos = 0
    for w in want:
        w = w.rstrip()
        if not w.strip() or w.strip() == "…":
            continue
        if "…" in w:
            pat = re.compile("^" + r"\S+".join(re.escape(p) for p in w.split("…")) + "$")
            match = pat.match
        else:
            match = lambda g, w=w: g == w  # noqa: E731
        for j in range(pos, len(got_lines)):
            if match(got_lines[j].rstrip()):
                pos = j + 1
                break
        else:
            missing.append(w)
    return missing


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_ready(proc, timeout=60.0):
    url = f"http://127.0.0.1:{PORT}/readyz?complete"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"the exporter exited with code {proc.returncode} before it was ready"
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return None
        except OSError:
            pass
        time.sleep(0.2)
    return f"the exporter was not ready (GET {url}) within {timeout:.0f} s"


def stop(proc):
    """SIGTERM starts the drain; the drain ends at the first scrape of the final state."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=2).read()
        except OSError:
            pass
        time.sleep(0.2)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def status_page():
    """The served exporter's status page at `/`, as headless Chromium renders it (Debian's
    `chromium`): it lists the application of the embedded default, its event-log source as up,
    and links to the metrics. The failures, as lines."""
    chromium = next((c for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None)
    if chromium is None:
        return ["status page: no chromium on PATH (apt-get install -y chromium)"]
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        f"http://127.0.0.1:{PORT}/"], capture_output=True, text=True, timeout=120)
    dom = r.stdout
    out = []
    if r.returncode != 0 or "<h1>spark-exporter" not in dom:
        return [f"status page: chromium exited {r.returncode} without the page: {r.stderr[-500:]}"]
    apps = re.findall(r'<tr class="app">(.*?)</tr>', dom, re.S)
    if not any("local-1795981136444" in a and "acceptance-basic" in a for a in apps):
        out.append(f"status page: the embedded default's application is not listed: {apps}")
    sources = re.findall(r'<tr class="source">(.*?)</tr>', dom, re.S)
    if not any("event log" in x and 'class="up">up<' in x and "spark-4.1.1-basic/eventlog" in x for x in sources):
        out.append(f"status page: the event-log source is not listed as up: {sources}")
    if '<a href="/metrics">' not in dom:
        out.append("status page: no link to /metrics")
    text = re.sub(r"<[^>]+>", " ", dom)
    print(f"status page (headless {chromium}): {len(apps)} application(s), {len(sources)} source(s): "
          + " | ".join(" ".join(html_mod.unescape(re.sub(r"<[^>]+>", " ", x)).split()) for x in sources + apps)[:400],
          flush=True)
    if "start-up read complete" not in text:
        out.append("status page: the start-up read is not shown complete")
    return out


def main():
    found = blocks(open(README, encoding="utf-8").read())
    if not any(k == "serve" for k, _, _, _ in found) or not any(k == "output" for k, _, _, _ in found):
        sys.exit("README.md: no quick start blocks (<!-- quickstart: serve --> and <!-- quickstart: output -->)")
    if not os.access(BINARY, os.X_OK):
        sys.exit(f"{BINARY} is missing: cargo build --release --bin spark-exporter")
    if port_open(PORT):
        sys.exit(f"port {PORT} is in use: stop what listens there first")

    failures = []
    server = None
    last = None  # (marker line, command, stdout) of the latest command
    checked = 0
    try:
        for kind, lang, lines, at in found:
            if kind == "serve":
                if lang != "sh" or server is not None:
                    failures.append(f"README.md:{at}: one ```sh block may be marked serve")
                    continue
                cmd = command(lines)
                print(f"README.md:{at}: serve: {cmd}", flush=True)
                server = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=ROOT,
                                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(ROOT, "target/readme-quickstart-exporter.log"), "w"),
                                          start_new_session=True)
                err = wait_ready(server)
                if err:
                    failures.append(f"README.md:{at}: {err} (target/readme-quickstart-exporter.log)")
                    break
            elif kind == "run":
                if lang != "sh":
                    failures.append(f"README.md:{at}: a quickstart command block must be ```sh")
                    continue
                cmd = command(lines)
                print(f"README.md:{at}: run: {cmd}", flush=True)
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=ROOT,
                                   capture_output=True, text=True, timeout=300)
                if r.returncode != 0:
                    failures.append(f"README.md:{at}: `{cmd}` exited {r.returncode}: {r.stderr.strip()[-500:]}")
                last = (at, cmd, r.stdout)
            else:
                if last is None:
                    failures.append(f"README.md:{at}: an output block with no command before it")
                    continue
                missing = expected_matches(lines, last[2].split("\n"))
                shown = sum(1 for w in lines if w.strip() and w.strip() != "…")
                checked += shown
                print(f"README.md:{at}: {shown - len(missing)} of {shown} lines found in the output of `{last[1]}`")
                for w in missing:
                    failures.append(f"README.md:{at}: not in the output of `{last[1]}` (README.md:{last[0]}), or out of order:\n    {w}")
                last = None
        if server is not None and not failures:
            failures += status_page()
    finally:
        if server is not None:
            stop(server)

    if failures:
        print("\nFAILED:", *failures, sep="\n", file=sys.stderr)
        return 1
    print(f"README quick start: every command ran, all {checked} lines shown are in their output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
