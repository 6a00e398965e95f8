#!/usr/bin/env bash
# Runs one Google Benchmark program of the build and writes results/<name>/ (benchmark.json,
# console.txt, README.md). Usage: run-benchmark.sh TARGET RESULT_NAME TITLE NOTE COMMAND [-- BENCH ARGS]
# where COMMAND is the script users run to redo the measurement (written into the README).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=$1 name=$2 title=$3 note=$4 command=$5
shift 5
[ "${1:-}" = "--" ] && shift
out=results/$name
mkdir -p "$out"
cmake --build build --target "$target" -j "$(nproc)" > /dev/null
"./build/tests/benchmarks/$target" --benchmark_out="$out/benchmark.json.tmp" --benchmark_out_format=json "$@" \
  | tee "$out/console.txt.tmp"
mv "$out/benchmark.json.tmp" "$out/benchmark.json"
mv "$out/console.txt.tmp" "$out/console.txt"
/usr/bin/python3 tools/bench/benchmark_report.py "$out" "$title" "$command" "$note"
cat "$out/README.md"
