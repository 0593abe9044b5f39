#!/usr/bin/env python3
"""Writes nfs-frames-ref.json: the alerts of the reference (Suricata 8.0.6) on NFS
frames, for each (pcap, rules) case of tests/nfs_eve.rs, as rows [signature, client
port, frame object without payload_printable, tx_id], sorted.
Usage: nfs_frames_rows.py SURICATA OUT.json (run from tests/data)."""
import json, subprocess, sys, tempfile, os

CASES = [
    ("nfs-crafted.pcap", "nfs-frames.rules"),
    ("nfs-frames.pcap", "nfs-frames.rules"),
    ("nfs-crafted.pcap", "nfs-frames-some.rules"),
    ("nfs-frames.pcap", "nfs-frames-some.rules"),
]

def rows(eve):
    out = []
    for line in open(eve):
        e = json.loads(line)
        if e["event_type"] != "alert":
            continue
        f = dict(e.get("frame") or {})
        f.pop("payload_printable", None)
        out.append(json.dumps([e["alert"]["signature_id"], min(e["src_port"], e["dest_port"]), f, e.get("tx_id")], sort_keys=True, separators=(",", ":")))
    return sorted(out)

cases = []
for pcap, rules in CASES:
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.argv[1], "-r", pcap, "-S", rules, "-l", d, "-k", "none"], check=True, capture_output=True)
        cases.append({"pcap": pcap, "rules": rules, "rows": [json.loads(r) for r in rows(os.path.join(d, "eve.json"))]})
json.dump({"cases": cases}, open(sys.argv[2], "w"), indent=0, sort_keys=True)
