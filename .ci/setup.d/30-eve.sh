#!/usr/bin/env bash
# The eve-writer's tests: redis-server and nats-server (the redis and NATS JetStream
# outputs are tested against real ones, which the tests start themselves on a free
# loopback port / Unix socket) and strace (write(2) counts are cross-checked). Idempotent.
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v strace >/dev/null || need+=(strace)
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || need+=(nats-server)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# Debian's packages may start a system redis on 6379 (and nats-server has a unit too);
# the tests do not use them.
