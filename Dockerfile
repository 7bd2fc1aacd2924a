# syntax=docker/dockerfile:1
# spark-exporter image: build with the Rust toolchain, run on distroless (no shell, no package
# manager) as the unprivileged "nonroot" user (uid/gid 65532).
#
#   docker build -t registry.example.com/spark-exporter:0.2.0 .
#
# Without a registry: scripts/image-build.sh builds the same image with Debian 12's buildah. Its
# root filesystem is made from Debian 12 packages the way distroless makes its own (`apt-get
# download` + `dpkg -x` of libc6, libgcc-s1, ca-certificates and tzdata: the packages of
# distroless cc-debian12 that the binary uses, at the versions the host's apt offers); binary,
# user, port, entrypoint, paths, working directory, PATH, SSL_CERT_FILE and the labels below are
# this file's. scripts/image-test.sh runs that image (buildah run) and checks that this file's
# USER, EXPOSE, ENTRYPOINT, COPY destination, strip command and LABELs are the image's: change
# them in both. Differences: that image is one layer, its files' times are 0 and its creation
# time is the HEAD commit's (the same inputs give the same image ID); it leaves out glibc's gconv
# modules (only iconv(3) loads them; the binary does not call it); it adds labels that change
# with each build (version, revision, package versions, build inputs).
#
# The pod templates under deploy/ expect uid 65532, port 9809 and a read-only root filesystem.

# Base images. A tag moves whenever the image is rebuilt; a digest does not. Pin both:
#   scripts/docker-pin-bases.sh          resolves each tag's digest (crane or docker buildx)
#                                        and writes it into the defaults below
# or for one build:
#   docker build --build-arg BUILDER_IMAGE=rust:1.95-slim-bookworm@sha256:<64 hex digits> \
#                --build-arg RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot@sha256:<...> .
# Where the digests below come from: the machines this was written on reach no image registry,
# so they were not looked up there. They are the digests that several unrelated public projects
# pin these two tags to (the same digest in four or more independent Dockerfiles each, found in
# a search of public repositories in November 2026), i.e. real published manifests of these
# tags, not typed-in values. Run scripts/docker-pin-bases.sh on a machine with registry access
# to confirm them or move to the tags' newest images.
# bookworm = Debian 12, the same glibc (2.36) as the distroless debian12 runtime.
ARG BUILDER_IMAGE=rust:1.95-slim-bookworm@sha256:d7482085ff5b415f84dba5647ae71606650bdef00db7aeb69f4b3d170c3e4082
# cc = base (glibc, CA certificates, tzdata) + libgcc_s, which Rust binaries link for unwinding.
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f

FROM ${BUILDER_IMAGE} AS builder
WORKDIR /src
# gcc and libc6-dev (for zstd-sys) come with the slim Rust image; TLS is rustls, no OpenSSL.
COPY . .
# Cache mounts keep the crate registry and target/ between builds (BuildKit); the binary is
# copied out of the cache so the next stage can see it. --locked: exactly Cargo.lock; only the
# exporter binary (Cargo.toml names the benchmark harnesses in benches/, so they are in the
# context, but they are not built).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin spark-exporter \
 && objcopy --strip-debug target/release/spark-exporter /usr/local/bin/spark-exporter

FROM ${RUNTIME_IMAGE}
# From distroless nonroot: WorkingDir /home/nonroot, PATH and SSL_CERT_FILE (scripts/image-build.sh
# sets the same).
LABEL org.opencontainers.image.title=spark-exporter org.opencontainers.image.licenses=Apache-2.0
COPY --from=builder /usr/local/bin/spark-exporter /usr/local/bin/spark-exporter
# Numeric, so Kubernetes can check runAsNonRoot without resolving a name.
USER 65532:65532
EXPOSE 9809
ENTRYPOINT ["/usr/local/bin/spark-exporter"]
