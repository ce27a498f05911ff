#!/usr/bin/env bash
# The main job of the README: install prerequisites, build, and run
# `kaleido flow` on the default configuration (generate, lint, golden model and
# Verilator simulation of a real clip, synthesis, timing, activity-based power,
# report in reports/<config>/). Extra arguments go to `kaleido flow`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${KALEIDO_BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
# The tool alone: the test programs are scripts/test.sh's to build.
cmake --build "$build" --target kaleido -j"$(nproc)"
"$build/gen/kaleido" flow "$@"
