# Writes tests/data/dnp3-objects.dnp3.json from the reference engine's EVE on
# dnp3-objects.pcap: by client port, the `dnp3` records in order, as Suricata 8.0.6
# writes them (key order kept).
#   python3 dnp3_objects_ref.py dnp3-objects.pcap dnp3-objects.dnp3.json
import json, subprocess, sys, tempfile, os
pcap, out = sys.argv[1], sys.argv[2]
ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/tools/suricata-ref')
with tempfile.TemporaryDirectory() as d:
    subprocess.run([ref, '-r', pcap, '-l', d, '-k', 'none',
                    '--set', 'app-layer.protocols.dnp3.enabled=yes',
                    '--set', 'app-layer.protocols.dnp3.max-points=100',
                    '--set', 'outputs.1.eve-log.types.99=dnp3'], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    recs = {}
    with open(os.path.join(d, 'eve.json')) as f:
        for line in f:
            # `-0` (a float Suricata writes so) stays a float, not the integer 0.
            e = json.loads(line, parse_int=lambda s: -0.0 if s == '-0' else int(s))
            if e.get('event_type') == 'dnp3':
                recs.setdefault(str(e['src_port']), []).append(e['dnp3'])
with open(out, 'w') as f:
    json.dump(recs, f)
