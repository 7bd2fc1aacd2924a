"""deploy/helm/spark-exporter/values.schema.json refuses bad values before anything renders, and
sidecar.mode is checked against the Kubernetes version (native sidecars need 1.29)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from conftest import CHART_DIR, ROOT, load_docs
from k8s_checks import EXIT_FLAG
from test_helm import VARIANTS, pod_template_of

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())

#: (helm arguments, what the error must name). Each is a mistake a person makes.
REJECTED = [
    (["--set", "sidecar.mode=bogus"], "/sidecar/mode"),
    (["--set", "sidecar.port=http"], "/sidecar/port"),
    (["--set-string", "sidecar.port=9809"], "/sidecar/port"),
    (["--set", "sidecar.port=70000"], "/sidecar/port"),
    (["--set-string", "podTemplate.configMap=yes"], "/podTemplate/configMap"),
    (["--set", "bogusKey=1"], "'bogusKey'"),
    (["--set", "podMonitor.intervall=10s"], "'intervall'"),
    (["--set", "config.lifecyle.grace_period=30s"], "'lifecyle'"),
    (["--set", "podMonitor.interval=10 seconds"], "/podMonitor/interval"),
    (["--set", "podMonitor.labels.release=1"], "/podMonitor/labels/release"),
    # the sidecar wants the string "1"; --set makes a number of it
    (["--set", "dashboards.labels.grafana_dashboard=1"], "/dashboards/labels/grafana_dashboard"),
    (["--set", "dashboards.namespace=Monitoring"], "/dashboards/namespace"),
    (["--set", "image.pullPolicy=Sometimes"], "/image/pullPolicy"),
    (["--set", "image.tag=2"], "/image/tag"),
    (["--set", "image.repository="], "/image/repository"),
    (["--set-json", 'sidecar.extraArgs="--log.level=debug"'], "/sidecar/extraArgs"),
    (["--set-json", 'sidecar.env=[{"value":"x"}]'], "/sidecar/env/0"),
    (["--set", "sidecar.eventLogDir=var/spark-events"], "/sidecar/eventLogDir"),
    (["--set", "sidecar.readinessProbe=true"], "/sidecar/readinessProbe"),
    (["--set-string", "podTemplate.terminationGracePeriodSeconds=40"], "/podTemplate/terminationGracePeriodSeconds"),
    (["--set", "config.log.format=text"], "/config/log/format"),
    # fleet mode and the model settings it relies on
    (["--set", "mode=fleets"], "/mode"),
    (["--set", "fleet.shards=0"], "/fleet/shards"),
    (["--set-string", "fleet.shards=2"], "/fleet/shards"),
    (["--set", "fleet.eventLogDirs=s3://bucket/events"], "/fleet/eventLogDirs"),
    (["--set-json", 'fleet.sparkUrls=["spark-history:18080"]'], "/fleet/sparkUrls/0"),
    (["--set", "fleet.eventLogVolume.mountPath=var/spark-events"], "/fleet/eventLogVolume/mountPath"),
    (["--set", "fleet.eventLogVolume.existingClaim=Spark_Events"], "/fleet/eventLogVolume/existingClaim"),
    (["--set", "fleet.objectStore.existingSecret=AWS Keys"], "/fleet/objectStore/existingSecret"),
    (["--set", "fleet.serviceAccount.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints=true"],
     "/fleet/serviceAccount/annotations"),
    (["--set", "fleet.podLabels.azure\\.workload\\.identity/use=true"], "/fleet/podLabels"),
    (["--set", "fleet.replicas=3"], "'replicas'"),
    (["--set", "fleet.config.modle.summary_level=app"], "'modle'"),
    (["--set", "fleet.config.model.summary_level=jobs"], "/fleet/config/model/summary_level"),
    (["--set", "config.model.aggregate_by=app"], "/config/model/aggregate_by"),
    (["--set", "fleet.config.model.aggregate_by=name"], "/fleet/config/model/aggregate_by"),
    (["--set", "fleet.config.model.max_app_age=7"], "/fleet/config/model/max_app_age"),
    (["--set", "fleet.config.log.format=text"], "/fleet/config/log/format"),
    (["--set-string", "fleet.terminationGracePeriodSeconds=40"], "/fleet/terminationGracePeriodSeconds"),
]


def helm_run(helm, *args):
    return subprocess.run([helm, *args], capture_output=True, text=True)


@pytest.mark.parametrize("args,where", REJECTED, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_schema_rejects(helm, args, where):
    r = helm_run(helm, "template", "x", str(CHART_DIR), *args)
    assert r.returncode != 0, f"accepted: {args}"
    assert "don't meet the specifications of the schema" in r.stderr and where in r.stderr, r.stderr


def test_lint_rejects_too(helm):
    for args, where in REJECTED[:3]:
        r = helm_run(helm, "lint", "--strict", str(CHART_DIR), *args)
        assert r.returncode != 0 and where in r.stdout + r.stderr, args


def test_good_values_pass_lint(helm):
    good = [*VARIANTS.values(),
            ["--set-string", "image.tag=2"],
            ["--set", "dashboards.namespace=monitoring", "--set", "dashboards.annotations.grafana_folder=Spark"],
            ["--set", "podMonitor.labels.release=null", "--set", "prometheusRule.labels=null"],
            ["--set", "sidecar.eventLogSizeLimit=1073741824"],
            ["--set-json", 'podMonitor.namespaceSelector={"matchNames":["a","b"]}'],
            ["--set", "sidecar.mode=classic", "--kube-version", "1.28.0"],
            ["--set", "sidecar.mode=auto", "--kube-version", "1.28.0"],
            ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["s3://b/e"]',
             "--set", "fleet.config.model.summary_level=app", "--set", "fleet.config.model.max_app_age=7d",
             "--set", "fleet.config.model.app_name_filter=^etl-", "--set", "fleet.config.model.aggregate_by=app_name"],
            ["--set", "mode=both", "--set-json", 'fleet.eventLogDirs=["s3://b/e"]',
             "--set", "config.model.summary_level=full", "--set", "config.model.summary_after=1m"]]
    for args in good:
        r = helm_run(helm, "lint", "--strict", str(CHART_DIR), *args)
        assert r.returncode == 0, (args, r.stdout + r.stderr)


def test_schema_keeps_up_with_values_yaml():
    """Every key of values.yaml is in the schema, and closed objects stay closed."""
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())

    def walk(v, s, path):
        assert isinstance(s, dict), path
        if isinstance(v, dict) and "properties" in s:
            for k, child in v.items():
                assert k in s["properties"] or s.get("additionalProperties", True) is not False, f"{path}.{k}"
                if k in s["properties"]:
                    walk(child, s["properties"][k], f"{path}.{k}")

    walk(values, SCHEMA, "")
    assert SCHEMA["additionalProperties"] is False
    for k in ("image", "sidecar", "podTemplate", "fleet", "podMonitor", "prometheusRule", "dashboards", "config"):
        assert SCHEMA["properties"][k]["additionalProperties"] is False, k
    assert SCHEMA["properties"]["sidecar"]["properties"]["mode"]["enum"] == ["native", "classic", "auto"]
    assert SCHEMA["properties"]["mode"]["enum"] == ["sidecar", "fleet", "both"]
    fleet = SCHEMA["properties"]["fleet"]["properties"]
    for k in ("eventLogVolume", "objectStore", "serviceAccount", "config"):
        assert fleet[k]["additionalProperties"] is False, k


def test_config_sections_are_the_exporters():
    """config's section names are exactly the fields of the exporter's Settings."""
    src = (ROOT / "crates" / "core" / "src" / "config" / "settings.rs").read_text()
    body = re.search(r"pub struct Settings \{(.*?)\n\}", src, re.S).group(1)
    # A field `check-config` does not print (`#[serde(skip)]`: the resolved OTLP push) is no
    # section; the flattened one holds the sections declared outside the core (each source's,
    # named by its `SectionConfig::NAME` in its folder).
    fields = {name for attr, name in re.findall(r"(#\[serde\((?:skip|flatten)\)\]\s*)?pub (\w+):", body)
              if not attr}
    declared = {m for f in (ROOT / "src" / "sources").rglob("*.rs")
                for m in re.findall(r'impl SectionConfig for \w+ \{\s*const NAME: &\'static str = "(\w+)";',
                                    f.read_text())}
    assert declared, "no source declares a section"
    fields |= declared
    assert fields and set(SCHEMA["properties"]["config"]["properties"]) == fields
    # fleet.config is merged over config: the same sections, each checked as config's
    fleet = SCHEMA["properties"]["fleet"]["properties"]["config"]["properties"]
    assert fleet == {k: {"$ref": f"#/properties/config/properties/{k}"} for k in fields}


#: The model settings (fleet mode's of issue 15, the per-stage series bounds of issue 17), as the
#: exporter names them.
MODEL_KEYS = {"app_retention", "stage_retention", "dead_executor_retention", "summary_level", "summary_after",
              "app_name_filter", "max_app_age", "aggregate_by", "max_finished_stages", "stage_skew_ratio",
              "stage_skew_min_duration"}


def test_model_keys_are_the_exporters():
    """config.model's keys in the schema are the fields of the exporter's ModelConfig, and the
    fleet's defaults in values.yaml use them."""
    model = SCHEMA["properties"]["config"]["properties"]["model"]["properties"]
    assert set(model) == MODEL_KEYS
    assert model["summary_level"]["enum"] == ["full", "groups", "app"]
    assert model["aggregate_by"]["enum"] == ["app_id", "app_name"]
    src = (ROOT / "crates" / "core" / "src" / "config" / "model.rs").read_text()
    body = re.search(r"pub struct ModelConfig \{(.*?)\n\}", src, re.S).group(1)
    fields = set(re.findall(r"pub (\w+):", body))
    if not {"summary_level", "aggregate_by"} <= fields:
        pytest.skip("crates/core/src/config/model.rs predates the fleet's model settings (issue 15)")
    assert fields == MODEL_KEYS
    fleet = yaml.safe_load((CHART_DIR / "values.yaml").read_text())["fleet"]["config"]["model"]
    assert set(fleet) <= MODEL_KEYS


