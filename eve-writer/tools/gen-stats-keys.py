#!/usr/bin/env python3
"""Lists every integer counter path of the `stats` record in Suricata's EVE JSON Schema.

Usage: gen-stats-keys.py ../shared/corpus/suricata/eve-schema.json > src/suricata_stats_keys.txt

The eve-writer maps Meerkat's counters onto these names in its periodic `stats` records
(Suricata's schema is strict for `stats`: any other name fails validation).
"""
import json
import sys


def walk(schema, node, path, out):
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = schema["$defs"][name]
    props = node.get("properties")
    if props:
        for key, child in props.items():
            walk(schema, child, path + [key], out)
    elif node.get("type") in ("integer", ["integer"]):
        out.append(".".join(path))


def main():
    schema = json.load(open(sys.argv[1]))
    out = []
    walk(schema, schema["properties"]["stats"], [], out)
    print("\n".join(sorted(out)))


if __name__ == "__main__":
    main()
