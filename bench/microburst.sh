#!/usr/bin/env bash
# The micro-burst experiment of issue 6 (see examples/microburst.rs): a 100,000-packet
# burst of realistic traffic on a veth pair into `meerkat run -i` with the ET Open
# ruleset, backlog off and on, kernel rings of 256/1024/4096 frames, 3 runs each.
# Needs root, iproute2, python3 and ../shared (traffic generator and rules).
#   bench/microburst.sh [extra microburst options, e.g. --repeats 5 --worker-ring 32mb]
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared
target=${CARGO_TARGET_DIR:-target}
work="$target/bench"
mkdir -p "$work"
pcap="$work/mix-48.pcap"
[ -s "$pcap" ] || python3 "$shared/tools/trafficgen.py" --seed 1 --size 48 --attack-rate 0.02 -q "$pcap"
rules="$work/et-open.rules"
ls "$shared"/corpus/rules/et-open-2023-05/*.rules | grep -v emerging-deleted.rules | xargs cat > "$rules"
cargo build --release --bin meerkat --example microburst
"$target/release/examples/microburst" --pcap "$pcap" --rules "$rules" "$@"