# -- sidecar.mode and the Kubernetes version ----------------------------------------------------

def mode_of(docs) -> str:
    pod = pod_template_of(docs)
    if any(c["name"] == "spark-exporter" and c.get("restartPolicy") == "Always" for c in pod["spec"].get("initContainers", [])):
        return "native"
    (c,) = [c for c in pod["spec"]["containers"] if c["name"] == "spark-exporter"]
    assert EXIT_FLAG in c["args"] and "initContainers" not in pod["spec"]
    return "classic"


@pytest.mark.parametrize("kube,mode,expected", [
    ("1.29.0", "native", "native"),
    ("1.29.0", "auto", "native"),
    ("1.29.0", "classic", "classic"),
    ("v1.29.1-eks-1234567", "native", "native"),
    ("1.33.0", "auto", "native"),
    ("1.28.0", "classic", "classic"),
    ("1.28.0", "auto", "classic"),
    ("v1.28.5-gke.100", "auto", "classic"),
    ("1.27.0", "auto", "classic"),
])
def test_mode_by_kubernetes_version(render, kube, mode, expected):
    assert mode_of(render("--kube-version", kube, "--set", f"sidecar.mode={mode}")) == expected


def test_helm_default_version_renders_native(render):
    """Without --kube-version helm renders for its own default (v1.35 for helm 4.1), so the
    default native mode renders as before."""
    assert mode_of(render()) == "native"


