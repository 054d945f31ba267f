#!/usr/bin/env bash
# Builds kgen (scripts/setup.sh) and runs every test. Tests labelled `gpu`
# need an NVIDIA GPU; without one they are reported as skipped, not passed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
