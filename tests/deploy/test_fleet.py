"""Fleet mode of deploy/helm/spark-exporter (`mode: fleet`, or `both` beside the sidecar): a
StatefulSet of exporters over a whole event-log store, one shard per pod, with its headless
Service, ServiceAccount, config.yaml and PodMonitor. Checked here: the objects against the
Kubernetes schemas, shards (replicas = --shard.count, the index from the pod's name), probes,
the event-log volume and the object-store credentials, the config overlay, the grace period,
what each PodMonitor selects, and (with a built exporter) that the exporter accepts it all."""

from __future__ import annotations

import copy
import json
import re
import subprocess

import pytest
import yaml

from conftest import CHART_DIR, ROOT, load_docs
from k8s_checks import HEALTHZ, check_object, driver_ui_probes, duration_seconds
from test_helm import by_kind, pod_template_of
from test_selection import kps_prometheus, matches

S3 = ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["s3://spark-logs/events"]']

#: Value sets of fleet mode: each store and switch.
FLEET_VARIANTS = {
    "s3": S3,
    "pvc": ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["/var/spark-events"]',
            "--set", "fleet.eventLogVolume.existingClaim=spark-events"],
    "hostpath": ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["file:///mnt/spark/events", "/mnt/spark/old"]',
                 "--set", "fleet.eventLogVolume.mountPath=/mnt/spark", "--set", "fleet.eventLogVolume.hostPath=/srv/nfs/spark"],
    "both-gcs": ["--set", "mode=both", "--set-json", 'fleet.eventLogDirs=["gs://spark-logs/events"]',
                 "--set", "fleet.objectStore.gcsKeySecret=gcs-key", "--set", "fleet.objectStore.gcsKeySecretKey=sa.json"],
    "customised": S3 + [
        "--set", "fleet.shards=5",
        "--set", "fleet.objectStore.existingSecret=s3-credentials",
        "--set-json", 'fleet.serviceAccount.annotations={"eks.amazonaws.com/role-arn":"arn:aws:iam::123456789012:role/spark-logs"}',
        "--set-json", 'fleet.podLabels={"azure.workload.identity/use":"true"}',
        "--set-json", 'fleet.sparkUrls=["http://spark-history:18080"]',
        "--set-json", 'fleet.extraArgs=["--event-log.threads=4"]',
        "--set-json", 'fleet.env=[{"name":"AWS_REGION","value":"eu-west-1"}]',
        "--set-json", 'fleet.tolerations=[{"key":"spark","operator":"Exists","effect":"NoSchedule"}]',
        "--set-json", 'fleet.nodeSelector={"pool":"monitoring"}',
        "--set", "fleet.config.model.aggregate_by=app_name",
        "--set", "fleet.config.lifecycle.drain_scrapes=0",
        "--set", "fullnameOverride=exp"],
    "checkpoint-shared": S3 + ["--set", "fleet.checkpoint.enabled=true", "--set", "fleet.checkpoint.existingClaim=exporter-state"],
    "checkpoint-per-shard": S3 + ["--set", "fleet.checkpoint.enabled=true", "--set", "fleet.checkpoint.storageClassName=fast",
                                  "--set", "fleet.checkpoint.interval=10s"],
    "no-sa": S3 + ["--set", "fleet.serviceAccount.create=false", "--set", "fleet.serviceAccount.name=spark"],
    "long-drain": S3 + ["--set", "fleet.config.lifecycle.grace_period=2m", "--set", "fleet.terminationGracePeriodSeconds=150"],
}


def helm_run(helm, *args):
    return subprocess.run([helm, *args], capture_output=True, text=True)


def fails(helm, *args) -> str:
    """The error of a rendering that must fail (empty if it rendered)."""
    r = helm_run(helm, "template", "x", str(CHART_DIR), *args)
    return "" if r.returncode == 0 else " ".join(r.stderr.split())


def one(docs, kind, suffix="-fleet"):
    (obj,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].endswith(suffix)]
    return obj


