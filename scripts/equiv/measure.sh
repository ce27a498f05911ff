#!/usr/bin/env bash
# Run times of `kaleido equiv` for docs/equivalence.md: the PE and a detector
# lane of the 8x8 default, the 2x2 and 4x4 configurations (whole kld_top) and
# the 8x8 default kld_top. Heavy (the 8x8 synthesis alone takes minutes): run
# it by hand, one at a time on a shared machine.
#   scripts/equiv/measure.sh [build dir] [out dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
out="${2:-$root/out/equiv_measure}"
kaleido="$build/gen/kaleido"
mkdir -p "$out"
small=(--hw-data-w 8 --max-t 2 --max-h 2 --max-w 2 --max-m 4 --lanes 1)
run() {
  local name="$1"; shift
  echo "== $name" >&2
  local t0=$(date +%s.%N)
  "$kaleido" equiv "$@" --out "$out/$name" > "$out/$name.txt" 2> "$out/$name.log" || true
  local t1=$(date +%s.%N)
  python3 - "$out/$name/equiv.json" "$name" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["times_s"]
print(f"{sys.argv[2]}: wall {float(sys.argv[3]):.0f} s, synthesis {t['synthesis']:.1f} s, "
      f"reference {t['yosys_reference']:.1f} s, netlist {t['yosys_netlist']:.1f} s")
for p in d["proofs"]:
    print(f"  {p['module']:18} {p['status']:15} {p['seconds']:7.2f} s  ands {p['miter']['ands']:7}  "
          f"registers {p['registers']['matched_classes']}/{p['registers']['reference']}")
PY
}
run pe_8x8 --rtl "$root/rtl/r8c8_d8a32_g8_27531cf5" --top kld_pe
run lane_8x8 --rtl "$root/rtl/r8c8_d8a32_g8_27531cf5" --top kld_detector_lane
run top_2x2 --rows 2 --cols 2 --hw-group-w 2 --hw-acc-w 16 --max-k 4 --win-cap 4 "${small[@]}"
run top_4x4 --rows 4 --cols 4 --hw-group-w 4 --hw-acc-w 20 --max-k 8 --win-cap 4 "${small[@]}"
run top_8x8 --rtl "$root/rtl/r8c8_d8a32_g8_27531cf5"
