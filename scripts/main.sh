#!/usr/bin/env bash
# The main job of the README: install prerequisites, build, and run the
# default flow. Extra arguments go to `kaleido flow`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${KALEIDO_BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)"
mkdir -p out
"$build/gen/kaleido" golden --out out/golden.kvec "$@"
