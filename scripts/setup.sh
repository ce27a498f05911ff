#!/usr/bin/env bash
# Installs every prerequisite of Kaleido from Debian packages. Idempotent and
# quiet when everything is present; prints what it installs otherwise.
set -euo pipefail

packages=(
  g++ cmake make               # build
  python3                      # generates the generic Liberty library at build time
  libcli11-dev                 # command line (CLI11)
  nlohmann-json3-dev           # JSON reports, config files, manifests
  libgtest-dev                 # unit tests (GoogleTest)
  libbenchmark-dev             # benchmarks of the golden model (Google Benchmark)
  zlib1g-dev                   # checksums of golden vectors, reading .lib.gz
  libfmt-dev                   # number formatting in reports ({fmt})
  verilator                    # lint and simulation of generated RTL
  yosys                        # synthesis and equivalence checks
  opensta                      # static timing and vectorless power (binary: sta)
  ffmpeg                       # decoding .mp4/.avi clips for real-video workloads
  python3-imageio              # ships cockatoo.mp4, the default real clip (BSD-2-Clause)
  slurm-wlm munge              # Slurm backend of sweep/soak; its test starts a one-node cluster (scripts/slurm)
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
