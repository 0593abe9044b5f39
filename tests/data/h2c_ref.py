#!/usr/bin/env python3
"""h2c_ref.py EVE OUT.json: what tests/websocket_eve.rs compares of a run on
h2c-crafted.pcap (Suricata 8.0.6's, from ../shared/tools/suricata-ref -k none -S
h2c-crafted.rules), for the h2c upgrade (client port 41101), prior knowledge on port
8000 (41102) and DNS over HTTP/2 (41103, `doh2`): per client port, the `http` objects
(as sorted JSON texts), the `dns` events' `http` and `dns` objects, the alerts as [sid,
tx_id, direction, app_proto, app_proto_orig] (sid 9, `dns.answer.name`, left out:
Meerkat's DNS has no such keyword), the anomalies' event names and the flow's
[app_proto, app_proto_orig, tx_cnt]."""
import json, sys

def summary(events):
    out = {}
    for e in events:
        t = e["event_type"]
        port = max(e.get("src_port", 0), e.get("dest_port", 0))
        if t == "stats" or port not in (41101, 41102, 41103):
            continue
        s = out.setdefault(str(port), {"http": [], "dns": [], "alerts": [], "anomalies": [], "flow": None})
        if t == "http":
            s["http"].append(json.dumps(e["http"], sort_keys=True))
        elif t == "dns":
            s["dns"].append(json.dumps({"http": e["http"], "dns": e["dns"]}, sort_keys=True))
        elif t == "alert" and e["alert"]["signature_id"] != 9:
            s["alerts"].append([e["alert"]["signature_id"], e.get("tx_id"), e["direction"],
                                e.get("app_proto"), e.get("app_proto_orig")])
        elif t == "anomaly":
            s["anomalies"].append(e["anomaly"]["event"])
        elif t == "flow":
            s["flow"] = [e.get("app_proto"), e.get("app_proto_orig"), e["flow"].get("tx_cnt")]
    for s in out.values():
        s["http"].sort(); s["dns"].sort(); s["alerts"].sort(key=json.dumps); s["anomalies"].sort()
    return out

if __name__ == "__main__":
    json.dump(summary([json.loads(l) for l in open(sys.argv[1])]), open(sys.argv[2], "w"),
              indent=1, sort_keys=True)
