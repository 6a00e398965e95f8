#!/usr/bin/env bash
# The planner's Google Benchmarks: vgg16 on 64 devices (target < 1 s), the GPT-3 175B shape on
# 1024 devices (target < 10 s), and plan evaluations per second (target >= 10,000). Writes
# results/planner-benchmark/. (tools/bench/planner-speed.sh times `splitbrain plan` on large GPTs.)
set -euo pipefail
exec bash "$(dirname "$0")/run-benchmark.sh" planner_benchmark planner-benchmark "Planner benchmarks" \
  "Targets: PlanVgg16On64 < 1000 ms; PlanGpt3On1024 < 10000 ms (wall; both searches use every core); >= 10,000 plan evaluations per second (one thread). EvaluateAssignments prices complete random vgg16 plans with the search's evaluator (memoised layer and edge costs, as the DP does); SimulateAssignments runs the full simulator on each (compile, timeline, memory and bytes of all 64 ranks)." \
  "bash tools/bench/planner-benchmark.sh" --
