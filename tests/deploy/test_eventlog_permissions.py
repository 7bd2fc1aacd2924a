"""Can the sidecar read what the driver writes? Real Spark 4.1.1 (a local job) writes its event
log into a folder set up the way the kubelet sets up an emptyDir under the pod's fsGroup
(group = fsGroup, mode 2777: setgid), as one user, and another user reads it: the exporter's
uid 65532 with the fsGroup as a supplementary group (what the kubelet gives every container),
and the same uid without it.

Spark writes event logs with mode 0660 in folders of mode 0770, so without the shared group
the exporter sees nothing; this is why the pod templates set securityContext.fsGroup.
Needs root (to switch users with setpriv), as CI and the dev machines run."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

FS_GROUP = 4242          # any gid: stands for the pod's fsGroup
DRIVER_UID = 65534       # `nobody`: Spark's JVM needs a passwd entry for its user
EXPORTER_UID = 65532     # distroless nonroot, as in the pod templates

JOB = """
from pyspark.sql import SparkSession
s = (SparkSession.builder.master("local[1]").appName("perm")
     .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", "file://{dir}")
     .config("spark.ui.enabled", "false").getOrCreate())
s.range(100).count()
s.stop()
"""


@pytest.fixture(scope="module")
def event_dir():
    py = os.environ.get("DEPLOY_TEST_PYSPARK_PYTHON")
    if not py:
        pytest.skip("no Python with pyspark (DEPLOY_TEST_PYSPARK_PYTHON)")
    if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("java"):
        pytest.skip("needs root, setpriv and java")
    # not under pytest's tmp folder: that one is 0700, closed to the other users
    base = Path(tempfile.mkdtemp(prefix="deploy-test-perm-"))
    base.chmod(0o755)
    home = base / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    events = base / "spark-events"  # like the kubelet's emptyDir with fsGroup
    events.mkdir()
    os.chown(events, 0, FS_GROUP)
    events.chmod(0o2777)
    job = base / "job.py"
    job.write_text(JOB.format(dir=events))
    job.chmod(0o644)
    env = dict(os.environ, HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
               JAVA_TOOL_OPTIONS=os.environ.get("JAVA_TOOL_OPTIONS", "") + f" -Duser.home={home}")
    r = subprocess.run(["setpriv", f"--reuid={DRIVER_UID}", f"--regid={DRIVER_UID}", f"--groups={FS_GROUP}",
                        py, str(job)], capture_output=True, text=True, timeout=300, env=env, cwd=base)
    assert r.returncode == 0, r.stderr[-3000:]
    yield events
    shutil.rmtree(base, ignore_errors=True)


def read_as(uid: int, groups: list[int], events: Path) -> subprocess.CompletedProcess:
    """`cat` the event-log files (paths found as root) as uid with these groups."""
    files = [str(f) for app in events.iterdir() for f in app.iterdir() if f.name.startswith("events_")]
    g = ["--groups=" + ",".join(map(str, groups))] if groups else ["--clear-groups"]
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", *g, "cat", *files], capture_output=True)


def test_spark_writes_owner_and_group_only(event_dir):
    (app,) = [p for p in event_dir.iterdir()]
    files = [p for p in app.iterdir() if p.name.startswith("events_")]
    assert files
    assert stat.S_IMODE(app.stat().st_mode) & 0o007 == 0            # folder: no access for others
    assert all(stat.S_IMODE(f.stat().st_mode) & 0o007 == 0 for f in files)
    # the setgid folder handed its group down: the files belong to the fsGroup
    assert app.stat().st_gid == FS_GROUP and all(f.stat().st_gid == FS_GROUP for f in files)


def test_exporter_reads_with_the_fsgroup(event_dir):
    r = read_as(EXPORTER_UID, [FS_GROUP], event_dir)
    assert r.returncode == 0 and len(r.stdout) > 1000, r.stderr


def test_exporter_reads_nothing_without_it(event_dir):
    r = read_as(EXPORTER_UID, [], event_dir)
    assert r.returncode != 0 and r.stdout == b"" and b"Permission denied" in r.stderr
