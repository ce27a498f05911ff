#!/usr/bin/env bash
# CTest: a real one-node Slurm cluster (scripts/slurm/cluster.sh) runs a
# 4-point sweep and a small soak. The sweep's sweep.csv must equal the one of
# --backend local (run times aside); a rerun submits nothing; a job cancelled
# half-way is finished by the next run. Exit 77 (skipped, visibly) when the
# Debian packages slurm-wlm and munge are not installed.
# Usage: slurm_test.sh KALEIDO_BINARY SOURCE_DIR
set -euo pipefail
kaleido=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/kaleido_slurm_test_XXXXXX")
cleanup() {
  bash "$src/scripts/slurm/cluster.sh" stop "$work/cluster" || true
  [ -n "${KALEIDO_KEEP_TEST_DIRS:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND exited $?"' ERR

# The cluster stops itself should this script be killed before its trap runs (CTest's timeout).
rc=0
env_line=$(KALEIDO_CLUSTER_OWNER=$$ bash "$src/scripts/slurm/cluster.sh" start "$work/cluster") || rc=$?
if [ $rc -eq 2 ]; then
  echo "SKIPPED: slurm-wlm and munge are not installed (scripts/setup.sh installs them)"
  exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: the cluster did not start"; cat "$work"/cluster/log/*.log; exit 1; }
eval "$env_line"
echo "cluster up: $SLURM_CONF"

# Four tiny points (1x1 and 2x2 arrays at two clocks), the dense top only.
cat > "$work/four.json" <<'JSON'
{"name": "four",
 "base": {"data_w": 4, "acc_w": 8, "group_w": 1, "max_t": 1, "max_h": 2, "max_w": 2, "max_k": 2, "max_m": 2},
 "axes": {"rows_cols": [1, 2], "clock_ns": [2, 3]},
 "tops": ["kld_plain_top"]}
JSON

# sweep.csv without the run-time column (the only one that may differ).
csv_without_times() {
  python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
drop = rows[0].index("synth_seconds")
for r in rows:
    print(",".join(v for i, v in enumerate(r) if i != drop))
PY
}

start=$(date +%s)
t0=$(date +%s.%N)
"$kaleido" sweep "$work/four.json" --out "$work/local" -j 2 > "$work/local.out"
t1=$(date +%s.%N)
"$kaleido" sweep "$work/four.json" --out "$work/slurm" --backend slurm > "$work/slurm.out" 2> "$work/slurm.err"
t2=$(date +%s.%N)
echo "4-point sweep: local -j 2 $(python3 -c "print(round($t1 - $t0, 1))") s, slurm $(python3 -c "print(round($t2 - $t1, 1))") s"
grep -q "4 of 4 points submitted" "$work/slurm.err" || { echo "FAIL: expected 4 submitted points"; cat "$work/slurm.err"; exit 1; }
grep -Eq "points finished; [0-9]+ pending, [0-9]+ running" "$work/slurm.err" ||
  { echo "FAIL: no progress lines while waiting for the job"; cat "$work/slurm.err"; exit 1; }
if ! diff <(csv_without_times "$work/local/sweep.csv") <(csv_without_times "$work/slurm/sweep.csv"); then
  echo "FAIL: sweep.csv differs between --backend local and --backend slurm"
  exit 1
fi
echo "ok: sweep.csv of the Slurm run equals the local one"

# A rerun has nothing to do.
"$kaleido" sweep "$work/four.json" --out "$work/slurm" --backend slurm > /dev/null 2> "$work/rerun.err"
grep -q "nothing to submit" "$work/rerun.err" || { echo "FAIL: a rerun submitted work"; cat "$work/rerun.err"; exit 1; }
echo "ok: a rerun submits nothing"

# Resume after a cancelled job: one task at a time (--max-parallel 1), cancel
# the array once the first point has its result, so at least two points are
# left without one; the coordinator records them as failed, and the next run
# submits exactly those and ends with the same sweep.csv.
results() { find "$work/slurm/points" -name result.json | wc -l; }
"$kaleido" sweep "$work/four.json" --out "$work/slurm" --backend slurm --force --max-parallel 1 \
  > /dev/null 2> "$work/cancel.err" &
coordinator=$!
job=
for _ in $(seq 600); do
  [ -z "$job" ] && job=$(squeue -h -n kaleido_sweep_four -o %A | head -n 1)
  [ -n "$job" ] && [ "$(results)" -ge 1 ] && break
  sleep 0.1
done
[ -n "$job" ] && scancel "$job"
cancel_rc=0
wait $coordinator || cancel_rc=$?
missing=$((4 - $(results)))
echo "cancelled job $job after the first point: $missing points without a result, coordinator exit $cancel_rc"
[ -n "$job" ] && [ "$missing" -ge 2 ] || { echo "FAIL: the cancel did not leave points undone"; cat "$work/cancel.err"; exit 1; }
[ "$cancel_rc" -ne 0 ] || { echo "FAIL: a sweep with cancelled points exited 0"; exit 1; }
[ "$(grep -c 'FAILED: the Slurm task ended without a result' "$work/cancel.err")" -eq "$missing" ] ||
  { echo "FAIL: the coordinator did not record every cancelled point as failed"; cat "$work/cancel.err"; exit 1; }
"$kaleido" sweep "$work/four.json" --out "$work/slurm" --backend slurm > /dev/null 2> "$work/resume.err"
grep -q "$missing of 4 points submitted" "$work/resume.err" ||
  { echo "FAIL: the resumed run should submit the $missing missing points"; cat "$work/resume.err"; exit 1; }
diff <(csv_without_times "$work/local/sweep.csv") <(csv_without_times "$work/slurm/sweep.csv") ||
  { echo "FAIL: sweep.csv after the resumed run differs"; exit 1; }
echo "ok: the run after the cancelled job submitted only the $missing missing points; sweep.csv equal"

# A small soak through Slurm: 2 tasks, 8 runs, on the first soak configuration
# only (one testbench to build when the Verilator cache is cold).
"$kaleido" soak --runs 8 --seed 3 --configs 1 --backend slurm -j 2 --out "$work/soak" > "$work/soak.out" \
  2> "$work/soak.err" ||
  { echo "FAIL: soak"; cat "$work/soak.out" "$work/soak.err"; exit 1; }
python3 - "$work/soak/soak.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["runs"] == 8 and j["failures"] == 0 and j["not_run"] == 0 and j["backend"] == "slurm", j
print("ok: soak through Slurm:", j["runs"], "runs,", j["failures"], "failures")
PY
echo "slurm_cluster: passed in $(( $(date +%s) - start )) s (cluster start and stop aside)"
