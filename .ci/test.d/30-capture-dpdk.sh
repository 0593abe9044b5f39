#!/usr/bin/env bash
# The DPDK live-capture tests need the `dpdk` cargo feature, which the workspace test run
# leaves off (the default build needs only cargo).
set -euo pipefail
cargo clippy --locked -p meerkat-capture -p meerkat-supervisor -p meerkat --features dpdk --all-targets -- -D warnings
cargo test --locked -p meerkat --features dpdk --test dpdk
