#!/usr/bin/env bash
# Regenerates detect/src/rules/suricata_keywords.txt: every rule keyword of the reference
# Suricata (name and documentation link), from its `--list-keywords=csv`. Meerkat's
# `--list-keywords` lists these names and says which Meerkat implements; `-T` tells a
# keyword Suricata does not know (an error) from one Meerkat does not implement yet.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${SURICATA_REF:-../shared/tools/suricata-ref}
{
    echo "# Suricata 8.0.6's rule keywords (name, documentation); tools/gen-suricata-keywords.sh"
    "$ref" --list-keywords=csv 2>/dev/null | awk -F';' 'NR > 1 && $1 != "" { printf "%s\t%s\n", $1, $5 }'
} > detect/src/rules/suricata_keywords.txt
