#!/usr/bin/env bash
# Builds fathom's container image without a container daemon: a static fathom binary, FROM
# scratch, assembled with umoci and archived with skopeo (both Debian packages), tagged with
# `fathom --version`. Entrypoint `/fathom serve`, user 65532:65532 (numeric: the image has no
# /etc/passwd). The Kubernetes manifests in deploy/kubernetes run it.
#
#   deploy/build-image.sh [OUT_DIR]       (default: target/image)
#   deploy/build-image.sh --check-static BINARY   (only the check that BINARY needs no library)
#
# Leaves OUT_DIR/oci (an OCI image layout) and OUT_DIR/fathom-VERSION.oci.tar (the same as one
# archive). Push with `skopeo copy oci-archive:OUT_DIR/fathom-VERSION.oci.tar
# docker://REGISTRY/fathom:VERSION`, or load it with `podman load -i`.
# Needs: cargo, umoci, skopeo (apt-get install umoci skopeo).
set -euo pipefail

# Fails unless ldd finds no shared library in $1 (a static or static-pie executable).
check_static() {
    local libs
    libs=$(ldd "$1" 2>&1 || true)
    if grep -q '=>' <<<"$libs" || ! grep -Eq 'statically linked|not a dynamic executable' <<<"$libs"; then
        echo "build-image: $1 is not statically linked: $libs" >&2
        return 1
    fi
}

if [ "${1:-}" = --check-static ]; then
    check_static "${2:?--check-static needs a file}"
    exit
fi

cd "${BASH_SOURCE[0]%/*}/.."
out=${1:-target/image}
triple=x86_64-unknown-linux-gnu
user=65532:65532

for tool in cargo umoci skopeo; do
    command -v "$tool" >/dev/null || { echo "build-image: $tool not found (apt-get install umoci skopeo)" >&2; exit 2; }
done

# glibc, linked statically (the musl target is not needed): the binary needs no file from the
# image beyond itself. No debug info or symbols: the image carries only what runs.
RUSTFLAGS='-C target-feature=+crt-static' CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo build --release --locked --target "$triple" --bin fathom
bin=target/$triple/release/fathom

check_static "$bin"
version=$("$bin" --version | awk '{print $2}')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "build-image: cannot read a version from \`$bin --version\`" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out/oci" "$out/fathom-$version.oci.tar"
mkdir -p "$out"
layout="$out/oci"
image="$layout:$version"
rootless=()
[ "$(id -u)" -eq 0 ] || rootless=(--rootless)

umoci init --layout "$layout"
umoci new --image "$image"
umoci unpack "${rootless[@]}" --image "$image" "$work/bundle"
install -m 0755 "$bin" "$work/bundle/rootfs/fathom"
# An empty /tmp, writable by anyone, for a run without a mounted one.
install -d -m 1777 "$work/bundle/rootfs/tmp"
umoci repack --image "$image" "$work/bundle"
umoci config --image "$image" \
    --config.entrypoint /fathom --config.entrypoint serve \
    --config.user "$user" \
    --config.exposedports 5301/tcp \
    --config.label "org.opencontainers.image.title=fathom" \
    --config.label "org.opencontainers.image.version=$version" \
    --manifest.annotation "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"

# The binary runs from the image's own root file system (root only: chroot).
if [ "$(id -u)" -eq 0 ]; then
    umoci unpack --image "$image" "$work/check" >/dev/null
    chroot "$work/check/rootfs" /fathom --version >/dev/null
fi

skopeo copy --quiet "oci:$image" "oci-archive:$out/fathom-$version.oci.tar:$version"
echo "fathom $version: $layout (tag $version), $out/fathom-$version.oci.tar"