NATIVE_TOO_OLD = "sidecar.mode=native needs Kubernetes 1.29 or newer, and this cluster is v1.28.0"


@pytest.mark.parametrize("extra", [[], ["--set", "podTemplate.configMap=false"]])
def test_native_below_1_29_fails(helm, extra):
    """Native is the default and is never silently swapped: below 1.29 the install fails and
    says what to do, even when no pod template is rendered."""
    r = helm_run(helm, "template", "x", str(CHART_DIR), "--kube-version", "1.28.0", *extra)
    assert r.returncode != 0
    msg = " ".join(r.stderr.split())
    assert NATIVE_TOO_OLD in msg and "sidecar.mode=classic" in msg and "auto" in msg, msg
    assert "podTemplateContainerName=spark-kubernetes-driver" in msg
    # helm lint runs templates in a lenient mode where `fail` only logs: it cannot catch this


def _parent_chart(helm, tmp_path, dict_extra: str, values: str):
    parent = tmp_path / "parent"
    (parent / "templates").mkdir(parents=True)
    (parent / "Chart.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v2", "name": "parent", "version": "0.0.1",
        "dependencies": [{"name": "spark-exporter", "version": "0.2.0", "repository": f"file://{CHART_DIR}"}],
    }))
    (parent / "values.yaml").write_text(values)
    (parent / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: my-template\ndata:\n  pod.yaml: |\n"
        '    {{- include "spark-exporter.podTemplate" (dict "Values" (index .Values "spark-exporter") "Release" .Release'
        + dict_extra + ") | nindent 4 }}\n")
    subprocess.run([helm, "dependency", "update", str(parent)], check=True, capture_output=True)
    return parent


def test_parent_chart_passes_capabilities(helm, tmp_path):
    """From a parent chart's dict: with Capabilities the check and auto work; without them
    auto cannot decide and says so."""
    values = "spark-exporter:\n  sidecar:\n    mode: auto\n"
    parent = _parent_chart(helm, tmp_path, ' "Capabilities" .Capabilities', values)
    for kube, expected in (("1.28.0", "classic"), ("1.30.0", "native")):
        out = subprocess.run([helm, "template", "jobs", str(parent), "--kube-version", kube,
                              "--show-only", "templates/pod.yaml"], check=True, capture_output=True, text=True).stdout
        pod = yaml.safe_load(load_docs(out)[0]["data"]["pod.yaml"])
        assert ("initContainers" in pod["spec"]) == (expected == "native"), kube
    parent = _parent_chart(helm, tmp_path / "no-caps", "", values)
    r = helm_run(helm, "template", "jobs", str(parent), "--show-only", "templates/pod.yaml")
    assert r.returncode != 0 and "sidecar.mode=auto needs the Kubernetes version" in r.stderr
