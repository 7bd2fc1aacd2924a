"""deploy/kubernetes: schemas, secure defaults, and that the variants say the same thing."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import KUBE_DIR, ROOT, load_docs, load_one
from k8s_checks import (DEFAULT_GRACE, EXIT_FLAG, HEALTHZ, check_object, driver_ui_probes, duration_seconds,
                        probes_of, validate_core)

#: Files that are not Kubernetes objects.
NOT_OBJECTS = {"kustomization.yaml", "prometheus-scrape-config.yaml"}
MANIFESTS = sorted(p for p in KUBE_DIR.glob("*.yaml") if p.name not in NOT_OBJECTS)

#: Config keys the exporter accepts (section -> keys), from its flag/config reference.
CONFIG_KEYS = {
    "web": {"listen_address", "telemetry_path"},
    "log": {"level", "format"},
    "spark": {"urls", "poll_interval", "timeout", "app_name_filter", "app_limit"},
    "event_log": {"dirs", "poll_interval", "max_line_bytes"},
    "model": {"app_retention", "stage_retention", "dead_executor_retention", "summary_level", "summary_after",
              "app_name_filter", "max_app_age", "aggregate_by"},
    "labels": {"max_value_length", "max_values_per_label", "rewrite_rules"},
    "histograms": {"duration_buckets", "task_duration_buckets"},
    "lifecycle": {"exit_when_app_ends", "grace_period", "drain_scrapes", "rest_unreachable_after"},
}


def exporter_containers(pod: dict) -> list[dict]:
    spec = pod["spec"]
    return [c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] == "spark-exporter"]


def test_there_are_manifests():
    names = {p.name for p in MANIFESTS}
    assert {"driver-pod-template.yaml", "driver-pod-template-classic.yaml", "configmap.yaml",
            "podmonitor.yaml", "prometheusrule.yaml", "sparkapplication.yaml"} <= names


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_is_valid(path: Path):
    for obj in load_docs(path):
        assert check_object(obj) == [], path.name


def test_strict_schema_rejects_unknown_fields():
    """The schema check is not a no-op: a misspelt field in a sidecar fails it."""
    pod = load_one(KUBE_DIR / "driver-pod-template.yaml")
    bad = copy.deepcopy(pod)
    bad["spec"]["initContainers"][0]["restartPolicyy"] = "Always"
    assert validate_core(bad)
    bad = copy.deepcopy(pod)
    bad["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = {"not": "a quantity"}
    assert validate_core(bad)


def test_native_sidecar_shape():
    pod = load_one(KUBE_DIR / "driver-pod-template.yaml")
    (c,) = pod["spec"]["initContainers"]
    assert c["name"] == "spark-exporter" and c["restartPolicy"] == "Always"
    assert c["livenessProbe"]["httpGet"] == HEALTHZ
    # /readyz turns back only for the drain (see the template); a startupProbe would hold the driver
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert "startupProbe" not in c
    # a native sidecar that exits by itself is restarted: it ends on SIGTERM only
    assert EXIT_FLAG not in c["args"]
    assert [d["name"] for d in pod["spec"]["containers"]] == ["spark-kubernetes-driver"]


def test_classic_sidecar_shape():
    pod = load_one(KUBE_DIR / "driver-pod-template-classic.yaml")
    assert "initContainers" not in pod["spec"]
    names = [c["name"] for c in pod["spec"]["containers"]]
    assert names == ["spark-kubernetes-driver", "spark-exporter"]
    c = pod["spec"]["containers"][1]
    assert "restartPolicy" not in c
    # ends itself once the application has ended (and the drain is done), so the pod completes
    assert c["args"] == ["--config.file=/etc/spark-exporter/config.yaml", EXIT_FLAG]
    assert c["livenessProbe"]["httpGet"] == HEALTHZ
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert "startupProbe" not in c
    assert "podTemplateContainerName=spark-kubernetes-driver" in (KUBE_DIR / "driver-pod-template-classic.yaml").read_text()


def test_sparkapplication_sidecar_is_classic():
    """driver.sidecars are classic containers: the same flag and probes as the classic template."""
    app = load_one(KUBE_DIR / "sparkapplication.yaml")
    (a,) = app["spec"]["driver"]["sidecars"]
    assert a["args"] == ["--config.file=/etc/spark-exporter/config.yaml", EXIT_FLAG]
    assert a["livenessProbe"]["httpGet"] == HEALTHZ
    assert "startupProbe" not in a


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_no_probe_on_the_driver_ui(path: Path):
    """The exporter's probes look at the exporter: none reaches the driver UI on :4040."""
    for obj in load_docs(path):
        assert driver_ui_probes(obj) == [], path.name


