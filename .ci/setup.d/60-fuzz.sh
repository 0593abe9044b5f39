#!/usr/bin/env bash
# cargo-fuzz (crates.io) for the bounded fuzz runs of .ci/test.d/60-fuzz.sh (stable
# toolchain, `-s none`). Idempotent.
set -euo pipefail
cargo fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz
