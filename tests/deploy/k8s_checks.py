"""Checks of Kubernetes objects: core kinds against the Kubernetes OpenAPI schemas
(kubernetes-validate, strict: unknown fields are errors), and the custom resources we ship
(PodMonitor, PrometheusRule, SparkApplication) against the fields their CRDs require.

The CRD checks are deliberately small: apiVersion, kind, the required fields, field types and
the formats the operators reject (durations, enums). Embedded core objects (the SparkApplication's
sidecar containers and volumes) go through the Kubernetes schemas as well."""

from __future__ import annotations

import re

import kubernetes_validate
from kubernetes_validate.utils import ValidationError

#: Oldest release with native sidecars on by default, and a current one.
K8S_VERSIONS = ("1.29.0", "1.33.0")

#: prometheus-operator's duration pattern (monitoringv1.Duration).
DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$")
#: Kubernetes label name.
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def validate_core(obj: dict, versions=K8S_VERSIONS) -> list[str]:
    """Errors of a core object against the strict schemas of each version, plus what the
    schemas cannot say: a pod volume has exactly one source (the API server rejects more)."""
    errors = []
    if obj.get("kind") == "Pod":
        for v in obj.get("spec", {}).get("volumes", []):
            sources = sorted(set(v) - {"name"})
            if len(sources) != 1:
                errors.append(f"volume {v.get('name')} has {len(sources)} sources: {sources}")
    for v in versions:
        try:
            kubernetes_validate.validate(obj, v, strict=True)
        except ValidationError as e:
            errors.append(f"k8s {v}: {e.message} at {'.'.join(str(p) for p in e.path)}")
    return errors


def _need(errors, obj, path: str, typ):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            errors.append(f"missing {path}")
            return None
        cur = cur[part]
    if not isinstance(cur, typ):
        errors.append(f"{path} should be {typ.__name__}, is {type(cur).__name__}")
        return None
    return cur


def check_podmonitor(obj: dict) -> list[str]:
    e: list[str] = []
    if obj.get("apiVersion") != "monitoring.coreos.com/v1" or obj.get("kind") != "PodMonitor":
        e.append(f"not a monitoring.coreos.com/v1 PodMonitor: {obj.get('apiVersion')} {obj.get('kind')}")
    _need(e, obj, "metadata.name", str)
    _need(e, obj, "spec.selector", dict)
    eps = _need(e, obj, "spec.podMetricsEndpoints", list) or []
    if not eps:
        e.append("spec.podMetricsEndpoints is empty")
    for i, ep in enumerate(eps):
        if not (ep.get("port") or ep.get("portNumber")):
            e.append(f"podMetricsEndpoints[{i}] names no port")
        for k in ("interval", "scrapeTimeout"):
            if k in ep and not DURATION.match(str(ep[k])):
                e.append(f"podMetricsEndpoints[{i}].{k}={ep[k]!r} is not a duration")
        for j, r in enumerate(ep.get("relabelings", [])):
            if "targetLabel" in r and not LABEL_NAME.match(r["targetLabel"]) and not r["targetLabel"].startswith("__"):
                e.append(f"relabelings[{j}].targetLabel {r['targetLabel']!r} is not a label name")
    return e


def check_prometheusrule(obj: dict) -> list[str]:
    e: list[str] = []
    if obj.get("apiVersion") != "monitoring.coreos.com/v1" or obj.get("kind") != "PrometheusRule":
        e.append(f"not a monitoring.coreos.com/v1 PrometheusRule: {obj.get('apiVersion')} {obj.get('kind')}")
    _need(e, obj, "metadata.name", str)
    groups = _need(e, obj, "spec.groups", list)
    names = set()
    for g in groups or []:
        if not isinstance(g.get("name"), str) or not g["name"]:
            e.append("a group has no name")
        elif g["name"] in names:
            e.append(f"group {g['name']} appears twice")
        names.add(g.get("name"))
        for r in g.get("rules", []):
            what = r.get("alert") or r.get("record")
            if bool(r.get("alert")) == bool(r.get("record")):
                e.append(f"rule {what!r} in {g.get('name')}: exactly one of alert/record")
            if not isinstance(r.get("expr"), (str, int)) or r.get("expr") == "":
                e.append(f"rule {what!r}: no expr")
            if "for" in r and not DURATION.match(str(r["for"])):
                e.append(f"rule {what!r}: for={r['for']!r} is not a duration")
            for k in ("labels", "annotations"):
                if k in r and not all(isinstance(v, str) for v in r[k].values()):
                    e.append(f"rule {what!r}: {k} values must be strings")
    return e


