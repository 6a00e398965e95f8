#!/usr/bin/env bash
# The checks that need a GPU, on a machine that has one: build with the CUDA backend, run the GPU
# tests (`ctest -L gpu`: the NCCL engine against the MPI engine needs one GPU per rank, 2 ranks),
# then predicted against measured on the cuda backend: plan fashion-vgg for as many ranks as
# there are GPUs (at most 2) on the dgx-h100 cluster file, simulate the best plan, run it for
# real with `run --backend cuda` and compare.
# Writes results/gpu/: README.md (device, commands, outcome), ctest-gpu.txt, the plan, the
# prediction and measurement (reports and traces), run.txt and compare/ (comparison.json, figures,
# merged trace). Made in a temporary folder and renamed, so nothing is left half-written.
# Knobs (environment): BUILD (build folder, build-gpu), ITERS (10), WARMUP (3), MODEL (fashion-vgg),
# CLUSTER (dgx-h100).
set -euo pipefail
cd "$(dirname "$0")/.."
out=results/gpu
build=${BUILD:-build-gpu} iters=${ITERS:-10} warmup=${WARMUP:-3}
model=${MODEL:-fashion-vgg} cluster=${CLUSTER:-dgx-h100} batch=64
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -eq 0 ]; then
  echo "[gpu-checks] no GPU visible (nvidia-smi -L lists none): nothing to check here" >&2
  exit 2
fi
ranks=$(( gpus < 2 ? gpus : 2 ))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-checks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/gpu
mkdir -p "$work"
nvidia-smi -L > "$work/devices.txt"

echo "[gpu-checks] building with the CUDA backend in $build" >&2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPLITBRAIN_CUDA=ON > "$work/cmake.txt"
cmake --build "$build" -j "$(nproc)" > "$work/build.txt" 2>&1 || { tail -n 40 "$work/build.txt"; exit 1; }
sb=$build/tools/splitbrain

echo "[gpu-checks] ctest -L gpu" >&2
tests_ok=yes
ctest --test-dir "$build" -L gpu --output-on-failure > "$work/ctest-gpu.txt" 2>&1 || tests_ok=no
tail -n 4 "$work/ctest-gpu.txt" >&2

echo "[gpu-checks] $model on $ranks rank(s), cluster $cluster, --backend cuda" >&2
"$sb" plan --model "$model" --cluster "$cluster" --devices "$ranks" --batch "$batch" --top 1 --emit-plans "$tmp/plans" \
  > "$work/plan.txt"
plan=$(ls "$tmp"/plans/*.json | head -n 1)
cp "$plan" "$work/plan.json"
"$sb" simulate --plan "$work/plan.json" --cluster "$cluster" --json "$work/prediction.json" \
  --trace "$work/prediction-trace.json" > /dev/null
run_ok=yes
mpirun -np "$ranks" "$sb" run --plan "$work/plan.json" --backend cuda --data synthetic:shape=1x28x28 --warmup "$warmup" \
  --iters "$iters" --log-every 1 --report "$work/measured.json" --trace "$work/measured-trace.json" \
  > "$work/run.txt" 2>&1 || run_ok=no
tail -n 2 "$work/run.txt" >&2
if [ "$run_ok" = yes ]; then
  "$sb" compare "$work/prediction.json" "$work/measured.json" --out "$work/compare" \
    --predicted-trace "$work/prediction-trace.json" --measured-trace "$work/measured-trace.json" > "$work/compare.txt"
  cat "$work/compare.txt" >&2
fi

{
  echo "# GPU checks"
  echo
  echo "Made by \`bash tools/gpu-checks.sh\` (ITERS=$iters WARMUP=$warmup MODEL=$model CLUSTER=$cluster) at commit"
  echo "$(git rev-parse --short HEAD 2> /dev/null || echo unknown) on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "Devices:"
  echo
  sed 's/^/    /' "$work/devices.txt"
  echo
  echo "- \`ctest -L gpu\`: $( [ "$tests_ok" = yes ] && echo passed || echo FAILED ) ($(grep -E 'tests passed|tests failed' "$work/ctest-gpu.txt" | tail -n 1)); see \`ctest-gpu.txt\`"
  echo "- \`mpirun -np $ranks splitbrain run --backend cuda\` on \`plan.json\`: $( [ "$run_ok" = yes ] && echo ran || echo "refused or failed: $(tail -n 1 "$work/run.txt")" )"
  if [ "$run_ok" = yes ]; then
    echo
    echo "Predicted (\`$cluster\`) against measured:"
    echo
    echo '```'
    cat "$work/compare.txt"
    echo '```'
  fi
} > "$work/README.md"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[gpu-checks] wrote $out/README.md" >&2
[ "$tests_ok" = yes ] && [ "$run_ok" = yes ]
