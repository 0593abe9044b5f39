#!/usr/bin/env python3
"""eve_ref_records.py EVE PROTO OUT.json [--alert-objects]: the PROTO records (with
pcap_cnt and ports) and the alerts (pcap_cnt, sid, direction, tx_id) of a reference EVE
file, as the crafted tests (tests/snmp_eve.rs, tests/ike_eve.rs, tests/ntp_eve.rs)
compare them. With --alert-objects each alert also carries its PROTO object (null when
the alert has none), for protocols that log no records of their own (NTP)."""
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
p=sys.argv[2]
objs=len(sys.argv)>4 and sys.argv[4]=="--alert-objects"
recs=[{"pcap_cnt":e["pcap_cnt"],"src_port":e["src_port"],"dest_port":e["dest_port"],p:e[p]} for e in ev if e["event_type"]==p]
def alert(e):
    a=[e["pcap_cnt"],e["alert"]["signature_id"],e["direction"],e.get("tx_id")]
    return a+[e.get(p)] if objs else a
al=sorted((alert(e) for e in ev if e["event_type"]=="alert"),key=lambda a:(a[0],a[1]))
json.dump({p:recs,"alerts":al},open(sys.argv[3],'w'),indent=1)
