"""Optional: our custom resources against the real CRD schemas, when DEPLOY_TEST_CRD_DIR names
a folder of CRD files (e.g. the prometheus-operator's monitoring.coreos.com_podmonitors.yaml and
monitoring.coreos.com_prometheusrules.yaml, and spark-operator's
sparkoperator.k8s.io_sparkapplications.yaml). They are not shipped with this repository, so
without that folder these tests are skipped and k8s_checks.py's smaller checks stand in.

Two checks: the CRD's openAPIV3Schema (types, enums, required, patterns) with jsonschema, and
unknown fields, which the API server would prune silently (like `kubectl --validate=strict`)."""

from __future__ import annotations

import os
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import KUBE_DIR, load_docs, load_one

CUSTOM = ["podmonitor.yaml", "prometheusrule.yaml", "sparkapplication.yaml"]


@pytest.fixture(scope="module")
def crds() -> dict:
    d = os.environ.get("DEPLOY_TEST_CRD_DIR")
    if not d:
        pytest.skip("DEPLOY_TEST_CRD_DIR not set (folder of CRD YAML files)")
    out = {}
    for f in Path(d).glob("*.yaml"):
        for doc in load_docs(f):
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = doc["spec"]["group"], doc["spec"]["names"]["kind"]
            for v in doc["spec"]["versions"]:
                out[(f"{group}/{v['name']}", kind)] = v["schema"]["openAPIV3Schema"]
    return out


def unknown_fields(obj, schema, path="") -> list[str]:
    """Fields the structural schema does not declare (the API server would drop them)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or not isinstance(obj, (dict, list)):
        return []
    if isinstance(obj, list):
        return [e for i, item in enumerate(obj) for e in unknown_fields(item, schema.get("items", {}), f"{path}[{i}]")]
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    out = []
    for k, v in obj.items():
        if props is not None and k in props:
            out += unknown_fields(v, props[k], f"{path}.{k}")
        elif isinstance(extra, dict):
            out += unknown_fields(v, extra, f"{path}.{k}")
        elif props is not None and extra is not True:
            out.append(f"{path}.{k}")
    return out


def _validate(obj, crds):
    key = (obj["apiVersion"], obj["kind"])
    if key not in crds:
        pytest.skip(f"no CRD for {key} in DEPLOY_TEST_CRD_DIR")
    schema = crds[key]
    jsonschema.Draft7Validator(schema).validate(obj)
    assert unknown_fields(obj, schema) == []


@pytest.mark.parametrize("name", CUSTOM)
def test_manifest_matches_crd(crds, name):
    _validate(load_one(KUBE_DIR / name), crds)


def test_chart_objects_match_crds(crds, render):
    fleet = ["--set", "mode=both", "--set-json", 'fleet.eventLogDirs=["s3://bucket/events"]']
    for d in render() + render(*fleet):
        if d["kind"] in ("PodMonitor", "PrometheusRule"):
            _validate(d, crds)


def test_unknown_fields_are_found(crds):
    obj = load_one(KUBE_DIR / "podmonitor.yaml")
    obj["spec"]["podMetricsEndpoints"][0]["intervall"] = "15s"
    key = (obj["apiVersion"], obj["kind"])
    if key not in crds:
        pytest.skip("no PodMonitor CRD")
    assert unknown_fields(obj, crds[key]) == [".spec.podMetricsEndpoints[0].intervall"]
