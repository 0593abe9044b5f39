#!/usr/bin/env python3
"""eve_ref_records.py EVE PROTO OUT.json: the PROTO records (with pcap_cnt and ports) and
the alerts (pcap_cnt, sid, direction, tx_id) of a reference EVE file, as the crafted
tests (tests/snmp_eve.rs, tests/ike_eve.rs) compare them."""
import json,sys
ev=[json.loads(l) for l in open(sys.argv[1])]
p=sys.argv[2]
recs=[{"pcap_cnt":e["pcap_cnt"],"src_port":e["src_port"],"dest_port":e["dest_port"],p:e[p]} for e in ev if e["event_type"]==p]
al=sorted([e["pcap_cnt"],e["alert"]["signature_id"],e["direction"],e.get("tx_id")] for e in ev if e["event_type"]=="alert")
json.dump({p:recs,"alerts":al},open(sys.argv[3],'w'),indent=1)
