#!/usr/bin/env bash
# Runs every test of spark-exporter, from a fresh clone. This is the README's test command and
# what .ci/run calls. It installs what it needs:
#   - Debian's `prometheus` package (prometheus + promtool) and `zstd`, with apt-get
#   - .venv/: a Python venv with pyspark 4.1.1 (real Spark for the end-to-end tests; Java 17 must
#     be on the machine) and prometheus_client (a strict OpenMetrics parser)
#   - cargo-deny (cargo install from crates.io, pinned) for the supply-chain check
#   - buildah, with apt-get (scripts/image-build.sh), to build and run the image
# Then: cargo tests (unit, integration, end-to-end against real PySpark), the strict OpenMetrics
# check, cargo deny, the alert, dashboard and deploy suites, event logs on object storage (moto and
# Azurite, scripts/objstore-test.sh installs them), and the Prometheus end-to-end tests
# (dashboards and alerts; the application's end; trends across runs; fleet mode: shards and
# aggregation by application name).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYSPARK_VERSION=4.1.1
PROMETHEUS_CLIENT_VERSION=0.26.0
JSONSCHEMA_VERSION=4.23.0

# Each step prints the time since the start and the previous step's duration, so a CI log shows
# where the time goes.
t0=$(date +%s); t_step=$t0
step() {
    local now; now=$(date +%s)
    printf '\n=== [%4ds, previous step %ds] %s\n' $((now - t0)) $((now - t_step)) "$*"
    t_step=$now
}

step "system packages"
need=()
command -v promtool >/dev/null && command -v prometheus >/dev/null || need+=(prometheus)
command -v zstd >/dev/null || need+=(zstd)
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
if [ ${#need[@]} -gt 0 ]; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_="sudo"
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}"
fi

step "python venv with pyspark $PYSPARK_VERSION"
if ! .venv/bin/python -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$PYSPARK_VERSION')" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install -q "pyspark==$PYSPARK_VERSION"
fi
# A strict OpenMetrics parser for tests/openmetrics_strict.py.
.venv/bin/python -c "import prometheus_client" 2>/dev/null \
    || .venv/bin/pip install -q "prometheus_client==$PROMETHEUS_CLIENT_VERSION"
# The JSON Schema validator of the diagnose reports (tests/diagnose.rs, tests/e2e_diagnosis.py).
.venv/bin/python -c "import jsonschema" 2>/dev/null \
    || .venv/bin/pip install -q "jsonschema==$JSONSCHEMA_VERSION"
export SPARK_E2E_PYTHON="$root/.venv/bin/python"
export SPARK_E2E_REQUIRED=1

step "cargo test"
cargo build --all-targets
# Meanwhile, in the background, what later steps build: the release binary and the diagnose
# bench (release profile), and cargo-deny. The tests mostly wait (fault injection's timeouts, a
# JVM starting, a Spark job), so these builds use cores the tests leave idle; at the lowest
# priority (nice 19), so a test that needs the CPU gets it first.
background_log="$root/target/test-background.log"
(
    nice -n 19 cargo build --release --quiet --bin spark-exporter \
        && nice -n 19 scripts/bench-bin.sh diagnose-bench >/dev/null \
        && nice -n 19 scripts/supply-chain.sh --install-only
) >"$background_log" 2>&1 &
background=$!
wait_background() {
    if [ -n "${background:-}" ]; then
        wait "$background" || { cat "$background_log"; echo "background builds failed" >&2; exit 1; }
        background=""
    fi
}
# One test binary at a time: side by side (cargo-nextest, 4 at once) several real Spark drivers
# and JVMs starved each other on 2 cores and a workload's own REST call timed out. The slow tests
# mostly wait; the background builds above fill that time instead.
cargo test --all-targets

step "OpenMetrics against a strict parser (prometheus_client)"
.venv/bin/python tests/openmetrics_strict.py

step "supply chain: cargo deny (advisories, licences, duplicates, sources)"
wait_background
scripts/supply-chain.sh --empty-cache

step "alerts"
scripts/alerts-test.sh

step "dashboards"
scripts/dashboards-test.sh

step "deploy"
scripts/deploy-test.sh

step "image: built with buildah from Debian's packages, no registry, and the exporter run from it (scripts/image-test.sh)"
scripts/image-test.sh

for extra in scripts/readme-test.sh scripts/objstore-test.sh scripts/e2e-prometheus.sh scripts/e2e-drain.sh scripts/e2e-trends.sh scripts/e2e-streaming.sh scripts/e2e-diagnosis.sh scripts/e2e-fleet.sh scripts/e2e-startup.sh scripts/e2e-versions.sh scripts/e2e-connect.sh; do
    if [ -x "$extra" ]; then
        step "$extra"
        "$extra"
    fi
done

step "fleet bench, the CI case: 1,000 applications at the default level (scripts/bench-fleet.sh --check 1000)"
scripts/bench-fleet.sh --check 1000

step "diagnose bench: every committed event log within 5 ms + 0.5 s per 100 MB (BENCHMARKS.md)"
"$(scripts/bench-bin.sh diagnose-bench)" check

step "all tests passed"
