#!/usr/bin/env bash
# The detection engine's figures of issue 3, side by side in one run on the same pcap:
#   - no rules (the baseline of the packet path),
#   - the full ET Open set with Hyperscan (when the build has it),
#   - the full ET Open set with the pure-Rust fingerprint prefilter,
# one worker each, through bench/pipeline.sh (packet-path CPU, medians of --runs).
# Also prints the rule load time (parse + engine build), the engine build alone, and the
# peak RSS of `meerkat rules check --summary` on the ET set (no traffic), for both matchers.
#
# The reference Suricata 8 figures measured on this machine class (../shared/README.md):
#   no rules 685 Mbit/s per CPU-s, 225 MB; ET+Hyperscan 275 Mbit/s, 580 MB, load 27.7 s;
#   ET+Aho-Corasick 141 Mbit/s, 1,032 MB, load 17.5 s.
#
# usage: bench/detect.sh [--size MB] [--runs N] [--binary PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
size=300 runs=3 bin=target/release/meerkat
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --binary) bin=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
et=../shared/corpus/rules/et-open-2023-05
[ -d "$et" ] || { echo "skipping: $et is absent (the ET Open ruleset comes with ../shared)" >&2; exit 0; }
[ -x "$bin" ] || cargo build --release --locked
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every category file except the deleted-rules one, as Suricata's reference run loaded them.
find "$et" -name '*.rules' ! -name '*deleted*' | sort | xargs cat > "$tmp/et.rules"

echo "== ruleset load (meerkat rules check, ET Open, medians of $runs)"
printf '%-12s %10s %10s %10s %8s\n' matcher "load s" "build s" "RSS MB" loaded
for algo in hs ac; do
    for i in $(seq "$runs"); do
        /usr/bin/time -f '%e %M' -o "$tmp/time-$algo-$i" \
            "$bin" -q rules check --summary --set "mpm-algo=$algo" "$tmp/et.rules" > "$tmp/check-$algo-$i" 2>&1 || true
    done
    python3 - "$tmp" "$algo" "$runs" <<'PY'
import re, statistics, sys
tmp, algo, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = [open(f"{tmp}/time-{algo}-{i}").read().split()[-2:] for i in range(1, runs + 1)]
out = open(f"{tmp}/check-{algo}-1").read()
outs = [open(f"{tmp}/check-{algo}-{i}").read() for i in range(1, runs + 1)]
m = re.search(r"(\d+) rules loaded", out)
b = [float(x.group(1)) for o in outs if (x := re.search(r"engine built in ([0-9.]+) s", o))]
print(f"{algo:<12} {statistics.median(float(a) for a, _ in t):>10.2f} "
      f"{statistics.median(b) if b else float('nan'):>10.2f} "
      f"{statistics.median(int(b) for _, b in t) / 1024:>10.0f} {m.group(1) if m else '?':>8}")
PY
done

echo
echo "== packet path, one worker (bench/pipeline.sh)"
echo "-- no rules"
bench/pipeline.sh --size "$size" --runs "$runs" --workers 1 --binary "$bin"
for algo in hs ac; do
    echo "-- ET Open, mpm-algo=$algo"
    bench/pipeline.sh --size "$size" --runs "$runs" --workers 1 --binary "$bin" \
        --rules "$tmp/et.rules" --set "mpm-algo=$algo"
done
