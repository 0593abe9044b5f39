#!/usr/bin/env bash
# Base tools every test run needs beyond cargo: none yet besides a C compiler, which
# the machine has. Kept as the place to add Debian packages shared by all areas.
set -euo pipefail
command -v cc >/dev/null || { apt-get update -qq && apt-get install -y -qq gcc; }
