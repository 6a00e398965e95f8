#!/usr/bin/env bash
# The main job, on a built-in default: set up, build, then the whole loop on this machine —
# plan vgg11-cifar10 on 2 ranks, run the top-ranked plan and the data-parallel baseline for real
# under mpirun, and put predicted and measured side by side.
# (Calibration of this machine is not written yet: the prediction uses the local-cpu preset's
# placeholder rates, so times differ; bytes are exact and memory is close. README's status table.)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
model=vgg11-cifar10 batch=64 cluster=local-cpu
out=build/demo
splitbrain=./build/tools/splitbrain

echo "== [1/5] dependencies"
bash tools/install-dependencies.sh
echo "== [2/5] build"
bash tools/build.sh > build.log 2>&1 || { tail -n 40 build.log; echo "build failed: see build.log"; exit 1; }
echo "   built $splitbrain"
rm -rf "$out" && mkdir -p "$out"

echo "== [3/5] plan $model on 2 ranks of $cluster (batch $batch)"
"$splitbrain" plan --model "$model" --cluster "$cluster" --devices 2 --batch "$batch" --top 8 --emit-plans "$out/plans" \
  --json "$out/ranking.json"
# The best-ranked plan the executor can run today (ZeRO and recompute are planned and simulated
# but not executed yet), and the data-parallel baseline.
best=$(ls "$out"/plans/*.json | grep -Ev 'zero|recompute' | head -n 1)
baseline=$(ls "$out"/plans/*-data-parallel*.json | head -n 1)

for plan in "$best" "$baseline"; do
  name=$(basename "$plan" .json)
  echo "== [4/5] run $name for real (mpirun -np 2, synthetic CIFAR-shaped data, 2 warm-up + 5 measured steps)"
  "$splitbrain" simulate --plan "$plan" --cluster "$cluster" --json "$out/$name.prediction.json"
  mpirun -np 2 "$splitbrain" run --plan "$plan" --data synthetic:shape=3x32x32 --warmup 2 --iters 5 --log-every 1 \
    --report "$out/$name.measured.json"
done

for plan in "$best" "$baseline"; do
  name=$(basename "$plan" .json)
  echo "== [5/5] predicted vs measured: $name"
  "$splitbrain" compare "$out/$name.prediction.json" "$out/$name.measured.json" --out "$out/$name"
done
echo
echo "reports and comparisons: $out/"
