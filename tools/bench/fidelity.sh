#!/usr/bin/env bash
# Predicted against measured on this machine, after calibrating it: every plan the planner ranks
# for fashion-vgg and vgg11-cifar10 (batch 64) on 1 and 2 ranks is simulated with the calibrated
# cluster and run for real (mpirun, one core per rank), then compared. Plans the executor refuses
# are listed as skipped, with its message.
# Writes results/fidelity/: README.md (table, median and worst iteration error, memory error, bytes,
# ranking check), results.json, predicted-vs-measured.{png,svg}, phases.{png,svg}, the calibrated
# cluster and calibrate's output, and compare/<plan>/ (comparison.json, figures, merged trace).
# Made in a temporary folder and renamed, so nothing is left half-written.
# Knobs (environment): ITERS (timed steps per run, 6), WARMUP (2), ROUNDS (3), MODELS ("fashion-vgg
# vgg11-cifar10"). About 4 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/fidelity
iters=${ITERS:-6} warmup=${WARMUP:-2} rounds=${ROUNDS:-3} models=${MODELS:-"fashion-vgg vgg11-cifar10"} batch=64
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
mpirun -np 2 --bind-to core "$sb" calibrate --repeats 9 --out "$work/local-cpu-calibrated.json" > "$work/calibrate.txt"
tail -n 1 "$work/calibrate.txt" >&2
cluster=$work/local-cpu-calibrated.json

data_for() {  # model -> synthetic data of its input shape
  case "$1" in
    fashion-vgg) echo synthetic:shape=1x28x28 ;;
    *) echo synthetic:shape=3x32x32 ;;
  esac
}

: > "$work/runs.txt"
# Plans first, then ROUNDS rounds over all of them (interleaved, so a slow minute of the shared
# host touches every plan alike); each plan's report is the round with its median step time.
plan_list=()
for model in $models; do
  for ranks in 1 2; do
    plans=$tmp/plans-$model-$ranks
    "$sb" plan --model "$model" --cluster "$cluster" --devices "$ranks" --batch "$batch" --top 30 --emit-plans "$plans" \
      --json "$work/ranking-$model-$ranks.json" > /dev/null 2>&1
    for plan in "$plans"/*.json; do
      name=$model-$ranks-$(basename "$plan" .json)
      mkdir -p "$tmp/runs/$name"
      "$sb" simulate --plan "$plan" --cluster "$cluster" --json "$tmp/runs/$name/prediction.json" \
        --trace "$tmp/runs/$name/prediction-trace.json" > /dev/null
      plan_list+=("$model|$ranks|$plan|$name")
    done
  done
done
for round in $(seq 1 "$rounds"); do
  for entry in "${plan_list[@]}"; do
    IFS='|' read -r model ranks plan name <<< "$entry"
    run=$tmp/runs/$name
    [ -f "$run/refused" ] && continue
    echo "[fidelity] round $round/$rounds: $name" >&2
    if ! mpirun -np "$ranks" --bind-to core "$sb" run --backend cpu --plan "$plan" --data "$(data_for "$model")" --warmup "$warmup" \
        --iters "$iters" --log-every 1000 --report "$run/measured-$round.json" --trace "$run/measured-trace-$round.json" \
        > "$run/run.txt" 2>&1; then
      echo "$name skipped $(grep -m1 -o 'not supported[^"]*\|cannot run[^"]*' "$run/run.txt" || tail -n 1 "$run/run.txt")" >> "$work/runs.txt"
      echo "[fidelity]   refused: $(tail -n 1 "$run/run.txt")" >&2
      touch "$run/refused"
    fi
  done
done
for entry in "${plan_list[@]}"; do
  IFS='|' read -r model ranks plan name <<< "$entry"
  run=$tmp/runs/$name
  [ -f "$run/refused" ] && continue
  median_round=$("$python" - "$run" "$rounds" <<'PY'
import json, sys
run, rounds = sys.argv[1], int(sys.argv[2])
times = sorted((json.load(open(f"{run}/measured-{r}.json"))["iteration_seconds"], r) for r in range(1, rounds + 1))
print(times[len(times) // 2][1])
PY
)
  "$sb" compare "$run/prediction.json" "$run/measured-$median_round.json" --out "$work/compare/$name" \
    --predicted-trace "$run/prediction-trace.json" --measured-trace "$run/measured-trace-$median_round.json" \
    > "$work/compare/$name.txt"
  echo "$name ran" >> "$work/runs.txt"
  head -n 3 "$work/compare/$name.txt" | tail -n 1 >&2
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" tools/bench/fidelity_report.py "$work" --command "bash tools/bench/fidelity.sh (ITERS=$iters WARMUP=$warmup ROUNDS=$rounds)" \
  --load "$loadavg_start" "$loadavg_end"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[fidelity] wrote $out/README.md" >&2
