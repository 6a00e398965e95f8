#!/usr/bin/env bash
# Predicted against measured on this machine, after calibrating it: every plan the planner ranks
# for fashion-vgg and vgg11-cifar10 (batch 64) on 1 and 2 ranks is simulated with the calibrated
# cluster and run for real (mpirun, one core per rank), then compared. Plans the executor refuses
# are listed as skipped, with its message.
# Writes results/fidelity/: README.md (table, median and worst iteration error, memory error, bytes,
# ranking check), results.json, predicted-vs-measured.{png,svg}, phases.{png,svg}, the calibrated
# cluster and calibrate's output, and compare/<plan>/ (comparison.json, figures, merged trace).
# Made in a temporary folder and renamed, so nothing is left half-written.
# Knobs (environment): ITERS (timed steps per run, 6), WARMUP (2), MODELS ("fashion-vgg vgg11-cifar10").
# About 6 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/fidelity
iters=${ITERS:-6} warmup=${WARMUP:-2} models=${MODELS:-"fashion-vgg vgg11-cifar10"} batch=64
python=/usr/bin/python3  # has matplotlib (python3-matplotlib)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fidelity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/fidelity
mkdir -p "$work/compare" "$tmp/runs"

echo "[fidelity] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

echo "[fidelity] calibrating (mpirun -np 2)" >&2
mpirun -np 2 --bind-to core "$sb" calibrate --out "$work/local-cpu-calibrated.json" > "$work/calibrate.txt"
tail -n 1 "$work/calibrate.txt" >&2
cluster=$work/local-cpu-calibrated.json

data_for() {  # model -> synthetic data of its input shape
  case "$1" in
    fashion-vgg) echo synthetic:shape=1x28x28 ;;
    *) echo synthetic:shape=3x32x32 ;;
  esac
}

: > "$work/runs.txt"
for model in $models; do
  for ranks in 1 2; do
    plans=$tmp/plans-$model-$ranks
    "$sb" plan --model "$model" --cluster "$cluster" --devices "$ranks" --batch "$batch" --top 30 --emit-plans "$plans" \
      --json "$work/ranking-$model-$ranks.json" > /dev/null
    for plan in "$plans"/*.json; do
      name=$model-$ranks-$(basename "$plan" .json)
      run=$tmp/runs/$name
      mkdir -p "$run"
      echo "[fidelity] $name" >&2
      "$sb" simulate --plan "$plan" --cluster "$cluster" --json "$run/prediction.json" --trace "$run/prediction-trace.json" > /dev/null
      if ! mpirun -np "$ranks" --bind-to core "$sb" run --plan "$plan" --data "$(data_for "$model")" --warmup "$warmup" \
          --iters "$iters" --log-every 1000 --report "$run/measured.json" --trace "$run/measured-trace.json" \
          > "$run/run.txt" 2>&1; then
        echo "$name skipped $(grep -m1 -o 'not supported[^"]*\|cannot run[^"]*' "$run/run.txt" || tail -n 1 "$run/run.txt")" >> "$work/runs.txt"
        echo "[fidelity]   skipped: $(tail -n 1 "$run/run.txt")" >&2
        continue
      fi
      "$sb" compare "$run/prediction.json" "$run/measured.json" --out "$work/compare/$name" \
        --predicted-trace "$run/prediction-trace.json" --measured-trace "$run/measured-trace.json" > "$work/compare/$name.txt"
      echo "$name ran" >> "$work/runs.txt"
      head -n 3 "$work/compare/$name.txt" | tail -n 1 >&2
    done
  done
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" tools/bench/fidelity_report.py "$work" --command "bash tools/bench/fidelity.sh (ITERS=$iters WARMUP=$warmup)" \
  --load "$loadavg_start" "$loadavg_end"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[fidelity] wrote $out/README.md" >&2
