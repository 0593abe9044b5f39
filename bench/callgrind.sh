#!/usr/bin/env bash
# Instruction count of the detect worker's packet path (rule loading left out), for
# figures that must be stable on a noisy machine: runs `detect/examples/inproc` under
# callgrind with instrumentation off until the engine is built, then on for the whole
# capture, and prints the total instructions (Ir).
#
#   bench/callgrind.sh [--bin INPROC] [--out FILE] PCAP [RULES...] [-- INPROC-ARGS...]
#
# --out FILE keeps the profile (for callgrind_annotate FILE).
#
# INPROC defaults to target/release/examples/inproc (`cargo build --release -p
# meerkat-detect --example inproc`). Compare two builds by running this once on each,
# same pcap and rules: the count is the same from run to run for one binary and input,
# whatever else the machine does. Typical: PCAP = ../shared/corpus/traffic/mix-small.pcap,
# RULES = an ET Open concatenation (or none: the no-rules packet path). A config:
# `-- --config bench/configs/files-sha256.yaml` (inproc's --config).
#
# Caveat: valgrind's CPU has no SHA extensions, so sha2 runs its portable code under
# callgrind (sha2::sha256::soft::compress) where the real CPU uses SHA-NI: the count
# overstates hashing. On mix-small, files-sha256 counts 1138M Ir against 443M for
# files-off, 673M of them in soft::compress; without it, +4.9%.
set -euo pipefail
bin=target/release/examples/inproc
keep=
while :; do
    case "${1:-}" in
        --bin) bin=$2; shift 2 ;;
        --out) keep=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--bin INPROC] [--out FILE] PCAP [RULES...] [-- ARGS...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin: not built (cargo build --release -p meerkat-detect --example inproc)" >&2; exit 2; }
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
args+=("$@")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gate=$work/gate
out=$work/callgrind.out
INPROC_GATE=$gate valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" \
    "$bin" "${args[@]}" >"$work/stdout" 2>"$work/stderr" &
pid=$!
# Instrumentation goes on once the engine is built ("engine ready"), then the run goes on.
for _ in $(seq 6000); do
    grep -q 'engine ready' "$work/stderr" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
grep -q 'engine ready' "$work/stderr" || { cat "$work/stderr" >&2; wait $pid || true; exit 1; }
callgrind_control -i on $pid >/dev/null
touch "$gate"
wait $pid
cat "$work/stdout"
ir=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
[ -z "$keep" ] || cp "$out" "$keep"
echo "Ir $ir"
