#!/usr/bin/env bash
# Bounded soak (issue 28): a continuous-mode stack over a directory fed with a new
# trafficgen pcap every 10 s, with a rule reload, an EVE rotation or a worker restart
# every minute; reports RSS over time per role and checks alerts against the
# undisturbed sum, descriptors, runtime-dir files and /dev/shm (bench/soak.py says how).
#
#   bench/soak.sh [SECONDS] [RULES]     (default 600 s, the bundled sample rules)
#
# Needs ../shared/tools/trafficgen.py and a release build (cargo build --release).
# Extra soak.py options go in SOAK_ARGS, e.g. SOAK_ARGS="--size 40 --workers 4".
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
rules=${2:-sample/sample.rules}
bin=${MEERKAT:-target/release/meerkat}
[ -x "$bin" ] || cargo build --release --locked
# shellcheck disable=SC2086
exec python3 bench/soak.py --meerkat "$bin" --rules "$rules" --out "${SOAK_OUT:-/tmp/meerkat-soak}" \
    --seconds "$secs" ${SOAK_ARGS:-}