def test_no_probe_on_the_driver_ui_check_works():
    pod = load_one(KUBE_DIR / "driver-pod-template-classic.yaml")
    pod["spec"]["containers"][1]["livenessProbe"] = {"httpGet": {"path": "/api/v1/version", "port": 4040}}
    assert driver_ui_probes(pod) == ["spark-exporter.livenessProbe"]


def _without_lifecycle(c: dict) -> dict:
    c = copy.deepcopy(c)
    for k in ("livenessProbe", "readinessProbe", "startupProbe", "restartPolicy"):
        c.pop(k, None)
    c["args"] = [a for a in c["args"] if a != EXIT_FLAG]
    return c


def test_variants_agree():
    """Native, classic and SparkApplication carry the same exporter but for how it ends
    (restartPolicy, the exit flag), the same probes, and the same volumes and driver mount."""
    native = load_one(KUBE_DIR / "driver-pod-template.yaml")
    classic = load_one(KUBE_DIR / "driver-pod-template-classic.yaml")
    app = load_one(KUBE_DIR / "sparkapplication.yaml")
    (n,), (c,) = exporter_containers(native), exporter_containers(classic)
    (a,) = app["spec"]["driver"]["sidecars"]
    assert _without_lifecycle(n) == _without_lifecycle(c) == _without_lifecycle(a)
    assert c["args"] == a["args"] == n["args"] + [EXIT_FLAG]
    assert probes_of(n) == probes_of(c) == probes_of(a)
    assert native["spec"]["terminationGracePeriodSeconds"] == classic["spec"]["terminationGracePeriodSeconds"] \
        == app["spec"]["driver"]["terminationGracePeriodSeconds"]
    assert native["spec"]["volumes"] == classic["spec"]["volumes"] == app["spec"]["volumes"]
    assert native["metadata"] == classic["metadata"]
    assert native["spec"]["securityContext"] == classic["spec"]["securityContext"] == app["spec"]["driver"]["podSecurityContext"]
    assert native["spec"]["securityContext"]["fsGroup"]  # see test_eventlog_permissions
    assert native["metadata"]["labels"] == app["spec"]["driver"]["labels"]
    assert native["metadata"]["annotations"] == app["spec"]["driver"]["annotations"]
    drv_mounts = native["spec"]["containers"][0]["volumeMounts"]
    assert drv_mounts == classic["spec"]["containers"][0]["volumeMounts"] == app["spec"]["driver"]["volumeMounts"]
    assert app["spec"]["sparkConf"]["spark.eventLog.dir"] == "file://" + drv_mounts[0]["mountPath"]


@pytest.mark.parametrize("path", ["driver-pod-template.yaml", "driver-pod-template-classic.yaml", "sparkapplication.yaml"])
def test_secure_defaults(path):
    obj = load_one(KUBE_DIR / path)
    containers = obj["spec"]["driver"]["sidecars"] if obj["kind"] == "SparkApplication" else exporter_containers(obj)
    assert containers
    for c in containers:
        sc = c["securityContext"]
        assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"] == {"drop": ["ALL"]}
        assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
        assert {"cpu", "memory"} <= set(c["resources"]["requests"]) and "memory" in c["resources"]["limits"]
        mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
        assert mounts["/var/spark-events"]["readOnly"] is True
        assert mounts["/etc/spark-exporter"]["readOnly"] is True
        assert "/tmp" in mounts  # the one writable path
        assert c["ports"] == [{"name": "metrics", "containerPort": 9809, "protocol": "TCP"}]


def exporter_config() -> dict:
    cm = load_one(KUBE_DIR / "configmap.yaml")
    return yaml.safe_load(cm["data"]["config.yaml"])


def test_config_uses_known_keys_and_matches_the_pods():
    cfg = exporter_config()
    for section, body in cfg.items():
        assert section in CONFIG_KEYS, section
        assert set(body) <= CONFIG_KEYS[section], (section, set(body) - CONFIG_KEYS[section])
    pod = load_one(KUBE_DIR / "driver-pod-template.yaml")
    (c,) = exporter_containers(pod)
    assert cfg["web"]["listen_address"].endswith(":%d" % c["ports"][0]["containerPort"])
    assert cfg["spark"]["urls"] == ["http://localhost:4040"]
    mounted = {m["mountPath"] for m in c["volumeMounts"]}
    assert set(cfg["event_log"]["dirs"]) <= mounted
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9809"
    assert pod["metadata"]["annotations"]["prometheus.io/path"] == cfg["web"]["telemetry_path"]
    cm_name = load_one(KUBE_DIR / "configmap.yaml")["metadata"]["name"]
    assert {"name": "spark-exporter-config", "configMap": {"name": cm_name}} in pod["spec"]["volumes"]


def _exporter_binary():
    for p in (ROOT / "target" / "release" / "spark-exporter", ROOT / "target" / "debug" / "spark-exporter"):
        if p.exists():
            return p
    return None


