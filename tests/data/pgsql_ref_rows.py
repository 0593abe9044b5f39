#!/usr/bin/env python3
"""pgsql_ref_rows.py EVE OUT.json: what tests/pgsql_eve.rs compares of an EVE file on
pgsql-crafted.pcap (ports are the client's, whichever way an event was written):
  records:   [port, pgsql object], sorted by port and the object's tx_id;
  alerts:    [port, sid, direction, tx_id], sorted;
  anomalies: [port, app_proto, event, tx_id] of the app-layer anomalies, sorted;
  flows:     [port, app_proto, app_proto_orig, app_layer_error], sorted."""
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
def port(e):
    return e['src_port'] if e['dest_port'] == 5432 else e['dest_port']
recs = sorted(([port(e), e['pgsql']] for e in ev if e['event_type'] == 'pgsql'),
              key=lambda r: (r[0], r[1]['tx_id']))
alerts = sorted([port(e), e['alert']['signature_id'], e['direction'], e.get('tx_id')]
                for e in ev if e['event_type'] == 'alert')
anom = sorted([port(e), e['anomaly'].get('app_proto'), e['anomaly']['event'], e.get('tx_id', -1)]
              for e in ev if e['event_type'] == 'anomaly' and e['anomaly']['type'] == 'applayer')
flows = sorted([port(e), e.get('app_proto'), e.get('app_proto_orig'),
                any(x.get('target') == 'app_layer_error' for x in e['flow'].get('exception_policy', []))]
               for e in ev if e['event_type'] == 'flow')
with open(sys.argv[2], 'w') as f:
    f.write('{\n')
    for i, (k, v) in enumerate([('records', recs), ('alerts', alerts), ('anomalies', anom), ('flows', flows)]):
        f.write('"%s": [\n' % k)
        f.write(',\n'.join(json.dumps(r, separators=(',', ':')) for r in v))
        f.write('\n]%s\n' % (',' if i < 3 else ''))
    f.write('}\n')
