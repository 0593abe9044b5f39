#!/usr/bin/env python3
"""eve-values: how often Meerkat's EVE values agree with the reference's, field by field.

usage: bench/eve-values.py --keep DIR [--set DIR] [--types flow,http,...] [--min N]

DIR is a `verify-corpus --keep DIR` run of Meerkat (DIR/<test>/log/eve.json); the set
(default ../shared/corpus/suricata-verify) holds each test's reference EVE
(`suricata-8.0.6-eve.json`). In each test, records of one event type are matched by
flow 5-tuple (either orientation), `tx_id` and, for alerts, the signature id and for
fileinfo the file name; records sharing a key are paired in file order. For every
leaf path of a reference record (arrays of objects indexed `[]` by position), the
report counts the pairs where Meerkat writes the same value, a different one, or
none. `flow_id` is left out (a hash of its own in each engine). Records without a
partner are counted per type.
"""

import argparse
import collections
import json
import os
import sys

SKIP = {"flow_id"}


def load(path):
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def key(r):
    a = (r.get("src_ip"), r.get("src_port"))
    b = (r.get("dest_ip"), r.get("dest_port"))
    five = (min(a, b, key=str), max(a, b, key=str), r.get("proto"))
    t = r.get("event_type")
    k = [t, five]
    if t in ("http", "dns", "fileinfo"):
        body = r.get(t) if isinstance(r.get(t), dict) else {}
        k.append(r.get("tx_id", body.get("tx_id")))
    if t == "alert":
        k.append(r.get("alert", {}).get("signature_id"))
    if t == "fileinfo":
        k.append(r.get("fileinfo", {}).get("filename"))
    if t == "dns":
        k.append(r.get("dns", {}).get("type"))
    return json.dumps(k, sort_keys=True, default=str)


def leaves(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            if not path and k in SKIP:
                continue
            yield from leaves(x, f"{path}.{k}" if path else k)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            yield from leaves(x, f"{path}[{i}]")
    else:
        yield path, v


def generic(path):
    # `answers[3].rrname` and `answers[0].rrname` count as one field.
    out, skip = [], False
    for c in path:
        if c == "[":
            skip = True
            out.append("[]")
        elif c == "]":
            skip = False
        elif not skip:
            out.append(c)
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", required=True)
    ap.add_argument(
        "--set",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/corpus/suricata-verify"),
    )
    ap.add_argument("--types", default="alert,anomaly,flow,http,dns,tls,fileinfo")
    ap.add_argument("--min", type=int, default=1, help="leave out fields seen in fewer pairs")
    ap.add_argument("--json", help="write the figures as JSON here too")
    args = ap.parse_args()
    types = set(args.types.split(","))
    manifest = json.load(open(os.path.join(args.set, "manifest.json")))
    tests = manifest["tests"] if isinstance(manifest, dict) and "tests" in manifest else manifest
    names = [t["name"] if isinstance(t, dict) else t for t in (tests if isinstance(tests, list) else tests.keys())]
    same = collections.Counter()
    diff = collections.Counter()
    absent = collections.Counter()
    pairs = collections.Counter()
    unpaired = collections.Counter()
    examples = {}
    for name in names:
        ref = load(os.path.join(args.set, name, "suricata-8.0.6-eve.json"))
        ours = load(os.path.join(args.keep, name, "log", "eve.json"))
        if not ours:
            continue
        mine = collections.defaultdict(list)
        for r in ours:
            if r.get("event_type") in types:
                mine[key(r)].append(r)
        for r in ref:
            t = r.get("event_type")
            if t not in types:
                continue
            cand = mine.get(key(r))
            if not cand:
                unpaired[t] += 1
                continue
            o = cand.pop(0)
            pairs[t] += 1
            flat = dict(leaves(o))
            for p, v in leaves(r):
                g = (t, generic(p))
                if p not in flat:
                    absent[g] += 1
                elif flat[p] == v:
                    same[g] += 1
                else:
                    diff[g] += 1
                    examples.setdefault(g, (name, v, flat[p]))
    rows = []
    for g in sorted(set(same) | set(diff) | set(absent)):
        n = same[g] + diff[g] + absent[g]
        if n >= args.min:
            rows.append((g, same[g], diff[g], absent[g], n))
    print("pairs matched (unmatched reference records):")
    for t in sorted(types):
        print(f"  {t:9} {pairs[t]:6} ({unpaired[t]})")
    print()
    print(f"{'type':9} {'field':45} {'agree':>7} {'differ':>7} {'absent':>7} {'pct':>6}")
    for (t, p), s, d, a, n in rows:
        pct = 100.0 * s / n
        print(f"{t:9} {p:45} {s:7} {d:7} {a:7} {pct:5.1f}%")
    print()
    print("first differing value per field (test: reference | meerkat):")
    for g in sorted(examples):
        name, v, m = examples[g]
        print(f"  {g[0]} {g[1]}  {name}: {json.dumps(v)[:80]} | {json.dumps(m)[:80]}")
    tot_s = sum(same.values())
    tot = tot_s + sum(diff.values()) + sum(absent.values())
    print(f"\nall fields: {tot_s}/{tot} agree ({100.0 * tot_s / max(tot, 1):.1f}%)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "pairs": pairs,
                    "unpaired": unpaired,
                    "fields": [
                        {"type": t, "field": p, "agree": s, "differ": d, "absent": a} for (t, p), s, d, a, _ in rows
                    ],
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
