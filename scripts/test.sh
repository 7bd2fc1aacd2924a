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
command -v chromium >/dev/null || need+=(chromium)
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
# The JSON Schema validator of the diagnose reports (tests/it/diagnose.rs, tests/e2e_diagnosis.py).
.venv/bin/python -c "import jsonschema" 2>/dev/null \
    || .venv/bin/pip install -q "jsonschema==$JSONSCHEMA_VERSION"
# The Spark Connect client's packages (pandas, pyarrow, grpcio), before any test uses the venv.
scripts/e2e-connect.sh --install-only
export SPARK_E2E_PYTHON="$root/.venv/bin/python"
export SPARK_E2E_REQUIRED=1
# The venv of the Spark-version step (pyspark 3.3.4, about 300 MB), downloaded meanwhile.
versions_log="$root/target/venv-versions.log"
mkdir -p "$root/target"
scripts/pyspark-venv.sh 3.3.4 >"$versions_log" 2>&1 &
versions_venv=$!

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
# collect PID LOG WHAT: wait for a step run in the background, print its log, fail if it failed.
collect() {
    local status=0
    wait "$1" || status=$?
    cat "$2"
    [ "$status" -eq 0 ] || { echo "$3 failed (exit status $status)" >&2; exit 1; }
}
wait_background() {
    if [ -n "${background:-}" ]; then
        wait "$background" || { cat "$background_log"; echo "background builds failed" >&2; exit 1; }
        background=""
    fi
}
# Two lanes side by side: the suites that start a real Spark driver or History Server (a JVM
# each), one suite at a time, and all the others (fault injection, OTLP, the server: mostly
# waiting on timeouts). Several JVMs at once (cargo-nextest, four binaries at a time) starved
# each other on 2 cores and a workload's own REST call timed out; one JVM beside the waiting
# tests does not. The integration tests are one binary (tests/it/main.rs), its JVM suites the
# module `jvm` (tests/it/jvm/). Each lane's output is printed when it ends.
# The alert and dashboard suites (promtool and Python, no Spark) follow the tests without a JVM,
# which end before the JVM lane: at normal priority (at nice 19 beside the tests they were
# starved, and ran mostly after them).
static_log="$root/target/static-checks.log"
jvm_suites=(diagnose_history e2e_core e2e_executor_lost eventlog_live faults_spark_ui history_server otlp_live)
lane_dir="$root/target/test-lanes"
mkdir -p "$lane_dir"
(
    status=0
    for s in "${jvm_suites[@]}"; do
        log="$lane_dir/jvm-$s.log"
        cargo test --no-fail-fast --test it "jvm::$s::" >"$log" 2>&1 || status=1
        cat "$log"
        # A suite renamed or gone would otherwise pass by running nothing.
        if grep -q "^running 0 tests" "$log"; then echo "jvm::$s: no such suite" >&2; status=1; fi
    done
    exit "$status"
) >"$lane_dir/jvm.log" 2>&1 &
jvm_lane=$!
other_status=0
cargo test --no-fail-fast --lib --bins --benches --test it -- --skip jvm:: >"$lane_dir/other.log" 2>&1 || other_status=$?
echo "--- tests without a JVM (exit $other_status)"; cat "$lane_dir/other.log"
static_status=0
(scripts/alerts-test.sh && scripts/dashboards-test.sh) >"$static_log" 2>&1 || static_status=$?
jvm_status=0
wait "$jvm_lane" || jvm_status=$?
echo "--- tests with a real Spark or History Server (exit $jvm_status)"; cat "$lane_dir/jvm.log"
[ "$other_status" -eq 0 ] && [ "$jvm_status" -eq 0 ] || { echo "cargo tests failed" >&2; exit 1; }

step "OpenMetrics against a strict parser (prometheus_client)"
.venv/bin/python tests/openmetrics_strict.py

# Everything up to the benches' release builds needs only the debug build: the background
# builds (at nice 19, so these steps get the CPU first) end meanwhile.
step "alerts and dashboards (ran beside the JVM lane of the cargo tests)"
cat "$static_log"
[ "$static_status" -eq 0 ] || { echo "alert and dashboard tests failed" >&2; exit 1; }

# Event logs on object storage: mostly waiting (a fault proxy's stalls outlasting the client's
# timeout), so in the background beside the end-to-end scripts; its result is printed after them.
objstore_log="$root/target/objstore-test.log"
scripts/objstore-test.sh >"$objstore_log" 2>&1 &
objstore=$!
# The deploy suite (Helm, kubectl and manifest checks, a pip install; no Spark, no timing) too,
# at the lowest priority.
deploy_log="$root/target/deploy-test.log"
nice -n 19 scripts/deploy-test.sh >"$deploy_log" 2>&1 &
deploy=$!

step "waiting for the pyspark 3.3.4 venv"
wait "$versions_venv" || { cat "$versions_log"; echo "pyspark 3.3.4 venv failed" >&2; exit 1; }

for extra in scripts/e2e-prometheus.sh scripts/e2e-drain.sh scripts/e2e-trends.sh scripts/e2e-streaming.sh scripts/e2e-diagnosis.sh scripts/advice-rerun.sh scripts/e2e-fleet.sh scripts/e2e-versions.sh scripts/e2e-connect.sh; do
    step "$extra"
    "$extra"
done

step "scripts/objstore-test.sh (ran in the background)"
collect "$objstore" "$objstore_log" "object-storage tests"

step "scripts/deploy-test.sh (ran in the background)"
collect "$deploy" "$deploy_log" "deploy tests"

# From here on, the release binary, the diagnose bench and cargo-deny.
step "the background builds (release binary, diagnose bench, cargo-deny)"
wait_background

# The benches first, with nothing else running: their targets are times.
step "fleet bench, the CI case: 1,000 applications at the default level (scripts/bench-fleet.sh --check 1000)"
scripts/bench-fleet.sh --check 1000

step "diagnose bench: every committed event log within 5 ms + 0.5 s per 100 MB (BENCHMARKS.md)"
"$(scripts/bench-bin.sh diagnose-bench)" check

step "what-if bench: a 10,005-task run simulated on 8 pools within 250 ms (BENCHMARKS.md)"
"$(scripts/bench-bin.sh diagnose-bench)" whatif

# The supply-chain check starts from an empty CARGO_HOME, so it mostly downloads (the registry
# index, every crate of every platform): in the background, beside the next steps; its result
# is the last step.
supply_log="$root/target/supply-chain.log"
scripts/supply-chain.sh --empty-cache >"$supply_log" 2>&1 &
supply=$!

step "image: built with buildah from Debian's packages, no registry, and the exporter run from it (scripts/image-test.sh)"
scripts/image-test.sh

step "scripts/readme-test.sh"
scripts/readme-test.sh

step "scripts/e2e-startup.sh"
scripts/e2e-startup.sh

step "supply chain: cargo deny (advisories, licences, duplicates, sources)"
collect "$supply" "$supply_log" "supply chain check"

step "all tests passed"