def test_config_passes_check_config(tmp_path):
    """The exporter itself accepts the shipped config (when a built binary is around)."""
    exe = _exporter_binary()
    if exe is None:
        pytest.skip("no target/{release,debug}/spark-exporter built")
    def check(text: str) -> subprocess.CompletedProcess:
        f = tmp_path / "config.yaml"
        f.write_text(text)
        return subprocess.run([str(exe), "--config.file", str(f), "check-config"],
                              capture_output=True, text=True, timeout=60)

    # only trust a binary that does reject a bad config (exit 64), not an unfinished one
    bad = check("web:\n  listen_address: not-an-address\nnot_a_section: 1\n")
    if bad.returncode != 64:
        pytest.skip(f"{exe.relative_to(ROOT)} does not implement check-config yet (exit {bad.returncode} on a bad config)")
    good = check(load_one(KUBE_DIR / "configmap.yaml")["data"]["config.yaml"])
    # a binary from before the lifecycle section (issue 12) rejects the section as a whole;
    # an unknown key inside it still fails the test
    if good.returncode != 0 and re.search(r"(^|\W)lifecycle: unknown field", good.stdout + good.stderr):
        pytest.skip(f"{exe.relative_to(ROOT)} predates the lifecycle section")
    assert good.returncode == 0, good.stdout + good.stderr


def grace_period_seconds(cfg: dict) -> float:
    return duration_seconds(str(cfg.get("lifecycle", {}).get("grace_period", f"{DEFAULT_GRACE}s")))


def test_lifecycle_config():
    """The shared config spells out the drain; the exit flag belongs on the classic container,
    not in the file both variants mount."""
    lc = exporter_config()["lifecycle"]
    assert "exit_when_app_ends" not in lc
    assert duration_seconds(lc["grace_period"]) == DEFAULT_GRACE
    assert lc["drain_scrapes"] >= 1
    assert duration_seconds(lc["rest_unreachable_after"]) > 0


@pytest.mark.parametrize("path", ["driver-pod-template.yaml", "driver-pod-template-classic.yaml", "sparkapplication.yaml"])
def test_termination_grace_period_covers_the_drain(path):
    """The kubelet waits longer after SIGTERM than the exporter's drain may last."""
    obj = load_one(KUBE_DIR / path)
    spec = obj["spec"]["driver"] if obj["kind"] == "SparkApplication" else obj["spec"]
    tgps = spec["terminationGracePeriodSeconds"]
    assert isinstance(tgps, int) and tgps >= 30
    assert tgps > grace_period_seconds(exporter_config())


def test_scrape_interval_fits_the_drain():
    """A scrape falls inside the drain: PodMonitor and plain job scrape every 10s, well under
    the grace period, with a timeout no longer than the interval."""
    grace = grace_period_seconds(exporter_config())
    (ep,) = load_one(KUBE_DIR / "podmonitor.yaml")["spec"]["podMetricsEndpoints"]
    assert ep["interval"] == "10s"
    assert duration_seconds(ep["scrapeTimeout"]) <= duration_seconds(ep["interval"])
    assert 2 * duration_seconds(ep["interval"]) <= grace
    job = load_one(KUBE_DIR / "prometheus-scrape-config.yaml")["scrape_configs"][0]
    assert (job["scrape_interval"], job["scrape_timeout"]) == (ep["interval"], ep["scrapeTimeout"])


def test_podmonitor_selects_the_driver_pods():
    pm = load_one(KUBE_DIR / "podmonitor.yaml")
    pod = load_one(KUBE_DIR / "driver-pod-template.yaml")
    labels = dict(pod["metadata"]["labels"], **{"spark-role": "driver"})  # Spark adds spark-role
    sel = pm["spec"]["selector"]["matchLabels"]
    assert all(labels.get(k) == v for k, v in sel.items())
    ports = {p["name"] for c in exporter_containers(pod) for p in c["ports"]}
    assert {ep["port"] for ep in pm["spec"]["podMetricsEndpoints"]} <= ports


