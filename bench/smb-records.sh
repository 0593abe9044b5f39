#!/usr/bin/env bash
# Checks that the SMB benchmark pcap parses as the reference parses it: runs
# ../shared/tools/suricata-ref (Suricata 8.0.6, stock config: every EVE type) and Meerkat
# on a pcap from bench/gen-smb-mix.py and compares the counts of smb, dcerpc, krb5,
# fileinfo and flow records, overall and per (command, status) / (request, response) /
# (msg_type, error_code).
#
#   bench/smb-records.sh [--binary MEERKAT] [--size MB] [PCAP]
#
# Without PCAP it makes a --size MB (default 5) mix in a temporary directory.
# Meerkat gets its own small config listing the EVE types: with Suricata's stock
# suricata.yaml it writes no smb records, since that file's `- smb:` entry has only
# comments under it (a null value) and Meerkat's key pruning drops such an entry.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/meerkat size=5 pcap=
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) bin=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        -*) echo "unknown argument $1" >&2; exit 2 ;;
        *) pcap=$1; shift ;;
    esac
done
ref=../shared/tools/suricata-ref
[ -x "$ref" ] || { echo "need $ref" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin: not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$pcap" ]; then
    pcap=$tmp/smb-mix.pcap
    python3 bench/gen-smb-mix.py --size "$size" "$pcap"
fi
cat > "$tmp/meerkat.yaml" <<'EOF'
outputs:
  - eve-log:
      enabled: yes
      filetype: regular
      filename: eve.json
      types: [flow, smb, dcerpc, krb5, files]
EOF
mkdir "$tmp/ref" "$tmp/mk"
"$ref" -r "$pcap" -l "$tmp/ref" -k none --runmode single >/dev/null 2>&1 \
    || { echo "suricata-ref failed" >&2; exit 1; }
"$bin" -q run -c "$tmp/meerkat.yaml" -r "$pcap" -S /dev/null -l "$tmp/mk" -k none --workers 1 >/dev/null
python3 - "$tmp/ref/eve.json" "$tmp/mk/eve.json" <<'PY'
import collections, json, sys

def count(path):
    types, detail = collections.Counter(), collections.Counter()
    for line in open(path):
        r = json.loads(line)
        t = r["event_type"]
        if t not in ("smb", "dcerpc", "krb5", "fileinfo", "flow"):
            continue
        types[t] += 1
        if t == "smb":
            detail[(t, r[t].get("command"), r[t].get("status"))] += 1
        elif t == "dcerpc":
            detail[(t, r[t].get("request"), r[t].get("response"))] += 1
        elif t == "krb5":
            detail[(t, r[t].get("msg_type"), r[t].get("error_code"))] += 1
        elif t == "flow":
            detail[(t, r.get("app_proto"), "")] += 1
    return types, detail

(rt, rd), (mt, md) = count(sys.argv[1]), count(sys.argv[2])
print(f"{'record':<10} {'suricata':>9} {'meerkat':>9}")
for t in sorted(set(rt) | set(mt)):
    print(f"{t:<10} {rt[t]:>9} {mt[t]:>9}{'' if rt[t] == mt[t] else '   differs'}")
diff = sorted((k for k in set(rd) | set(md) if rd[k] != md[k]), key=str)
if diff:
    print("differing (type, field, field): suricata meerkat")
    for k in diff:
        print(f"  {k}: {rd[k]} {md[k]}")
PY
