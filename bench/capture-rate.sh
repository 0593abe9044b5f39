#!/usr/bin/env bash
# Sustained capture rate, no rules (see examples/capture_rate.rs): the same pcap through
# `-r`, AF_PACKET on a veth pair, and DPDK's net_pcap virtual device; 5 runs each,
# interleaved, medians and ratios to `-r`. Builds meerkat with the dpdk feature (needs
# libdpdk-dev). Needs root, iproute2, python3 and ../shared (traffic generator).
#   bench/capture-rate.sh [extra capture_rate options, e.g. --modes r,veth]
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
target=${CARGO_TARGET_DIR:-target}
work="$target/bench"
mkdir -p "$work"
pcap="$work/mix-48.pcap"
[ -s "$pcap" ] || python3 "$shared/tools/trafficgen.py" --seed 1 --size 48 --attack-rate 0.02 -q "$pcap"
cargo build --release --features dpdk --bin meerkat --example capture_rate
"$target/release/examples/capture_rate" --pcap "$pcap" "$@"
