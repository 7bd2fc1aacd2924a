"""The driver pod templates, given to REAL spark-submit (pyspark 4.1.1, cluster mode).

spark-submit talks to a stand-in Kubernetes API server on loopback (fake_kube_apiserver.py),
which records the requests and stores the driver pod Spark builds from our template. What
Spark 4.1.1 asks, in order (logged to target/deploy-test/spark-submit-*.jsonl):
  POST  /api/v1/namespaces/default/pods                          the driver pod
  PATCH /api/v1/namespaces/default/services/<app>-driver-svc     server-side apply
  PATCH /api/v1/namespaces/default/configmaps/spark-drv-...-conf-map   server-side apply
  GET   /api/v1/namespaces/default/pods?fieldSelector=metadata.name=...&watch=true
        (a WebSocket upgrade first, then a plain HTTP watch)
  GET   /api/v1/namespaces/default/pods/<app>-driver            the pod's state
and it returns once the pod reports phase Succeeded."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

import fake_kube_apiserver
from conftest import CHART_DIR, KUBE_DIR, ROOT, load_one
from k8s_checks import EXIT_FLAG, HEALTHZ, check_object, validate_core

LOG_DIR = ROOT / "target" / "deploy-test"


def submit(spark_submit: str, template, tmp_path, name: str, extra_conf=()):
    """Run spark-submit against a fresh stand-in API server; returns (kube, stderr)."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = LOG_DIR / f"spark-submit-{name}.jsonl"
    log.unlink(missing_ok=True)
    server, kube, port = fake_kube_apiserver.serve(0, log_path=str(log))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")  # no ambient kube context
    conf = {
        "spark.kubernetes.driver.podTemplateFile": str(template),
        "spark.kubernetes.container.image": "x",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": "file:///var/spark-events",
        "spark.kubernetes.submission.waitAppCompletion": "true",
        **dict(extra_conf),
    }
    cmd = [spark_submit, "--master", f"k8s://http://127.0.0.1:{port}", "--deploy-mode", "cluster", "--name", name]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd.append("local:///opt/app.py")
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), SPARK_LOCAL_IP="127.0.0.1", HOME=str(tmp_path))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    finally:
        server.shutdown()
    assert r.returncode == 0, r.stderr[-4000:]
    assert kube.unrouted == [], kube.unrouted
    return kube, r.stderr


def the_driver_pod(kube) -> dict:
    (pod,) = kube.created("pods")
    return pod


def by_name(items):
    return {i["name"]: i for i in items}


def assert_exporter_wired(pod: dict, exporter: dict):
    """What must survive Spark's merge for the sidecar to work."""
    assert exporter["image"] == "registry.example.com/spark-exporter:0.2.0"
    assert exporter["ports"] == [{"name": "metrics", "containerPort": 9809, "protocol": "TCP"}]
    assert exporter["args"][0] == "--config.file=/etc/spark-exporter/config.yaml"
    assert exporter["livenessProbe"]["httpGet"] == HEALTHZ
    assert "startupProbe" not in exporter
    mounts = by_name(exporter["volumeMounts"])
    assert mounts["spark-events"] == {"name": "spark-events", "mountPath": "/var/spark-events", "readOnly": True}
    assert mounts["spark-exporter-config"]["mountPath"] == "/etc/spark-exporter"
    assert exporter["securityContext"]["readOnlyRootFilesystem"] is True
    vols = by_name(pod["spec"]["volumes"])
    assert vols["spark-events"] == {"name": "spark-events", "emptyDir": {"sizeLimit": "2Gi"}}
    assert vols["spark-exporter-config"]["configMap"]["name"] == "spark-exporter-config"
    assert "spark-exporter-tmp" in vols
    assert "spark-conf-volume-driver" in vols  # Spark's own volume is still there
    (driver,) = [c for c in pod["spec"]["containers"] if c["name"] == "spark-kubernetes-driver"]
    assert driver["image"] == "x" and driver["args"][0] == "driver"  # Spark filled in the driver
    dmounts = by_name(driver["volumeMounts"])
    assert dmounts["spark-events"]["mountPath"] == "/var/spark-events"
    assert "spark-conf-volume-driver" in dmounts
    # the exporter polls the UI at localhost:4040: Spark's driver exposes it there
    assert {"name": "spark-ui", "containerPort": 4040, "protocol": "TCP"} in driver["ports"]
    # Spark keeps the pod securityContext: the exporter can read the 0660 event logs
    assert pod["spec"]["securityContext"]["fsGroup"] == 185
    # and the grace period that lets the exporter drain after SIGTERM
    assert pod["spec"]["terminationGracePeriodSeconds"] == 40
    md = pod["metadata"]
    assert md["labels"]["spark-role"] == "driver" and md["labels"]["spark-exporter/scrape"] == "true"
    assert md["annotations"]["prometheus.io/port"] == "9809"
    # the pod Spark sends is a valid Pod for Kubernetes 1.29 and 1.33
    assert validate_core({k: v for k, v in pod.items() if k != "status"}) == []


