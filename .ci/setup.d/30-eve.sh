#!/usr/bin/env bash
# The eve-writer's tests: redis-server (the redis output is tested against a real one,
# which the tests start themselves on a free port / Unix socket) and strace (write(2)
# counts are cross-checked). Idempotent.
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# Debian's package may start a system redis on 6379; the tests do not use it.
