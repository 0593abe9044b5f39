#!/usr/bin/env bash
# Bounded fuzz runs: each target that takes an outside input the whole stack trusts
# (packets of every link type, pcap/pcapng files, rules, config, the events a producer
# sends the eve-writer, control requests) and the most exposed protocol parsers run for
# FUZZ_SECONDS each (default 15) from their seed corpora. A crash fails the run and
# leaves its input in $FUZZ_DIR (printed). The seeds themselves are replayed by the
# workspace tests (`fuzz_seeds`); this is the coverage-guided part, on stable
# (`-s none`). FUZZ_SECONDS=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"
secs=${FUZZ_SECONDS:-15}
if [ "$secs" = 0 ]; then
    echo "fuzz runs skipped (FUZZ_SECONDS=0)"
    exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz runs skipped: cargo-fuzz is not installed (.ci/setup.d/60-fuzz.sh installs it)"
    exit 0
fi
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/../target/fuzz}
# Corpora, logs and crash inputs: FUZZ_DIR (kept), else a directory of this run (removed
# when nothing failed).
if [ -n "${FUZZ_DIR:-}" ]; then
    dir=$FUZZ_DIR
    ours=
else
    dir=$(mktemp -d /tmp/meerkat-fuzz.XXXXXX)
    ours=1
fi
# target:seed directory (relative to the repository root)
targets=(
    decode:wire/seeds/decode
    pcap:wire/seeds/pcap
    rules:detect/seeds/rules
    config:config/seeds/config
    events:eve-writer/seeds/events
    control:supervisor/seeds/control
    http:app/src/http/seeds/http
    tls:app/src/tls/seeds/tls
    dns_udp:app/src/dns/seeds/dns_udp
)
# `cargo fuzz run` builds each target first (the dependencies once, for all).
failed=()
for t in "${targets[@]}"; do
    name=${t%%:*}
    seeds=../${t#*:}
    corpus=$dir/corpus-$name
    mkdir -p "$corpus"
    printf '%-8s %ss from %s: ' "$name" "$secs" "${t#*:}"
    if cargo fuzz run -s none "$name" "$corpus" "$seeds" -- \
        -max_total_time="$secs" -rss_limit_mb=4096 -timeout=30 \
        -artifact_prefix="$dir/$name-" >"$dir/$name.log" 2>&1; then
        grep -o 'Done [0-9]* runs' "$dir/$name.log" | tail -n 1 || echo done
    else
        echo "FAILED (log and input in $dir)"
        tail -n 30 "$dir/$name.log"
        failed+=("$name")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that failed: ${failed[*]}"
    exit 1
fi
[ -z "$ours" ] || rm -rf "$dir"
