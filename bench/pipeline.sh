#!/usr/bin/env bash
# Throughput of the whole pipeline (capture -> rings -> detect -> gRPC -> eve-writer) on a
# trafficgen pcap, measured the way the reference Suricata figures in ../shared/README.md
# were: packet-path CPU (every role's CPU minus rule loading), medians of several runs.
#
# usage: bench/pipeline.sh [--size MB] [--runs N] [--workers "1 2"] [--rules FILE|none]
#        [--binary PATH] [--config FILE] [--set KEY=VAL]... [--pcap FILE]
# The pcap is made once with ../shared/tools/trafficgen.py --seed 1 --size MB
# --attack-rate 0.02 and cached in $MEERKAT_BENCH_DATA (default target/bench-data);
# `--pcap FILE` measures FILE instead (e.g. bench/gen-smb-mix.py's; --size is then unused).
set -euo pipefail
cd "$(dirname "$0")/.."
size=300 runs=3 workers="1 2" rules=none bin=target/release/meerkat pcap=
sets=()
config=()
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --rules) rules=$2; shift 2 ;;
        --binary) bin=$2; shift 2 ;;
        --set) sets+=(--set "$2"); shift 2 ;;
        --config) config=(-c "$2"); shift 2 ;;
        --pcap) pcap=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
gen=../shared/tools/trafficgen.py
data=${MEERKAT_BENCH_DATA:-target/bench-data}
mkdir -p "$data"
if [ -n "$pcap" ]; then
    [ -f "$pcap" ] || { echo "$pcap: no such file" >&2; exit 1; }
else
    pcap=$data/mix-$size.pcap
fi
if [ ! -f "$pcap" ]; then
    [ -f "$gen" ] || { echo "need $gen to make the pcap (or put one at $pcap)" >&2; exit 1; }
    echo "making $pcap ..." >&2
    python3 "$gen" --seed 1 --size "$size" --attack-rate 0.02 "$pcap" >/dev/null
fi
[ -x "$bin" ] || cargo build --release --locked
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$rules" = none ]; then
    rules_file=$tmp/empty.rules
    : > "$rules_file"
else
    rules_file=$rules
fi
printf '%-8s %10s %12s %10s %10s %9s %9s %8s %8s\n' workers packets "Mbit/cpu-s" "kpps/cpu-s" "cpu s" "wall s" "load s" "RSS MB" alerts
for w in $workers; do
    for i in $(seq "$runs"); do
        rm -rf "$tmp/logs"; mkdir -p "$tmp/logs"
        "$bin" -q run "${config[@]}" -r "$pcap" -S "$rules_file" -l "$tmp/logs" -k none --workers "$w" \
            --summary-json "$tmp/s-$w-$i.json" "${sets[@]}" >/dev/null 2>"$tmp/err" \
            || { cat "$tmp/err" >&2; exit 1; }
    done
    python3 - "$tmp" "$w" "$runs" <<'PY'
import json, statistics, sys
tmp, w, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = [json.load(open(f"{tmp}/s-{w}-{i}.json")) for i in range(1, runs + 1)]
med = lambda k: statistics.median(x[k] for x in s)
cpu = med("packet_path_cpu_s")
mbit = statistics.median(x["bytes"] * 8 / 1e6 / x["packet_path_cpu_s"] for x in s)
kpps = statistics.median(x["packets"] / 1e3 / x["packet_path_cpu_s"] for x in s)
rss = statistics.median(x["total_max_rss_kb"] for x in s) / 1024
print(f"{w:<8} {s[0]['packets']:>10} {mbit:>12.0f} {kpps:>10.0f} {cpu:>10.2f} {med('wall_s'):>9.2f} {med('rules_load_s'):>9.2f} {rss:>8.0f} {s[0]['alerts']:>8}")
for x in s:
    print("   run: cpu %.2f s, wall %.2f s, roles %s" % (x["packet_path_cpu_s"], x["wall_s"],
          ", ".join(f"{r['role']} {r['cpu_s']:.2f}s/{r['max_rss_kb']//1024}MB" for r in x["roles"])), file=sys.stderr)
PY
done
