#!/usr/bin/env python3
"""End-to-end: event logs read from object storage (issue 14, "Tests and measurements").

    scripts/objstore-test.sh [--keep] [...]          (sets up the tools, then runs this)
    python3 tests/objstore_e2e.py --azurite PATH [--exporter PATH] [--keep] [--only SECTION...]

Real servers on 127.0.0.1: moto (S3, `python -m moto.server`), a second moto that checks
credentials, Azurite's blob service, and a tests/support/faultproxy.py in front of the first moto
and one in front of Azurite.
Every committed real Spark event log (tests/data/eventlogs/*/ and
tests/data/spark-4.1.1-basic/eventlog/: Spark 3.5.5 and 4.1.1, single files and rolling
eventlog_v2_* folders, codecs none, lz4, lzf, snappy, zstd) is staged in a temporary folder and
uploaded, as it is, to an S3 bucket and to an Azure container:

    fixtures/<fixture>/...       each fixture's folder as committed (counts.json included)
    spark-events/<log>           every log side by side, as in a spark.eventLog.dir

Sections (--only picks some):
  dumps    for each fixture, `spark-exporter dump --spark.url= --event-log X` of the local
           staged path and of the same s3:// and az:// URL, for the fixture's folder and for the
           log itself (a single object or an eventlog_v2_* folder): the expositions are
           byte-identical, except (masked) the value of spark_exporter_eventlog_lag_seconds and process_*,
           which is "now" minus the newest event and so differs between any two runs, and the
           samples of the spark_exporter_store_* families, which describe the transport and are
           counted only when a store was used. Also: the whole spark-events/ folder, the nested fixtures/ folder
           (discovery is one level deep, so both sides must agree on what they find),
           s3a:// == s3://, abfs:// and abfss:// == az://, file:/// == the plain path;
           `spark-exporter diagnose --format json` of s3:// and az:// spark-events/ gives the
           same report as of the local folder
  errors   a missing bucket or container and wrong credentials (S3: a moto that knows no
           access key; Azure: a wrong account key) make `dump` exit non-zero with one ERROR
           record that says what is wrong, on one line (no raw newline, say from the store's
           XML error body), no panic and no backtrace. The daemons of the live and faults
           sections are held to the same: no panic, every log line a whole record
  live     a daemon follows live/ in a store while the parts of a rolling log arrive one by one
           (appstatus_*.inprogress with events_1_*, then events_2_*, then the rename to
           appstatus_*): spark_{jobs,stages,tasks}_total only grow, equal after each step the
           local dump of the same partial folder, and at the end the local dump of the fixture
  checkpoint  a daemon reads spark-events/ of a store with --checkpoint.path in the same
           store (state/exporter.ckpt): once it is stopped (SIGTERM) the checkpoint is an object
           there, and a new daemon loads it ("Checkpoint loaded."), serves the same
           spark_{jobs,stages,tasks}_total and decodes no event-log byte again. Then two shards
           (--shard.count 2) write state/exporter.ckpt.{0,1}-of-2, and one unsharded daemon
           started after them loads its part of both (a reshard, found by listing the prefix)
           and serves the same counts, again reading no log
  faults   a daemon per fault reads faults/<fault>/ in a store through its fault proxy (503
           SlowDown or ServerBusy, a stall past the client timeout, a connection cut mid-body, an
           object replaced mid-read): /metrics is served all along, an error counter
           (spark_exporter_store_errors_total when it exists, else
           spark_exporter_eventlog_errors_total) grows, and once the fault is cleared the counts
           equal the local dump. A replaced object is announced by a new ETag on the GET (it
           differs from the HEAD before it), and a GET with If-Match gets 412: a reader that
           checks either can drop what it read and read again; one that does neither keeps a
           broken event
The live and faults sections run against each store of --stores (s3 and az by default).

The S3 and Azure settings reach the exporter the way object_store's from_env builders read them:
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP,
AWS_VIRTUAL_HOSTED_STYLE_REQUEST; AZURE_STORAGE_USE_EMULATOR, AZURITE_BLOB_STORAGE_URL (and
AZURE_STORAGE_ACCOUNT_KEY for the wrong-key case). --env KEY=VALUE adds or overrides one for
every exporter run. Inherited AWS_*, AZURE_*, AZURITE_* and GOOGLE_* variables are dropped.

Prints one PASS/FAIL line per assertion; exit 1 if any failed, 2 if a prerequisite is missing.
When the exporter does not take s3:// or az:// URLs yet, the first dump says so and the sections
that need that store fail with the exporter's own message instead of running. The temporary
folder (logs, dumps, scrapes) is kept on failure or with --keep.
"""
import concurrent.futures
import base64
import difflib
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from promkit import Proc, e2e_main, free_port, wait_for  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402

BUCKET = "spark-logs"
AUTH_BUCKET = "locked-logs"
CONTAINER = "spark-logs"
AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's well-known development key (public, in Azure's documentation).
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
WRONG_AZURE_KEY = base64.b64encode(b"not the azurite key, 64 bytes long......................").decode()
SECTIONS = ("dumps", "errors", "live", "faults", "checkpoint")
COUNTS = ("spark_jobs_total", "spark_stages_total", "spark_tasks_total")
ERROR_FAMILIES = ("spark_exporter_store_errors_total", "spark_exporter_eventlog_errors_total")
# The rolling fixture the live case splits into two parts (plain codec: split at a newline).
LIVE_FIXTURE = "spark-4.1.1-none-rolling"
# Per fault: the fixture it reads, how many requests it hits, and its parameters. 12 is more
# than object_store's default of 10 retries (and the exporter's own 3), so at least one operation
# fails even when the client retries. A stall lasts --client-timeout + --stall-extra seconds;
# one is enough while the exporter's retry budget (20 s) is shorter than its request timeout
# (30 s), and each costs half a minute (--stall-count).
FAULT_PLAN = (
    ("slowdown", "spark-4.1.1-zstd-rolling", 12, {}),
    ("stall", "spark-3.5.5-lz4-single", 1, {}),
    ("cut", "spark-4.1.1-none-single", 12, {}),
    ("replace", "spark-3.5.5-none-single", 1, {}),
)


