#!/usr/bin/env bash
# suricata-update (OISF's rule manager, from PyPI): tests/suricata_ops.rs runs it
# offline with Meerkat as its `--suricata` binary and ET Open from ../shared as a local
# source. The test skips when it is absent. Idempotent.
set -euo pipefail
if command -v suricata-update >/dev/null; then
    exit 0
fi
if ! command -v pip3 >/dev/null && ! command -v pip >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
fi
pip=$(command -v pip3 || command -v pip)
"$pip" install --quiet suricata-update==1.3.3 || "$pip" install --quiet --break-system-packages suricata-update==1.3.3