def check_sparkapplication(obj: dict) -> list[str]:
    """kubeflow spark-operator v1beta2: required spec fields, enums, and the embedded core
    objects (sidecars, initContainers, volumes) through the Kubernetes schemas."""
    e: list[str] = []
    if obj.get("apiVersion") != "sparkoperator.k8s.io/v1beta2" or obj.get("kind") != "SparkApplication":
        e.append(f"not a sparkoperator.k8s.io/v1beta2 SparkApplication: {obj.get('apiVersion')} {obj.get('kind')}")
    _need(e, obj, "metadata.name", str)
    spec = _need(e, obj, "spec", dict) or {}
    for f, t in (("type", str), ("sparkVersion", str), ("mainApplicationFile", str), ("driver", dict), ("executor", dict)):
        _need(e, obj, f"spec.{f}", t)
    if spec.get("type") not in ("Java", "Python", "Scala", "R"):
        e.append(f"spec.type {spec.get('type')!r} not Java/Python/Scala/R")
    if spec.get("mode", "cluster") not in ("cluster", "client", "in-cluster-client"):
        e.append(f"spec.mode {spec.get('mode')!r}")
    for k, v in spec.get("sparkConf", {}).items():
        if not isinstance(v, str):
            e.append(f"sparkConf {k} must be a string")
    drv = spec.get("driver", {})
    containers = list(drv.get("sidecars", [])) + list(drv.get("initContainers", []))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sparkapplication-embedded", "labels": drv.get("labels", {}),
                     "annotations": drv.get("annotations", {})},
        "spec": {"containers": containers or [{"name": "x", "image": "x"}],
                 "volumes": spec.get("volumes", [])},
    }
    e += [f"embedded pod parts: {m}" for m in validate_core(pod)]
    mounts = {m["name"] for c in containers for m in c.get("volumeMounts", [])}
    mounts |= {m["name"] for m in drv.get("volumeMounts", [])}
    vols = {v["name"] for v in spec.get("volumes", [])}
    if mounts - vols:
        e.append(f"mounts of volumes that spec.volumes lacks: {sorted(mounts - vols)}")
    return e


CRD_CHECKS = {
    "PodMonitor": check_podmonitor,
    "PrometheusRule": check_prometheusrule,
    "SparkApplication": check_sparkapplication,
}


def check_object(obj: dict) -> list[str]:
    """Errors of any object we ship: a CRD check for our custom kinds, the schemas otherwise."""
    if obj.get("kind") in CRD_CHECKS:
        return CRD_CHECKS[obj["kind"]](obj)
    return validate_core(obj)


# -- the exporter's lifecycle: how each variant ends, and what its probes look at --

#: The classic container's flag: exit 0 once the application has ended and the drain is done.
EXIT_FLAG = "--lifecycle.exit-when-app-ends"
#: The exporter's own liveness probe, the same in every variant.
HEALTHZ = {"path": "/healthz", "port": "metrics"}
#: The driver UI's port; no probe may look at it (the classic variant once did).
DRIVER_UI_PORT = 4040
#: The exporter's default lifecycle.grace_period, in seconds.
DEFAULT_GRACE = 25


def duration_seconds(s: str) -> float:
    """A humantime duration as the configs here write it (25s, 1m30s, 500ms, 1h)."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = re.findall(r"(\d+)\s*(ms|s|m|h|d)", s)
    assert parts and "".join(n + u for n, u in parts) == s.replace(" ", ""), f"unparsed duration {s!r}"
    return sum(int(n) * units[u] for n, u in parts)


def probes_of(container: dict) -> dict:
    return {k: container[k] for k in ("livenessProbe", "readinessProbe", "startupProbe") if k in container}


def all_containers(obj: dict) -> list[dict]:
    """Every container an object we ship describes (pod templates and the SparkApplication)."""
    if obj.get("kind") == "SparkApplication":
        drv = obj["spec"]["driver"]
        return list(drv.get("sidecars", [])) + list(drv.get("initContainers", []))
    if obj.get("kind") == "Pod":
        return list(obj["spec"].get("initContainers", [])) + list(obj["spec"]["containers"])
    return []


def driver_ui_probes(obj: dict) -> list[str]:
    """Probes that reach the driver UI (port 4040 or its REST path) instead of the exporter."""
    bad = []
    for c in all_containers(obj):
        for kind, probe in probes_of(c).items():
            get = probe.get("httpGet") or probe.get("tcpSocket") or {}
            if get.get("port") in (DRIVER_UI_PORT, str(DRIVER_UI_PORT), "spark-ui") or \
                    str(get.get("path", "")).startswith("/api/v1"):
                bad.append(f"{c['name']}.{kind}")
    return bad
