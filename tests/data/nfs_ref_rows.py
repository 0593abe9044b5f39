#!/usr/bin/env python3
"""nfs_ref_rows.py EVE OUT.json: what tests/nfs_eve.rs compares of an EVE file on
nfs-crafted.pcap, one row per line: the `nfs` records, `fileinfo` events, alerts and
app-layer anomalies as [pcap_cnt, event_type, sid, tx_id, direction, src_port,
dest_port, rpc object, nfs object, fileinfo object, anomaly event], then the flows
as [src_port, dest_port, proto, app_proto, tx_cnt, exception policy targets]; rows
sorted."""
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
rows, flows = [], []
for e in ev:
    t = e['event_type']
    if t in ('nfs', 'fileinfo', 'alert', 'anomaly'):
        rows.append([e.get('pcap_cnt'), t, e.get('alert', {}).get('signature_id'), e.get('tx_id'),
                     e.get('direction'), e['src_port'], e['dest_port'], e.get('rpc'), e.get('nfs'),
                     e.get('fileinfo'), e.get('anomaly', {}).get('event')])
    elif t == 'flow':
        flows.append([e['src_port'], e['dest_port'], e['proto'], e.get('app_proto'), e['flow'].get('tx_cnt'),
                      [p['target'] for p in e['flow'].get('exception_policy', [])]])
key = lambda r: json.dumps(r, sort_keys=True)
with open(sys.argv[2], 'w') as f:
    f.write('{"rows": [\n')
    f.write(',\n'.join(json.dumps(r, separators=(',', ':')) for r in sorted(rows, key=key)))
    f.write('\n],\n"flows": [\n')
    f.write(',\n'.join(json.dumps(r, separators=(',', ':')) for r in sorted(flows, key=key)))
    f.write('\n]}\n')
