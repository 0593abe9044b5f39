#!/usr/bin/env python3
"""Bounded soak of a continuous-mode stack (issue 28); see bench/soak.sh for the defaults.

    bench/soak.py --meerkat BIN --rules FILE --out DIR [--seconds 600] [--every 60]
                  [--feed-every 10] [--size 20] [--workers 2] [--attack-rate 0.02]
                  [--rate 5] [--warmup 0.5] [--set KEY=VALUE ...]

Runs `meerkat run -r DIR --pcap-file-continuous` over a directory it feeds with a new
trafficgen pcap every FEED_EVERY seconds (each its own seed, each starting where the
previous one ended, so that time only goes forward; at 5 Mbit/s a 20 MB pcap spans about
32 s of packet time, so flows reach their idle timeouts within the run), and every EVERY
seconds, in turn:
reloads the rules (`meerkat ctl reload-rules`), rotates eve.json (rename, then SIGHUP to
the supervisor), restarts a detect worker (`meerkat ctl restart-worker`, alternating). Every
5 s it samples each role's RSS and open descriptors (by role name: a restarted worker's
new process continues its line) and the runtime directory's files.

At the end (SIGTERM, drain) it checks:
- the alerts of every EVE file (rotated ones included) equal, one by one (signature,
  timestamp, addresses and ports), the sum of each fed pcap run alone with the same
  rules and config;
- each role's private RSS (RssAnon) after warm-up (WARMUP, half the run) grows by less
  than 10% or 4 MB (all of RSS is printed too: it also counts the rings' pages, which fill up
  to the ring size);
- descriptors per role and runtime-directory files are the same at the end as after
  warm-up, and nothing the stack made is left in /dev/shm.
It prints a table of RSS over time per role and exits 1 when a check fails.
"""
import argparse, collections, json, os, shutil, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAFFICGEN = os.path.join(HERE, "..", "..", "shared", "tools", "trafficgen.py")


def args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--meerkat", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--every", type=int, default=60, help="seconds between disturbances")
    p.add_argument("--feed-every", type=int, default=10)
    p.add_argument("--size", type=int, default=20, help="MB per fed pcap")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--attack-rate", type=float, default=0.02)
    p.add_argument("--rate", type=float, default=5,
                   help="trafficgen link Mbit/s: how much packet time a pcap spans (flows "
                        "end on idle timeouts of packet time, up to 600 s)")
    p.add_argument("--warmup", type=float, default=0.5,
                   help="fraction of the run before memory must be flat")
    p.add_argument("--trafficgen", default=TRAFFICGEN)
    p.add_argument("--set", action="append", default=[], dest="sets")
    return p.parse_args()


def alerts(paths):
    c = collections.Counter()
    for path in paths:
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                if e.get("event_type") == "alert":
                    c[(e["alert"]["signature_id"], e["timestamp"], e.get("src_ip"),
                       e.get("src_port"), e.get("dest_ip"), e.get("dest_port"))] += 1
    return c


def sets(a):
    out = []
    for s in a.sets:
        out += ["--set", s]
    return out


def pcap(a, i, start):
    """The i-th fed pcap (seed i+1), starting at `start` (epoch seconds); its last
    timestamp."""
    path = os.path.join(a.out, "pcaps", f"soak-{i:04}.pcap")
    if not os.path.exists(path):
        subprocess.run([sys.executable, a.trafficgen, "-q", "--seed", str(i + 1), "--size",
                        str(a.size), "--attack-rate", str(a.attack_rate), "--rate",
                        str(a.rate), "--start",
                        str(start), path], check=True)
    return path


def last_ts(path):
    """The last packet's timestamp of a classic pcap (seconds), and its packet count."""
    import struct
    with open(path, "rb") as f:
        magic = f.read(24)[:4]
        end = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        last = n = 0
        while True:
            h = f.read(16)
            if len(h) < 16:
                return last, n
            sec, _, incl, _ = struct.unpack(end + "IIII", h)
            last, n = sec, n + 1
            f.seek(incl, 1)


