#!/usr/bin/env bash
# Builds the spark-exporter container image without an image registry, with Debian 12's buildah:
# the same image as the Dockerfile (distroless cc-debian12:nonroot + the stripped binary), but its
# root filesystem is made here from Debian's own packages, the way distroless makes its images.
#
#   scripts/image-build.sh [TAG]     default TAG: localhost/spark-exporter:<version in Cargo.toml>
#
# Needs root for buildah (otherwise buildah and apt-get go through sudo) and Debian's apt (for
# `apt-get download`). Storage: buildah's default store with --storage-driver vfs (no overlay or
# fuse needed); scripts/image-test.sh runs the image with `buildah run --isolation chroot`.
# Afterwards: `buildah --storage-driver vfs images`; `buildah --storage-driver vfs push TAG
# docker-archive:spark-exporter.tar:TAG` (or oci-archive:, or a registry) takes it elsewhere
# (`docker load`, `podman load`, `kind load image-archive`).
#
# Steps:
#   1. buildah: installed with apt-get if missing.
#   2. the binary: cargo build --release --locked --bin spark-exporter, then objcopy
#      --strip-debug (as the Dockerfile does: the symbol table stays, for names in backtraces).
#   3. the packages: those of every library the binary loads (ldd, then dpkg -S: today libc6 for
#      libc, libm and the loader, libgcc-s1 for libgcc_s) plus ca-certificates and tzdata, as
#      distroless cc has them. `apt-get download` of the candidate version, kept in
#      target/image/debs/ and reused while its SHA256 is the archive's.
#   4. the root filesystem (target/image/rootfs/): `dpkg -x` of each package (no maintainer
#      scripts run), so what those scripts would make is made here: the CA bundle
#      /etc/ssl/certs/ca-certificates.crt (update-ca-certificates' concatenation of every
#      /usr/share/ca-certificates/**/*.crt), /etc/passwd and /etc/group (root, nobody, and nonroot
#      65532 with home /home/nonroot), /etc/nsswitch.conf, /etc/os-release (from base-files),
#      /tmp (1777), and /var/lib/dpkg/status.d/<package> (each package's control fields, where
#      distroless puts them, so image scanners such as trivy and grype see the packages and their
#      versions). Removed: documentation, man pages, lintian overrides, locales, the
#      update-ca-certificates script and hooks, the individual certificates (the bundle has them),
#      and glibc's gconv modules (8 MB; only iconv(3) loads them and the binary does not call it).
#      Rebuilt only when the packages or this script change; packed into two tarballs with fixed
#      owners (0:0, and 65532:65532 for /home/nonroot), sorted names and time 0, so the same
#      packages give the same bytes.
#   5. the image: buildah from scratch, buildah add of the tarballs, buildah copy of the binary to
#      /usr/local/bin/spark-exporter, buildah config (user 65532:65532, port 9809, entrypoint,
#      working directory, PATH and SSL_CERT_FILE as distroless nonroot has them, OCI labels) and
#      buildah commit with --timestamp (SOURCE_DATE_EPOCH, default the HEAD commit's time), so the
#      same inputs give the same image ID. Skipped when the image under TAG was built from the
#      same inputs (its label spark-exporter.image.inputs); a replaced image is removed.
# Prints the image's size (its one layer, uncompressed) and the binary's.
#
# Limits: the image is in buildah's vfs store only: `buildah images`, podman or buildah with
# another driver (overlay) do not list it; name the driver (`buildah --storage-driver vfs ...`)
# or push it out as above. vfs keeps every layer and container as a full copy (27 MB each here).
# Not tried as a non-root user (the sudo paths).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
self="$root/scripts/$(basename "${BASH_SOURCE[0]}")"
cd "$root"

die() { echo "image-build: ERROR: $*" >&2; exit 1; }
log() { echo "image-build: $*"; }

# The [package] version of Cargo.toml.
version="$(awk '/^\[/{p=($0=="[package]")} p && /^version *=/{gsub(/.*= *"|".*/,""); print; exit}' Cargo.toml)"
[ -n "$version" ] || die "no [package] version in Cargo.toml"
tag="${1:-localhost/spark-exporter:$version}"

work="$root/target/image"
mkdir -p "$work/debs"

sudo_=()
[ "$(id -u)" -eq 0 ] || sudo_=(sudo)
buildah_() { "${sudo_[@]}" buildah --storage-driver vfs "$@"; }

# 1. buildah ----------------------------------------------------------------------------------
if ! command -v buildah >/dev/null; then
    log "installing buildah (apt-get; output in $work/apt-buildah.log)"
    apt_install() { DEBIAN_FRONTEND=noninteractive "${sudo_[@]}" apt-get install -y -qq buildah; }
    if ! apt_install > "$work/apt-buildah.log" 2>&1; then
        { "${sudo_[@]}" apt-get update -qq && apt_install; } >> "$work/apt-buildah.log" 2>&1 \
            || { cat "$work/apt-buildah.log" >&2; die "apt-get install buildah failed (output above)"; }
    fi
fi
command -v buildah >/dev/null || die "buildah is not installed"

