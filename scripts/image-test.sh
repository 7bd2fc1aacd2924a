#!/usr/bin/env bash
# Builds the container image (scripts/image-build.sh) and tests it without an image registry or a
# container engine: buildah (Debian 12's 1.28, --storage-driver vfs) runs the exporter from the
# image with --isolation chroot, which shares the host's network and PID namespace, so the test
# scrapes the exporter from the host and reads its /proc entry.
#
#   scripts/image-test.sh
#
# Time (2 cores): about 5 s when nothing changed; 15-30 s on a first run (installing buildah,
# downloading the packages, assembling the root filesystem); plus the release build of the
# binary when the sources changed (1.5-2 min from scratch). Image and limits: 27.1 MB, in
# IMAGE_TEST_MAX_MIB / IMAGE_TEST_MAX_BASE_MIB below.
#
# Needs root (otherwise buildah goes through sudo), curl, python3, readelf; openssl if present.
# Checks, each failing with a message that names it:
#   config       the image's User is 65532:65532, Entrypoint ["/usr/local/bin/spark-exporter"],
#                no Cmd, ExposedPorts 9809/tcp, WorkingDir /home/nonroot, SSL_CERT_FILE set
#   Dockerfile   its USER, EXPOSE, ENTRYPOINT, COPY destination and strip command are the image's,
#                and its LABELs are among the image's labels
#   size         the image (its layers, uncompressed, as stored) under IMAGE_TEST_MAX_MIB (32 MiB;
#                27.1 MB when written: the 20.0 MB binary and a 7.2 MB root filesystem), and the
#                root filesystem alone (the layers less the binary) under IMAGE_TEST_MAX_BASE_MIB
#                (8 MiB), so a regrown base (gconv, docs) fails even while the binary shrinks
#   contents     no shell, no package manager, no docs; passwd/group with nonroot 65532; /tmp
#                1777; /home/nonroot 0700 65532:65532; the binary root-owned 0755, no debug
#                sections, every library it needs present; the CA bundle (>100 certificates, all
#                parsed by openssl); tzdata's UTC; os-release of Debian 12; status.d entries of
#                every package
#   version      `spark-exporter --version` run from the image as 65532:65532 prints the crate's
#                version
#   serve        the exporter run from the image as 65532:65532 over the event log of
#                tests/data/spark-4.1.1-basic (mounted read-only at /data/eventlog) serves
#                spark_app_info and spark_jobs_total of local-1795981136444 (the failing job
#                counted failed, as the fixture's ground truth says) on 127.0.0.1:PORT
#   process      that process, from the host's /proc: Uid and Gid all 65532, no supplementary
#                groups, no effective capabilities, working directory /home/nonroot, the image's
#                SSL_CERT_FILE in its environment; on SIGTERM it drains, serves its final
#                state to one scrape and exits 0
# The working container is removed at the end, on failure too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
t0=$(date +%s)

fail() { echo "image-test: FAIL: $*" >&2; exit 1; }
ok() { echo "image-test: ok: $*"; }

version="$(awk '/^\[/{p=($0=="[package]")} p && /^version *=/{gsub(/.*= *"|".*/,""); print; exit}' Cargo.toml)"
tag="localhost/spark-exporter:$version"
app=local-1795981136444
eventlog="$root/tests/data/spark-4.1.1-basic/eventlog"
max_mib="${IMAGE_TEST_MAX_MIB:-32}"
max_base_mib="${IMAGE_TEST_MAX_BASE_MIB:-8}"
work="$root/target/image/test"
mkdir -p "$work"

sudo_=()
[ "$(id -u)" -eq 0 ] || sudo_=(sudo)
buildah_() { "${sudo_[@]}" buildah --storage-driver vfs "$@"; }

# --- build --------------------------------------------------------------------------------------
scripts/image-build.sh "$tag"
t_built=$(date +%s)

