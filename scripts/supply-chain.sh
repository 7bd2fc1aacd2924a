#!/usr/bin/env bash
# Supply-chain checks with cargo-deny and deny.toml: RustSec advisories, licences, duplicate
# versions, sources (BENCHMARKS.md tells what a run here finds).
#
#   scripts/supply-chain.sh            # every check; advisories need the RustSec database
#   scripts/supply-chain.sh --offline  # licences, bans, sources only: no network, deterministic
#
# The advisory database is a git repository on GitHub. When it cannot be fetched, a copy already
# in ~/.cargo/advisory-dbs is used (its age is printed); with no copy, the advisory check is
# skipped with a warning and the other checks still run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if ! cargo deny --version >/dev/null 2>&1; then
    echo "supply-chain: installing cargo-deny (a few minutes on two cores)"
    cargo install cargo-deny --locked
fi

offline_checks=(bans licenses sources)
if [ "${1:-}" = "--offline" ]; then
    exec cargo deny --offline check "${offline_checks[@]}"
fi

if cargo deny fetch db 2>/dev/null; then
    exec cargo deny check
fi
db="$(ls -d "$HOME"/.cargo/advisory-dbs/advisory-db-* 2>/dev/null | head -n1 || true)"
if [ -n "$db" ] && [ -d "$db/crates" ]; then
    echo "supply-chain: cannot fetch the advisory database; using the local copy of" \
        "$(git -C "$db" log -1 --format=%cs 2>/dev/null || echo 'unknown date') in $db"
    exec cargo deny --offline check
fi
echo "supply-chain: WARNING: cannot fetch the advisory database and no local copy: advisories" \
    "NOT checked; checking licences, bans and sources only" >&2
exec cargo deny --offline check "${offline_checks[@]}"