# Objects in the paged/ folder besides its one log: more than a listing page.
PAGED_JUNK = 1100

# -- fixtures and staging ------------------------------------------------------------------------

def fixtures():
    """[(name, folder of logs as committed)] for every committed real event-log fixture."""
    out = [(os.path.basename(d), d)
           for d in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "eventlogs", "*")))
           if os.path.isdir(d)]
    out.append(("spark-4.1.1-basic", os.path.join(ROOT, "tests", "data", "spark-4.1.1-basic", "eventlog")))
    return out


def logs_in(folder):
    """Names of the event logs in a folder: eventlog_v2_* folders and files that are not
    metadata (counts.json, Hadoop's .crc files)."""
    out = []
    for n in sorted(os.listdir(folder)):
        if n.startswith("eventlog_v2_") and os.path.isdir(os.path.join(folder, n)):
            out.append(n)
        elif os.path.isfile(os.path.join(folder, n)) and n != "counts.json" and not n.startswith("."):
            out.append(n)
    return out


def stage(store):
    """Lay out the tree that is uploaded; returns {fixture: [log names]}."""
    found = {}
    os.makedirs(os.path.join(store, "spark-events"))
    for name, src in fixtures():
        shutil.copytree(src, os.path.join(store, "fixtures", name))
        found[name] = logs_in(src)
        for log in found[name]:
            s, d = os.path.join(src, log), os.path.join(store, "spark-events", log)
            (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, d)
    # A folder past one listing page (S3 and Azure list 1,000 keys a request): 1,100 objects
    # that are not logs, one real log among them.
    paged = os.path.join(store, "paged")
    os.makedirs(paged)
    for i in range(PAGED_JUNK):
        open(os.path.join(paged, f"note-{i:04d}.json"), "w").write("{}\n")
    one = found[LIVE_FIXTURE][0]
    s = os.path.join(dict(fixtures())[LIVE_FIXTURE], one)
    (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, os.path.join(paged, one))
    return found


def files_under(root):
    for dirpath, _, names in os.walk(root):
        for n in sorted(names):
            p = os.path.join(dirpath, n)
            yield os.path.relpath(p, root).replace(os.sep, "/"), p


# -- servers ------------------------------------------------------------------------------------

def wait_port(port, timeout, proc):
    def up():
        if proc.p.poll() is not None:
            raise RuntimeError(f"{proc.name} exited with {proc.p.returncode}: {proc.tail(10)}")
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    end = time.time() + timeout
    while time.time() < end:
        try:
            return up()
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{proc.name} did not listen on {port} within {timeout}s: {proc.tail(10)}")


def start_moto(tmp, procs, name, env_extra=None):
    port = free_port()
    env = dict(os.environ, **(env_extra or {}))
    p = Proc(name, [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], tmp, env=env)
    procs.append(p)
    wait_port(port, 30, p)
    return port


def start_azurite(tmp, procs, azurite):
    port = free_port()
    loc = os.path.join(tmp, "azurite")
    os.makedirs(loc, exist_ok=True)
    # --disableTelemetry: Azurite otherwise reports usage over the network.
    p = Proc("azurite", [azurite, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", loc,
                         "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"], tmp)
    procs.append(p)
    wait_port(port, 60, p)
    return port


def s3_client(port):
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="test",
                        aws_secret_access_key="test", region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 3}))


def azure_container(port):
    from azure.storage.blob import BlobServiceClient
    conn = (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};")
    svc = BlobServiceClient.from_connection_string(conn)
    c = svc.get_container_client(CONTAINER)
    if not c.exists():
        c.create_container()
    return c


def upload(s3, az, store):
    n = 0
    for key, path in files_under(store):
        data = open(path, "rb").read()
        s3.put_object(Bucket=BUCKET, Key=key, Body=data)
        if az is not None:
            az.upload_blob(key, data, overwrite=True)
        n += 1
    return n


# -- the exporter -----------------------------------------------------------------------------

class Exporter:
    """How to run spark-exporter against the servers of this run."""

    def __init__(self, path, s3_port, az_port, extra_env):
        self.path, self.extra_env = path, extra_env
        self.s3_port, self.az_port = s3_port, az_port

    def env(self, s3_port=None, **over):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("AWS_", "AZURE_", "AZURITE_", "GOOGLE_"))}
        env.update({
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{s3_port or self.s3_port}",
            "AWS_ALLOW_HTTP": "true",
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
            "AZURE_STORAGE_USE_EMULATOR": "true",
            "AZURITE_BLOB_STORAGE_URL": f"http://127.0.0.1:{self.az_port}",
        })
        env.update(self.extra_env)
        env.update(over)
        return {k: v for k, v in env.items() if v is not None}

    def dump(self, targets, env=None, timeout=120):
        """(exit code, stdout, stderr) of one dump of these event-log paths or URLs."""
        argv = [self.path, "dump", "--spark.url="]
        for t in targets if isinstance(targets, list) else [targets]:
            argv += ["--event-log", t]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                               env=env or self.env(), cwd=ROOT)
            return r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            return None, e.stdout or "", f"dump did not finish within {timeout}s"

    def diagnose(self, target, timeout=120, review=False):
        """(exit code, report without its inputs, stderr) of `diagnose --format json` of one
        event-log path or URL; with `review`, of `diagnose --review` (the review document)."""
        argv = [self.path, "diagnose", "--format", "json", "--event-log", target] + (["--review"] if review else [])
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                               env=self.env(), cwd=ROOT)
        except subprocess.TimeoutExpired:
            return None, None, f"diagnose did not finish within {timeout}s"
        report = None
        if r.returncode == 0:
            try:
                report = json.loads(r.stdout)
                report["source"].pop("inputs", None)
            except (ValueError, KeyError, TypeError) as e:
                return r.returncode, None, f"not a report: {e}"
        return r.returncode, report, r.stderr


