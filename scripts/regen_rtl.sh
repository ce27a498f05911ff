#!/usr/bin/env bash
# Regenerates the checked-in RTL of the default configurations (rtl/<name>,
# the name from `kaleido gen --print-name`; folders of older names are removed).
# Run after a deliberate change of the generator; review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KALEIDO_BUILD_DIR:-build}
kaleido="$build/gen/kaleido"
keep=()
for preset in 8x8 16x16; do
  name=$("$kaleido" gen --preset "$preset" --print-name)
  "$kaleido" gen --preset "$preset" -o "rtl/$name"
  keep+=("$name")
done
for dir in rtl/*/; do
  dir=${dir%/}
  [[ " ${keep[*]} " == *" ${dir#rtl/} "* ]] || { echo "regen_rtl: removing $dir (no default configuration has this name)"; rm -rf "$dir"; }
done
git status --short rtl/
