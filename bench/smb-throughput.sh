#!/usr/bin/env bash
# Throughput on SMB2/DCERPC/Kerberos traffic against HTTP only, Meerkat and the reference
# side by side (../shared/tools/sidebyside: runs interleaved, packet-path CPU with rule
# loading subtracted, one worker), with no rules and with ET Open.
#
#   bench/smb-throughput.sh [--binary MEERKAT] [--runs N] [--size MB]
#
# Pcaps, made once in $MEERKAT_BENCH_DATA (default target/bench-data):
#   smb-mix-MB.pcap  bench/gen-smb-mix.py --size MB (default 200)
#   http-300.pcap    the HTTP flows (TCP 80, 8080, 8000, 8888, VLAN too) of the trafficgen
#                    workload mix-300.pcap (trafficgen.py --seed 1 --size 300
#                    --attack-rate 0.02, as bench/pipeline.sh makes it): 166 MB
#   et-open.rules    ../shared/corpus/rules/et-open-2023-05/*.rules concatenated
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/meerkat runs=3 size=200
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) bin=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
sbs=../shared/tools/sidebyside
[ -x "$sbs" ] || { echo "need $sbs" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin: not built" >&2; exit 2; }
data=${MEERKAT_BENCH_DATA:-target/bench-data}
mkdir -p "$data"
smb=$data/smb-mix-$size.pcap
[ -f "$smb" ] || python3 bench/gen-smb-mix.py --size "$size" "$smb"
mix=$data/mix-300.pcap
if [ ! -f "$mix" ]; then
    python3 ../shared/tools/trafficgen.py --seed 1 --size 300 --attack-rate 0.02 "$mix" >/dev/null
fi
http=$data/http-300.pcap
if [ ! -f "$http" ]; then
    f='tcp port 80 or tcp port 8080 or tcp port 8000 or tcp port 8888'
    tcpdump -r "$mix" -w "$http" "$f or (vlan and ($f))" 2>/dev/null
fi
et=$data/et-open.rules
[ -f "$et" ] || cat ../shared/corpus/rules/et-open-2023-05/*.rules > "$et"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "$smb" "$http"; do
    for r in none "$et"; do
        label="$(basename "$p" .pcap) $( [ "$r" = none ] && echo 'no rules' || echo 'ET Open')"
        "$sbs" --pcap "$p" --rules "$r" --runs "$runs" --workers 1 --meerkat "$bin" \
            --label "$label" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; exit 1; }
        python3 - "$tmp/out" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])
s, m = j["suricata"], j["meerkat"]
print(f"{j['label']:<24} Mbit/s per packet-path CPU-s: meerkat {m['mbit_per_cpu_s']:6.0f} "
      f"({m['packet_path_cpu_s']:.2f} s), suricata {s['mbit_per_cpu_s']:6.0f} "
      f"({s['packet_path_cpu_s']:.2f} s), ratio {j['throughput_ratio']:.2f}; alerts "
      f"{m['alerts']}/{s['alerts']}; RSS {m['rss_mb']:.0f}/{s['rss_mb']:.0f} MB")
PY
    done
done
