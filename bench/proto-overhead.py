#!/usr/bin/env python3
"""What a group of application protocols costs on a workload: Meerkat with every protocol
on (the default) against Meerkat with the group's protocols off
(`--set app-layer.protocols.<name>.enabled=no`), measured two ways.

    bench/proto-overhead.py [--pcap FILE] [--rules FILE|none] [--runs N]
        [--binary MEERKAT] [--inproc INPROC] [--callgrind-pcap FILE] [--no-callgrind]
        [--no-timing] GROUP...

GROUP is `smb` (smb, dcerpc, krb5: issue 18), `mail` (smtp, pop3, imap, ftp, ftp-data,
tftp: issue 19) or a comma list of protocol names. The pcap defaults to the trafficgen
workload bench/pipeline.sh uses (target/bench-data/mix-300.pcap, made by
`../shared/tools/trafficgen.py --seed 1 --size 300 --attack-rate 0.02`).

1. Timing: `meerkat run --workers 1 -k none` with --summary-json, the configurations
   interleaved (run i of every configuration, in a rotating order, before run i+1 of any),
   throughput = frame Mbit / packet-path CPU-s (every role's CPU minus rule loading).
   Prints each run, the medians and the median ratio.
2. Instruction counts: bench/callgrind.sh (detect/examples/inproc under callgrind, rule
   loading left out) once per configuration; deterministic for one binary and input.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

GROUPS = {
    "smb": ["smb", "dcerpc", "krb5"],
    "mail": ["smtp", "pop3", "imap", "ftp", "ftp-data", "tftp"],
}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sets_for(protos):
    return [f"app-layer.protocols.{p}.enabled=no" for p in protos]


def timing_run(a, sets, tmp, tag):
    log = tempfile.mkdtemp(dir=tmp, prefix=tag)
    summ = os.path.join(log, "summary.json")
    argv = [a.binary, "-q", "run", "-k", "none", "-r", a.pcap, "-S", a.rules_file,
            "-l", log, "--workers", "1", "--summary-json", summ,
            "--set", "vars.address-groups.HOME_NET=any",
            "--set", "vars.address-groups.EXTERNAL_NET=any"]
    for s in sets:
        argv += ["--set", s]
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"meerkat failed: {' '.join(argv)}\n{p.stderr[-2000:]}")
    s = json.load(open(summ))
    subprocess.run(["rm", "-rf", log])
    cpu = s["packet_path_cpu_s"]
    return dict(mbit=s["bytes"] * 8 / 1e6 / cpu, cpu=cpu, alerts=s["alerts"],
                packets=s["packets"], load=s["rules_load_s"])


def callgrind(a, sets):
    argv = [os.path.join(HERE, "callgrind.sh"), "--bin", a.inproc, a.callgrind_pcap]
    if a.rules != "none":
        argv.append(a.rules)
    argv.append("--")
    for s in sets:
        argv += ["--set", s]
    p = subprocess.run(argv, capture_output=True, text=True)
    m = re.search(r"^Ir (\d+)", p.stdout, re.M)
    if p.returncode != 0 or not m:
        sys.exit(f"callgrind failed: {' '.join(argv)}\n{p.stdout[-1000:]}{p.stderr[-2000:]}")
    first = p.stdout.splitlines()[0] if p.stdout else ""
    return int(m.group(1)), first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("groups", nargs="+")
    ap.add_argument("--pcap", default=os.path.join(ROOT, "target/bench-data/mix-300.pcap"))
    ap.add_argument("--rules", default="none")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/meerkat"))
    ap.add_argument("--inproc", default=os.path.join(ROOT, "target/release/examples/inproc"))
    ap.add_argument("--callgrind-pcap", help="pcap for the callgrind runs (default: --pcap)")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--no-timing", action="store_true")
    a = ap.parse_args()
    a.callgrind_pcap = a.callgrind_pcap or a.pcap
    if not os.path.isfile(a.pcap):
        sys.exit(f"{a.pcap}: no such file (bench/pipeline.sh makes the trafficgen one)")
    configs = [("all on", [])]
    for g in a.groups:
        protos = GROUPS.get(g, g.split(","))
        configs.append((f"{g} off ({','.join(protos)})", sets_for(protos)))

    with tempfile.TemporaryDirectory() as tmp:
        a.rules_file = a.rules
        if a.rules == "none":
            a.rules_file = os.path.join(tmp, "empty.rules")
            open(a.rules_file, "w").close()
        print(f"pcap {a.pcap}, rules {a.rules}, binary {a.binary}")
        if not a.no_timing:
            res = {name: [] for name, _ in configs}
            for i in range(a.runs):
                order = configs[i % len(configs):] + configs[:i % len(configs)]
                for name, sets in order:
                    r = timing_run(a, sets, tmp, f"r{i}-")
                    res[name].append(r)
                    print(f"  run {i + 1} {name:<45} {r['mbit']:7.1f} Mbit/cpu-s  cpu {r['cpu']:6.2f} s"
                          f"  load {r['load']:5.2f} s  alerts {r['alerts']}", flush=True)
            on = res[configs[0][0]]
            base = statistics.median(r["mbit"] for r in on)
            print(f"timing, {a.runs} interleaved runs each, medians (workers 1); overhead = the CPU "
                  "all-on spends per bit over this configuration's (median of the per-round ratios):")
            for name, _ in configs:
                m = statistics.median(r["mbit"] for r in res[name])
                c = statistics.median(r["cpu"] for r in res[name])
                extra = ""
                if res[name] is not on:
                    paired = statistics.median(x["mbit"] / y["mbit"] for x, y in zip(res[name], on))
                    extra = f"  overhead {100 * (m / base - 1):+.1f}% (paired {100 * (paired - 1):+.1f}%)"
                print(f"  {name:<45} {m:7.1f} Mbit/cpu-s  cpu {c:6.2f} s{extra}")
        if not a.no_callgrind:
            print(f"instructions (callgrind, inproc {a.inproc}, pcap {a.callgrind_pcap}):")
            base = None
            for name, sets in configs:
                ir, line = callgrind(a, sets)
                base = base or ir
                print(f"  {name:<45} Ir {ir:>15,}  overhead {100 * (base / ir - 1):+.2f}%  ({line})",
                      flush=True)


if __name__ == "__main__":
    main()
