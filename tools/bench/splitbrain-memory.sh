#!/usr/bin/env bash
# The SplitBrain claim on our own terms: per-rank memory of the SplitBrain family (convolutions
# data-parallel, the classifier sharded in groups of g ranks) against data parallelism, for the
# VGG CIFAR-10 models on 2, 4 and 8 ranks (32 samples per rank), predicted by the simulator and
# measured by the executor's tracking allocator (exact under oversubscription: memory does not
# depend on timing). Ranks beyond the 2 cores run oversubscribed.
# Writes results/splitbrain-memory/{README.md, results.json, memory-saving.{png,svg}}; made in a
# temporary folder and renamed. Knobs (environment): MODELS ("vgg11-cifar10 vgg16-cifar10"),
# RANKS ("2 4 8"). About 6 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/splitbrain-memory
models=${MODELS:-"vgg11-cifar10 vgg16-cifar10"} rank_counts=${RANKS:-"2 4 8"}
python=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/splitbrain-memory.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/splitbrain-memory
mkdir -p "$work/reports"

echo "[memory] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain

for model in $models; do
  for ranks in $rank_counts; do
    batch=$((32 * ranks))
    plans=$tmp/plans-$model-$ranks
    # Any cluster with 8 devices: memory predictions do not depend on the device's speed.
    "$sb" plan --model "$model" --cluster dgx-a100-80g --devices "$ranks" --batch "$batch" --top 40 --emit-plans "$plans" \
      > /dev/null 2>&1
    for plan in "$plans"/*-data-parallel*.json "$plans"/*-splitbrain-*.json; do
      family=$(basename "$plan" .json | sed -E 's/^[0-9]+-//; s/-best$//')
      name=$model-$ranks-$family
      echo "[memory] $name (mpirun -np $ranks)" >&2
      "$sb" simulate --plan "$plan" --cluster dgx-a100-80g --json "$work/reports/$name.prediction.json" > /dev/null
      mpirun -np "$ranks" --oversubscribe "$sb" run --backend cpu --plan "$plan" --data synthetic:shape=3x32x32 --warmup 0 --iters 1 \
        --log-every 1000 --report "$work/reports/$name.measured.json" > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; exit 1; }
    done
  done
done

"$python" tools/bench/splitbrain_memory_report.py "$work" --command "bash tools/bench/splitbrain-memory.sh"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[memory] wrote $out/README.md" >&2
