#!/usr/bin/env bash
# Reference runs of `kaleido ring-plan` (the window-bounded ring architecture, a model; of its
# RTL the merge, the engine and the A buffers are built, not yet joined in kld_top) into
# reports/ring_plan/: each file holds its command and the plan it printed. About 40 seconds.
#   scripts/ring_plan.sh [OUT_DIR]     (default reports/ring_plan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KALEIDO_BUILD_DIR:-build}
kaleido="$build/gen/kaleido"
out=${1:-reports/ring_plan}
mkdir -p "$out"
[[ -x $kaleido ]] || { echo "ring_plan: build kaleido first ($kaleido not found)" >&2; exit 1; }

runs=0
run() {  # run NAME ARGS...: one plan into $out/NAME.md
  local name=$1
  runs=$((runs + 1))
  shift
  echo "ring_plan: $name" >&2
  {
    echo "# $name"
    echo
    echo "\`kaleido ring-plan $*\` (kaleido $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d))"
    echo
    "$kaleido" ring-plan "$@" 2>/dev/null
  } > "$out/$name.md"
}

synthetic=(--grid 4x16x16 --channels 128 --out-cols 256)
p480=(--grid 21x30x52 --channels 128 --out-cols 32768)
for preset in 8x8 16x16; do
  for r in 0 0.5 0.85 0.95; do
    # One chunk of N, GATHER_W 1: the schedule of today's kld_top, to hold the model to its cycles.
    run "validate_${preset}_r${r}" --preset "$preset" "${synthetic[@]}" --target-reuse "$r" --chunks 1024
    for gw in 2 4; do
      run "synthetic_${preset}_gw${gw}_r${r}" --preset "$preset" --gather-w "$gw" "${synthetic[@]}" \
        --target-reuse "$r" --chunks 128,256,512 --check
    done
  done
done
for r in 0.5 0.85 0.95; do
  for gw in 2 4; do
    run "480p_frame_gw${gw}_r${r}" --preset 16x16 --gather-w "$gw" "${p480[@]}" --target-reuse "$r" --chunks 256,512
    run "480p_tile16_gw${gw}_r${r}" --preset 16x16 --gather-w "$gw" "${p480[@]}" --target-reuse "$r" --tile 16x16 \
      --chunks 256,512
  done
done
# The main job's attention head (cockatoo, Wan2.1-1.3B head 0, step 47, grid 4x16x16): every one of
# the 1,024 keys, thresholds calibrated on the first key tile (the flow's default SNR of 30 dB, or R).
for preset in 8x8 16x16; do
  run "qk_${preset}_default" --workload qk --preset "$preset" --gather-w 2 --grid 4x16x16 --chunks 128,256 --check
  for r in 0.85 0.95; do
    run "qk_${preset}_r${r}" --workload qk --preset "$preset" --gather-w 4 --grid 4x16x16 --target-reuse "$r" \
      --chunks 128,256 --check
  done
done
# What scan tiles (the window the 8 Mib budget needs) cost in reuse at the same 30 dB on that head.
for tile in 8x8 4x4; do
  run "qk_16x16_default_tile${tile}" --workload qk --preset 16x16 --gather-w 2 --grid 4x16x16 --tile "$tile" \
    --chunks 128,256 --check
done
# Block-sparse attention on the ring: a random quarter (480p) or half (synthetic, checked against the
# golden model's masked product) of the (scan tile, key block) pairs kept, reuse inside them.
run "masked_8x8_gw2_r0.85" --preset 8x8 --gather-w 2 "${synthetic[@]}" --target-reuse 0.85 --tile 8x8 \
  --chunks 128,256 --key-block 32 --keep 0.5 --check
run "480p_tile16_masked_gw4_r0.85" --preset 16x16 --gather-w 4 "${p480[@]}" --target-reuse 0.85 --tile 16x16 \
  --chunks 256 --key-block 256 --keep 0.25
echo "ring_plan: wrote $runs plans into $out" >&2