def sts_of(docs) -> dict:
    (s,) = [d for d in docs if d["kind"] == "StatefulSet"]
    return s


def container_of(sts) -> dict:
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    return c


def fleet_config(docs) -> dict:
    return yaml.safe_load(one(docs, "ConfigMap", "-fleet-config")["data"]["config.yaml"])


def statefulset_ordinal(hostname: str):
    """The exporter's shard::statefulset_ordinal: the digits after the last '-'."""
    head, _, n = hostname.rpartition("-")
    return int(n) if head and n.isdigit() else None


def values() -> dict:
    return yaml.safe_load((CHART_DIR / "values.yaml").read_text())


# -- rendering -----------------------------------------------------------------------------------

def test_lint(helm):
    for args in FLEET_VARIANTS.values():
        r = helm_run(helm, "lint", "--strict", str(CHART_DIR), *args)
        assert r.returncode == 0, (args, r.stdout + r.stderr)


@pytest.mark.parametrize("variant", list(FLEET_VARIANTS))
def test_rendered_objects_are_valid(render, variant):
    """Every object against the strict Kubernetes 1.29 and 1.33 schemas (PodMonitor: its CRD's
    required fields), in the release namespace."""
    docs = render(*FLEET_VARIANTS[variant])
    for d in docs:
        assert check_object(d) == [], (variant, d["kind"], d["metadata"]["name"], check_object(d))
        assert d["metadata"]["namespace"] == "spark-jobs"
    pod = dict(sts_of(docs)["spec"]["template"], apiVersion="v1", kind="Pod")
    pod["metadata"] = dict(pod["metadata"], name="x")
    assert check_object(pod) == []  # the pod's volumes: one source each
    assert driver_ui_probes(pod) == []


def test_kinds(render):
    """Fleet mode renders the fleet and what every mode shares (rules, dashboards), none of the
    sidecar's objects; both renders the two."""
    n_dash = len(list((CHART_DIR / "files" / "dashboards").glob("*.json")))
    kinds = sorted(d["kind"] for d in render(*S3))
    assert kinds == sorted(["ConfigMap"] * (1 + n_dash) + ["PodMonitor", "PrometheusRule", "Service",
                                                         "ServiceAccount", "StatefulSet"])
    docs = render(*FLEET_VARIANTS["both-gcs"])
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("ConfigMap", "spark-exporter-config"), ("ConfigMap", "spark-exporter-pod-template"),
            ("ConfigMap", "spark-exporter-fleet-config"), ("PodMonitor", "spark-exporter"),
            ("PodMonitor", "spark-exporter-fleet"), ("StatefulSet", "spark-exporter-fleet"),
            ("Service", "spark-exporter-fleet"), ("ServiceAccount", "spark-exporter-fleet")} <= names
    # the sidecar's pod template and config are the same as in sidecar mode
    side = render()
    assert pod_template_of(docs) == pod_template_of(side)
    assert one(docs, "ConfigMap", "-exporter-config") == one(side, "ConfigMap", "-exporter-config")
    # and the default is still the sidecar alone
    assert values()["mode"] == "sidecar"
    assert not [d for d in side if d["kind"] in ("StatefulSet", "Service", "ServiceAccount")]


def test_fleet_needs_no_native_sidecars(render, helm):
    """The fleet is a plain StatefulSet: any Kubernetes version renders it, while `both` keeps the
    sidecar's version check."""
    docs = render(*S3, "--kube-version", "1.27.0")
    assert sts_of(docs)
    assert "sidecar.mode=native needs Kubernetes 1.29" in fails(helm, *FLEET_VARIANTS["both-gcs"], "--kube-version", "1.27.0")
    assert not fails(helm, *FLEET_VARIANTS["both-gcs"], "--kube-version", "1.27.0", "--set", "sidecar.mode=classic")


