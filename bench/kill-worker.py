#!/usr/bin/env python3
"""Kill -9 of detect-0 mid-run against an undisturbed run, alert by alert (issue 28).

    bench/kill-worker.py MEERKAT PCAP RULES OUTDIR [--set KEY=VALUE ...]

KILLS (default 3) runs with a kill once detect-0 has seen KILL_AT packets (default
300000); prints alerts, lost and extra per run."""
import json, os, subprocess, sys, time, collections, signal, shutil
BIN = sys.argv[1]; PCAP = sys.argv[2]; RULES = sys.argv[3]; OUT = sys.argv[4]
extra = sys.argv[5:]
def keys(path):
    c = collections.Counter()
    for line in open(path):
        e = json.loads(line)
        if e.get("event_type") == "alert":
            c[(e["alert"]["signature_id"], e["timestamp"], e.get("src_ip"), e.get("src_port"), e.get("dest_ip"), e.get("dest_port"))] += 1
    return c
def run(name, kill):
    d = os.path.join(OUT, name); shutil.rmtree(d, ignore_errors=True); os.makedirs(d + "/logs")
    sock = d + "/ctl.sock"
    p = subprocess.Popen([BIN, "-q", "run", "-r", PCAP, "-S", RULES, "-l", d + "/logs", "--workers", "2",
                          "--set", "runtime-dir=" + d + "/rt", "--set", "control.socket=" + sock] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    if kill:
        def find(v, key):
            if isinstance(v, dict):
                for k, x in v.items():
                    if k == key and not isinstance(x, (dict, list)): return x
                    r = find(x, key)
                    if r is not None: return r
            return None
        while p.poll() is None:
            try:
                st = json.loads(subprocess.run([BIN, "ctl", "--socket", sock, "--json", "stats"], capture_output=True, text=True, timeout=5).stdout)
                d0 = st["detect-0"]; c = d0["counters"]
                pk = find(c, "detect.0.packets") or find(c.get("detect", {}).get("0", {}), "packets") or 0
            except Exception:
                time.sleep(0.2); continue
            if int(pk) > kill and d0.get("pid"):
                os.kill(d0["pid"], signal.SIGKILL); killed = (d0["pid"], pk); break
            time.sleep(0.2)
    out, err = p.communicate()
    k = keys(d + "/logs/eve.json")
    print(f"{name}: exit {p.returncode}, alerts {sum(k.values())}, killed {killed}", flush=True)
    for l in err.splitlines():
        if "lost" in l or "died" in l or "replay" in l: print("   ", l[:300])
    return k
base = run("base", 0)
for i in range(int(os.environ.get("KILLS", "3"))):
    got = run(f"kill{i}", int(os.environ.get("KILL_AT", "300000")))
    lost = sum((base - got).values()); extra_ = sum((got - base).values())
    print(f"   lost {lost}, extra {extra_}", flush=True)
