#!/usr/bin/env bash
# Regenerates the checked-in RTL of the default configurations (rtl/).
# Run after a deliberate change of the generator; review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KALEIDO_BUILD_DIR:-build}
"$build/gen/kaleido" gen --preset 8x8 -o rtl/r8c8_d8a32_g8
"$build/gen/kaleido" gen --preset 16x16 -o rtl/r16c16_d8a32_g8
git status --short rtl/
