#!/usr/bin/env bash
# The deploy check's tools (deploy/check.sh): podman (with runc, as crun fails on this
# machine's cgroup layout), buildah, debootstrap for the local base image, Debian's
# docker-compose talking to podman's socket, and kubernetes-validate (PyPI, ships the
# Kubernetes schemas) for the manifests. Idempotent; configures podman for this machine
# and starts its API socket if it is not running.
set -euo pipefail
need=()
for c in podman:podman buildah:buildah runc:runc debootstrap:debootstrap docker-compose:docker-compose; do
    command -v "${c%%:*}" >/dev/null || need+=("${c#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${need[@]}" uidmap slirp4netns fuse-overlayfs iptables netavark aardvark-dns >/dev/null
fi
command -v kubernetes-validate >/dev/null || python3 -m pip install -q kubernetes-validate

# No registry is reachable and crun fails here; the default ulimits are refused.
conf=/etc/containers/containers.conf
if ! grep -q 'runtime = "runc"' "$conf" 2>/dev/null; then
    mkdir -p /etc/containers
    cat >"$conf" <<'CONF'
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]

[engine]
runtime = "runc"
CONF
fi

# podman's Docker-compatible API for docker-compose.
sock=/run/podman/podman.sock
if ! curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
    mkdir -p /run/podman
    # Started from /: the service outlives this checkout, and conmon fails every later
    # container start ("write child: broken pipe") once its working directory is deleted.
    (cd / && nohup podman system service --time=0 "unix://$sock" >/var/log/podman-service.log 2>&1 &)
    for _ in $(seq 100); do
        curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    curl -sf --unix-socket "$sock" http://d/_ping >/dev/null || {
        echo "podman API socket did not come up; see /var/log/podman-service.log" >&2
        exit 1
    }
fi
