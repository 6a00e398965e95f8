#!/usr/bin/env bash
# Installs the Debian 12 packages splitbrain builds and runs with, if any are missing.
# Safe to run again: it only calls apt-get when something is not installed yet.
set -euo pipefail

packages=(
  build-essential cmake git
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libboost-graph-dev libfmt-dev libcli11-dev
  openmpi-bin libopenmpi-dev
  libdnnl-dev libopenblas-dev
  libmimalloc-dev  # the splitbrain command's allocator (tools/CMakeLists.txt)
  ocl-icd-opencl-dev  # oneDNN's CMake config looks for OpenCL; apt only recommends it
  zlib1g-dev dataset-fashion-mnist
  python3-matplotlib
  libonnx-dev libprotobuf-dev  # the ONNX importer (model/onnx/)
  python3-onnx python3-torchvision  # its tests export nets at test time
  clang-format-14  # tools/check-format.sh (CI fails on drift from .clang-format)
  python3-torch  # those exports, and tools/torchrun_train.py (the exported torchrun launch runs in a test)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all ${#packages[@]} packages present"
  exit 0
fi

sudo_if_needed=()
if [ "$(id -u)" -ne 0 ]; then sudo_if_needed=(sudo); fi
echo "[setup] installing: ${missing[*]}"
"${sudo_if_needed[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_if_needed[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
