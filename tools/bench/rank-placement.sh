#!/usr/bin/env bash
# Step time by rank placement: vgg11-cifar10 (batch 48) on 2 ranks, the planner's top plans
# (local-cpu preset) plus the data-parallel one, each run three ways:
#   splitbrain: mpirun --bind-to none (the launcher does not bind; splitbrain pins each rank)
#   launcher:   mpirun --bind-to core (the launcher binds; splitbrain keeps it)
#   unbound:    mpirun --bind-to none + run --no-bind (nobody binds)
# interleaved over ROUNDS rounds (the order of the ways rotates each round, so a slow minute of the
# shared host falls on every way alike); the table holds each plan's and way's median step time.
# "--bind-to none" stands for a launcher that does not bind: Open MPI 4 binds jobs of up to 2 ranks
# to cores by itself (the README records what a plain `mpirun -np 2` does here).
# Writes results/rank-placement/: README.md, results.json, results.csv (made in a temporary
# folder and renamed, so nothing is left half-written).
# Knobs (environment): ROUNDS (3), WARMUP (2), ITERS (8), TOP (3 plans from the ranking, plus
# data-parallel). About 3 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/rank-placement
rounds=${ROUNDS:-3} warmup=${WARMUP:-2} iters=${ITERS:-8} top=${TOP:-3}
model=vgg11-cifar10 batch=48 ranks=2 data=synthetic:shape=3x32x32
python=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rank-placement.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/rank-placement
mkdir -p "$work" "$tmp/runs"

echo "[rank-placement] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
# What Open MPI does here without binding flags, for the README.
mpirun -np "$ranks" grep Cpus_allowed_list /proc/self/status | sort > "$work/plain-mpirun-binding.txt"

"$sb" plan --model "$model" --devices "$ranks" --batch "$batch" --cluster local-cpu --emit-plans "$tmp/plans" > /dev/null
plans=()
for plan in $(ls "$tmp/plans"/*.json | sort | head -n "$top"); do plans+=("$plan"); done
data_parallel=$(ls "$tmp/plans"/*.json | sort | grep -m1 -- '-data-parallel' || true)
if [ -n "$data_parallel" ] && [[ " ${plans[*]} " != *" $data_parallel "* ]]; then plans+=("$data_parallel"); fi

run_way() {  # way plan round
  local way=$1 plan=$2 round=$3 name
  name=$(basename "$plan" .json)
  local report=$tmp/runs/$name-$way-$round.json
  local launch=(mpirun -np "$ranks" --bind-to none) extra=()
  case "$way" in
    launcher) launch=(mpirun -np "$ranks" --bind-to core) ;;
    unbound) extra=(--no-bind) ;;
  esac
  echo "[rank-placement] round $round/$rounds: $name, $way" >&2
  "${launch[@]}" "$sb" run --backend cpu --plan "$plan" --data "$data" --warmup "$warmup" --iters "$iters" --log-every 1000 \
    "${extra[@]}" --report "$report" > "$tmp/runs/$name-$way-$round.log" 2>&1 \
    || { echo "[rank-placement]   failed: $(tail -n 1 "$tmp/runs/$name-$way-$round.log")" >&2; rm -f "$report"; }
}
ways=(splitbrain launcher unbound)
for round in $(seq 1 "$rounds"); do
  for plan in "${plans[@]}"; do
    for i in 0 1 2; do run_way "${ways[$(((i + round - 1) % 3))]}" "$plan" "$round"; done
  done
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

command="bash tools/bench/rank-placement.sh (ROUNDS=$rounds WARMUP=$warmup ITERS=$iters TOP=$top)"
"$python" tools/bench/rank_placement_report.py "$tmp/runs" "$work" --command "$command" --load "$loadavg_start" "$loadavg_end" \
  --cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" --cpus "$(nproc)" --setup "$model, batch $batch, $ranks ranks, --data $data"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
cat "$out/README.md"
echo "[rank-placement] wrote $out/README.md" >&2
