"""The Grafana dashboards as ConfigMaps: deploy/helm/spark-exporter/files/dashboards/ and
deploy/kubernetes/dashboards/ are copies of dashboards/*.json (scripts/deploy-sync-dashboards.sh),
and both the chart and kustomize turn each into one ConfigMap holding that JSON unchanged."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import CHART_DIR, KUBE_DIR, ROOT

SCRIPT = ROOT / "scripts" / "deploy-sync-dashboards.sh"
DASHBOARDS = sorted((ROOT / "dashboards").glob("*.json"))
#: Kubernetes refuses a ConfigMap whose data exceeds 1 MiB.
CONFIGMAP_MAX = 1 << 20
#: Client-side `kubectl apply` copies the object into the last-applied-configuration
#: annotation, and all annotations together may hold 256 KiB.
ANNOTATIONS_MAX = 256 << 10


def dashboard_configmaps(docs: list[dict]) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs
            if d["kind"] == "ConfigMap" and "-dashboard-" in d["metadata"]["name"]}


def test_there_are_dashboards():
    assert len(DASHBOARDS) >= 5


def test_copies_are_in_sync():
    r = subprocess.run([str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _scratch_tree(tmp_path):
    """The script, the dashboards and their copies in a scratch tree the script can change."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(SCRIPT, tmp_path / "scripts")
    shutil.copytree(ROOT / "dashboards", tmp_path / "dashboards")
    shutil.copytree(CHART_DIR / "files" / "dashboards", tmp_path / "deploy/helm/spark-exporter/files/dashboards")
    shutil.copytree(KUBE_DIR / "dashboards", tmp_path / "deploy/kubernetes/dashboards")
    script = tmp_path / "scripts" / SCRIPT.name
    return lambda *a: subprocess.run([str(script), *a], capture_output=True, text=True)


def test_check_detects_drift(tmp_path):
    run = _scratch_tree(tmp_path)
    chart_copy = tmp_path / "deploy/helm/spark-exporter/files/dashboards" / DASHBOARDS[0].name
    kube_dir = tmp_path / "deploy/kubernetes/dashboards"
    assert run("--check").returncode == 0
    # a hand edit of a copy
    chart_copy.write_text(chart_copy.read_text().replace('"title"', '"titel"', 1))
    r = run("--check")
    assert r.returncode == 1 and "drift" in r.stderr
    assert run().returncode == 0 and run("--check").returncode == 0
    assert chart_copy.read_bytes() == DASHBOARDS[0].read_bytes()
    # a copy of a dashboard that is gone
    (kube_dir / "spark-old.json").write_text("{}\n")
    assert run("--check").returncode == 1
    assert run().returncode == 0 and not (kube_dir / "spark-old.json").exists()
    # a new dashboard: its copies and its configMapGenerator entry are missing until a sync
    (tmp_path / "dashboards" / "spark-new.json").write_text('{"title": "new"}\n')
    assert run("--check").returncode == 1
    assert run().returncode == 0 and run("--check").returncode == 0
    assert "spark-exporter-dashboard-spark-new" in (kube_dir / "kustomization.yaml").read_text()
    assert (tmp_path / "deploy/helm/spark-exporter/files/dashboards/spark-new.json").exists()


def test_too_large_a_dashboard_is_refused(tmp_path):
    run = _scratch_tree(tmp_path)
    (tmp_path / "dashboards" / "spark-huge.json").write_text('{"x": "' + "a" * CONFIGMAP_MAX + '"}\n')
    for args in ((), ("--check",)):
        r = run(*args)
        assert r.returncode == 1 and "too large" in r.stderr
    assert not (tmp_path / "deploy/kubernetes/dashboards/spark-huge.json").exists()


def test_chart_renders_each_dashboard_unchanged(render):
    cms = dashboard_configmaps(render())
    assert sorted(cms) == [f"spark-exporter-dashboard-{p.stem}" for p in DASHBOARDS]
    for p in DASHBOARDS:
        cm = cms[f"spark-exporter-dashboard-{p.stem}"]
        assert list(cm["data"]) == [p.name]
        # byte for byte what dashboards/ holds, so valid JSON equal to the dashboard
        assert cm["data"][p.name] == p.read_text()
        assert json.loads(cm["data"][p.name]) == json.loads(p.read_text())
        assert cm["metadata"]["namespace"] == "spark-jobs"
        labels = cm["metadata"]["labels"]
        assert labels["grafana_dashboard"] == "1" and labels["app.kubernetes.io/component"] == "dashboards"
        assert "annotations" not in cm["metadata"]


def test_kustomize_renders_each_dashboard_unchanged(kustomize):
    cms = dashboard_configmaps(kustomize(KUBE_DIR / "dashboards"))
    assert sorted(cms) == [f"spark-exporter-dashboard-{p.stem}" for p in DASHBOARDS]
    for p in DASHBOARDS:
        cm = cms[f"spark-exporter-dashboard-{p.stem}"]
        assert cm["data"] == {p.name: p.read_text()}
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert "namespace" not in cm["metadata"]  # kubectl apply -n decides


def test_dashboard_values(render):
    docs = render("--set", "dashboards.namespace=monitoring", "--set", "dashboards.annotations.grafana_folder=Spark",
                  "--set", "dashboards.labels.grafana_dashboard=null", "--set-string", "dashboards.labels.team=data")
    for cm in dashboard_configmaps(docs).values():
        assert cm["metadata"]["namespace"] == "monitoring"
        assert cm["metadata"]["annotations"] == {"grafana_folder": "Spark"}
        assert "grafana_dashboard" not in cm["metadata"]["labels"] and cm["metadata"]["labels"]["team"] == "data"
    assert dashboard_configmaps(render("--set", "dashboards.enabled=false")) == {}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_fits_a_configmap(render, path):
    """Under 1 MiB of data, and small enough for client-side `kubectl apply` (the
    last-applied-configuration annotation holds the whole object, JSON-escaped)."""
    size = path.stat().st_size
    assert size < CONFIGMAP_MAX
    cm = dashboard_configmaps(render())[f"spark-exporter-dashboard-{path.stem}"]
    assert len(json.dumps(cm, separators=(",", ":")).encode()) < ANNOTATIONS_MAX
