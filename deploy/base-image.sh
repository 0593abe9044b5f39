#!/usr/bin/env bash
# Builds a local Debian bookworm base image (localhost/debian-base:bookworm) with
# debootstrap + podman import, for machines that reach Debian's package mirror but no
# container registry. Skipped when the image already exists (it is built once per machine).
#
#   deploy/base-image.sh [IMAGE]
set -euo pipefail
image=${1:-localhost/debian-base:bookworm}
if podman image exists "$image"; then
    echo "base image $image exists"
    exit 0
fi
# The mirror apt uses here (deb822 or one-line sources), else Debian's default.
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | grep -v security | head -n1 || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
rootfs=$(mktemp -d /var/tmp/meerkat-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "debootstrap bookworm from $mirror"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
    tail -n 30 "$rootfs.log" >&2
    exit 1
}
rm -f "$rootfs.log"
# Like the slim images: no apt lists or caches in the layer.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "base image $image built"