# -- shards --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shards", [1, 2, 7])
def test_replicas_are_the_shard_count(render, shards):
    """replicas = --shard.count; the index is never given: the exporter reads it from HOSTNAME,
    which is the pod's name <statefulset>-<ordinal>."""
    sts = sts_of(render(*S3, "--set", f"fleet.shards={shards}"))
    c = container_of(sts)
    assert sts["spec"]["replicas"] == shards
    assert [a for a in c["args"] if a.startswith("--shard.count")] == [f"--shard.count={shards}"]
    assert not [a for a in c["args"] if a.startswith("--shard.index")]
    env = {e["name"]: e for e in c["env"]}
    assert env["HOSTNAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert [statefulset_ordinal(f"{sts['metadata']['name']}-{i}") for i in range(shards)] == list(range(shards))
    assert sts["spec"]["podManagementPolicy"] == "Parallel"


def test_headless_service(render):
    docs = render(*S3)
    sts, svc = sts_of(docs), one(docs, "Service")
    assert sts["spec"]["serviceName"] == svc["metadata"]["name"]
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["selector"] == sts["spec"]["selector"]["matchLabels"]
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert matches(sts["spec"]["selector"], labels)
    assert [p["targetPort"] for p in svc["spec"]["ports"]] == ["metrics"]


def test_long_names_fit(render):
    """Pods are <statefulset>-<ordinal> and carry controller-revision-hash <statefulset>-<hash>:
    the name stays within 52 characters."""
    sts = sts_of(render(*S3, "--set", "fullnameOverride=" + "a" * 63))
    assert len(sts["metadata"]["name"]) <= 52 and sts["metadata"]["name"].endswith("-fleet")


# -- the container ---------------------------------------------------------------------------------

def test_args(render):
    c = container_of(sts_of(render(*S3)))
    assert c["args"] == ["--config.file=/etc/spark-exporter/config.yaml", "--shard.count=2",
                         "--event-log.dir=s3://spark-logs/events", "--spark.url="]
    c = container_of(sts_of(render(*FLEET_VARIANTS["hostpath"])))
    assert [a for a in c["args"] if a.startswith("--event-log.dir")] == [
        "--event-log.dir=file:///mnt/spark/events", "--event-log.dir=/mnt/spark/old"]
    c = container_of(sts_of(render(*FLEET_VARIANTS["customised"])))
    assert c["args"][-2:] == ["--spark.url=http://spark-history:18080", "--event-log.threads=4"]
    assert "--spark.url=" not in c["args"]


def test_probes_and_port(render):
    for name in ("s3", "customised"):
        docs = render(*FLEET_VARIANTS[name])
        c = container_of(sts_of(docs))
        assert c["livenessProbe"]["httpGet"] == HEALTHZ
        assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
        assert "startupProbe" not in c
        port = int(fleet_config(docs)["web"]["listen_address"].rsplit(":", 1)[1])
        assert c["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
    docs = render(*S3, "--set", "config.web.listen_address=0.0.0.0:9100")
    assert container_of(sts_of(docs))["ports"][0]["containerPort"] == 9100
    assert one(docs, "Service")["spec"]["ports"][0]["port"] == 9100


def test_security(render):
    """The sidecar's container securityContext; the event logs' group (the driver template's
    fsGroup) as a supplemental group, and no fsGroup (no re-chown of a shared store)."""
    docs = render(*FLEET_VARIANTS["pvc"])
    sts = sts_of(docs)
    c = container_of(sts)
    v = values()
    assert c["securityContext"] == v["sidecar"]["securityContext"]
    assert c["resources"] == v["fleet"]["resources"]
    pod = sts["spec"]["template"]["spec"]
    assert pod["securityContext"]["supplementalGroups"] == [v["podTemplate"]["securityContext"]["fsGroup"]]
    assert "fsGroup" not in pod["securityContext"]
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert mounts["/etc/spark-exporter"]["readOnly"] is True
    assert mounts["/var/spark-events"]["readOnly"] is True
    assert "readOnly" not in mounts["/tmp"]  # the one writable path
    assert pod["automountServiceAccountToken"] is False


# -- config ----------------------------------------------------------------------------------------

def merged(base, over):
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def test_config_is_config_with_the_overlay(render):
    v = values()
    docs = render(*S3)
    want = merged(v["config"], v["fleet"]["config"])
    del want["event_log"]["dirs"], want["spark"]["urls"]
    assert fleet_config(docs) == want
    assert want["model"]["summary_level"] == "groups" and want["model"]["aggregate_by"] == "app_id"
    assert duration_seconds(want["model"]["summary_after"]) == 300
    (vol,) = [x for x in sts_of(docs)["spec"]["template"]["spec"]["volumes"] if x["name"] == "spark-exporter-config"]
    assert vol["configMap"]["name"] == one(docs, "ConfigMap", "-fleet-config")["metadata"]["name"]
    # values that are empty or zero still replace config's (sprig's merge would keep config's)
    cfg = fleet_config(render(*FLEET_VARIANTS["customised"]))
    assert cfg["lifecycle"]["drain_scrapes"] == 0 and cfg["model"]["aggregate_by"] == "app_name"
    cfg = fleet_config(render(*S3, "--set", "fleet.config.web.openmetrics_created=false",
                              "--set-json", 'fleet.config.labels={"rewrite_rules":[]}',
                              "--set", "config.web.openmetrics_created=true"))
    assert cfg["web"]["openmetrics_created"] is False and cfg["labels"]["rewrite_rules"] == []
    assert cfg["labels"]["max_values_per_label"] == v["config"]["labels"]["max_values_per_label"]


def test_config_change_restarts_the_shards(render):
    def checksum(*a):
        return sts_of(render(*S3, *a))["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    assert checksum() == checksum()
    assert checksum() != checksum("--set", "fleet.config.model.summary_after=10m")
    assert checksum() != checksum("--set", "config.labels.max_values_per_label=50")


def test_grace_period(helm, render):
    msg = "must exceed the fleet's lifecycle.grace_period"
    assert msg in fails(helm, *S3, "--set", "fleet.terminationGracePeriodSeconds=25")
    assert msg in fails(helm, *S3, "--set", "fleet.config.lifecycle.grace_period=1m")
    assert msg in fails(helm, *S3, "--set", "config.lifecycle.grace_period=45s")
    assert not fails(helm, *FLEET_VARIANTS["long-drain"])
    for name in ("s3", "long-drain"):
        docs = render(*FLEET_VARIANTS[name])
        grace = duration_seconds(fleet_config(docs)["lifecycle"]["grace_period"])
        assert sts_of(docs)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace
    # the sidecar's own check is not the fleet's business in fleet mode
    assert not fails(helm, *S3, "--set", "podTemplate.terminationGracePeriodSeconds=10")


# -- event-log stores and credentials --------------------------------------------------------------

def volumes_of(sts) -> dict:
    return {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}


def test_local_event_log_volume(render):
    sts = sts_of(render(*FLEET_VARIANTS["pvc"]))
    assert volumes_of(sts)["spark-events"] == {"name": "spark-events", "persistentVolumeClaim":
                                               {"claimName": "spark-events", "readOnly": True}}
    assert {"name": "spark-events", "mountPath": "/var/spark-events", "readOnly": True} in container_of(sts)["volumeMounts"]
    sts = sts_of(render(*FLEET_VARIANTS["hostpath"]))
    assert volumes_of(sts)["spark-events"] == {"name": "spark-events", "hostPath": {"path": "/srv/nfs/spark", "type": "Directory"}}
    assert {"name": "spark-events", "mountPath": "/mnt/spark", "readOnly": True} in container_of(sts)["volumeMounts"]
    sts = sts_of(render(*S3))  # an object store needs no volume
    assert "spark-events" not in volumes_of(sts)


def test_checkpoint_volume(render):
    """fleet.checkpoint: a writable volume at mountPath and checkpoint.path on it; a shared
    ReadWriteMany claim, or one volume per shard (volumeClaimTemplates). Off by default."""
    sts = sts_of(render(*S3))
    assert "checkpoint" not in volumes_of(sts) and "volumeClaimTemplates" not in sts["spec"]
    assert not [a for a in container_of(sts)["args"] if a.startswith("--checkpoint.")]
    sts = sts_of(render(*FLEET_VARIANTS["checkpoint-shared"]))
    c = container_of(sts)
    assert "--checkpoint.path=/var/lib/spark-exporter/fleet.ckpt" in c["args"]
    assert "--checkpoint.interval=30s" in c["args"]
    assert {"name": "checkpoint", "mountPath": "/var/lib/spark-exporter"} in c["volumeMounts"]
    assert volumes_of(sts)["checkpoint"] == {"name": "checkpoint", "persistentVolumeClaim": {"claimName": "exporter-state"}}
    assert "volumeClaimTemplates" not in sts["spec"]
    sts = sts_of(render(*FLEET_VARIANTS["checkpoint-per-shard"]))
    c = container_of(sts)
    assert "--checkpoint.interval=10s" in c["args"]
    assert "checkpoint" not in volumes_of(sts)
    [t] = sts["spec"]["volumeClaimTemplates"]
    assert t["metadata"]["name"] == "checkpoint"
    assert t["spec"] == {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                         "resources": {"requests": {"storage": "1Gi"}}}
    assert {"name": "checkpoint", "mountPath": "/var/lib/spark-exporter"} in c["volumeMounts"]


def test_stores_the_fleet_cannot_read_are_refused(helm):
    assert "fleet mode needs fleet.eventLogDirs" in fails(helm, "--set", "mode=fleet")
    assert "fleet mode needs fleet.eventLogDirs" in fails(helm, "--set", "mode=both")
    local = ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["/var/spark-events"]']
    assert "no volume is mounted at /var/spark-events" in fails(helm, *local)
    outside = ["--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["/data/events"]',
               "--set", "fleet.eventLogVolume.existingClaim=logs"]
    assert "/data/events is a local path outside fleet.eventLogVolume.mountPath" in fails(helm, *outside)
    assert "outside" in fails(helm, "--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["/var/spark-events-2"]',
                              "--set", "fleet.eventLogVolume.existingClaim=logs")
    assert "not both" in fails(helm, *local, "--set", "fleet.eventLogVolume.existingClaim=logs",
                               "--set", "fleet.eventLogVolume.hostPath=/srv/logs")
    assert not fails(helm, *local, "--set", "fleet.eventLogVolume.existingClaim=logs")
    assert not fails(helm, "--set", "mode=fleet", "--set-json", 'fleet.eventLogDirs=["abfss://c@acct.dfs.core.windows.net/e"]')


def test_object_store_credentials(render):
    c = container_of(sts_of(render(*FLEET_VARIANTS["customised"])))
    assert c["envFrom"] == [{"secretRef": {"name": "s3-credentials"}}]
    assert {"name": "AWS_REGION", "value": "eu-west-1"} in c["env"]
    sts = sts_of(render(*FLEET_VARIANTS["both-gcs"]))
    c = container_of(sts)
    assert "envFrom" not in c
    env = {e["name"]: e.get("value") for e in c["env"]}
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == "gcs-key"]
    assert mount["readOnly"] is True
    key = volumes_of(sts)["gcs-key"]["secret"]
    assert key["secretName"] == "gcs-key" and key["items"] == [{"key": "sa.json", "path": "sa.json"}]
    # object_store 0.12 reads GOOGLE_SERVICE_ACCOUNT, not GOOGLE_APPLICATION_CREDENTIALS
    assert env["GOOGLE_SERVICE_ACCOUNT"] == env["GOOGLE_APPLICATION_CREDENTIALS"] == mount["mountPath"] + "/sa.json"
    c = container_of(sts_of(render(*S3)))
    assert "envFrom" not in c and not [e for e in c["env"] if e["name"].startswith(("GOOGLE_", "AWS_", "AZURE_"))]


def test_service_account(render):
    docs = render(*FLEET_VARIANTS["customised"])
    sa = one(docs, "ServiceAccount")
    sts = sts_of(docs)
    assert sa["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/spark-logs"}
    assert sa["automountServiceAccountToken"] is False
    assert sts["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"] == "exp-fleet"
    assert sts["spec"]["template"]["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    assert sts["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "monitoring"}
    docs = render(*FLEET_VARIANTS["no-sa"])
    assert not [d for d in docs if d["kind"] == "ServiceAccount"]
    assert sts_of(docs)["spec"]["template"]["spec"]["serviceAccountName"] == "spark"


# -- scraping ----------------------------------------------------------------------------------------

def fleet_pod_labels(docs) -> dict:
    return sts_of(docs)["spec"]["template"]["metadata"]["labels"]


def driver_pod_labels(docs) -> dict:
    return dict(pod_template_of(docs)["metadata"]["labels"], **{"spark-role": "driver"})  # Spark adds spark-role


def test_podmonitors_select_their_own_pods(render):
    """The fleet's PodMonitor scrapes the fleet's pods and no driver; the drivers' scrapes no
    fleet pod. Different names give different job labels (<namespace>/<name>), so the two
    exports of one application stay apart."""
    docs = render(*FLEET_VARIANTS["both-gcs"])
    side, fleet = one(docs, "PodMonitor", "spark-exporter"), one(docs, "PodMonitor")
    assert side["metadata"]["name"] != fleet["metadata"]["name"]
    assert matches(fleet["spec"]["selector"], fleet_pod_labels(docs))
    assert not matches(fleet["spec"]["selector"], driver_pod_labels(docs))
    assert matches(side["spec"]["selector"], driver_pod_labels(docs))
    assert not matches(side["spec"]["selector"], fleet_pod_labels(docs))
    ports = {p["name"] for p in container_of(sts_of(docs))["ports"]}
    (ep,) = fleet["spec"]["podMetricsEndpoints"]
    assert ep["port"] in ports and ep["path"] == "/metrics"
    assert (ep["interval"], ep["scrapeTimeout"]) == (side["spec"]["podMetricsEndpoints"][0]["interval"],
                                                     side["spec"]["podMetricsEndpoints"][0]["scrapeTimeout"])
    assert "namespaceSelector" not in fleet["spec"]  # the StatefulSet is in the release namespace
    # a stock kube-prometheus-stack picks up both
    prom = kps_prometheus()
    for pm in (side, fleet):
        assert matches(prom["podMonitorSelector"], pm["metadata"]["labels"])
    assert not [d for d in render(*S3, "--set", "podMonitor.enabled=false") if d["kind"] == "PodMonitor"]


def test_prometheus_annotations(render):
    ann = sts_of(render(*S3))["spec"]["template"]["metadata"]["annotations"]
    assert (ann["prometheus.io/scrape"], ann["prometheus.io/port"], ann["prometheus.io/path"]) == ("true", "9809", "/metrics")
    ann = sts_of(render(*S3, "--set", "fleet.prometheusAnnotations=false"))["spec"]["template"]["metadata"]["annotations"]
    assert not [k for k in ann if k.startswith("prometheus.io/")]


# -- notes -------------------------------------------------------------------------------------------

def test_notes(helm):
    def notes(*args):
        r = subprocess.run([helm, "install", "spark-exporter", str(CHART_DIR), "--dry-run=client",
                            "--namespace", "spark-jobs", *args], capture_output=True, text=True, check=True)
        return r.stdout.split("NOTES:", 1)[1]
    n = notes(*S3)
    assert "StatefulSet spark-exporter-fleet (2 shards)" in n and "PodMonitor spark-exporter-fleet" in n
    assert "rollout status statefulset/spark-exporter-fleet" in n and "port-forward pod/spark-exporter-fleet-0 9809" in n
    assert "s3://spark-logs/events" in n
    assert "---8<---" not in n and "spark-submit" not in n and "Sidecar mode" not in n
    # both: the sidecar's notes, snippets included, are there as in sidecar mode
    n_both, n_side = notes(*FLEET_VARIANTS["both-gcs"]), notes()
    assert n_side[n_side.index("Sidecar mode"):] == n_both[n_both.index("Sidecar mode"):]
    assert "StatefulSet spark-exporter-fleet" in n_both
    assert "Both sidecars and a fleet" in n_both and "Both sidecars" not in n


# -- the exporter accepts it ---------------------------------------------------------------------------

def _exporter_binary():
    for p in (ROOT / "target" / "release" / "spark-exporter", ROOT / "target" / "debug" / "spark-exporter"):
        if p.exists():
            return p
    return None


@pytest.mark.parametrize("variant", ["s3", "customised", "hostpath"])
def test_exporter_accepts_the_fleet(render, tmp_path, variant):
    """The fleet's config.yaml and flags through `check-config`, as pod <name>-1 (HOSTNAME):
    shard 1 of the shard count, the stores as given, no REST unless a History Server is."""
    exe = _exporter_binary()
    if exe is None:
        pytest.skip("no target/{release,debug}/spark-exporter built")
    docs = render(*FLEET_VARIANTS[variant])
    sts = sts_of(docs)
    c = container_of(sts)
    (tmp_path / "config.yaml").write_text(one(docs, "ConfigMap", "-fleet-config")["data"]["config.yaml"])
    args = [a.replace("/etc/spark-exporter/", f"{tmp_path}/") for a in c["args"]]
    env = {"PATH": "/usr/bin:/bin", "HOSTNAME": sts["metadata"]["name"] + "-1"}
    r = subprocess.run([str(exe), *args, "check-config"], capture_output=True, text=True, timeout=60, env=env)
    if r.returncode != 0 and re.search(r"model\.(summary_level|summary_after|aggregate_by): unknown field", r.stdout + r.stderr):
        pytest.skip(f"{exe.relative_to(ROOT)} predates the fleet's model settings (issue 15)")
    assert r.returncode == 0, r.stdout + r.stderr
    eff = yaml.safe_load(r.stdout)
    assert eff["shard"] == {"index": 1, "count": sts["spec"]["replicas"]}
    dirs = [a.split("=", 1)[1] for a in c["args"] if a.startswith("--event-log.dir=")]
    assert eff["event_log"]["dirs"] == dirs
    urls = [a.split("=", 1)[1] for a in c["args"] if a.startswith("--spark.url=") and a != "--spark.url="]
    assert eff["spark"]["urls"] == urls
    cfg = fleet_config(docs)
    assert eff["model"]["summary_level"] == cfg["model"]["summary_level"]
    assert eff["model"]["aggregate_by"] == cfg["model"]["aggregate_by"]


# -- the quick start -----------------------------------------------------------------------------------

def test_quickstart_runs_a_fleet(tmp_path):
    """scripts/fleet-quickstart.sh (with a built exporter instead of building one) runs two shards
    over tests/data/eventlogs, named like StatefulSet pods, and together they export each of the
    16 applications once."""
    import os
    import signal
    import socket

    exe = _exporter_binary()
    if exe is None:
        pytest.skip("no target/{release,debug}/spark-exporter built")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, EXPORTER_BIN=str(exe))
    p = subprocess.Popen([str(ROOT / "scripts" / "fleet-quickstart.sh"), "--port", str(port)], cwd=tmp_path,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if "in all" in line or "did not start" in line:
                break
        text = "".join(out)
        counts = [int(n) for n in re.findall(r"HOSTNAME=spark-exporter-fleet-\d\):\s+(\d+) applications", text)]
        assert len(counts) == 2 and sum(counts) == 16 and all(counts), text
        assert f"curl -s http://127.0.0.1:{port + 1}/metrics" in text
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(30)