ctr=""; run_pid=""; exporter_pid=""
# The exporter's processes: buildah run's descendants (chroot isolation starts no PID namespace).
descendants() {
    local p
    for p in $(ps -o pid= --ppid "$1"); do echo "$p"; descendants "$p"; done
}
find_exporter() {
    local p
    for p in $(descendants "$run_pid"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = spark-exporter ] && echo "$p"
    done
}
cleanup() {
    local rc=$? p
    if [ -n "$run_pid" ]; then
        # SIGKILL: a SIGTERM would start a drain of up to 25 s. buildah run then exits.
        [ -n "$exporter_pid" ] || exporter_pid="$(find_exporter | head -n1)"
        [ -z "$exporter_pid" ] || "${sudo_[@]}" kill -KILL "$exporter_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
        kill "$run_pid" 2>/dev/null || true
        wait "$run_pid" 2>/dev/null || true
    fi
    if [ -n "$ctr" ]; then
        buildah_ umount "$ctr" >/dev/null 2>&1 || true
        buildah_ rm "$ctr" >/dev/null 2>&1 || echo "image-test: could not remove container $ctr" >&2
    fi
    [ $rc -eq 0 ] || echo "image-test: FAILED (exit $rc); logs in $work" >&2
    exit $rc
}
trap cleanup EXIT

# --- config -------------------------------------------------------------------------------------
buildah_ inspect --type image "$tag" > "$work/inspect.json" || fail "buildah inspect $tag"
# Prints KEY=VALUE lines of the config, the size and the labels (python3: JSON in, shell out).
python3 - "$work/inspect.json" > "$work/config.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["OCIv1"]["config"]
m = json.loads(d["Manifest"])
print("user=%s" % c.get("User", ""))
print("entrypoint=%s" % json.dumps(c.get("Entrypoint")))
print("cmd=%s" % json.dumps(c.get("Cmd")))
print("ports=%s" % " ".join(sorted(c.get("ExposedPorts") or {})))
print("workdir=%s" % c.get("WorkingDir", ""))
print("env=%s" % " ".join(c.get("Env") or []))
print("layers=%d" % len(m["layers"]))
print("bytes=%d" % sum(l["size"] for l in m["layers"]))
for k, v in sorted((c.get("Labels") or {}).items()):
    print("label %s=%s" % (k, v))
EOF
cfg() { sed -n "s/^$1=//p" "$work/config.txt"; }
[ "$(cfg user)" = 65532:65532 ] || fail "config: User is '$(cfg user)', not 65532:65532"
[ "$(cfg entrypoint)" = '["/usr/local/bin/spark-exporter"]' ] \
    || fail "config: Entrypoint is $(cfg entrypoint), not [\"/usr/local/bin/spark-exporter\"]"
[ "$(cfg cmd)" = null ] || fail "config: Cmd is $(cfg cmd); the exporter's defaults need none"
[ "$(cfg ports)" = 9809/tcp ] || fail "config: ExposedPorts is '$(cfg ports)', not 9809/tcp"
[ "$(cfg workdir)" = /home/nonroot ] || fail "config: WorkingDir is '$(cfg workdir)', not /home/nonroot"
grep -qw 'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' <<<"$(cfg env)" \
    || fail "config: Env has no SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt: $(cfg env)"
ok "config: User 65532:65532, Entrypoint [\"/usr/local/bin/spark-exporter\"], ExposedPorts 9809/tcp, WorkingDir /home/nonroot"

# --- Dockerfile ---------------------------------------------------------------------------------
# The Dockerfile builds the same image for users with a registry; keep the two the same.
df=Dockerfile
[ "$(sed -n 's/^USER  *//p' $df)" = "$(cfg user)" ] \
    || fail "Dockerfile: USER '$(sed -n 's/^USER  *//p' $df)' but the image's User is $(cfg user)"
[ "$(sed -n 's/^EXPOSE  *//p' $df)/tcp" = "$(cfg ports)" ] \
    || fail "Dockerfile: EXPOSE '$(sed -n 's/^EXPOSE  *//p' $df)' but the image exposes $(cfg ports)"
df_ep="$(sed -n 's/^ENTRYPOINT  *//p' $df | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())))')"
[ "$df_ep" = "$(cfg entrypoint)" ] || fail "Dockerfile: ENTRYPOINT $df_ep but the image's is $(cfg entrypoint)"
grep -q '^COPY --from=builder [^ ]* /usr/local/bin/spark-exporter$' $df \
    || fail "Dockerfile: the binary is not copied to /usr/local/bin/spark-exporter"
