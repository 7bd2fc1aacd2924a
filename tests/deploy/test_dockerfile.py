"""Dockerfile and .dockerignore. No Docker engine runs here, so the image is never built in
these tests: they check the file's promises (multi-stage, distroless nonroot, port, entrypoint,
context) and, when a release binary exists, that it needs no library distroless/cc lacks."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
PIN_SCRIPT = ROOT / "scripts" / "docker-pin-bases.sh"
#: image:tag, optionally pinned: image:tag@sha256:<64 hex digits>.
IMAGE_REF = re.compile(r"^(?P<tag>[a-z0-9./-]+:[A-Za-z0-9._-]+)(?:@(?P<digest>sha256:[0-9a-f]{64}))?$")
#: Shared libraries gcr.io/distroless/cc-debian12 ships (glibc, libgcc_s, libstdc++, libgomp).
DISTROLESS_CC_LIBS = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0",
                      "librt.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgomp.so.1"}


def instructions(text: str = DOCKERFILE):
    """(INSTRUCTION, argument) pairs, with continuation lines joined."""
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, arg = line.partition(" ")
            out.append((op.upper(), arg.strip()))
    return out


def global_args(text: str = DOCKERFILE) -> dict[str, str]:
    """The ARGs before the first FROM (the ones a FROM line may use) and their defaults."""
    out = {}
    for op, arg in instructions(text):
        if op == "FROM":
            break
        if op == "ARG":
            name, _, default = arg.partition("=")
            out[name] = default
    return out


def froms() -> list[str]:
    """The FROM lines with the global ARGs' defaults put in."""
    args = global_args()
    return [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], a) for op, a in instructions() if op == "FROM"]


def test_multi_stage_onto_distroless_nonroot():
    f = froms()
    assert len(f) == 2
    assert f[0].startswith("rust:") and f[0].endswith(" AS builder")
    assert "-bookworm" in f[0]  # same Debian (glibc) as the runtime
    assert re.sub(r"@sha256:[0-9a-f]{64}$", "", f[1]) == "gcr.io/distroless/cc-debian12:nonroot"


def test_base_images_are_tags_or_digest_pins():
    """Both bases come from ARGs a build (or scripts/docker-pin-bases.sh) can pin; each default
    is a tag pinned by a whole sha256."""
    args = global_args()
    assert {"BUILDER_IMAGE", "RUNTIME_IMAGE"} <= set(args)
    assert [a for op, a in instructions() if op == "FROM"] == ["${BUILDER_IMAGE} AS builder", "${RUNTIME_IMAGE}"]
    pins = {}
    for name in ("BUILDER_IMAGE", "RUNTIME_IMAGE"):
        m = IMAGE_REF.match(args[name])
        assert m, f"{name}={args[name]!r} is neither image:tag nor image:tag@sha256:<64 hex>"
        pins[name] = m.group("digest")
    # Both pinned (issue 13): a rebuild fetches the same bytes.
    assert all(pins.values()), pins
    r = subprocess.run([str(PIN_SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _stub(bin_dir, name: str, body: str):
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / name).write_text("#!/bin/sh\n" + body + "\n")
    (bin_dir / name).chmod(0o755)


@pytest.mark.parametrize("tool", ["crane", "docker"])
def test_pin_script_writes_digests(tmp_path, tool):
    """The pin script against stand-ins for crane and docker (no registry here): it writes
    tag@digest into both ARG defaults, re-pins a pinned one, and writes nothing on a bad answer."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(DOCKERFILE)
    digest = "sha256:" + "ab" * 32
    if tool == "crane":
        _stub(tmp_path / "bin", "crane", f'[ "$1" = digest ] && echo {digest}')
    else:
        _stub(tmp_path / "bin", "docker",
              f'[ "$1 $2 $3" = "buildx imagetools inspect" ] && printf "Name:      %s\\nMediaType: x\\nDigest:    {digest}\\n" "$4"')
    env = dict(os.environ, DOCKERFILE=str(dockerfile), PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    run = lambda *a: subprocess.run([str(PIN_SCRIPT), *a], capture_output=True, text=True, env=env)
    assert run("--check").returncode == (0 if "NOT PINNED YET" not in DOCKERFILE else 1)
    r = run()
    assert r.returncode == 0, r.stderr
    args = global_args(dockerfile.read_text())
    for name in ("BUILDER_IMAGE", "RUNTIME_IMAGE"):
        m = IMAGE_REF.match(args[name])
        assert m and m.group("digest") == digest, args[name]
        assert m.group("tag") == re.sub(r"@.*", "", global_args()[name])
    assert run("--check").returncode == 0
    # a second run replaces the digest instead of appending one
    assert run().returncode == 0
    assert [l.count("@sha256:") for l in dockerfile.read_text().splitlines() if l.startswith("ARG ") and "_IMAGE=" in l] == [1, 1]
    # an answer that is not a whole sha256 changes nothing
    before = dockerfile.read_text()
    _stub(tmp_path / "bin", tool, "echo sha256:1234")
    r = run()
    assert r.returncode == 1 and "could not look up" in r.stderr
    assert dockerfile.read_text() == before


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
    # crates/bench/benches/: a workspace member declares them, and cargo reads every declared target's file.
    for p in ("Cargo.toml", "Cargo.lock", "src/main.rs", "src/lib.rs", "crates/bench/Cargo.toml", "crates/bench/benches/load-bench.rs"):
        assert not ignored(p), p
    for p in ("target/release/spark-exporter", ".git/HEAD", ".venv/bin/python", ".venv-deploy/bin/python",
              "deploy/kubernetes/configmap.yaml", "tests/data/x.json"):
        assert ignored(p), p
    # The workspace's other crates, and every file the binary embeds (include_str!/include_bytes!).
    for p in ("crates/core/src/lib.rs", "crates/diagnose/src/lib.rs"):
        assert not ignored(p), p
    embedded = []
    for rs in (ROOT / "src").rglob("*.rs"):
        for rel in re.findall(r'include_(?:str|bytes)!\("([^"]+)"\)', rs.read_text()):
            embedded.append((rs.parent / rel).resolve().relative_to(ROOT.resolve()).as_posix())
    assert "docs/metrics.md" in embedded, embedded
    for p in embedded:
        assert not ignored(p), p


def test_binary_needs_only_distroless_cc_libraries():
    exes = [p for p in (ROOT / "target" / d / "spark-exporter" for d in ("release", "debug")) if p.exists()]
    if not exes or not shutil.which("ldd"):
        pytest.skip("no target/{release,debug}/spark-exporter built (or no ldd)")
    exe = exes[0]
    out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, check=True).stdout
    libs = {l.split()[0].rsplit("/", 1)[-1] for l in out.splitlines() if l.strip()}
    assert libs <= DISTROLESS_CC_LIBS, libs - DISTROLESS_CC_LIBS