def test_rules_are_in_sync_with_alerts():
    r = subprocess.run([str(ROOT / "scripts" / "deploy-sync-rules.sh"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_rules_check_detects_drift(tmp_path):
    """--check fails when a copy is edited by hand (run on a scratch copy of the tree)."""
    for rel in ("scripts/deploy-sync-rules.sh", "deploy/kubernetes/prometheusrule.yaml",
                "deploy/helm/spark-exporter/files/prometheusrule.yaml", "alerts/prometheusrule.yaml"):
        src = ROOT / rel
        if src.exists():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tmp_path / rel)
    script = tmp_path / "scripts" / "deploy-sync-rules.sh"
    assert subprocess.run([str(script), "--check"], capture_output=True).returncode == 0
    with open(tmp_path / "deploy/kubernetes/prometheusrule.yaml", "a") as f:
        f.write("# hand edit\n")
    assert subprocess.run([str(script), "--check"], capture_output=True).returncode == 1
    assert subprocess.run([str(script)], capture_output=True).returncode == 0
    assert subprocess.run([str(script), "--check"], capture_output=True).returncode == 0


def test_kustomization_builds(kustomize):
    docs = kustomize(KUBE_DIR)
    kinds = sorted(d["kind"] for d in docs)
    n_dashboards = len(list((ROOT / "dashboards").glob("*.json")))
    assert kinds == ["ConfigMap"] * (1 + n_dashboards) + ["PodMonitor", "PrometheusRule"]
    for d in docs:
        assert check_object(d) == [], d["metadata"]["name"]


# -- plain Prometheus: run the job's relabelings over the targets pod discovery would produce --

def relabel(rules: list[dict], labels: dict) -> dict | None:
    """Prometheus relabeling (replace, keep, drop), enough for our job."""
    labels = dict(labels)
    for r in rules:
        action = r.get("action", "replace")
        value = r.get("separator", ";").join(labels.get(s, "") for s in r.get("source_labels", []))
        rx = re.compile("^(?:" + r.get("regex", "(.*)") + ")$")
        m = rx.match(value)
        if action == "keep" and not m:
            return None
        if action == "drop" and m:
            return None
        if action == "replace" and m:
            repl = re.sub(r"\$(\d+)", lambda g: m.group(int(g.group(1))) or "", r.get("replacement", "$1"))
            if repl:
                labels[r["target_label"]] = repl
            else:
                labels.pop(r["target_label"], None)
    return labels


def discovered_targets(pod: dict, ip: str = "10.1.2.3", name: str = "app-driver", ns: str = "spark-jobs"):
    """What kubernetes_sd_configs role=pod yields: one target per container port, init
    containers included (Prometheus >= 2.22 marks them __meta_kubernetes_pod_container_init)."""
    md = pod["metadata"]
    base = {"__meta_kubernetes_namespace": ns, "__meta_kubernetes_pod_name": name, "__metrics_path__": "/metrics",
            "__meta_kubernetes_pod_ip": ip}
    for k, v in md.get("labels", {}).items():
        base["__meta_kubernetes_pod_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", k)] = v
    for k, v in md.get("annotations", {}).items():
        base["__meta_kubernetes_pod_annotation_" + re.sub(r"[^a-zA-Z0-9_]", "_", k)] = v
    out = []
    for init, cs in ((True, pod["spec"].get("initContainers", [])), (False, pod["spec"]["containers"])):
        for c in cs:
            for p in c.get("ports", []):
                out.append(dict(base, __address__=f"{ip}:{p['containerPort']}",
                                __meta_kubernetes_pod_container_name=c["name"],
                                __meta_kubernetes_pod_container_init=str(init).lower(),
                                __meta_kubernetes_pod_container_port_name=p.get("name", "")))
    return out


@pytest.mark.parametrize("template", ["driver-pod-template.yaml", "driver-pod-template-classic.yaml"])
def test_plain_prometheus_job_scrapes_exactly_the_exporter(template):
    job = load_one(KUBE_DIR / "prometheus-scrape-config.yaml")["scrape_configs"][0]
    assert job["kubernetes_sd_configs"][0]["role"] == "pod"
    pod = load_one(KUBE_DIR / template)
    # what the API server holds after Spark merged the template (recorded by test_spark_submit)
    pod["metadata"]["labels"].update({"spark-role": "driver", "spark-app-selector": "spark-0123"})
    driver = next(c for c in pod["spec"]["containers"] if c["name"] == "spark-kubernetes-driver")
    driver["ports"] = [{"name": "driver-rpc-port", "containerPort": 7078}, {"name": "blockmanager", "containerPort": 7079},
                       {"name": "spark-ui", "containerPort": 4040}, {"name": "spark-connect", "containerPort": 15002}]
    kept = [t for t in (relabel(job["relabel_configs"], t) for t in discovered_targets(pod)) if t]
    assert len(kept) == 1
    (t,) = kept
    assert t["__address__"] == "10.1.2.3:9809" and t["__metrics_path__"] == "/metrics"
    assert (t["namespace"], t["pod"], t["spark_app_selector"]) == ("spark-jobs", "app-driver", "spark-0123")
    # an executor pod (spark-role=executor) and an unannotated driver are not scraped
    pod["metadata"]["labels"]["spark-role"] = "executor"
    assert not [t for t in discovered_targets(pod) if relabel(job["relabel_configs"], t)]
    pod["metadata"]["labels"]["spark-role"] = "driver"
    pod["metadata"]["annotations"] = {}
    assert not [t for t in discovered_targets(pod) if relabel(job["relabel_configs"], t)]
