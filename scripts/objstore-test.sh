#!/usr/bin/env bash
# End-to-end tests of event logs in object storage (issue 14), from a fresh clone.
#
#   scripts/objstore-test.sh [tests/objstore_e2e.py args: --keep, --only dumps errors live faults,
#                             --fault KIND, --exporter PATH, --env KEY=VALUE, --run-all ...]
#
# What it sets up, all by package name from the registries this project uses:
#   .venv-objstore/          Python venv: moto[server] (an S3 server), boto3 (comes with moto)
#                            and azure-storage-blob, to create buckets and upload
#   target/objstore-tools/   Azurite (Azure Blob emulator) from npm; started with
#                            --disableTelemetry and on 127.0.0.1 only
# Then it runs tests/objstore_e2e.py (see its doc for what it asserts) against
# target/debug/spark-exporter, or the binary --exporter names. About 3 minutes.
# Environment:
#   OBJSTORE_TEST_OFFLINE=1  install nothing; exit 2 if something is missing
#   AZURITE_BLOB             an azurite-blob to use instead of the npm one
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

MOTO_VERSION=5.2.5
BOTO3_VERSION=1.44.8
AZURE_BLOB_VERSION=12.31.1
AZURITE_VERSION=3.37.0
venv="$root/.venv-objstore"
tools="$root/target/objstore-tools"
offline="${OBJSTORE_TEST_OFFLINE:-0}"

log() { printf 'objstore-test: %s\n' "$*" >&2; }

# -- Python venv -----------------------------------------------------------------------------
if [[ ! -x "$venv/bin/python" ]]; then
  log "creating $venv"
  python3 -m venv "$venv"
fi
# keep the venv out of git without touching the project's .gitignore
[[ -f "$venv/.gitignore" ]] || echo '*' >"$venv/.gitignore"
py="$venv/bin/python"
have() {
  "$py" - "$MOTO_VERSION" "$BOTO3_VERSION" "$AZURE_BLOB_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
import moto.server, boto3, azure.storage.blob  # noqa: F401
want = dict(zip(("moto", "boto3", "azure-storage-blob"), sys.argv[1:]))
sys.exit(any(version(k) != v for k, v in want.items()))
PY
}
if [[ "$offline" != 1 ]] && ! have; then
  log "installing moto[server]==$MOTO_VERSION boto3==$BOTO3_VERSION azure-storage-blob==$AZURE_BLOB_VERSION"
  "$py" -m pip install --quiet --disable-pip-version-check \
    "moto[server]==$MOTO_VERSION" "boto3==$BOTO3_VERSION" "azure-storage-blob==$AZURE_BLOB_VERSION"
fi

# -- Azurite ---------------------------------------------------------------------------------
azurite="${AZURITE_BLOB:-$tools/node_modules/.bin/azurite-blob}"
installed_azurite() {
  node -e "console.log(require('$tools/node_modules/azurite/package.json').version)" 2>/dev/null || true
}
if [[ -z "${AZURITE_BLOB:-}" && "$offline" != 1 && "$(installed_azurite)" != "$AZURITE_VERSION" ]]; then
  if command -v npm >/dev/null; then
    log "installing azurite@$AZURITE_VERSION into $tools"
    mkdir -p "$tools"
    npm install --silent --no-audit --no-fund --prefix "$tools" "azurite@$AZURITE_VERSION" >/dev/null
  else
    log "npm not found: cannot install Azurite"
  fi
fi

exec "$py" "$root/tests/objstore_e2e.py" --azurite "$azurite" "$@"
