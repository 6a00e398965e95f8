#!/usr/bin/env bash
# Configures and builds splitbrain into build/ (Release, warnings as errors).
# Extra arguments go to CMake's configure step, e.g. -DSPLITBRAIN_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSPLITBRAIN_WERROR=ON "$@"
cmake --build build -j "$(nproc)"
