#!/usr/bin/env bash
# Pin the Dockerfile's base images (ARG BUILDER_IMAGE, ARG RUNTIME_IMAGE) by digest: look up
# the digest each tag points at now and write `image:tag@sha256:<digest>` into the defaults.
# Run it again to move to the tags' newest images; review and commit the Dockerfile.
#
#   scripts/docker-pin-bases.sh          resolve and write (needs access to the registries)
#   scripts/docker-pin-bases.sh --check  resolve nothing; exit 1 unless both defaults carry a
#                                        digest (for a release pipeline)
#
# The digest is the one of the tag's manifest list (every platform), from `crane digest`, or
# else from the "Digest:" line of `docker buildx imagetools inspect`. Nothing is written unless
# both lookups give a sha256 of 64 hex digits.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dockerfile="${DOCKERFILE:-$root/Dockerfile}"
args=(BUILDER_IMAGE RUNTIME_IMAGE)
digest_re='^sha256:[0-9a-f]{64}$'

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# default <ARG name>: its default in the Dockerfile
default() {
  sed -n "s/^ARG $1=\\(.*\\)\$/\\1/p" "$dockerfile" | head -n1
}

# lookup <image:tag>: the digest the tag points at
lookup() {
  local out
  if command -v crane >/dev/null; then
    crane digest "$1"
  elif command -v docker >/dev/null; then
    out="$(docker buildx imagetools inspect "$1")"
    sed -n 's/^Digest:[[:space:]]*//p' <<<"$out" | head -n1
  else
    echo "neither crane nor docker is installed" >&2
    return 1
  fi
}

status=0
declare -A pinned
for a in "${args[@]}"; do
  ref="$(default "$a")"
  if [[ -z "$ref" ]]; then
    echo "no 'ARG $a=' in $dockerfile" >&2
    exit 1
  fi
  if [[ $check -eq 1 ]]; then
    if [[ "${ref##*@}" =~ $digest_re && "$ref" == *@* ]]; then
      echo "$a pinned: $ref"
    else
      echo "$a is not pinned by digest: $ref (run scripts/docker-pin-bases.sh)" >&2
      status=1
    fi
    continue
  fi
  tag="${ref%@*}"
  digest="$(lookup "$tag" | tr -d '[:space:]')" || digest=""
  if [[ ! "$digest" =~ $digest_re ]]; then
    echo "could not look up the digest of $tag (got '${digest}')" >&2
    exit 1
  fi
  pinned[$a]="$tag@$digest"
done
if [[ $check -eq 1 ]]; then
  exit "$status"
fi

for a in "${args[@]}"; do
  sed -i "s|^ARG $a=.*\$|ARG $a=${pinned[$a]}|" "$dockerfile"
  echo "$a=${pinned[$a]}"
done
