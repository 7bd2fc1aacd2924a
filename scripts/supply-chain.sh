#!/usr/bin/env bash
# Supply-chain checks with cargo-deny and deny.toml: RustSec advisories, licences, duplicate
# versions, sources. scripts/test.sh (and so CI) runs it; supply-chain/README.md tells what a run finds.
#
#   scripts/supply-chain.sh                     # every check (advisories: live DB, else snapshot)
#   scripts/supply-chain.sh --empty-cache       # the same with an empty, throw-away CARGO_HOME
#   scripts/supply-chain.sh --no-advisories     # licences, bans, sources only: no database
#   scripts/supply-chain.sh --refresh-snapshot  # replace supply-chain/ from the live database
#   scripts/supply-chain.sh --install-only      # only install cargo-deny (scripts/test.sh)
#
# Only the advisory database is ever offline, never the crate registry: `cargo metadata` needs
# the crates of every target platform (Windows and wasm ones too) that a Linux build never
# downloads, so it fails offline on a machine whose registry cache is empty. cargo-deny 0.20 has
# no switch for the database alone (its `--offline` also makes its own `cargo metadata` offline),
# so the script runs `cargo metadata` itself, online, and hands the result to
# `cargo deny --offline --metadata-path`. `--empty-cache` (what scripts/test.sh, so CI, runs) proves
# that on every run: the check starts from a CARGO_HOME with no registry cache at all.
#
# Advisories: the RustSec database is a git repository on GitHub. When it cannot be fetched, the
# snapshot in supply-chain/ (see its README) is checked instead and its date is printed, so the
# check runs everywhere; a snapshot only knows advisories published before that date.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
DENY_VERSION=0.20.2
snapshot="$root/supply-chain/rustsec-advisory-db.tar.zst"
# Where cargo-deny keeps the database of the URL in deny.toml (advisories.db-urls): the default
# db-path, and a directory name cargo-deny derives from the URL.
dbdir="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs/advisory-db-3157b0e258782691"

if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $DENY_VERSION" ]; then
    echo "supply-chain: installing cargo-deny $DENY_VERSION from crates.io (minutes on two cores)"
    # cargo-deny's own release profile is fat LTO with one codegen unit: over 3 minutes of
    # compiling on 2 cores. A check of one lock file does not need that speed: no LTO, more
    # codegen units, opt-level 1 (config overrides the package's profile).
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
        cargo install cargo-deny --locked --version "$DENY_VERSION"
fi

case "${1:-}" in
--install-only)
    # Only make sure cargo-deny is installed (scripts/test.sh does it while the tests run).
    exit 0
    ;;
--empty-cache)
    # A fresh CARGO_HOME: no registry index, no crates, no advisory database. cargo-deny itself
    # stays where it was installed (on PATH); the toolchain is found through RUSTUP_HOME.
    fresh="$(mktemp -d "${TMPDIR:-/tmp}/supply-chain-cargo-home.XXXXXX")"
    trap 'rm -rf "$fresh"' EXIT
    export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
    export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
    echo "supply-chain: checking with an empty CARGO_HOME ($fresh)"
    CARGO_HOME="$fresh" "$0"
    exit
    ;;
--no-advisories|--offline)
    exec cargo deny check bans licenses sources
    ;;
--refresh-snapshot)
    cargo deny fetch db
    git -C "$dbdir" log -1 --format='%H %cI' >supply-chain/snapshot.txt
    tar -C "$dbdir" --sort=name --owner=0 --group=0 -cf - LICENSE.txt LICENSES crates rust |
        zstd -19 -q -f -o "$snapshot"
    echo "supply-chain: wrote $snapshot of $(cat supply-chain/snapshot.txt);" \
        "update the commit and date in supply-chain/README.md"
    exit 0
    ;;
esac

if timeout 120 cargo deny fetch db 2>/dev/null; then
    echo "supply-chain: advisories from the live RustSec database" \
        "($(git -C "$dbdir" log -1 --format=%cs 2>/dev/null || echo 'date unknown'))"
    exec cargo deny check
fi

# No network to GitHub: install the snapshot where cargo-deny looks, as the git repository it
# expects (it reads the database's date from the last commit).
stamp="$(sha256sum "$snapshot" | cut -c1-16)"
if [ "$(cat "$dbdir/.snapshot" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$dbdir"
    mkdir -p "$dbdir"
    zstd -dc "$snapshot" | tar -C "$dbdir" -xf -
    read -r commit date <supply-chain/snapshot.txt
    (
        cd "$dbdir"
        git init -q
        git add -A
        GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
            git -c user.name=snapshot -c user.email=snapshot@localhost \
            commit -q -m "RustSec advisory database $commit ($date)"
    )
    echo "$stamp" >"$dbdir/.snapshot"
fi
echo "supply-chain: cannot fetch the live RustSec database; checking advisories against the" \
    "snapshot of $(git -C "$dbdir" log -1 --format=%cs) in supply-chain/"
meta="$(mktemp "${TMPDIR:-/tmp}/supply-chain-metadata.XXXXXX")"
trap 'rm -f "$meta"' EXIT
cargo metadata --format-version 1 --locked >"$meta"
cargo deny --offline --metadata-path "$meta" check
