#!/usr/bin/env bash
# The sanitizer and fuzzing checks: builds with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-sanitize/ (CUDA off), runs the unit tests of model/,
# plans/, sim/ and the command line under them, then fuzzes every reader of user input (model,
# plan, cluster, report, trace, checkpoint manifest, ONNX) with libFuzzer from a seed corpus of the
# repository's examples. Any sanitizer finding, crash, hang or exception other than a clear
# refusal (InputError) fails it. CI runs it after the tests with a short fuzz.
# Usage: bash tools/sanitize.sh [--fuzz-seconds N (default 20) | --fuzz-runs N] [--fuzz-logs DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_limit=(-max_total_time=20)
logs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzz-seconds) fuzz_limit=(-max_total_time="$2"); shift 2 ;;
    --fuzz-runs) fuzz_limit=(-runs="$2"); shift 2 ;;
    --fuzz-logs) logs=$2; shift 2 ;;
    *) echo "sanitize.sh: unknown argument '$1' (see the header of tools/sanitize.sh)" >&2; exit 2 ;;
  esac
done

bash tools/install-dependencies.sh
missing=()
for package in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$package" 2> /dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_if_needed=()
  if [ "$(id -u)" -ne 0 ]; then sudo_if_needed=(sudo); fi
  echo "[sanitize] installing ${missing[*]}"
  "${sudo_if_needed[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_if_needed[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=build-sanitize
# -O1: the usual level under the sanitizers; -O2 would only lengthen the build. Line tables are
# all a sanitizer's stack trace reads (file and line); full debug info would only lengthen it too.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_COMPILER=clang++-14 -DSPLITBRAIN_CUDA=OFF \
  -DSPLITBRAIN_SANITIZE=address,undefined -DSPLITBRAIN_FUZZ=ON > /dev/null
fuzzers=(model_reader_fuzz plan_reader_fuzz cluster_reader_fuzz report_reader_fuzz trace_reader_fuzz checkpoint_manifest_fuzz onnx_reader_fuzz)
tests=(tests/model/model_tests tests/plans/plans_tests tests/sim/sim_tests tests/cli/cli_tests)
echo "[sanitize] building (clang, address + undefined)"
cmake --build "$build" -j "$(nproc)" --target model_tests plans_tests sim_tests cli_tests splitbrain "${fuzzers[@]}"

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for test in "${tests[@]}"; do
  echo "[sanitize] $test"
  # The largest sweeps run in the Release suite only; under the sanitizers smaller ones cover the
  # same code in a fraction of CI's time: every pair of layouts of a rank-4 tensor on 3 axes (12 s
  # in Release), the four largest pruned-against-exhaustive planner searches (the remaining
  # PlannerPruning case runs the same two searches), the planner's tight-memory GPT search
  # (10-28 s each in Release since every micro-batch count and memory variant is searched) and
  # the step-time bound against every plan of a small GPT (15 s: each plan's SP, interleaved,
  # ZeRO and recompute forms simulated; the convolutional case stays).
  "$build/$test" --gtest_brief=1 --gtest_filter=-RedistributeEveryPair.Rank4Tensor3Axes:PlannerPruning.SameRankingWhenOnlySmallMicroBatchesFit:PlannerPruning.SameRankingWhenNothingFits:PlannerPruning.SameRankingForAConvolutionalNetUnderALimit:PlannerPruning.SameRankingWhenZeroAndRecomputeDecide:Planner.SmallMicroBatchesMakeAPipelineFit:StepTimeBound.NeverAboveTheSimulatedStepOfASmallGpt
done

# Seeds: the repository's own files of each kind, a prediction and its trace, a checkpoint
# manifest and three tiny ONNX nets (a conv net, a perceptron, an embedding) that use every op
# the importer maps.
corpus=$build/fuzz-corpus
rm -rf "$corpus"
mkdir -p "$corpus"/{model,plan,cluster,report,trace,manifest,onnx}
cp model/examples/*.json "$corpus/model/"
cp plans/examples/*.json "$corpus/plan/"
cp sim/clusters/*.json "$corpus/cluster/"
"$build/tools/splitbrain" simulate --plan plans/examples/fashion-vgg-splitbrain-2.json --json "$corpus/report/prediction.json" \
  --trace "$corpus/trace/predicted-trace.json" > /dev/null
# The same as a GPU run's measurement, with host waits on every rank, so the fuzzer starts inside
# that comparison.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["format"], d["steps"] = "splitbrain-measurement", 10
for r in d["ranks"]:
    r["host_waits_per_step"] = {"instructions": 1, "at": d["stages"][r["stage"]]["host_wait_instructions"]}
json.dump(d, open(sys.argv[2], "w"))' "$corpus/report/prediction.json" "$corpus/report/prediction-host-waits.json"
# The simulator's trace as a run's (run --trace): medians of each rank's instructions over its steps.
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
t["format"], t["instruction_seconds_steps"] = "splitbrain-measured-trace", 9
ranks = 1 + max(e["pid"] for e in t["traceEvents"])
t["instruction_seconds_median"] = [{e["name"].rsplit(" mb", 1)[0]: e["dur"] * 1e-6 for e in t["traceEvents"]
                                    if e["ph"] == "X" and e["pid"] == r} for r in range(ranks)]
json.dump(t, open(sys.argv[2], "w"))' "$corpus/trace/predicted-trace.json" "$corpus/trace/measured-trace.json"
cp tests/fuzz/seeds/checkpoint.json "$corpus/manifest/"
cp tests/fuzz/seeds/onnx/*.onnx "$corpus/onnx/"
declare -A seeds=([model_reader_fuzz]=model [plan_reader_fuzz]=plan [cluster_reader_fuzz]=cluster
                  [report_reader_fuzz]=report [trace_reader_fuzz]=trace [checkpoint_manifest_fuzz]=manifest
                  [onnx_reader_fuzz]=onnx)
for fuzzer in "${fuzzers[@]}"; do
  echo "[sanitize] fuzzing $fuzzer (${fuzz_limit[*]})"
  log=${logs:+$logs/$fuzzer.log}
  log=${log:-$build/$fuzzer.log}
  [ -n "$logs" ] && mkdir -p "$logs"
  if ! "$build/tests/fuzz/$fuzzer" "$corpus/${seeds[$fuzzer]}" "${fuzz_limit[@]}" -rss_limit_mb=4096 -timeout=60 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/$fuzzer-" > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "[sanitize] $fuzzer found a problem: $build/$fuzzer-* holds the input" >&2
    exit 1
  fi
  grep -E "^Done|stat::number_of_executed_units" "$log" | head -n 2
done
echo "[sanitize] unit tests clean under address + undefined sanitizers; no fuzzer finding"
