#!/usr/bin/env python3
"""The rows tests/bittorrent_dht_eve.rs and tests/telnet_eve.rs compare, from an EVE file
of the reference (Suricata 8.0.6) run on bittorrent-dht-crafted.pcap or
telnet-crafted.pcap with the rules beside it:
    suricata-ref -r X.pcap -S X.rules -l OUT -k none
    dht_telnet_ref_rows.py OUT/eve.json > X-ref.json
rows: one per `bittorrent_dht`, `alert` and `anomaly` event: [pcap_cnt, event_type,
signature_id, tx_id, direction, src_port, dest_port, bittorrent_dht object, anomaly
event, frame type]; flows: [src_port, dest_port, app_proto, tx_cnt, exception
targets]. Both sorted by their JSON text."""
import json, sys

rows, flows = [], []
for line in open(sys.argv[1]):
    e = json.loads(line)
    t = e['event_type']
    if t in ('bittorrent_dht', 'alert', 'anomaly'):
        rows.append([e.get('pcap_cnt'), t, e.get('alert', {}).get('signature_id'), e.get('tx_id'),
                     e.get('direction'), e.get('src_port'), e.get('dest_port'),
                     e.get('bittorrent_dht'), e.get('anomaly', {}).get('event'),
                     e.get('frame', {}).get('type')])
    elif t == 'flow':
        flows.append([e['src_port'], e['dest_port'], e.get('app_proto'), e['flow'].get('tx_cnt'),
                      [x['target'] for x in e['flow'].get('exception_policy', [])]])
key = lambda r: json.dumps(r, separators=(',', ':'))
rows.sort(key=key)
flows.sort(key=key)
out = sys.stdout
out.write('{"rows":[\n' + ',\n'.join(key(r) for r in rows) + '],\n')
out.write('"flows":[\n' + ',\n'.join(key(f) for f in flows) + ']}\n')
