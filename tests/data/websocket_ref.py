#!/usr/bin/env python3
"""websocket_ref.py EVE OUT.json: what tests/websocket_eve.rs compares of a run on
websocket-crafted.pcap or websocket-deflate.pcap (Suricata 8.0.6's, from
../shared/tools/suricata-ref -k none -S websocket-crafted.rules, or
websocket-deflate.rules): per client port, the `websocket` objects (sorted), the
alerts as [sid, tx_id, direction, app_proto, app_proto_orig, app_proto_expected,
flushed] (sorted), the `http` records as [url, status, flushed], and the flow's
[app_proto, app_proto_orig, app_proto_expected, tx_cnt]. `flushed`: written on the
pseudo packets of a protocol change (`stream (detect/log)`). Port 41003 (frames past
max-payload-size) is left out: the reference parses the bytes it should skip as
frames (1,170 of them), which Meerkat does not copy."""
import json, sys

def summary(events):
    out = {}
    for e in events:
        t = e["event_type"]
        if t == "stats":
            continue
        port = max(e["src_port"], e["dest_port"])
        if port == 41003:
            continue
        s = out.setdefault(str(port), {"websocket": [], "alerts": [], "http": [], "flow": None})
        flushed = e.get("pkt_src") == "stream (detect/log)"
        if t == "websocket":
            s["websocket"].append(json.dumps(e["websocket"], sort_keys=True))
        elif t == "alert":
            s["alerts"].append([e["alert"]["signature_id"], e.get("tx_id"), e["direction"],
                                e.get("app_proto"), e.get("app_proto_orig"),
                                e.get("app_proto_expected"), flushed])
        elif t == "http":
            s["http"].append([e["http"].get("url"), e["http"].get("status"), flushed])
        elif t == "flow":
            s["flow"] = [e.get("app_proto"), e.get("app_proto_orig"),
                         e.get("app_proto_expected"), e["flow"].get("tx_cnt")]
    for s in out.values():
        s["websocket"].sort(); s["alerts"].sort(key=json.dumps); s["http"].sort(key=json.dumps)
    return out

if __name__ == "__main__":
    ev = [json.loads(l) for l in open(sys.argv[1])]
    json.dump(summary(ev), open(sys.argv[2], "w"), indent=1, sort_keys=True)