grep -q 'objcopy --strip-debug target/release/spark-exporter' $df \
    || fail "Dockerfile: the binary is not stripped with objcopy --strip-debug, as scripts/image-build.sh does"
while read -r kv; do
    grep -qxF "label $kv" "$work/config.txt" || fail "Dockerfile: LABEL $kv is not among the image's labels"
done < <(sed -n 's/^LABEL  *//p' $df | python3 -c '
import shlex, sys
for line in sys.stdin:
    for kv in shlex.split(line):
        print(kv)')
ok "Dockerfile: same USER, EXPOSE, ENTRYPOINT, binary path, strip and labels"

# --- size ---------------------------------------------------------------------------------------
bytes="$(cfg bytes)"
bin_bytes="$(stat -c %s target/image/spark-exporter)"
base_bytes=$((bytes - bin_bytes))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB (%.1f MB)", b / 1048576, b / 1e6 }'; }
[ "$bytes" -le $((max_mib * 1048576)) ] \
    || fail "size: the image is $(mib "$bytes"), over $max_mib MiB (IMAGE_TEST_MAX_MIB)"
[ "$base_bytes" -le $((max_base_mib * 1048576)) ] \
    || fail "size: the root filesystem (image less binary) is $(mib "$base_bytes"), over $max_base_mib MiB (IMAGE_TEST_MAX_BASE_MIB)"
ok "size: image $(mib "$bytes") in $(cfg layers) layer(s) (limit $max_mib MiB): binary $(mib "$bin_bytes"), root filesystem $(mib "$base_bytes") (limit $max_base_mib MiB)"

# --- contents -----------------------------------------------------------------------------------
ctr="$(buildah_ from --name "spark-exporter-image-test-$$" "$tag")" || fail "buildah from $tag"
mnt="$(buildah_ mount "$ctr")" || fail "buildah mount $ctr"
asroot() { "${sudo_[@]}" "$@"; }
for f in bin/sh usr/bin/sh bin/bash usr/bin/apt-get usr/bin/dpkg usr/share/doc usr/share/man usr/lib/x86_64-linux-gnu/gconv; do
    asroot test ! -e "$mnt/$f" -a ! -L "$mnt/$f" || fail "contents: /$f is in the image"
done
asroot grep -qx 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' "$mnt/etc/passwd" \
    || fail "contents: /etc/passwd has no nonroot 65532 entry"
asroot grep -qx 'nonroot:x:65532:' "$mnt/etc/group" || fail "contents: /etc/group has no nonroot 65532 entry"
asroot grep -q '^root:x:0:0:' "$mnt/etc/passwd" || fail "contents: /etc/passwd has no root entry"
[ "$(asroot stat -c '%a %u:%g' "$mnt/tmp")" = "1777 0:0" ] || fail "contents: /tmp is $(asroot stat -c '%a %u:%g' "$mnt/tmp"), not 1777 0:0"
[ "$(asroot stat -c '%a %u:%g' "$mnt/home/nonroot")" = "700 65532:65532" ] \
    || fail "contents: /home/nonroot is $(asroot stat -c '%a %u:%g' "$mnt/home/nonroot"), not 700 65532:65532"
[ "$(asroot stat -c '%a %u:%g' "$mnt/usr/local/bin/spark-exporter")" = "755 0:0" ] \
    || fail "contents: the binary is $(asroot stat -c '%a %u:%g' "$mnt/usr/local/bin/spark-exporter"), not 755 0:0"
asroot cmp -s "$mnt/usr/local/bin/spark-exporter" target/image/spark-exporter \
    || fail "contents: the image's binary is not target/image/spark-exporter"
if asroot readelf -S "$mnt/usr/local/bin/spark-exporter" | grep -q '\.debug_'; then
    fail "contents: the binary has debug sections (not stripped)"
fi
for so in $(asroot readelf -d "$mnt/usr/local/bin/spark-exporter" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    # shellcheck disable=SC2016  # expanded by the inner bash
    asroot bash -c 'compgen -G "$1/lib/*/$2" || compgen -G "$1/lib64/$2" || compgen -G "$1/usr/lib/*/$2"' _ "$mnt" "$so" >/dev/null \
        || fail "contents: $so, which the binary needs, is not in the image"
done
bundle="$mnt/etc/ssl/certs/ca-certificates.crt"
ncerts="$(asroot grep -c 'BEGIN CERTIFICATE' "$bundle" || true)"
[ "${ncerts:-0}" -gt 100 ] || fail "contents: the CA bundle has ${ncerts:-0} certificates"
if command -v openssl >/dev/null; then
    nparsed="$(asroot openssl storeutl -noout -certs "$bundle" 2>/dev/null | grep -c '^[0-9]*: Certificate$' || true)"
    [ "$nparsed" = "$ncerts" ] || fail "contents: openssl parses $nparsed of the CA bundle's $ncerts certificates"
fi
asroot test -s "$mnt/usr/share/zoneinfo/UTC" || fail "contents: no /usr/share/zoneinfo/UTC (tzdata)"
asroot grep -qx 'VERSION_ID="12"' "$mnt/etc/os-release" || fail "contents: /etc/os-release is not Debian 12's"
for p in libc6 libgcc-s1 ca-certificates tzdata base-files; do
    asroot grep -q "^Package: $p\$" "$mnt/var/lib/dpkg/status.d/$p" 2>/dev/null \
        || fail "contents: no /var/lib/dpkg/status.d/$p (image scanners read the packages there)"
done
buildah_ umount "$ctr" >/dev/null
ok "contents: no shell or package manager; nonroot 65532; /tmp 1777; stripped binary and its libraries; $ncerts CA certificates; tzdata; Debian 12 os-release and status.d"

# --- version ------------------------------------------------------------------------------------
# `buildah run` does not use the image's ENTRYPOINT (checked above with inspect): it runs the
# command it is given, so each run names /usr/local/bin/spark-exporter.
run_() { buildah_ run --isolation chroot --user 65532:65532 "$@"; }
out="$(run_ "$ctr" -- /usr/local/bin/spark-exporter --version 2>&1)" \
    || fail "version: spark-exporter --version in the image failed: $out"
[ "$out" = "spark-exporter $version" ] || fail "version: the image's binary says '$out', not 'spark-exporter $version'"
ok "version: $out (as 65532:65532, from the image)"

# --- serve --------------------------------------------------------------------------------------
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# Not through run_: a backgrounded function is a subshell, and $! must be buildah (or sudo, which
# relays signals) for the kill and wait below.
"${sudo_[@]}" buildah --storage-driver vfs run --isolation chroot --user 65532:65532 \
    --volume "$eventlog:/data/eventlog:ro" "$ctr" -- \
    /usr/local/bin/spark-exporter --spark.url= --event-log.dir /data/eventlog \
    --web.listen-address "127.0.0.1:$port" > "$work/exporter.log" 2>&1 &
run_pid=$!
url="http://127.0.0.1:$port/metrics"
for _ in $(seq 1 150); do
    kill -0 "$run_pid" 2>/dev/null || { cat "$work/exporter.log" >&2; run_pid=""; fail "serve: the exporter exited (log above)"; }
    if curl -fsS -o "$work/metrics.txt" "$url" 2>/dev/null && grep -q "^spark_app_info{app_id=\"$app\"" "$work/metrics.txt"; then
        break
    fi
    sleep 0.2
done
[ -s "$work/metrics.txt" ] || { cat "$work/exporter.log" >&2; fail "serve: nothing served at $url within 30 s (log above)"; }
grep -qE "^spark_app_info\{app_id=\"$app\",[^}]*\} 1\$" "$work/metrics.txt" \
    || fail "serve: no spark_app_info sample of $app at $url (scrape in $work/metrics.txt)"
njobs="$(grep -cE "^spark_jobs_total\{app_id=\"$app\"," "$work/metrics.txt" || true)"
[ "$njobs" -gt 0 ] || fail "serve: no spark_jobs_total samples of $app at $url (scrape in $work/metrics.txt)"
grep -qE "^spark_jobs_total\{app_id=\"$app\",[^}]*job_group=\"failing_job\"[^}]*status=\"failed\"\} 1\$" "$work/metrics.txt" \
    || fail "serve: the fixture's failing job is not counted failed in spark_jobs_total (scrape in $work/metrics.txt)"
ok "serve: $url has spark_app_info and $njobs spark_jobs_total samples of $app"

# --- process ------------------------------------------------------------------------------------
# chroot isolation starts no PID namespace: the exporter is a descendant of `buildah run` here.
exporter_pid="$(find_exporter)"
[ "$(wc -w <<<"$exporter_pid")" -le 1 ] || fail "process: more than one spark-exporter under buildah run: $exporter_pid"
[ -n "$exporter_pid" ] || fail "process: no spark-exporter process under buildah run (pid $run_pid)"
status="$(cat "/proc/$exporter_pid/status")"
field() { awk -v k="$1:" '$1 == k { $1 = ""; print substr($0, 2) }' <<<"$status"; }
[ "$(field Uid)" = "65532 65532 65532 65532" ] || fail "process: Uid is '$(field Uid)' (real, effective, saved, fs), not 65532 throughout"
[ "$(field Gid)" = "65532 65532 65532 65532" ] || fail "process: Gid is '$(field Gid)', not 65532 throughout"
[ -z "$(field Groups | tr -d ' ')" ] || [ "$(field Groups | tr -d ' ')" = 65532 ] \
    || fail "process: supplementary groups '$(field Groups)'"
[ "$(field CapEff)" = 0000000000000000 ] || fail "process: effective capabilities $(field CapEff), not none"
cwd="$(asroot readlink "/proc/$exporter_pid/cwd")"
[ "${cwd%/home/nonroot}" != "$cwd" ] || fail "process: working directory $cwd, not the image's /home/nonroot"
asroot cat "/proc/$exporter_pid/environ" | tr '\0' '\n' | grep -qx 'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    || fail "process: SSL_CERT_FILE of the image is not in the exporter's environment"
ok "process: pid $exporter_pid runs as uid/gid 65532 ($(grep '^Uid:' <<<"$status" | tr -s '\t ' ' ')), no capabilities, in /home/nonroot"

# SIGTERM: the exporter drains (docs/internals.md "The application's end"): it reads its sources
# to their end, then serves that final state until one scrape has taken it (or its grace period,
# 25 s, ends), then exits 0. So: wait for the final state, scrape it once, wait for the exit.
"${sudo_[@]}" kill -TERM "$exporter_pid"
for _ in $(seq 1 100); do grep -q 'Final state reached' "$work/exporter.log" && break; sleep 0.1; done
grep -q 'Final state reached' "$work/exporter.log" \
    || { cat "$work/exporter.log" >&2; fail "process: no final state within 10 s of SIGTERM (log above)"; }
curl -fsS -o "$work/metrics-final.txt" "$url" || fail "process: the final scrape of $url after SIGTERM failed"
grep -qE "^spark_app_info\{app_id=\"$app\"," "$work/metrics-final.txt" \
    || fail "process: the final scrape has no spark_app_info of $app (in $work/metrics-final.txt)"
for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$run_pid" 2>/dev/null && { cat "$work/exporter.log" >&2; fail "process: still running 10 s after its final scrape (log above)"; }
rc=0; wait "$run_pid" || rc=$?
run_pid=""; exporter_pid=""
[ "$rc" -eq 0 ] || { cat "$work/exporter.log" >&2; fail "process: the exporter exited $rc after SIGTERM (log above)"; }
grep -q 'Drained. ended=Scrapes' "$work/exporter.log" \
    || { cat "$work/exporter.log" >&2; fail "process: the drain did not end with the final scrape (log above)"; }
ok "process: on SIGTERM, drained, served its final state to one scrape and exited 0"

t_end=$(date +%s)
echo "image-test: all checks passed in $((t_end - t0)) s (build $((t_built - t0)) s, checks $((t_end - t_built)) s)"