def test_native_sidecar_accepted_by_spark(spark_submit, tmp_path):
    kube, _ = submit(spark_submit, KUBE_DIR / "driver-pod-template.yaml", tmp_path, "native")
    pod = the_driver_pod(kube)
    (exporter,) = pod["spec"]["initContainers"]
    assert exporter["name"] == "spark-exporter" and exporter["restartPolicy"] == "Always"
    assert exporter["args"] == ["--config.file=/etc/spark-exporter/config.yaml"]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["spark-kubernetes-driver"]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert_exporter_wired(pod, exporter)


def test_classic_sidecar_accepted_by_spark(spark_submit, tmp_path):
    kube, _ = submit(spark_submit, KUBE_DIR / "driver-pod-template-classic.yaml", tmp_path, "classic",
                     {"spark.kubernetes.driver.podTemplateContainerName": "spark-kubernetes-driver"})
    pod = the_driver_pod(kube)
    assert "initContainers" not in pod["spec"]
    containers = by_name(pod["spec"]["containers"])
    assert set(containers) == {"spark-kubernetes-driver", "spark-exporter"}
    exporter = containers["spark-exporter"]
    assert "restartPolicy" not in exporter
    assert exporter["args"] == ["--config.file=/etc/spark-exporter/config.yaml", EXIT_FLAG]
    assert "image" not in exporter or exporter["image"] != "x"  # Spark left the sidecar alone
    assert_exporter_wired(pod, exporter)


def test_chart_pod_template_accepted_by_spark(spark_submit, render, tmp_path):
    """The template the Helm chart renders (its pod-template ConfigMap) works the same."""
    (cm,) = [d for d in render() if d["metadata"]["name"] == "spark-exporter-pod-template"]
    tpl = tmp_path / "driver-pod-template.yaml"
    tpl.write_text(cm["data"]["driver-pod-template.yaml"])
    kube, _ = submit(spark_submit, tpl, tmp_path, "chart")
    pod = the_driver_pod(kube)
    assert_exporter_wired(pod, pod["spec"]["initContainers"][0])


def test_what_spark_asks_and_the_driver_service(spark_submit, tmp_path):
    """Pins the requests of spark-submit 4.1.1, and the fact the templates' readiness design
    rests on: the driver Service is headless and does NOT publish not-ready addresses, so a
    sidecar readiness probe that failed after start would take the driver out of its
    executors' DNS (which is why /readyz never turns back once ready)."""
    kube, _ = submit(spark_submit, KUBE_DIR / "driver-pod-template.yaml", tmp_path, "requests")
    calls = [(r["method"], r["path"].split("?")[0].rsplit("/", 1)[0] if r["method"] != "POST" else r["path"])
             for r in kube.requests]
    assert calls[0] == ("POST", "/api/v1/namespaces/default/pods")
    methods = {(m, p.split("/")[-1] if m != "GET" else p) for m, p in calls}
    assert ("PATCH", "services") in methods and ("PATCH", "configmaps") in methods
    assert any(r["method"] == "GET" and "watch=true" in r["path"] for r in kube.requests)
    patches = [r for r in kube.requests if r["method"] == "PATCH"]
    assert all(r["content_type"] == "application/apply-patch+yaml" for r in patches)
    (svc,) = kube.created("services")
    assert svc["spec"]["clusterIP"] == "None"
    assert not svc["spec"].get("publishNotReadyAddresses", False)
    assert svc["spec"]["selector"]["spark-role"] == "driver"
    (cm,) = kube.created("configmaps")
    assert "spark.eventLog.dir=file\\:///var/spark-events" in cm["data"]["spark.properties"]
