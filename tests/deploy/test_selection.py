"""Does a stock kube-prometheus-stack pick up what we install? Its Prometheus must select our
PodMonitor and PrometheusRule, its Grafana our dashboard ConfigMaps, from the chart and from
the plain manifests alike, with nobody editing a selector.

The selectors are those kube-prometheus-stack puts in its Prometheus resource and Grafana
sidecar with DEFAULT values (chart 88.5.3): templates/prometheus/prometheus.yaml renders
podMonitorSelector and ruleSelector as `matchLabels: {release: <its release name>}` because
podMonitorSelectorNilUsesHelmValues and ruleSelectorNilUsesHelmValues are true, and
podMonitorNamespaceSelector / ruleNamespaceSelector as {} (every namespace); values.yaml has
grafana.sidecar.dashboards.label grafana_dashboard, labelValue "1", searchNamespace ALL."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import KUBE_DIR, ROOT

DASHBOARDS = sorted((ROOT / "dashboards").glob("*.json"))
#: The release name kube-prometheus-stack's own docs install it under.
KPS_RELEASE = "kube-prometheus-stack"
#: Grafana's dashboard sidecar in kube-prometheus-stack, default values.
GRAFANA_SIDECAR = {"label": "grafana_dashboard", "labelValue": "1", "searchNamespace": "ALL"}


def kps_prometheus(release: str = KPS_RELEASE) -> dict:
    """The selector part of the Prometheus resource kube-prometheus-stack renders by default."""
    return {
        "podMonitorSelector": {"matchLabels": {"release": release}},
        "podMonitorNamespaceSelector": {},
        "ruleSelector": {"matchLabels": {"release": release}},
        "ruleNamespaceSelector": {},
    }


def matches(selector: dict | None, labels: dict) -> bool:
    """A Kubernetes label selector: nil selects nothing, {} everything."""
    if selector is None:
        return False
    for k, v in selector.get("matchLabels", {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selected(prometheus: dict, docs: list[dict]) -> set[str]:
    """The kinds of our objects this Prometheus picks up (namespace selectors here are all {}
    = every namespace, so only the object selectors decide)."""
    assert prometheus["podMonitorNamespaceSelector"] == prometheus["ruleNamespaceSelector"] == {}
    out = set()
    for d in docs:
        labels = d["metadata"].get("labels", {})
        if d["kind"] == "PodMonitor" and matches(prometheus["podMonitorSelector"], labels):
            out.add("PodMonitor")
        if d["kind"] == "PrometheusRule" and matches(prometheus["ruleSelector"], labels):
            out.add("PrometheusRule")
    return out


def grafana_dashboards(docs: list[dict]) -> list[str]:
    """Names of the ConfigMaps kube-prometheus-stack's Grafana sidecar loads."""
    return [d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"
            and d["metadata"].get("labels", {}).get(GRAFANA_SIDECAR["label"]) == GRAFANA_SIDECAR["labelValue"]]


def test_selector_model():
    assert matches({}, {}) and not matches(None, {"a": "b"})
    assert matches({"matchLabels": {"release": "x"}}, {"release": "x", "other": "y"})
    assert not matches({"matchLabels": {"release": "x"}}, {"release": "y"})
    assert not matches({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {})


@pytest.mark.parametrize("our_release", ["spark-exporter", KPS_RELEASE, "jobs"])
def test_stock_kube_prometheus_stack_selects_the_chart(render, our_release):
    """Whatever our own release is called, the defaults are picked up by a
    kube-prometheus-stack installed as `kube-prometheus-stack`."""
    docs = render(release=our_release)
    assert selected(kps_prometheus(), docs) == {"PodMonitor", "PrometheusRule"}
    assert len(grafana_dashboards(docs)) == len(DASHBOARDS) >= 5


def test_other_release_name_needs_the_value(render):
    """A kube-prometheus-stack under another name selects nothing by default, and everything
    once the two label values name it."""
    assert selected(kps_prometheus("prom"), render()) == set()
    docs = render("--set", "podMonitor.labels.release=prom", "--set", "prometheusRule.labels.release=prom")
    assert selected(kps_prometheus("prom"), docs) == {"PodMonitor", "PrometheusRule"}
    assert selected(kps_prometheus(), docs) == set()
    # removing the label removes it
    docs = render("--set", "podMonitor.labels.release=null")
    (pm,) = [d for d in docs if d["kind"] == "PodMonitor"]
    assert "release" not in pm["metadata"]["labels"]


def test_stock_kube_prometheus_stack_selects_the_plain_manifests(kustomize):
    docs = kustomize(KUBE_DIR)
    assert selected(kps_prometheus(), docs) == {"PodMonitor", "PrometheusRule"}
    assert len(grafana_dashboards(docs)) == len(DASHBOARDS) >= 5


def test_documented_overlay_changes_the_release_label(kustomize, tmp_path):
    """The overlay kustomization.yaml's comment shows, run as written: both objects move to
    another release name."""
    text = (KUBE_DIR / "kustomization.yaml").read_text()
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == "#   resources:")
    block = []
    for l in lines[start:]:
        if not l.startswith("#   "):
            break
        block.append(l[4:])
    overlay = "\n".join(block).replace("<path to>/deploy/kubernetes", "../base")
    assert "value: my-prometheus" in overlay
    shutil.copytree(KUBE_DIR, tmp_path / "base")
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + overlay + "\n")
    docs = kustomize(tmp_path / "overlay")
    assert selected(kps_prometheus("my-prometheus"), docs) == {"PodMonitor", "PrometheusRule"}
    assert selected(kps_prometheus(), docs) == set()


def test_plain_podmonitor_says_how_to_change_the_label():
    text = (KUBE_DIR / "podmonitor.yaml").read_text()
    assert re.search(r"^    release: kube-prometheus-stack$", text, re.M)
    assert "kustomization.yaml" in text


def test_dashboards_in_another_namespace_for_a_namespaced_sidecar(render):
    docs = render("--set", "dashboards.namespace=monitoring")
    dash = [d for d in docs if d["metadata"]["name"] in grafana_dashboards(docs)]
    assert dash and {d["metadata"]["namespace"] for d in dash} == {"monitoring"}
    assert {d["metadata"]["namespace"] for d in docs if d not in dash} == {"spark-jobs"}
