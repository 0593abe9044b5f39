#!/usr/bin/env python3
"""ikev2_ref_rows.py EVE OUT.json: what tests/ike_eve.rs compares of an EVE file on
ikev2-crafted.pcap, one row per line: the `ike` records, the alerts and the app-layer
anomalies as [pcap_cnt, event_type, sid, tx_id, direction, src_port, dest_port, ike
object, anomaly event] (an alert's `ike` object is "record" when it is the record's of
its packet and port, as it always is for IKEv2), then the flows as [src_port,
dest_port, app_proto, tx_cnt]; rows sorted."""
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
recs = {(e['pcap_cnt'], e['src_port']): e['ike'] for e in ev if e['event_type'] == 'ike'}
rows, flows = [], []
for e in ev:
    t = e['event_type']
    if t in ('ike', 'alert', 'anomaly'):
        ike = e.get('ike')
        if t == 'alert' and ike is not None and recs.get((e['pcap_cnt'], e['src_port'])) == ike:
            ike = 'record'
        rows.append([e.get('pcap_cnt'), t, e.get('alert', {}).get('signature_id'), e.get('tx_id'),
                     e.get('direction'), e['src_port'], e['dest_port'], ike,
                     e.get('anomaly', {}).get('event')])
    elif t == 'flow':
        flows.append([e['src_port'], e['dest_port'], e.get('app_proto'), e['flow'].get('tx_cnt')])
key = lambda r: json.dumps(r, sort_keys=True)
with open(sys.argv[2], 'w') as f:
    f.write('{"rows": [\n')
    f.write(',\n'.join(json.dumps(r, separators=(',', ':')) for r in sorted(rows, key=key)))
    f.write('\n],\n"flows": [\n')
    f.write(',\n'.join(json.dumps(r, separators=(',', ':')) for r in sorted(flows, key=key)))
    f.write('\n]}\n')
