#!/usr/bin/env bash
# Predicted against measured on this machine, after calibrating it: every plan the planner ranks
# for fashion-vgg and vgg11-cifar10 (batch 64) on 1 and 2 ranks is run for real (mpirun, one core
# per rank) in ROUNDS rounds, each after a fresh calibration (with the exact kernels of these
# models' plans) that predicts its runs, then compared. Plans the executor refuses
# are listed as skipped, with its message.
# Writes results/fidelity/: README.md (table, median and worst iteration error, memory error, bytes,
# ranking checks), results.json, rounds.txt (every round's predicted and measured step),
# predicted-vs-measured.{png,svg}, phases.{png,svg}, each round's calibrated cluster and
# calibrate's output, and compare/<plan>/ (comparison.json, figures, merged trace).
# Made in a temporary folder and renamed, so nothing is left half-written.
# Knobs (environment): TIMED_SECONDS (each run times at least this many seconds of steps by the
# prediction, 3), MIN_ITERS (timed steps at least, 8), WARMUP (2), ROUNDS (5), MODELS ("fashion-vgg
# vgg11-cifar10"), OUT (the report's folder, results/fidelity). About 28 minutes on 2 cores (each
# calibration about 3.5).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/fidelity}
timed_seconds=${TIMED_SECONDS:-3} min_iters=${MIN_ITERS:-8} warmup=${WARMUP:-2} rounds=${ROUNDS:-5} models=${MODELS:-"fashion-vgg vgg11-cifar10"} batch=64
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

# The host's speed drifts from minute to minute (shared vCPUs), so each round calibrates afresh
# and its runs are predicted with its own calibration: "predicted after calibrate" for every run.
calibrate_round() {  # round -> writes $work/calibrate-<round>.txt and $tmp/cluster-<round>.json
  echo "[fidelity] round $1/$rounds: calibrating (mpirun -np 2)" >&2
  mpirun -np 2 --bind-to core "$sb" calibrate --repeats 5 --batch "$batch" $(printf -- "--model %s " $models) \
    --out "$tmp/cluster-$1.json" > "$work/calibrate-$1.txt"
  tail -n 1 "$work/calibrate-$1.txt" >&2
}
calibrate_round 1
cluster=$tmp/cluster-1.json

data_for() {  # model -> synthetic data of its input shape
  case "$1" in
    fashion-vgg) echo synthetic:shape=1x28x28 ;;
    *) echo synthetic:shape=3x32x32 ;;
  esac
}

: > "$work/runs.txt"
# Plans first, then ROUNDS rounds over all of them (interleaved, so a slow minute of the shared
# host touches every plan alike); each plan's report is its round with the median error, each
# round's run against the prediction of that round's calibration.
plan_list=()
for model in $models; do
  for ranks in 1 2; do
    plans=$tmp/plans-$model-$ranks
    "$sb" plan --model "$model" --cluster "$cluster" --devices "$ranks" --batch "$batch" --top 30 --emit-plans "$plans" \
      --json "$work/ranking-$model-$ranks.json" > /dev/null 2>&1
    for plan in "$plans"/*.json; do
      name=$model-$ranks-$(basename "$plan" .json)
      mkdir -p "$tmp/runs/$name"
      plan_list+=("$model|$ranks|$plan|$name")
    done
  done
done
for round in $(seq 1 "$rounds"); do
  [ "$round" -gt 1 ] && calibrate_round "$round"
  for entry in "${plan_list[@]}"; do
    IFS='|' read -r model ranks plan name <<< "$entry"
    run=$tmp/runs/$name
    [ -f "$run/refused" ] && continue
    "$sb" simulate --plan "$plan" --cluster "$tmp/cluster-$round.json" --json "$run/prediction-$round.json" \
      --trace "$run/prediction-trace-$round.json" > /dev/null
    # Each run times at least TIMED_SECONDS of steps (by the prediction), so a short step (fashion-vgg's
    # 60 ms) is measured over as long a stretch of this noisy host as a long one.
    iters=$("$python" -c "import json, math, sys; s = json.load(open(sys.argv[1]))['iteration_seconds']; print(max($min_iters, math.ceil($timed_seconds / s)))" "$run/prediction-$round.json")
    echo "[fidelity] round $round/$rounds: $name ($iters steps)" >&2
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
  # Also appends every round's predicted and measured step to rounds.txt (the per-round ranking check).
  median_round=$("$python" - "$run" "$rounds" "$name" "$work/rounds.txt" <<'PY'
import json, sys
run, rounds, name, rounds_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
steps = {r: (json.load(open(f"{run}/prediction-{r}.json"))["iteration_seconds"],
             json.load(open(f"{run}/measured-{r}.json"))["iteration_seconds"]) for r in range(1, rounds + 1)}
with open(rounds_file, "a") as out:
    for r, (predicted, measured) in steps.items():
        print(name, r, predicted, measured, file=out)
errors = sorted((predicted / measured - 1.0, r) for r, (predicted, measured) in steps.items())
measured = sorted(m for _, m in steps.values())
print(errors[len(errors) // 2][1], measured[len(measured) // 2])
PY
)
  read -r median_round median_seconds <<< "$median_round"
  echo "$name $median_seconds" >> "$work/median-step-seconds.txt"
  "$sb" compare "$run/prediction-$median_round.json" "$run/measured-$median_round.json" --out "$work/compare/$name" \
    --predicted-trace "$run/prediction-trace-$median_round.json" --measured-trace "$run/measured-trace-$median_round.json" \
    > "$work/compare/$name.txt"
  echo "$name ran" >> "$work/runs.txt"
  head -n 3 "$work/compare/$name.txt" | tail -n 1 >&2
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" tools/bench/fidelity_report.py "$work" --command "bash tools/bench/fidelity.sh (TIMED_SECONDS=$timed_seconds MIN_ITERS=$min_iters WARMUP=$warmup ROUNDS=$rounds)" \
  --load "$loadavg_start" "$loadavg_end" --machine "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
for round in $(seq 1 "$rounds"); do cp "$tmp/cluster-$round.json" "$work/local-cpu-calibrated-$round.json"; done
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[fidelity] wrote $out/README.md" >&2
