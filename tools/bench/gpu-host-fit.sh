#!/usr/bin/env bash
# Replays calibrate's fit of the runtime's host time per pass (sim::Device::instruction_host_seconds)
# on the GPU runs committed under results/gpu*, with each candidate statistic, and writes
# results/gpu-host-fit/README.md. Needs no GPU: the runs' measured steps and calibrated clusters
# are re-simulated here. About 30 seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
/usr/bin/python3 tools/bench/gpu_host_fit_replay.py ./build/tools/splitbrain results/gpu-host-fit \
  --command "bash tools/bench/gpu-host-fit.sh"
cat results/gpu-host-fit/README.md