def undisturbed(a, path):
    d = path + ".alone"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    subprocess.run([a.meerkat, "-q", "run", "-r", path, "-S", a.rules, "-l", d, "--workers",
                    str(a.workers)] + sets(a), check=True, capture_output=True)
    return alerts([os.path.join(d, "eve.json")])


def ctl(a, *cmd, timeout=120):
    r = subprocess.run([a.meerkat, "ctl", "--socket", a.sock, *cmd], capture_output=True,
                       text=True, timeout=timeout)
    return r


def status(a):
    r = ctl(a, "--json", "status", timeout=20)
    return json.loads(r.stdout) if r.returncode == 0 else None


def rss_kb(pid):
    """(VmRSS, RssAnon) in kB: all resident memory, and the private part of it (the
    rings and shared pages, file mappings that fill up to their size, left out)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = line.split(":")[0]
                if k in ("VmRSS", "RssAnon"):
                    out[k] = int(line.split()[1])
    except OSError:
        return None
    return (out.get("VmRSS"), out.get("RssAnon")) if out else None


def captured(a):
    r = ctl(a, "--json", "stats", timeout=20)
    try:
        return json.loads(r.stdout)["capture"]["counters"]["capture.packets"]
    except (ValueError, KeyError, TypeError):
        return None


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def shm_entries():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("meerkat")}
    except OSError:
        return set()


def main():
    a = args()
    if not os.path.exists(a.trafficgen):
        sys.exit(f"trafficgen not found at {a.trafficgen} (--trafficgen)")
    shutil.rmtree(a.out, ignore_errors=True)
    for d in ("pcaps", "feed", "logs"):
        os.makedirs(os.path.join(a.out, d))
    a.sock = os.path.join(a.out, "ctl.sock")
    rt = os.path.join(a.out, "rt")
    feed = os.path.join(a.out, "feed")
    logs = os.path.join(a.out, "logs")
    shm_before = shm_entries()

    stack = subprocess.Popen(
        [a.meerkat, "-q", "run", "-r", feed, "--pcap-file-continuous", "-S", a.rules, "-l",
         logs, "--workers", str(a.workers), "--set", "runtime-dir=" + rt, "--set",
         "control.socket=" + a.sock, "--set", "pcap-file.poll-interval=1"] + sets(a),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while status(a) is None:
        if stack.poll() is not None or time.time() - t0 > 300:
            sys.exit("the stack did not start: " + stack.stderr.read()[-2000:])
        time.sleep(0.5)

    fed, start, rotations, packets = [], 1_700_000_000, 0, 0
    samples = []  # (t, {role: (rss_kb, fds)}, runtime files)
    next_feed = next_dist = next_sample = time.time()
    dist = 0
    t0 = time.time()
    while time.time() - t0 < a.seconds:
        now = time.time()
        if now >= next_feed:
            src = pcap(a, len(fed), start)
            last, n = last_ts(src)
            start, packets = last + 1, packets + n
            dst = os.path.join(feed, os.path.basename(src))
            shutil.copy(src, dst + ".part")
            os.rename(dst + ".part", dst)
            fed.append(src)
            next_feed = now + a.feed_every
        if now >= next_dist and now - t0 > a.every / 2:
            kind = dist % 3
            if kind == 0:
                r = ctl(a, "reload-rules")
                what = "reload-rules"
            elif kind == 1:
                rotations += 1
                os.rename(os.path.join(logs, "eve.json"), os.path.join(logs, f"eve.json.{rotations}"))
                stack.send_signal(signal.SIGHUP)
                r, what = None, "rotate (SIGHUP)"
            else:
                w = (dist // 3) % a.workers
                r = ctl(a, "restart-worker", str(w))
                what = f"restart-worker {w}"
            ok = r is None or r.returncode == 0
            print(f"{now - t0:6.0f} s  {what}: {'ok' if ok else 'FAILED ' + r.stderr.strip()[:200]}", flush=True)
            dist += 1
            next_dist = now + a.every
        if now >= next_sample:
            st = status(a)
            if st:
                roles = {r["name"]: (rss_kb(r["pid"]), fds(r["pid"])) for r in st["roles"]}
                roles["supervisor"] = (rss_kb(st["pid"]), fds(st["pid"]))
                samples.append((now - t0, roles, sorted(os.listdir(rt))))
            next_sample = now + 5
        if stack.poll() is not None:
            sys.exit("the stack exited early: " + stack.stderr.read()[-2000:])
        time.sleep(0.2)

    # Let every fed file be read (a stopped continuous run leaves the rest), then drain.
    t1 = time.time()
    while (captured(a) or 0) < packets and time.time() - t1 < 600:
        time.sleep(1)
    print(f"read {captured(a)} of {packets} packets fed, {time.time() - t1:.0f} s after the last feed")
    ctl(a, "flush", timeout=600)
    stack.send_signal(signal.SIGTERM)
    try:
        _, err = stack.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        stack.kill()
        sys.exit("the stack did not drain within 600 s")
    summary = [l for l in err.splitlines() if l.startswith("meerkat:")]

    eves = [os.path.join(logs, n) for n in sorted(os.listdir(logs)) if n.startswith("eve.json")]
    got = alerts(eves)
    want = collections.Counter()
    for p in fed:
        want += undisturbed(a, p)
    lost = sum((want - got).values())
    extra = sum((got - want).values())

    failures = []
    print(f"\nfed {len(fed)} pcaps of {a.size} MB; {dist} disturbances; {rotations} rotations")
    if summary:
        print(summary[-1])
    print(f"alerts: soak {sum(got.values())}, undisturbed {sum(want.values())}, lost {lost}, extra {extra}")
    if lost or extra:
        failures.append("alerts differ")

    roles = sorted({r for _, s, _ in samples for r in s})
    warm = [s for s in samples if s[0] >= a.seconds * a.warmup]
    def mb(x, i):
        return (x[0][i] if x and x[0] else 0) / 1024

    print("\nRSS (MB) over time per role, all / private (RssAnon):")
    print("   t(s) " + " ".join(f"{r:>17}" for r in roles))
    step = max(1, len(samples) // 20)
    for t, s, _ in samples[::step] + samples[-1:]:
        print(f"{t:7.0f} " + " ".join(
            f"{mb(s.get(r), 0):8.1f} /{mb(s.get(r), 1):7.1f}" for r in roles))
    if warm:
        # The end is the least of the last three samples: a sample may catch a
        # descriptor of this script's own control query, or a transient allocation.
        first, tail = warm[0], warm[-3:]
        for r in roles:
            m0, f0 = first[1].get(r, (None, None))
            ends = [s[1].get(r, (None, None)) for s in tail]
            m1 = min((m for m, _ in ends if m and m[1]), key=lambda m: m[1], default=None)
            f1 = min((f for _, f in ends if f is not None), default=None)
            if m0 and m1 and m0[1]:
                r0, r1 = m0[1], m1[1]
                growth = (r1 - r0) / r0
                grew = growth >= 0.10 and r1 - r0 > 4096
                flag = "  NOT FLAT" if grew else ""
                print(f"{r:>12}: private RSS {r0 / 1024:.1f} -> {r1 / 1024:.1f} MB ({growth:+.1%}), "
                      f"all {m0[0] / 1024:.1f} -> {m1[0] / 1024:.1f} MB, fds {f0} -> {f1}{flag}")
                if grew:
                    failures.append(f"{r} RSS grew {growth:+.1%}")
                if f0 is not None and f1 is not None and f1 > f0:
                    failures.append(f"{r} descriptors {f0} -> {f1}")
        if first[2] != warm[-1][2]:
            print(f"runtime dir: {first[2]} -> {warm[-1][2]}")
            failures.append("runtime-dir files changed")
    leaked = shm_entries() - shm_before
    if leaked:
        failures.append(f"left in /dev/shm: {sorted(leaked)}")
    print("\n" + ("FAILED: " + "; ".join(failures) if failures else "soak passed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
