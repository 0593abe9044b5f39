#!/usr/bin/env python3
"""Extracts every configuration key path of Suricata's annotated default suricata.yaml
(including keys that are commented out) into config/src/suricata_keys.txt.

Meerkat accepts these keys with a warning when it does not model them yet, so that
Suricata command lines and config files keep working. List items are skipped in paths:
`outputs: - eve-log: {types: - http: {extended: yes}}` gives `outputs.eve-log.types.http.extended`.

usage: tools/gen-suricata-keys.py ../shared/corpus/suricata/suricata.yaml.in > config/src/suricata_keys.txt
"""
import re
import sys

KEY = re.compile(r'^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[A-Za-z0-9][A-Za-z0-9_.\-]*)\s*:(\s|$)')

def is_prose(value):
    """Whether the text after `key:` on a commented line reads as a sentence, not a
    value: words ending with a full stop ("# is: 8*1000*2000 ~ 16TiB.")."""
    v = value.split(' #')[0].strip()
    return ' ' in v and v.endswith('.')

def main(path):
    keys = set()
    stack = []  # (indent, key)
    for raw in open(path, encoding='utf-8'):
        line = raw.rstrip('\n')
        if not line.strip() or line.lstrip().startswith('%') or line.strip() == '---':
            continue
        # Uncomment: "   #key: value" or "  # - key:" keep the column of the '#'.
        m = re.match(r'^(\s*)#+\s?(.*)$', line)
        if m:
            body = m.group(2)
            line = m.group(1) + body
        km = KEY.match(line)
        if not km:
            continue
        if m and is_prose(line[km.end():]):
            continue  # a sentence, such as '# is: 8*1000*2000 ~ 16TiB.'
        key = km.group('key')
        if key != key.lower() and not re.match(r'^[A-Z0-9_]+$', key):
            continue  # prose such as "Note: ..."
        indent = len(km.group('indent')) + (len(km.group('dash')) if km.group('dash') else 0)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        keys.add('.'.join(k for _, k in stack))
    for k in sorted(keys):
        print(k)

if __name__ == '__main__':
    main(sys.argv[1])
