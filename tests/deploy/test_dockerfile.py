"""Dockerfile and .dockerignore. No Docker engine runs here, so the image is never built in
these tests: they check the file's promises (multi-stage, distroless nonroot, port, entrypoint,
context) and, when a release binary exists, that it needs no library distroless/cc lacks."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
#: Shared libraries gcr.io/distroless/cc-debian12 ships (glibc, libgcc_s, libstdc++, libgomp).
DISTROLESS_CC_LIBS = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
                      "librt.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgomp.so.1"}


def instructions():
    """(INSTRUCTION, argument) pairs, with continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, arg = line.partition(" ")
            out.append((op.upper(), arg.strip()))
    return out


def test_multi_stage_onto_distroless_nonroot():
    froms = [a for op, a in instructions() if op == "FROM"]
    assert len(froms) == 2
    assert froms[0].startswith("rust:") and froms[0].endswith(" AS builder")
    assert "bookworm" in froms[0]  # same Debian (glibc) as the runtime
    assert froms[1] == "gcr.io/distroless/cc-debian12:nonroot"


def test_runtime_stage():
    ops = instructions()
    last = max(i for i, (op, _) in enumerate(ops) if op == "FROM")
    runtime = ops[last + 1:]
    assert ("USER", "65532:65532") in runtime
    assert ("EXPOSE", "9809") in runtime
    (entry,) = [a for op, a in runtime if op == "ENTRYPOINT"]
    (copy,) = [a for op, a in runtime if op == "COPY"]
    assert entry == '["/usr/local/bin/spark-exporter"]'
    assert copy.startswith("--from=builder ") and copy.endswith(" /usr/local/bin/spark-exporter")
    assert not [op for op, _ in runtime if op == "RUN"]  # no shell in distroless


def test_builds_exactly_the_lockfile():
    (run,) = [a for op, a in instructions() if op == "RUN"]
    assert "cargo build --release --locked" in run


def ignored(path: str) -> bool:
    """Docker's .dockerignore matching, for the patterns we use (no negations)."""
    pats = [l.strip() for l in (ROOT / ".dockerignore").read_text().splitlines() if l.strip() and not l.startswith("#")]
    parts = path.split("/")
    for p in pats:
        p = p.lstrip("/")
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if fnmatch.fnmatch(prefix, p) or (p.startswith("**/") and fnmatch.fnmatch(parts[i - 1], p[3:])):
                return True
    return False


def test_dockerignore_keeps_the_build_inputs_only():
    # benches/: Cargo.toml declares the bench targets, and cargo reads every declared target's file.
    for p in ("Cargo.toml", "Cargo.lock", "src/main.rs", "src/lib.rs", "benches/load-bench.rs"):
        assert not ignored(p), p
    for p in ("target/release/spark-exporter", ".git/HEAD", ".venv/bin/python", ".venv-deploy/bin/python",
              "deploy/kubernetes/configmap.yaml", "tests/data/x.json"):
        assert ignored(p), p


def test_binary_needs_only_distroless_cc_libraries():
    exes = [p for p in (ROOT / "target" / d / "spark-exporter" for d in ("release", "debug")) if p.exists()]
    if not exes or not shutil.which("ldd"):
        pytest.skip("no target/{release,debug}/spark-exporter built (or no ldd)")
    exe = exes[0]
    out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, check=True).stdout
    libs = {l.split()[0].rsplit("/", 1)[-1] for l in out.splitlines() if l.strip()}
    assert libs <= DISTROLESS_CC_LIBS, libs - DISTROLESS_CC_LIBS
