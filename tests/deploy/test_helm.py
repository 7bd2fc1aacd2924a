"""deploy/helm/spark-exporter: lint, schemas of every rendering, and that the chart renders the
same objects as deploy/kubernetes (one design, two packagings)."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from conftest import CHART_DIR, KUBE_DIR, load_docs, load_one
from k8s_checks import EXIT_FLAG, HEALTHZ, check_object, driver_ui_probes, duration_seconds

#: Value sets the tests render: the defaults and each switch.
VARIANTS = {
    "defaults": [],
    "classic": ["--set", "sidecar.mode=classic"],
    "readiness-on": ["--set", "sidecar.readinessProbe.enabled=true"],
    "all-off": ["--set", "podMonitor.enabled=false", "--set", "prometheusRule.enabled=false",
                "--set", "podTemplate.configMap=false", "--set", "dashboards.enabled=false"],
    "auto": ["--set", "sidecar.mode=auto"],
    "customised": ["--set", "podMonitor.labels.release=kube-prometheus-stack",
                   "--set", "podMonitor.namespaceSelector.any=true",
                   "--set", "prometheusRule.labels.release=kube-prometheus-stack",
                   "--set-json", 'sidecar.env=[{"name":"SPARK_EXPORTER_LOG__LEVEL","value":"debug"}]',
                   "--set-json", 'sidecar.extraArgs=["--log.format=logfmt"]',
                   "--set-json", 'sidecar.eventLogVolume={"persistentVolumeClaim":{"claimName":"spark-events"}}',
                   "--set", "fullnameOverride=exp",
                   "--set", "dashboards.annotations.grafana_folder=Spark"],
    "long-drain": ["--set", "config.lifecycle.grace_period=1m30s",
                   "--set", "podTemplate.terminationGracePeriodSeconds=120",
                   "--set", "podMonitor.interval=30s"],
}


def by_kind(docs):
    out = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


def pod_template_of(docs) -> dict:
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-pod-template")]
    return yaml.safe_load(cm["data"]["driver-pod-template.yaml"])


def test_lint(helm):
    for args in VARIANTS.values():
        r = subprocess.run([helm, "lint", "--strict", str(CHART_DIR), *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rendered_objects_are_valid(render, variant):
    docs = render(*VARIANTS[variant])
    assert docs
    for d in docs:
        assert check_object(d) == [], (variant, d["kind"], d["metadata"]["name"])
        assert d["metadata"]["namespace"] == "spark-jobs"
    for d in docs:  # the pod template inside its ConfigMap, too
        if d["kind"] == "ConfigMap" and "driver-pod-template.yaml" in d["data"]:
            assert check_object(yaml.safe_load(d["data"]["driver-pod-template.yaml"])) == []


def pod_templates_of_every_variant(render):
    for name, args in VARIANTS.items():
        for mode in ("native", "classic"):
            docs = render(*args, "--set", f"sidecar.mode={mode}")
            if any(d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-pod-template") for d in docs):
                yield f"{name}/{mode}", mode, docs, pod_template_of(docs)


def test_lifecycle_in_every_rendering(render):
    """Every variant, native or classic: the /healthz liveness probe, no probe on the driver UI,
    the exit flag exactly in classic mode, and a terminationGracePeriodSeconds above the
    exporter's drain grace period."""
    seen = 0
    for name, mode, docs, pod in pod_templates_of_every_variant(render):
        seen += 1
        assert driver_ui_probes(pod) == [], name
        (c,) = [c for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"] if c["name"] == "spark-exporter"]
        assert c["livenessProbe"]["httpGet"] == HEALTHZ, name
        assert "startupProbe" not in c, name
        assert (EXIT_FLAG in c["args"]) == (mode == "classic"), name
        (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-config")]
        grace = duration_seconds(yaml.safe_load(cm["data"]["config.yaml"])["lifecycle"]["grace_period"])
        tgps = pod["spec"]["terminationGracePeriodSeconds"]
        assert tgps >= 30 and tgps > grace, name
    assert seen >= 2 * (len(VARIANTS) - 1)


def test_grace_period_check(helm, render):
    """The chart refuses a terminationGracePeriodSeconds that would cut the drain short."""
    def fails(*args):
        r = subprocess.run([helm, "template", "x", str(CHART_DIR), *args], capture_output=True, text=True)
        return r.returncode != 0 and "must exceed config.lifecycle.grace_period" in r.stderr

    assert fails("--set", "podTemplate.terminationGracePeriodSeconds=25")
    assert fails("--set", "config.lifecycle.grace_period=1m")
    assert fails("--set", "config.lifecycle.grace_period=1h", "--set", "podTemplate.configMap=false")
    # unset: the kubelet's 30s, enough for the default 25s but not for 40s
    assert fails("--set", "podTemplate.terminationGracePeriodSeconds=null", "--set", "config.lifecycle.grace_period=40s")
    pod = pod_template_of(render("--set", "podTemplate.terminationGracePeriodSeconds=null"))
    assert "terminationGracePeriodSeconds" not in pod["spec"]
    # the exporter's own default (25s) counts when config.lifecycle is gone
    assert fails("--set", "config.lifecycle=null", "--set", "podTemplate.terminationGracePeriodSeconds=20")
    assert not fails("--set", "config.lifecycle=null")
    # forms the check does not parse are left alone
    assert not fails("--set", "config.lifecycle.grace_period=500ms")
    pod = pod_template_of(render(*VARIANTS["long-drain"]))
    assert pod["spec"]["terminationGracePeriodSeconds"] == 120


def test_podmonitor_interval(render):
    (pm,) = by_kind(render())["PodMonitor"]
    (ep,) = pm["spec"]["podMetricsEndpoints"]
    assert (ep["interval"], ep["scrapeTimeout"]) == ("10s", "10s")
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert 2 * duration_seconds(values["podMonitor"]["interval"]) <= duration_seconds(values["config"]["lifecycle"]["grace_period"])


def test_default_rendering_kinds(render):
    kinds = sorted(d["kind"] for d in render())
    n_dashboards = len(list((CHART_DIR / "files" / "dashboards").glob("*.json")))
    assert n_dashboards >= 5
    assert kinds == ["ConfigMap"] * (2 + n_dashboards) + ["PodMonitor", "PrometheusRule"]
    assert sorted(d["kind"] for d in render(*VARIANTS["all-off"])) == ["ConfigMap"]


def test_chart_equals_plain_manifests(render, kustomize):
    """With release name spark-exporter the chart renders what deploy/kubernetes holds (and
    `kubectl kustomize deploy/kubernetes` builds): config, pod templates, the PodMonitor and
    PrometheusRule with the label Prometheus selects on, and the dashboard ConfigMaps."""
    docs = render()
    kinds = by_kind(docs)
    plain = by_kind(kustomize(KUBE_DIR))
    for kind in ("PodMonitor", "PrometheusRule"):
        (chart_obj,), (plain_obj,) = kinds[kind], plain[kind]
        assert chart_obj["spec"] == plain_obj["spec"], kind
        assert chart_obj["metadata"]["labels"]["release"] == plain_obj["metadata"]["labels"]["release"], kind
    def dashboards(objs):
        return {d["metadata"]["name"]: (d["metadata"]["labels"]["grafana_dashboard"], d["data"])
                for d in objs if d["kind"] == "ConfigMap" and "grafana_dashboard" in d["metadata"].get("labels", {})}
    assert dashboards(docs) == dashboards(plain["ConfigMap"]) != {}
    (cm,) = [d for d in kinds["ConfigMap"] if d["metadata"]["name"] == "spark-exporter-config"]
    plain_cm = load_one(KUBE_DIR / "configmap.yaml")
    assert yaml.safe_load(cm["data"]["config.yaml"]) == yaml.safe_load(plain_cm["data"]["config.yaml"])
    assert pod_template_of(docs) == load_one(KUBE_DIR / "driver-pod-template.yaml")
    assert pod_template_of(render(*VARIANTS["classic"])) == load_one(KUBE_DIR / "driver-pod-template-classic.yaml")
    (pm,) = kinds["PodMonitor"]
    assert pm["spec"] == load_one(KUBE_DIR / "podmonitor.yaml")["spec"]
    (rule,) = kinds["PrometheusRule"]
    assert rule["spec"] == load_one(KUBE_DIR / "prometheusrule.yaml")["spec"]


def test_rules_keep_their_templates(render):
    """Alert annotations hold Prometheus templates ({{ $labels.x }}); Helm must not eat them."""
    (rule,) = by_kind(render())["PrometheusRule"]
    text = yaml.safe_dump(rule)
    src = (CHART_DIR / "files" / "prometheusrule.yaml").read_text()
    if "{{" in src:
        assert "{{ $labels." in text or "{{$labels." in text


def test_switches(render):
    kinds = by_kind(render(*VARIANTS["customised"]))
    (pm,) = kinds["PodMonitor"]
    assert pm["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert pm["spec"]["namespaceSelector"] == {"any": True}
    assert kinds["PrometheusRule"][0]["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    pod = pod_template_of(render(*VARIANTS["customised"]))
    (c,) = pod["spec"]["initContainers"]
    assert c["args"] == ["--config.file=/etc/spark-exporter/config.yaml", "--log.format=logfmt"]
    assert c["env"] == [{"name": "SPARK_EXPORTER_LOG__LEVEL", "value": "debug"}]
    assert pod["spec"]["volumes"][0] == {"name": "spark-events", "persistentVolumeClaim": {"claimName": "spark-events"}}
    assert {"name": "spark-exporter-config", "configMap": {"name": "exp-config"}} in pod["spec"]["volumes"]
    pod = pod_template_of(render(*VARIANTS["readiness-on"]))
    assert pod["spec"]["initContainers"][0]["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def test_bad_mode_fails(helm):
    """The schema refuses it first; the template's own check stays for parent charts' dicts."""
    r = subprocess.run([helm, "template", "x", str(CHART_DIR), "--set", "sidecar.mode=sometimes"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "/sidecar/mode" in r.stderr and "'native', 'classic', 'auto'" in r.stderr


def test_image_tag_is_app_version():
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert values["image"]["tag"] == chart["appVersion"]


def _snippets(notes: str) -> list[str]:
    """The blocks NOTES.txt prints between ---8<--- lines."""
    parts = notes.split("---8<---")
    return [p.split("\n", 1)[1] for p in parts[1::2]]


@pytest.mark.parametrize("mode", ["native", "classic"])
def test_notes_print_usable_snippets(helm, mode):
    r = subprocess.run([helm, "install", "spark-exporter", str(CHART_DIR), "--dry-run=client",
                        "--namespace", "spark-jobs", "--set", f"sidecar.mode={mode}"],
                       capture_output=True, text=True, check=True)
    notes = r.stdout.split("NOTES:", 1)[1]
    template, sidecar, podspec, volumes, driver = _snippets(notes)
    plain = "driver-pod-template.yaml" if mode == "native" else "driver-pod-template-classic.yaml"
    assert yaml.safe_load(template) == load_one(KUBE_DIR / plain)
    pod = load_one(KUBE_DIR / plain)
    (exp,) = [c for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"] if c["name"] == "spark-exporter"]
    assert yaml.safe_load(sidecar) == [exp]
    assert yaml.safe_load(volumes) == pod["spec"]["volumes"]
    assert yaml.safe_load(podspec) == {k: pod["spec"][k] for k in ("securityContext", "terminationGracePeriodSeconds")}
    assert yaml.safe_load(driver) == [pod["spec"]["containers"][0]]
    assert "spark.kubernetes.driver.podTemplateFile=driver-pod-template.yaml" in notes
    assert ("podTemplateContainerName" in notes) == (mode == "classic")


def test_named_template_from_a_parent_chart(helm, tmp_path):
    """A user's chart that depends on ours can include "spark-exporter.sidecar"."""
    parent = tmp_path / "parent"
    (parent / "templates").mkdir(parents=True)
    (parent / "Chart.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v2", "name": "parent", "version": "0.0.1",
        "dependencies": [{"name": "spark-exporter", "version": "0.2.0", "repository": f"file://{CHART_DIR}"}],
    }))
    (parent / "values.yaml").write_text("spark-exporter:\n  sidecar:\n    extraArgs: [--log.level=debug]\n")
    (parent / "templates" / "pod-template.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: my-template\ndata:\n  pod.yaml: |\n"
        "    apiVersion: v1\n    kind: Pod\n    spec:\n      initContainers:\n"
        '        {{- include "spark-exporter.sidecar" (dict "Values" (index .Values "spark-exporter") "Release" .Release) | nindent 8 }}\n'
        "      containers:\n"
        '        {{- include "spark-exporter.driverContainer" (dict "Values" (index .Values "spark-exporter") "Release" .Release) | nindent 8 }}\n'
        "      volumes:\n"
        '        {{- include "spark-exporter.volumes" (dict "Values" (index .Values "spark-exporter") "Release" .Release) | nindent 8 }}\n'
    )
    subprocess.run([helm, "dependency", "update", str(parent)], check=True, capture_output=True)
    out = subprocess.run([helm, "template", "jobs", str(parent), "--show-only", "templates/pod-template.yaml"],
                         check=True, capture_output=True, text=True).stdout
    pod = yaml.safe_load(load_docs(out)[0]["data"]["pod.yaml"])
    assert check_object(dict(pod, metadata={"name": "x"})) == []
    (c,) = pod["spec"]["initContainers"]
    assert c["restartPolicy"] == "Always" and c["args"][-1] == "--log.level=debug"
    assert {"name": "spark-exporter-config", "configMap": {"name": "jobs-spark-exporter-config"}} in pod["spec"]["volumes"]


def documented_values() -> list[str]:
    """Key paths of values.yaml that carry a `# --` description."""
    import re

    stack, pending, out = [], False, []
    for line in (CHART_DIR / "values.yaml").read_text().splitlines():
        if re.match(r"^\s*# -- ", line):
            pending = True
            continue
        m = re.match(r"^(\s*)([A-Za-z0-9_./-]+):", line)
        if m and not line.lstrip().startswith("#"):
            depth = len(m.group(1)) // 2
            stack = stack[:depth] + [m.group(2)]
            if pending:
                out.append(".".join(stack))
            pending = False
    return out


def test_every_value_is_documented_and_in_the_readme_table():
    keys = documented_values()
    assert len(keys) > 20
    readme = (CHART_DIR / "README.md").read_text()
    table = {line.split("|")[1].strip().strip("`") for line in readme.splitlines() if line.startswith("| `")}
    assert set(keys) <= table, set(keys) - table
    # every leaf of values.yaml is under a documented key
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())

    def leaves(d, prefix=""):
        for k, v in d.items():
            path = f"{prefix}{k}"
            if isinstance(v, dict) and v and path not in keys:
                yield from leaves(v, path + ".")
            else:
                yield path

    assert [p for p in leaves(values) if p not in keys] == []


def test_the_sparkapplication_example_works_for_any_release_name(render):
    """sparkapplication.yaml mounts the ConfigMap `spark-exporter-config`: the chart makes it
    under another release name with sidecar.configMapName, and its pod template mounts it."""
    app = load_one(KUBE_DIR / "sparkapplication.yaml")
    wanted = {v["configMap"]["name"] for v in app["spec"]["volumes"] if "configMap" in v}
    assert wanted == {"spark-exporter-config"}
    docs = render("--set", "sidecar.configMapName=spark-exporter-config", release="nightly-etl")
    maps = {d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"
            and "config.yaml" in d.get("data", {})}
    assert "spark-exporter-config" in maps, maps
    template = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap"
                                   and any(k.endswith(".yaml") and k != "config.yaml"
                                           for k in d.get("data", {})))["data"]
                              .popitem()[1])
    mounted = {v["configMap"]["name"] for v in template["spec"]["volumes"] if "configMap" in v}
    assert mounted == {"spark-exporter-config"}, mounted
    # By default, the release's own name.
    docs = render(release="nightly-etl")
    assert "nightly-etl-spark-exporter-config" in {
        d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"}
