#!/usr/bin/env bash
# The test command of the README: install prerequisites, build with warnings
# as errors, run the test suite. Extra arguments go to ctest (e.g. -L golden).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${KALEIDO_BUILD_DIR:-build}
cmake -S . -B "$build" -DKALEIDO_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# Default: everything but the long soak (run it with: bash scripts/test.sh -L soak).
[ $# -eq 0 ] && set -- -LE soak
ctest --output-on-failure -j"$(nproc)" "$@"
