#!/usr/bin/env bash
# Times one simulation (compile + predict) of vgg16 on 64 devices of dgx-a100-80g.
# Target: under 5 ms per simulation. Writes results/simulate-speed/.
set -euo pipefail
exec bash "$(dirname "$0")/run-benchmark.sh" simulate_benchmark simulate-speed "Simulation speed" \
  "Target: one simulation of vgg16 on 64 devices in under 5 ms. Medians of 5 repetitions." \
  "bash tools/bench/simulate-speed.sh" -- --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