# 2. the binary -------------------------------------------------------------------------------
cargo build --release --locked --bin spark-exporter
bin_src="$root/target/release/spark-exporter"
bin="$work/spark-exporter"
if [ ! -e "$bin" ] || [ "$bin_src" -nt "$bin" ]; then
    objcopy --strip-debug "$bin_src" "$bin.new"
    chmod 0755 "$bin.new"
    # A fixed time, as every file of the root filesystem has (buildah copy keeps it).
    touch -d @0 "$bin.new"
    mv "$bin.new" "$bin"
fi

# 3. the packages -----------------------------------------------------------------------------
# The package of each library the dynamic loader resolves for the binary (ldd lists them all,
# the libraries' own dependencies too), as pkg:arch.
lib_pkgs=()
while read -r lib; do
    [ -n "$lib" ] || continue
    owner="$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null)" \
        || die "no Debian package owns $lib, which the binary loads (ldd $bin_src)"
    lib_pkgs+=("${owner%%: *}")
done < <(ldd "$bin_src" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
[ ${#lib_pkgs[@]} -gt 0 ] || die "ldd found no libraries in $bin_src"
mapfile -t pkgs < <(printf '%s\n' "${lib_pkgs[@]}" ca-certificates tzdata | sort -u)
log "packages: ${pkgs[*]}"

apt_opts=()
# Root's downloads otherwise warn that the _apt sandbox user cannot write the folder.
[ "$(id -u)" -ne 0 ] || apt_opts=(-o APT::Sandbox::User=root)
# One line a package: 'URI' FILE SIZE SHA256:HEX (the candidate version; no download).
uris() { apt-get "${apt_opts[@]}" download --print-uris "$@" 2>/dev/null; }
if ! listing="$(uris "${pkgs[@]}" base-files)"; then
    log "apt-get update (the package lists do not name ${pkgs[*]} base-files)"
    "${sudo_[@]}" apt-get update -qq
    listing="$(uris "${pkgs[@]}" base-files)" || die "apt-get download --print-uris ${pkgs[*]} base-files failed"
fi
debs=()
pkg_versions=()
for p in "${pkgs[@]}" base-files; do
    read -r _ file _ sum < <(awk -v pre="${p%%:*}_" 'index($2, pre) == 1' <<<"$listing") \
        || die "apt-get download --print-uris names no file for $p"
    sum="${sum#SHA256:}"
    if [ ! -f "$work/debs/$file" ] || [ "$(sha256sum < "$work/debs/$file" | cut -d' ' -f1)" != "$sum" ]; then
        log "downloading $file"
        rm -f "$work/debs/${p%%:*}_"*.deb
        (cd "$work/debs" && apt-get "${apt_opts[@]}" download -qq "$p") || die "apt-get download $p failed"
        [ -f "$work/debs/$file" ] || die "apt-get download $p did not write $file"
    fi
    debs+=("$work/debs/$file")
    [ "$p" = base-files ] || pkg_versions+=("$(dpkg-deb -f "$work/debs/$file" Package)=$(dpkg-deb -f "$work/debs/$file" Version)")
done

# 4. the root filesystem ----------------------------------------------------------------------
inputs_rootfs="$( (printf '%s\n' "${debs[@]##*/}"; sha256sum < "$self") | sha256sum | cut -d' ' -f1)"
rootfs="$work/rootfs"
if [ "$(cat "$work/rootfs.inputs" 2>/dev/null)" != "$inputs_rootfs" ] \
    || [ ! -f "$work/rootfs.tar" ] || [ ! -f "$work/home.tar" ]; then
    log "assembling the root filesystem in $rootfs"
    rm -rf "$rootfs" "$work/base-files" "$work/rootfs.inputs"
    mkdir -p "$rootfs/var/lib/dpkg/status.d" "$work/base-files"
    for deb in "${debs[@]}"; do
        name="$(dpkg-deb -f "$deb" Package)"
        if [ "$name" = base-files ]; then
            # Only the OS identification (scanners read it); the rest is a full system's.
            dpkg -x "$deb" "$work/base-files"
            mkdir -p "$rootfs/usr/lib" "$rootfs/etc"
            cp "$work/base-files/usr/lib/os-release" "$rootfs/usr/lib/os-release"
            ln -s ../usr/lib/os-release "$rootfs/etc/os-release"
            cp "$work/base-files/etc/debian_version" "$rootfs/etc/debian_version"
        else
            dpkg -x "$deb" "$rootfs"
        fi
        dpkg-deb -f "$deb" > "$rootfs/var/lib/dpkg/status.d/$name"
    done
    rm -rf "$work/base-files"

    # The CA bundle, as update-ca-certificates makes it: every certificate, each ending in a
    # newline, in the order of the names (its ca-certificates.conf is that order too).
    mkdir -p "$rootfs/etc/ssl/certs"
    # shellcheck disable=SC1003,SC2016  # sed's "append a newline if missing", not an expansion
    find "$rootfs/usr/share/ca-certificates" -name '*.crt' -print0 | LC_ALL=C sort -z \
        | xargs -0 sed -s -e '$a\' > "$rootfs/etc/ssl/certs/ca-certificates.crt"
    ncerts="$(grep -c 'BEGIN CERTIFICATE' "$rootfs/etc/ssl/certs/ca-certificates.crt" || true)"
    [ "$ncerts" -gt 100 ] || die "the CA bundle has $ncerts certificates"

    cat > "$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
    cat > "$rootfs/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
    cat > "$rootfs/etc/nsswitch.conf" <<'EOF'
passwd:         files
group:          files
shadow:         files
hosts:          files dns
networks:       files
protocols:      files
services:       files
EOF
    mkdir -p "$rootfs/tmp" "$rootfs/root" "$rootfs/home/nonroot" "$rootfs/usr/local/bin"
    chmod 1777 "$rootfs/tmp"
    chmod 0700 "$rootfs/root" "$rootfs/home/nonroot"

    rm -rf "$rootfs/usr/share/doc" "$rootfs/usr/share/man" "$rootfs/usr/share/info" \
        "$rootfs/usr/share/lintian" "$rootfs/usr/share/locale" \
        "$rootfs/usr/share/ca-certificates" "$rootfs/etc/ca-certificates" \
        "$rootfs/usr/sbin/update-ca-certificates" \
        "$rootfs"/usr/lib/*-linux-gnu/gconv
    rmdir "$rootfs/usr/sbin" 2>/dev/null || true
    # Every library the binary needs is there.
    for so in $(readelf -d "$bin_src" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        compgen -G "$rootfs/lib/*/$so" >/dev/null || compgen -G "$rootfs/lib64/$so" >/dev/null \
            || compgen -G "$rootfs/usr/lib/*/$so" >/dev/null \
            || die "$so (NEEDED by the binary) is not in the root filesystem"
    done

    # Fixed owners, modes as extracted, sorted names, time 0: the same packages, the same bytes.
    tar_() { tar --sort=name --numeric-owner --mtime=@0 --format=gnu -C "$rootfs" "$@"; }
    tar_ --owner=0 --group=0 --exclude=./home/nonroot -cf "$work/rootfs.tar.new" .
    tar_ --owner=65532 --group=65532 -cf "$work/home.tar.new" ./home/nonroot
    mv "$work/rootfs.tar.new" "$work/rootfs.tar"
    mv "$work/home.tar.new" "$work/home.tar"
    echo "$inputs_rootfs" > "$work/rootfs.inputs"
fi

# 5. the image --------------------------------------------------------------------------------
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no -- src build.rs Cargo.toml Cargo.lock 2>/dev/null)" ]; then
    revision="$revision-dirty"
fi
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
config=(
    --user 65532:65532
    --port 9809/tcp
    --entrypoint '["/usr/local/bin/spark-exporter"]'
    --workingdir /home/nonroot
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
    --label org.opencontainers.image.title=spark-exporter
    --label "org.opencontainers.image.description=$(sed -n 's/^description = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
    --label "org.opencontainers.image.version=$version"
    --label "org.opencontainers.image.revision=$revision"
    --label "org.opencontainers.image.licenses=$(sed -n 's/^license = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
    --label "spark-exporter.image.packages=${pkg_versions[*]}"
)
inputs="$( (sha256sum < "$work/rootfs.tar"; sha256sum < "$work/home.tar"; sha256sum < "$bin"
            printf '%s\n' "${config[@]}" "$epoch") | sha256sum | cut -d' ' -f1)"

size_report() {
    local id size
    id="$(buildah_ inspect --type image --format '{{.FromImageID}}' "$tag")"
    size="$(buildah_ images --noheading --no-trunc --format '{{.ID}} {{.Size}}' | awk -v id="${id#sha256:}" '$1 ~ id {$1=""; print; exit}')"
    log "image $tag (${id#sha256:}): ${size# }, binary $(stat -c %s "$bin") bytes (stripped; $(stat -c %s "$bin_src") before)"
}

old_id="$(buildah_ inspect --type image --format '{{.FromImageID}}' "$tag" 2>/dev/null || true)"
if [ -n "$old_id" ] && [ "$(buildah_ inspect --type image --format '{{index .OCIv1.Config.Labels "spark-exporter.image.inputs"}}' "$tag" 2>/dev/null)" = "$inputs" ]; then
    log "up to date: $tag was built from the same binary, packages and settings"
    size_report
    exit 0
fi

ctr="$(buildah_ from --name "spark-exporter-build-$$" scratch)"
trap 'buildah_ rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah_ add --quiet "$ctr" "$work/rootfs.tar" /
buildah_ add --quiet "$ctr" "$work/home.tar" /
buildah_ copy --quiet --chmod 0755 "$ctr" "$bin" /usr/local/bin/spark-exporter
buildah_ config "${config[@]}" --label "spark-exporter.image.inputs=$inputs" "$ctr"
buildah_ commit --quiet --identity-label=false --timestamp "$epoch" "$ctr" "$tag" >/dev/null
new_id="$(buildah_ inspect --type image --format '{{.FromImageID}}' "$tag")"
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    # The replaced image, unless a container or another tag still uses it.
    buildah_ rmi "$old_id" >/dev/null 2>&1 || true
fi
size_report