def mask(text):
    """The exposition with what legitimately differs between two runs masked (see the module
    doc): the lag's value, and the samples (not the HELP and TYPE lines) of the store families.
    Also the names of the store families whose samples were dropped."""
    out, masked = [], set()
    for line in text.splitlines():
        if not line.startswith("#"):
            name = re.split(r"[{ ]", line, 1)[0]
            if name.startswith("spark_exporter_store_"):
                masked.add(re.sub(r"_(bucket|sum|count)$", "", name))
                continue
            if name == "spark_exporter_eventlog_lag_seconds" or name.startswith("process_"):
                line = line.rsplit(" ", 1)[0] + " <masked>"
        out.append(line)
    return "\n".join(out) + "\n", sorted(masked)


def samples(text, names=COUNTS):
    """{(family, labels): value} for the sample lines of these families."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
        if m and m.group(1) in names:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def family_sum(text, family, **labels):
    total, seen = 0.0, False
    for (name, lab), v in samples(text, (family,)).items():
        if all(f'{k}="{val}"' in lab for k, val in labels.items()):
            total += v
            seen = True
    return total if seen else None


def has_family(text, family):
    return f"# TYPE {family} " in text


def error_line(stderr):
    """The exporter's ERROR lines, or the last line of its stderr."""
    lines = [l for l in stderr.splitlines() if " ERROR " in l or l.startswith("Error")]
    return lines or stderr.strip().splitlines()[-1:] or ["(no output)"]


def short(s, n=300):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n] + "..."


