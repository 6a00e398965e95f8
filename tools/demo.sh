#!/usr/bin/env bash
# The main job, on a built-in default: set up, build, then the whole loop on this machine —
# calibrate it, plan vgg11-cifar10 on 2 ranks with the measured rates, run the top-ranked plan
# and the data-parallel baseline for real under mpirun, and put predicted and measured side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
model=vgg11-cifar10 batch=64
out=build/demo
cluster=$out/local-cpu-calibrated.json
splitbrain=./build/tools/splitbrain

echo "== [1/6] dependencies"
bash tools/install-dependencies.sh
echo "== [2/6] build"
bash tools/build.sh > build.log 2>&1 || { tail -n 40 build.log; echo "build failed: see build.log"; exit 1; }
echo "   built $splitbrain"
rm -rf "$out" && mkdir -p "$out"

echo "== [3/6] calibrate this machine (mpirun -np 2: kernels, memory, all-reduce)"
mpirun -np 2 "$splitbrain" calibrate --out "$cluster"

echo "== [4/6] plan $model on 2 ranks of this machine (batch $batch)"
"$splitbrain" plan --model "$model" --cluster "$cluster" --devices 2 --batch "$batch" --top 8 --emit-plans "$out/plans" \
  --json "$out/ranking.json"
# The best-ranked plan the executor can run today (ZeRO and recompute are planned and simulated
# but not executed yet), and the data-parallel baseline.
best=$(ls "$out"/plans/*.json | grep -Ev 'zero|recompute' | head -n 1)
baseline=$(ls "$out"/plans/*-data-parallel*.json | head -n 1)

for plan in "$best" "$baseline"; do
  name=$(basename "$plan" .json)
  echo "== [5/6] run $name for real (mpirun -np 2, synthetic CIFAR-shaped data, 2 warm-up + 5 measured steps)"
  "$splitbrain" simulate --plan "$plan" --cluster "$cluster" --json "$out/$name.prediction.json"
  mpirun -np 2 "$splitbrain" run --plan "$plan" --data synthetic:shape=3x32x32 --warmup 2 --iters 5 --log-every 1 \
    --report "$out/$name.measured.json"
done

for plan in "$best" "$baseline"; do
  name=$(basename "$plan" .json)
  echo "== [6/6] predicted vs measured: $name"
  "$splitbrain" compare "$out/$name.prediction.json" "$out/$name.measured.json" --out "$out/$name"
done
echo
echo "reports and comparisons: $out/"
