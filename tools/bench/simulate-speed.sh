#!/usr/bin/env bash
# Times one simulation (compile + predict) of vgg16 on 64 devices of dgx-a100-80g and writes
# results/simulate-speed/{benchmark.json,README.md}. Target: under 5 ms per simulation.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=results/simulate-speed
mkdir -p "$out"
cmake --build build --target simulate_benchmark -j "$(nproc)" > /dev/null
./build/tests/benchmarks/simulate_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/benchmark.json.tmp" --benchmark_out_format=json | tee "$out/console.txt.tmp"
mv "$out/benchmark.json.tmp" "$out/benchmark.json"
mv "$out/console.txt.tmp" "$out/console.txt"

/usr/bin/python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
data = json.load(open(os.path.join(out, "benchmark.json")))
rows = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"]
lines = ["# Simulation speed", "",
         "Command: `bash tools/bench/simulate-speed.sh` (Release build, one core, median of 5 repetitions).",
         f"Machine: {data['context'].get('num_cpus')} CPUs at {data['context'].get('mhz_per_cpu')} MHz; "
         f"date {data['context'].get('date')}.", "",
         "| plan | median ms per simulation | target |", "|---|---|---|"]
for b in rows:
    ms = b["real_time"] if b["time_unit"] == "ms" else b["real_time"] / 1e3
    lines.append(f"| {b['run_name']} | {ms:.3f} | < 5 ms: {'met' if ms < 5 else 'NOT met'} |")
open(os.path.join(out, "README.md.tmp"), "w").write("\n".join(lines) + "\n")
os.replace(os.path.join(out, "README.md.tmp"), os.path.join(out, "README.md"))
PY
cat "$out/README.md"
