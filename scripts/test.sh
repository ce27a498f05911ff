#!/usr/bin/env bash
# The test command of the README: install prerequisites, build with warnings
# as errors, run the test suite. Extra arguments go to ctest (e.g. -L golden).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh
build=${KALEIDO_BUILD_DIR:-build}
cmake -S . -B "$build" -DKALEIDO_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# Default: everything but the long soak (run it with: bash scripts/test.sh -L soak),
# then the CI checks as a user runs them: drift of rtl/ and the lint matrix.
checks=0
[ $# -eq 0 ] && { set -- -LE soak; checks=1; }
ctest --output-on-failure -j"$(nproc)" "$@"
if [ "$checks" = 1 ]; then
  ./gen/kaleido drift                      # rtl/ equals the generator's output, byte for byte
  ./gen/kaleido lint --out lint >/dev/null # verilator --lint-only -Wall, built-in configuration matrix
  echo "test: lint matrix clean (report: $build/lint/lint.md)"
  # Formal equivalence of a whole 4x4 kld_top and its gate netlist, module by module (about 40 s).
  ./gen/kaleido equiv --rows 4 --cols 4 --hw-group-w 4 --hw-acc-w 20 --hw-data-w 8 --max-t 2 --max-h 2 \
      --max-w 2 --max-k 8 --max-m 4 --lanes 1 --win-cap 4 --out equiv_4x4 >/dev/null
  echo "test: kld_top 4x4 equivalent to its netlist (report: $build/equiv_4x4/equiv.md)"
  # And the checked-in 8x8 default, whole kld_top (about 2 minutes): its larger hierarchy is where
  # register names were lost before (docs/equivalence.md).
  ./gen/kaleido equiv --rtl "$root/rtl/r8c8_d8a32_g8_27531cf5" --out equiv_8x8 >/dev/null
  echo "test: kld_top 8x8 equivalent to its netlist (report: $build/equiv_8x8/equiv.md)"
fi
