#!/usr/bin/env bash
# Installs the Debian 12 packages scalelab builds and runs with, when any is missing.
# Run as root or with sudo available. On other systems install the equivalents by hand:
# a C++20 compiler (GCC >= 12), CMake >= 3.25, Open MPI, Eigen 3.4, Boost.Program_options,
# nlohmann-json, fmt, zlib, libjpeg-turbo (TurboJPEG), hwloc, GoogleTest, OpenBLAS, gnuplot, and the Fashion-MNIST IDX files
# (set SCALELAB_DATA_DIR to their folder). CUDA 12+ with NCCL is optional (GPU code). The fuzz
# preset needs clang with its libFuzzer and sanitizer runtimes (libclang-rt-14-dev; Debian's clang
# only recommends it) and llvm-symbolizer for readable reports (llvm). The Slurm test starts its own
# slurmctld, slurmd and munged with a scratch configuration (slurmctld slurmd slurm-client munge);
# the multi-host tests make hosts of network namespaces (iproute2).
set -euo pipefail
packages=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libeigen3-dev
          libboost-program-options-dev libgtest-dev libgmock-dev nlohmann-json3-dev libfmt-dev
          zlib1g-dev libturbojpeg0-dev libhwloc-dev libopenblas-dev gnuplot-nox dataset-fashion-mnist
          clang libclang-rt-14-dev llvm slurmctld slurmd slurm-client munge iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing ${missing[*]} and this is not a Debian system; install the equivalents (see README.md)" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