def first_diff(a, b):
    d = [l for l in difflib.unified_diff(a.splitlines(), b.splitlines(), "local", "store", n=0, lineterm="")
         if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    return f"{len(d)} differing lines, first: " + " | ".join(short(l, 160) for l in d[:3])


def scrape(port, timeout=5):
    """(status, body) of /metrics, or (None, error)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except OSError as e:
        return None, str(e)


def start_daemon(ctx, name, url, env, extra=()):
    port = free_port()
    p = Proc(name, [ctx.exporter.path, "--spark.url=", f"--event-log.dir={url}", "--event-log.poll-interval=1s",
                    f"--web.listen-address=127.0.0.1:{port}",
                    # Stopping it is not under test: no 25 s drain waiting for a last scrape.
                    "--lifecycle.grace-period=1s", *extra], ctx.tmp, env=env)
    ctx.procs.append(p)

    def ready():
        if p.p.poll() is not None:
            raise RuntimeError(f"{name} exited with {p.p.returncode}: {short(p.tail(5))}")
        return scrape(port)[0] == 200
    wait_for(ready, 30, f"{name} /metrics")
    return p, port


def log_problems(proc):
    """A daemon's log lines that show a panic, or that continue a record over a raw newline
    (logfmt keeps a record on one line)."""
    lines = [l for l in open(proc.log, errors="replace").read().splitlines() if l.strip()]
    return ([f"panic: {l}" for l in lines if "panicked" in l or "stack backtrace" in l]
            + [f"continued record: {l}" for l in lines if not RECORD.match(l)])


# -- sections ---------------------------------------------------------------------------------

class Ctx:
    pass


def section_dumps(ctx, res):
    ex, store = ctx.exporter, ctx.store
    local_out = {}

    def local(path):
        if path not in local_out:
            rc, out, err = ex.dump(path)
            local_out[path] = (rc, out, err)
        return local_out[path]

    # The probe: one dump per scheme, with the exporter's own message when it fails.
    probe_log = os.path.join("spark-events", ctx.logs[LIVE_FIXTURE][0])
    for scheme, url in (("s3", f"s3://{BUCKET}/{probe_log}"), ("az", f"az://{CONTAINER}/{probe_log}")):
        rc, out, err = ex.dump(url)
        ok = rc == 0 and samples(out)
        ctx.supported[scheme] = bool(ok)
        res.add(f"dumps: {scheme}:// event-log URLs are read ({url})", ok,
                "" if ok else f"exit {rc}: {short(' '.join(error_line(err)))}")

    # Every fixture: its folder and the log itself, local vs each store.
    for name, _ in fixtures():
        shapes = [("folder", f"fixtures/{name}/")] + [("log", f"fixtures/{name}/{log}") for log in ctx.logs[name]]
        base = {}
        for shape, key in shapes:
            rc, out, err = local(os.path.join(store, key))
            base[key] = (rc, out, err)
        bad_local = [k for k, (rc, out, _) in base.items() if rc != 0 or not samples(out)]
        if bad_local:
            res.add(f"dumps: {name}: the local dump reads the fixture", False,
                    f"{bad_local[0]}: exit {base[bad_local[0]][0]}, {short(' '.join(error_line(base[bad_local[0]][2])))}")
            continue
        for scheme, root in (("s3", f"s3://{BUCKET}/"), ("az", f"az://{CONTAINER}/")):
            if not ctx.supported[scheme] and not ctx.run_all:
                continue
            problems, masked = [], set()
            for shape, key in shapes:
                rc, out, err = ex.dump(root + key)
                if rc != 0 or "panicked" in err:
                    problems.append(f"{shape} {root + key}: exit {rc}: {short(' '.join(error_line(err)), 200)}")
                    continue
                a, ma = mask(base[key][1])
                b, mb = mask(out)
                masked |= set(ma) | set(mb)
                if a != b:
                    problems.append(f"{shape} {root + key}: {first_diff(a, b)}")
            res.add(f"dumps: {name}: {scheme}:// == local (folder and log)", not problems,
                    "; ".join(problems) if problems else
                    (f"masked the samples of {', '.join(sorted(masked))}" if masked else ""))
    for scheme in ("s3", "az"):
        if not ctx.supported[scheme] and not ctx.run_all:
            res.add(f"dumps: every fixture through {scheme}://", False,
                    f"not run: the exporter does not read {scheme}:// URLs (see the probe above)")

    # Whole folders and the other spellings of the same objects.
    flat = os.path.join(store, "spark-events")
    rc, flat_out, err = local(flat)
    flat_apps = len(set(re.findall(r'app_id="([^"]+)"', flat_out)))
    res.add("dumps: the local spark-events/ folder holds every fixture's application",
            rc == 0 and flat_apps == len(ctx.logs), f"{flat_apps} applications for {len(ctx.logs)} fixtures")
    nested = os.path.join(store, "fixtures")
    cases = [
        ("s3", f"s3://{BUCKET}/spark-events/", flat),
        ("s3", f"s3://{BUCKET}/spark-events", flat),
        ("s3", f"s3a://{BUCKET}/spark-events/", flat),
        ("s3", f"s3://{BUCKET}/fixtures/", nested),
        ("az", f"az://{CONTAINER}/spark-events/", flat),
        ("az", f"abfs://{CONTAINER}@{AZURITE_ACCOUNT}.dfs.core.windows.net/spark-events/", flat),
        ("az", f"abfss://{CONTAINER}@{AZURITE_ACCOUNT}.dfs.core.windows.net/spark-events/", flat),
        ("az", f"az://{CONTAINER}/fixtures/", nested),
        ("file", "file://" + flat, flat),
        ("file", "file://" + flat + "/", flat),
    ]
    # Pagination: the paged/ folder needs two listing requests; its one log reads as from disk.
    paged = os.path.join(store, "paged")
    rc_l, out_l, _ = local(paged)
    for scheme, url in (("s3", f"s3://{BUCKET}/paged/"), ("az", f"az://{CONTAINER}/paged/")):
        if not ctx.supported[scheme] and not ctx.run_all:
            continue
        rc, out, err = ex.dump(url)
        lists = (family_sum(out, "spark_exporter_store_requests_total", op="list") or 0) if rc == 0 else 0
        same = rc == 0 and mask(out)[0] == mask(out_l)[0]
        res.add(f"dumps: {url} ({PAGED_JUNK + 1} objects, past one listing page) == local, listed in pages",
                same and lists >= 2, f"exit {rc}, {lists:g} list requests" + ("" if same else ": differs"))
    for scheme, url, path in cases:
        if scheme != "file" and not ctx.supported[scheme] and not ctx.run_all:
            res.add(f"dumps: {url} == local {os.path.relpath(path, store)}/", False,
                    f"not run: the exporter does not read {scheme}:// URLs")
            continue
        rc_l, out_l, _ = local(path)
        rc, out, err = ex.dump(url)
        if rc != 0:
            res.add(f"dumps: {url} == local {os.path.relpath(path, store)}/", False,
                    f"exit {rc}: {short(' '.join(error_line(err)))}")
            continue
        a, _ = mask(out_l)
        b, _ = mask(out)
        apps = len(set(re.findall(r'app_id="([^"]+)"', out)))
        res.add(f"dumps: {url} == local {os.path.relpath(path, store)}/", a == b,
                f"{apps} applications" if a == b else first_diff(a, b))

    # `diagnose` reads object storage through the same reader: the same report as from disk.
    rc_l, want, err_l = ex.diagnose(flat)
    for scheme, url in (("s3", f"s3://{BUCKET}/spark-events/"), ("az", f"az://{CONTAINER}/spark-events/")):
        if not ctx.supported[scheme] and not ctx.run_all:
            continue
        rc, got, err = ex.diagnose(url)
        ok = rc == 0 and rc_l == 0 and got == want
        n = len(want["applications"]) if want else 0
        res.add(f"dumps: diagnose {url} == diagnose of the local spark-events/", ok,
                f"{n} applications" if ok else
                f"exit {rc} (local {rc_l}): {short(' '.join(error_line(err or err_l)))}"
                + ("" if got is None or want is None else ": the reports differ"))

    # `diagnose --review` of a prefix lists and reads it through the same reader: the review of
    # the same logs on disk (every fixture's application, one at a time).
    rc_l, want, err_l = ex.diagnose(flat, review=True)
    for scheme, url in (("s3", f"s3://{BUCKET}/spark-events/"), ("az", f"az://{CONTAINER}/spark-events/")):
        if not ctx.supported[scheme] and not ctx.run_all:
            continue
        rc, got, err = ex.diagnose(url, review=True)
        reviewed = want["counts"]["reviewed"] if want else 0
        ok = rc == 0 and rc_l == 0 and got == want and reviewed == len(ctx.logs)
        res.add(f"dumps: diagnose --review {url} == the review of the local spark-events/", ok,
                f"{reviewed} applications reviewed, {len(want['names'])} names" if ok else
                f"exit {rc} (local {rc_l}, {reviewed} reviewed): {short(' '.join(error_line(err or err_l)))}"
                + ("" if got is None or want is None else ": the reviews differ"))


# The start of a log record (logfmt): a line that does not start so continues the one before.
RECORD = re.compile(r"^\d{4}-\d\d-\d\dT\S+\s+(TRACE|DEBUG|INFO|WARN|ERROR)\b")


def check_error(res, what, rc, err, elapsed, must_mention):
    lines = [l for l in err.splitlines() if l.strip()]
    errors = [l for l in lines if RECORD.match(l) and RECORD.match(l).group(1) == "ERROR"]
    continued = [l for l in lines if not RECORD.match(l)]
    bad = [l for l in lines if "panicked" in l or "stack backtrace" in l or "RUST_BACKTRACE" in l]
    said = " ".join(errors)
    problems = []
    if rc == 0 or rc is None:
        problems.append(f"exit {rc}")
    if bad:
        problems.append(f"panic or backtrace: {short(bad[0], 160)}")
    if len(errors) != 1:
        problems.append(f"{len(errors)} ERROR lines")
    if continued:
        problems.append(f"the message goes on over {len(continued)} more line(s) (a raw newline, "
                        f"e.g. from the store's XML error body): {short(continued[0], 160)}")
    if must_mention and not re.search(must_mention, said, re.I):
        problems.append(f"the error does not say /{must_mention}/")
    res.add(f"errors: {what}: non-zero exit, one clear ERROR line, no panic", not problems,
            f"{'; '.join(problems)}; " * bool(problems) + f"{elapsed:.1f}s: {short(said or err, 300)}")


def section_errors(ctx, res):
    ex = ctx.exporter
    creds = r"InvalidAccessKeyId|Forbidden|403|credential|denied|access key|signature|authori[sz]"
    cases = [
        ("s3", "S3 bucket missing", "s3://no-such-bucket-14/spark-events/", ex.env(), r"NoSuchBucket|does not exist|not found|404"),
        ("s3", "S3 wrong credentials", f"s3://{AUTH_BUCKET}/spark-events/", ex.env(s3_port=ctx.auth_port), creds),
        ("az", "Azure container missing", "az://no-such-container-14/spark-events/", ex.env(), r"ContainerNotFound|does not exist|not found|404"),
        ("az", "Azure wrong key", f"az://{CONTAINER}/spark-events/", ex.env(AZURE_STORAGE_ACCOUNT_KEY=WRONG_AZURE_KEY), creds),
    ]
    for scheme, what, url, env, mention in cases:
        if not ctx.supported[scheme] and not ctx.run_all:
            # The exporter reads the URL as a missing local path: that says nothing about the store.
            res.add(f"errors: {what}: non-zero exit, one clear ERROR line, no panic", False,
                    f"not run: the exporter does not read {scheme}:// URLs")
            continue
        t = time.time()
        rc, _, err = ex.dump(url, env=env, timeout=180)
        check_error(res, what, rc, err, time.time() - t, mention)


def split_at_newline(data):
    """Two parts of a plain event log, split at the line boundary nearest the middle."""
    cut = data.index(b"\n", len(data) // 2) + 1
    return data[:cut], data[cut:]


def counts_equal(got, want):
    if got == want:
        return True, ""
    keys = sorted(set(got) | set(want))
    d = [f"{k[0]}{k[1]}: {got.get(k)} != {want.get(k)}" for k in keys if got.get(k) != want.get(k)]
    return False, f"{len(d)} samples differ, first: " + " | ".join(short(x, 200) for x in d[:2])


class Store:
    """One store of this run: how to name a key as a URL, write and delete objects, and point the
    exporter at it directly or through its fault proxy."""

    def __init__(self, scheme, url_root, put, delete, env, proxy, proxy_env, match):
        self.scheme, self.url_root = scheme, url_root
        self.put, self.delete = put, delete
        self.env, self.proxy, self.proxy_env, self.match = env, proxy, proxy_env, match

    def url(self, key):
        return self.url_root + key


def section_live(ctx, res, store):
    """The parts of one rolling log arrive one by one under live/.

    Every committed rolling fixture has a single events_1_ part (the runs were too short to
    roll), so the plain-codec one is split in two at a line boundary near its middle. Spark's
    rolling writer also starts the next part at an event boundary and writes nothing else there
    (no header), so events_1_ + events_2_ is what Spark writes when
    spark.eventLog.rolling.maxFileSize falls there. Expected counts after each step are those of
    a local dump of the same partial folder; at the end, those of the committed fixture."""
    sc = store.scheme
    if not ctx.supported[sc] and not ctx.run_all:
        res.add(f"live {sc}: counts only grow and end equal to the local dump", False,
                f"not run: the exporter does not read {sc}:// URLs")
        return
    src = os.path.join(ROOT, "tests", "data", "eventlogs", LIVE_FIXTURE)
    [folder] = [n for n in os.listdir(src) if n.startswith("eventlog_v2_")]
    app = folder[len("eventlog_v2_"):]
    data = open(os.path.join(src, folder, f"events_1_{app}"), "rb").read()
    part1, part2 = split_at_newline(data)
    steps = [
        ("appstatus_*.inprogress and events_1_*", {f"appstatus_{app}.inprogress": b"", f"events_1_{app}": part1}, []),
        ("events_2_*", {f"events_2_{app}": part2}, []),
        ("appstatus_* (renamed from .inprogress)", {f"appstatus_{app}": b""}, [f"appstatus_{app}.inprogress"]),
    ]
    # Local folders of each step, and their dumps.
    local_dir = os.path.join(ctx.tmp, f"live-local-{sc}", folder)
    os.makedirs(local_dir)
    expected = []
    for _, put, delete in steps:
        for n, b in put.items():
            open(os.path.join(local_dir, n), "wb").write(b)
        for n in delete:
            os.remove(os.path.join(local_dir, n))
        rc, out, err = ctx.exporter.dump(os.path.dirname(local_dir))
        expected.append(samples(out))
    rc, whole, _ = ctx.exporter.dump(src)
    final = samples(whole)
    ok, why = counts_equal(expected[-1], final)
    res.add(f"live {sc}: the two-part local copy dumps like the committed fixture", ok and bool(final), why)

    proc, port = start_daemon(ctx, f"live-{sc}", store.url("live/"), store.env)
    history, shrunk = [], []

    def record():
        status, body = scrape(port)
        if status != 200:
            raise RuntimeError(f"/metrics answered {status}: {short(body, 200)}")
        now = samples(body)
        if history:
            for k, v in history[-1][1].items():
                if now.get(k, -1) < v:
                    shrunk.append(f"{k[0]}{k[1]}: {v} -> {now.get(k)}")
        history.append((time.time(), now, body))
        return now

    for i, (what, put, delete) in enumerate(steps):
        time.sleep(1.5)  # a pause between parts, as between a driver's writes
        for n, b in put.items():
            store.put(f"live/{folder}/{n}", b)
        for n in delete:
            store.delete(f"live/{folder}/{n}")
        end, got = time.time() + 30, None
        while time.time() < end:
            got = record()
            if got == expected[i]:
                break
            time.sleep(0.5)
        ok, why = counts_equal(got, expected[i])
        res.add(f"live {sc}: after {what}, the counts equal a local dump of the same parts", ok and bool(got),
                why or f"{sum(got.values()):.0f} in {len(got)} samples")
    res.add(f"live {sc}: spark_{{jobs,stages,tasks}}_total only grew between scrapes", not shrunk,
            f"{len(history)} scrapes" if not shrunk else f"{len(shrunk)} decreases, first: {shrunk[0]}")
    ok, why = counts_equal(history[-1][1] if history else {}, final)
    res.add(f"live {sc}: the end equals the local dump of the fixture", ok, why)
    body = history[-1][2] if history else ""
    notes = [(f"{f}={family_sum(body, f)}" if family_sum(body, f) is not None else f"{f} without samples")
             if has_family(body, f) else f"{f} absent"
             for f in ("spark_exporter_store_requests_total", "spark_exporter_store_errors_total",
                       "spark_exporter_store_up")]
    print(f"      live {sc}: store metrics at the end: {'; '.join(notes)}", flush=True)
    # Asserted once the exporter fills them (declared families without samples are reported).
    reqs = by_kind(body, "spark_exporter_store_requests_total")
    if reqs:
        ops = {lab: v for (_, lab), v in samples(body, ("spark_exporter_store_requests_total",)).items()}
        res.add(f"live {sc}: spark_exporter_store_requests_total counted lists, heads and gets",
                all(any(f'op="{op}"' in lab and v > 0 for lab, v in ops.items()) for op in ("list", "get")),
                short("; ".join(f"{lab} {v:g}" for lab, v in ops.items()), 400))
    if store_up(body) not in ("absent", "no samples"):
        res.add(f"live {sc}: spark_exporter_store_up is 1", store_up(body) == "1", store_up(body))
    bad = log_problems(proc)
    res.add(f"live {sc}: the daemon's log: no panic, one line per record", not bad,
            f"{len(bad)} lines, first: {short(bad[0], 200)}" if bad else "")
    proc.stop()


def section_checkpoint(ctx, res, store):
    """Checkpoints kept in the object store itself (issue 34)."""
    sc = store.scheme
    logs = store.url("spark-events/")
    ckpt = store.url(f"state-{sc}/exporter.ckpt")
    flags = [f"--checkpoint.path={ckpt}", "--checkpoint.interval=1s"]

    def counts_and_bytes(port):
        status, body = scrape(port)
        if status != 200:
            raise RuntimeError(f"/metrics answered {status}: {short(body, 200)}")
        return samples(body), family_sum(body, "spark_exporter_eventlog_bytes_total") or 0.0

    def ready(port):
        """Ready, and everything read: the bytes read and the counts the same two scrapes in a
        row, 1.5 s apart (on Azurite /readyz?complete can answer before every log is read)."""
        wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz?complete", timeout=5).status == 200,
                 60, f"{sc} checkpoint daemon /readyz?complete")
        last = [None]

        def settled():
            now = counts_and_bytes(port)
            same, last[0] = now == last[0], now
            return same
        wait_for(settled, 60, f"{sc} checkpoint daemon: every log read", every=1.5)

    proc, port = start_daemon(ctx, f"ckpt-{sc}-1", logs, store.env, flags)
    ready(port)
    want, first_bytes = counts_and_bytes(port)
    proc.stop()
    proc, port = start_daemon(ctx, f"ckpt-{sc}-2", logs, store.env, flags)
    ready(port)
    got, read = counts_and_bytes(port)
    loaded = "Checkpoint loaded." in open(proc.log, errors="replace").read()
    res.add(f"checkpoint {sc}: a restart loads the checkpoint from the store and serves the same counts",
            loaded and got == want and bool(want),
            f"loaded={loaded}; {counts_equal(got, want)[1] or f'{len(want)} samples equal'}")
    res.add(f"checkpoint {sc}: the restart decodes no event-log byte (the first read {first_bytes:.0f})",
            read == 0 and first_bytes > 0, f"{read:.0f} bytes")
    proc.stop()
    shards = [start_daemon(ctx, f"ckpt-{sc}-shard{i}", logs, store.env,
                           flags + ["--shard.count=2", f"--shard.index={i}"]) for i in range(2)]
    for _, port in shards:
        ready(port)
    for p, _ in shards:
        p.stop()
    proc, port = start_daemon(ctx, f"ckpt-{sc}-3", logs, store.env, flags)
    ready(port)
    got, read = counts_and_bytes(port)
    handed = "this shard's part of the previous shards' checkpoints" in open(proc.log, errors="replace").read()
    res.add(f"checkpoint {sc}: after 2 shards, one exporter loads both shards' checkpoints from the store",
            handed and got == want and read == 0,
            f"handover={handed}; read {read:.0f} bytes; {counts_equal(got, want)[1] or 'counts equal'}")
    bad = log_problems(proc)
    res.add(f"checkpoint {sc}: the daemons' logs: no panic, one line per record", not bad,
            f"{len(bad)} lines, first: {short(bad[0], 200)}" if bad else "")
    proc.stop()


def error_counts(body):
    """{family: sum} of the error counters present in an exposition (absent ones left out)."""
    return {f: family_sum(body, f) or 0.0 for f in ERROR_FAMILIES if has_family(body, f)}


def by_kind(body, family):
    """{kind label: value} of a counter with a `kind` label, summed over its other labels."""
    out = {}
    for (_, lab), v in samples(body, (family,)).items():
        m = re.search(r'kind="([^"]*)"', lab)
        out[m.group(1) if m else ""] = out.get(m.group(1) if m else "", 0) + v
    return out


def grown(before, after):
    """`kind +delta` for each kind that grew between two {kind: value}."""
    return [f"{k} +{after[k] - before.get(k, 0):g}" for k in sorted(after) if after[k] > before.get(k, 0)]


def store_up(body):
    if not has_family(body, "spark_exporter_store_up"):
        return "absent"
    v = family_sum(body, "spark_exporter_store_up")
    return "no samples" if v is None else f"{v:g}"


def section_faults(ctx, res, store):
    """One daemon per fault, reading faults/<fault>/ through the store's fault proxy."""
    sc, proxy = store.scheme, store.proxy
    if not ctx.supported[sc] and not ctx.run_all:
        res.add(f"faults {sc}: every fault ({', '.join(f[0] for f in FAULT_PLAN)})", False,
                f"not run: the exporter does not read {sc}:// URLs")
        return
    stall = ctx.client_timeout + ctx.stall_extra
    for kind, fixture, n, params in FAULT_PLAN:
        if ctx.faults and kind not in ctx.faults:
            continue
        t0 = time.time()
        src = dict(fixtures())[fixture]
        rc, out, _ = ctx.exporter.dump(src)
        want = samples(out)
        prefix = f"faults/{kind}/"
        proc, port = start_daemon(ctx, f"fault-{sc}-{kind}", store.url(prefix), store.proxy_env)
        time.sleep(2)  # a first listing of the empty prefix, before any fault
        status, body0 = scrape(port)
        before = error_counts(body0)
        fired0 = proxy.fired(kind)
        if kind == "stall":
            params, n = dict(params, seconds=stall), ctx.stall_count
        proxy.arm(kind, n, match=store.match, **params)
        for log in ctx.logs[fixture]:
            p = os.path.join(src, log)
            for rel, path in (files_under(p) if os.path.isdir(p) else [("", p)]):
                store.put(prefix + log + (f"/{rel}" if rel else ""), open(path, "rb").read())
        # While the fault is armed: every scrape answers, until the fault has fired n times.
        limit = time.time() + 45 + (n * (stall + 5) if kind == "stall" else 0)
        scrapes, failed_scrapes, last, min_up = 0, [], body0, store_up(body0)

        def one_scrape():
            nonlocal scrapes, last, min_up
            status, body = scrape(port)
            scrapes += 1
            if status != 200:
                failed_scrapes.append(f"{status}: {short(body, 120)}")
            else:
                last = body
                up = store_up(body)
                if up[0].isdigit() and (not min_up[0].isdigit() or float(up) < float(min_up)):
                    min_up = up
        while proxy.fired(kind) - fired0 < n and time.time() < limit and proc.p.poll() is None:
            one_scrape()
            time.sleep(0.5)
        fired = proxy.fired(kind) - fired0
        # Then a while (beyond a stalled request's timeout) for the failure to reach a counter.
        end = time.time() + 6 + (stall if kind == "stall" else 0)
        while time.time() < end and proc.p.poll() is None:
            one_scrape()
            if any(error_counts(last).get(f, 0) > before.get(f, 0) for f in ERROR_FAMILIES):
                break
            time.sleep(0.5)
        res.add(f"faults {sc}: {kind}: the proxy applied it {n} times", fired >= n,
                f"{fired} of {n}: the exporter made {'no' if not fired else 'too few'} matching requests"
                if fired < n else "")
        alive = proc.p.poll() is None
        res.add(f"faults {sc}: {kind}: the daemon kept serving /metrics", alive and not failed_scrapes,
                f"{scrapes} scrapes" + (f", {len(failed_scrapes)} failed, first: {failed_scrapes[0]}" if failed_scrapes else "")
                + ("" if alive else f"; exited {proc.p.returncode}: {short(proc.tail(5), 300)}"))
        # Which counter must grow: a failed request (or body read) is a store error once the
        # exporter declares that family. A replaced body is a store error too when the exporter
        # asks for the version it measured (If-Match: 412, counted as kind "412" and "changed",
        # nothing read from the replaced body); without that it breaks an event: an event-log
        # error.
        store_f, log_f = ERROR_FAMILIES
        must = store_f if has_family(last, store_f) else log_f
        if kind == "replace" and must == store_f:
            got = grown(by_kind(body0, store_f), by_kind(last, store_f))
            res.add(f"faults {sc}: replace: detected by If-Match (a 412, nothing read from the replaced body)",
                    any(g.startswith("412") for g in got) and any(g.startswith("changed") for g in got)
                    and not grown(by_kind(body0, log_f), by_kind(last, log_f)), "; ".join(got) or "no change")
        seen = "; ".join(f"{f}: {', '.join(grown(by_kind(body0, f), by_kind(last, f))) or 'no change'}"
                         for f in ERROR_FAMILIES if has_family(last, f)) or "no error counter exposed"
        res.add(f"faults {sc}: {kind}: {must} grew", bool(grown(by_kind(body0, must), by_kind(last, must))),
                f"{seen}; min spark_exporter_store_up while armed: {min_up}")
        proxy.clear()
        end, got = time.time() + 40, {}
        while time.time() < end and proc.p.poll() is None:
            status, body = scrape(port)
            if status == 200:
                got = samples(body)
                if got == want:
                    break
            time.sleep(0.5)
        ok, why = counts_equal(got, want)
        res.add(f"faults {sc}: {kind}: once cleared, the counts equal the local dump", ok, why)
        if store_up(body) not in ("absent", "no samples"):
            res.add(f"faults {sc}: {kind}: once cleared, spark_exporter_store_up is 1", store_up(body) == "1",
                    store_up(body))
        bad = log_problems(proc)
        res.add(f"faults {sc}: {kind}: the daemon's log: no panic, one line per record", not bad,
                f"{len(bad)} lines, first: {short(bad[0], 200)}" if bad else "")
        proc.stop()
        with open(os.path.join(ctx.tmp, f"fault-{sc}-{kind}.proxy.json"), "w") as f:
            json.dump(proxy.state(), f, indent=1)
        print(f"      (fault {sc} {kind}: {time.time() - t0:.0f}s)", flush=True)


# -- main -------------------------------------------------------------------------------------

def prerequisites(a):
    """What e2e_main does not check: the modules this Python imports, Azurite."""
    missing = []
    for mod, pkg in (("boto3", "boto3"), ("moto.server", "moto[server]"), ("azure.storage.blob", "azure-storage-blob")):
        try:
            __import__(mod)
        except ImportError:
            missing.append(f"{sys.executable} cannot import {mod} (pip install {pkg}; scripts/objstore-test.sh does)")
    if not a.azurite or not os.access(a.azurite, os.X_OK):
        missing.append(f"azurite-blob not found ({a.azurite or 'give --azurite'}; scripts/objstore-test.sh installs it)")
    return missing


def main():
    return e2e_main("objstore-e2e", __doc__, run, flags=flags, tools=(), modules=(), prerequisites=prerequisites)


def flags(ap):
    ap.add_argument("--azurite", default=os.environ.get("AZURITE_BLOB") or shutil.which("azurite-blob")
                    or os.path.join(ROOT, "target", "objstore-tools", "node_modules", ".bin", "azurite-blob"))
    ap.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    ap.add_argument("--fault", action="append", choices=[f[0] for f in FAULT_PLAN], help="run only these faults")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="set (or, with an empty value, unset) a variable for every exporter run")
    ap.add_argument("--stores", nargs="+", choices=("s3", "az"), default=["s3", "az"],
                    help="stores the live and fault sections run against [both]")
    ap.add_argument("--client-timeout", type=float, default=30.0,
                    help="the exporter's per-request timeout, which a stall outlasts [30: "
                         "REQUEST_TIMEOUT in src/sources/eventlog/objfs.rs, object_store's default too]")
    ap.add_argument("--stall-extra", type=float, default=2.0,
                    help="seconds a stalled request lasts beyond the client timeout [2]")
    ap.add_argument("--stall-count", type=int, default=1, help="requests stalled [1]")
    ap.add_argument("--run-all", action="store_true",
                    help="run every section even when the exporter rejects s3:// or az:// URLs")


