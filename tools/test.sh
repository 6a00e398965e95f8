#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/install-dependencies.sh
bash tools/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)"
