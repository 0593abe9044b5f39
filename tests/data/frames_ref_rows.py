#!/usr/bin/env python3
"""frames-ref.json: the alerts on Telnet, LDAP and mDNS frames, and on the generic
`stream` frame of RFB and NFS (stream-frames.pcap, nfs-frames.pcap), the reference
(Suricata 8.0.6) writes, which tests/frames_eve.rs compares Meerkat's with. For each
case (pcap, rules): suricata-ref -r PCAP -S RULES -l OUT -k none, then one row per
alert: [signature_id, the flow's two ports sorted, the `frame` object, tx_id].
Usage: frames_ref_rows.py SURICATA-REF > frames-ref.json (run in tests/data)."""
import json, subprocess, sys, tempfile

CASES = {
    "telnet": ("telnet-crafted.pcap", "frames-telnet.rules"),
    "ldap": ("ldap/ldap.pcap", "frames-ldap.rules"),
    "mdns": ("mdns-crafted.pcap", "frames-mdns.rules"),
    "rfb-stream": ("stream-frames.pcap", "frames-stream.rules"),
    "nfs-stream": ("nfs-frames.pcap", "frames-stream.rules"),
}
out = {}
for name, (pcap, rules) in CASES.items():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.argv[1], "-r", pcap, "-S", rules, "-l", d, "-k", "none"],
                       check=True, capture_output=True)
        rows = []
        for line in open(d + "/eve.json"):
            e = json.loads(line)
            if e["event_type"] == "alert":
                rows.append([e["alert"]["signature_id"], sorted([e["src_port"], e["dest_port"]]),
                             e.get("frame"), e.get("tx_id")])
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
    out[name] = rows
json.dump(out, sys.stdout, indent=0, sort_keys=True)
sys.stdout.write("\n")