def run(a, tmp, res, procs):
    # Run one binary throughout, even if cargo replaces target/debug/spark-exporter meanwhile:
    # a hard link keeps the file as it is now (a rebuild writes a new one), a copy if it can't.
    exporter = os.path.abspath(a.exporter)
    snapshot = os.path.join(tmp, "spark-exporter")
    try:
        os.link(exporter, snapshot)
    except OSError:
        shutil.copy2(exporter, snapshot)
    print(f"objstore-e2e: exporter {exporter} (run as {snapshot})", flush=True)
    a.exporter = snapshot
    extra = {}
    for kv in a.env:
        k, _, v = kv.partition("=")
        extra[k] = v or None
    ctx = Ctx()
    ctx.tmp, ctx.procs, ctx.run_all = tmp, procs, a.run_all
    ctx.faults = a.fault or []
    ctx.client_timeout, ctx.stall_extra, ctx.stall_count = a.client_timeout, a.stall_extra, a.stall_count
    ctx.supported = {"s3": False, "az": False}
    proxies = []
    sections = a.only or SECTIONS
    try:
        t0 = time.time()
        s3_port = start_moto(tmp, procs, "moto")
        # A moto that checks credentials: its first two requests (create the bucket, put one
        # object) go unchecked, then every request needs an access key its IAM knows: none.
        ctx.auth_port = start_moto(tmp, procs, "moto-auth", {"INITIAL_NO_AUTH_ACTION_COUNT": "2"})
        az_port = start_azurite(tmp, procs, a.azurite)
        proxies.append(FaultProxy(f"127.0.0.1:{s3_port}", flavour="s3").start())
        proxies.append(FaultProxy(f"127.0.0.1:{az_port}", flavour="azure").start())
        ex = ctx.exporter = Exporter(a.exporter, s3_port, az_port, extra)
        ctx.store = os.path.join(tmp, "store")
        ctx.logs = stage(ctx.store)
        s3 = s3_client(s3_port)
        s3.create_bucket(Bucket=BUCKET)
        az = azure_container(az_port)
        n = upload(s3, az, ctx.store)
        stores = {
            "s3": Store("s3", f"s3://{BUCKET}/",
                        lambda k, b: s3.put_object(Bucket=BUCKET, Key=k, Body=b),
                        lambda k: s3.delete_object(Bucket=BUCKET, Key=k),
                        ex.env(), proxies[0], ex.env(s3_port=proxies[0].port), f"/{BUCKET}"),
            "az": Store("az", f"az://{CONTAINER}/",
                        lambda k, b: az.upload_blob(k, b, overwrite=True),
                        lambda k: az.delete_blob(k),
                        ex.env(), proxies[1], ex.env(AZURITE_BLOB_STORAGE_URL=proxies[1].url),
                        f"/{AZURITE_ACCOUNT}/{CONTAINER}"),
        }
        auth = s3_client(ctx.auth_port)
        auth.create_bucket(Bucket=AUTH_BUCKET)
        single = ctx.logs["spark-3.5.5-none-single"][0]
        auth.put_object(Bucket=AUTH_BUCKET, Key=f"spark-events/{single}",
                        Body=open(os.path.join(ctx.store, "spark-events", single), "rb").read())
        print(f"objstore-e2e: moto :{s3_port}, moto-auth :{ctx.auth_port}, azurite :{az_port}, "
              f"fault proxies :{proxies[0].port} (s3), :{proxies[1].port} (az); {len(ctx.logs)} "
              f"fixtures, {n} objects uploaded to each store in "
              f"{time.time() - t0:.1f}s", flush=True)
        # The probe in section_dumps says whether each store is supported; run it alone if the
        # dumps section is not wanted.
        if "dumps" in sections:
            section_dumps(ctx, res)
        else:
            for scheme, url in (("s3", f"s3://{BUCKET}/spark-events/"), ("az", f"az://{CONTAINER}/spark-events/")):
                rc, out, err = ctx.exporter.dump(url)
                ctx.supported[scheme] = rc == 0 and bool(samples(out))
                if not ctx.supported[scheme]:
                    res.add(f"dumps: {scheme}:// event-log URLs are read ({url})", False,
                            f"exit {rc}: {short(' '.join(error_line(err)))}")
        if "errors" in sections:
            section_errors(ctx, res)
        for name, fn in (("live", section_live), ("checkpoint", section_checkpoint), ("faults", section_faults)):
            if name not in sections:
                continue

            def timed(sc, name=name, fn=fn):
                t = time.time()
                fn(ctx, res, stores[sc])
                print(f"      ({name} {sc}: {time.time() - t:.0f}s)", flush=True)

            if name == "faults":
                # The two stores' faults side by side: each mostly waits (a stall outlasts the
                # client timeout), on its own proxy, daemons and prefix.
                with concurrent.futures.ThreadPoolExecutor(len(a.stores)) as pool:
                    for f in [pool.submit(timed, sc) for sc in a.stores]:
                        f.result()
            else:
                for sc in a.stores:
                    timed(sc)
    finally:
        for p in proxies:
            p.stop()


if __name__ == "__main__":
    # The fault proxies' handler threads (daemon threads) may still be inside a stalled request
    # when main() returns; an interpreter shutdown beside them once exited non-zero after
    # "131 passed, 0 failed" with nothing printed (CI, stop 44). Every result is printed and
    # report.json written by then, so exit without the shutdown (faulthandler names a crash
    # before that point).
    import faulthandler
    faulthandler.enable()
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
