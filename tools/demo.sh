#!/usr/bin/env bash
# The main job, on a built-in default: set up, build, then the whole loop on this machine —
# calibrate it, plan vgg11-cifar10 on 2 ranks with the measured rates, run the top-ranked plans
# and the data-parallel baseline for real under mpirun, and put predicted and measured side by
# side (per plan: table, figures, merged trace; across plans: the summary and its figures).
# Knobs (environment): TOP (best-ranked plans to run besides the baseline, 3), ITERS (5), WARMUP (2).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
model=vgg11-cifar10 batch=64 top=${TOP:-3} iters=${ITERS:-5} warmup=${WARMUP:-2}
out=build/demo
cluster=$out/local-cpu-calibrated.json
splitbrain=./build/tools/splitbrain

echo "== [1/6] dependencies"
bash tools/install-dependencies.sh
echo "== [2/6] build"
bash tools/build.sh > build.log 2>&1 || { tail -n 40 build.log; echo "build failed: see build.log"; exit 1; }
echo "   built $splitbrain"
rm -rf "$out" && mkdir -p "$out/compare"

echo "== [3/6] calibrate this machine (mpirun -np 2: kernels forward and backward, collectives, overlap, the exact kernels of $model's plans)"
mpirun -np 2 --bind-to core "$splitbrain" calibrate --model "$model" --batch "$batch" --out "$cluster" | tee "$out/calibrate.txt" | grep -E "fitted|overlap|problems|wrote"

echo "== [4/6] plan $model on 2 ranks of this machine (batch $batch)"
"$splitbrain" plan --model "$model" --cluster "$cluster" --devices 2 --batch "$batch" --top 12 --emit-plans "$out/plans" \
  --json "$out/ranking.json"
# The best-ranked plans and the data-parallel baseline (once, if it is among the best).
mapfile -t chosen < <( (ls "$out"/plans/*.json | head -n "$top"; ls "$out"/plans/*-data-parallel*.json | head -n 1) | awk '!seen[$0]++')

: > "$out/runs.txt"
for plan in "${chosen[@]}"; do
  name=$(basename "$plan" .json)
  echo "== [5/6] run $name for real (mpirun -np 2, synthetic CIFAR-shaped data, $warmup warm-up + $iters measured steps)"
  "$splitbrain" simulate --plan "$plan" --cluster "$cluster" --json "$out/$name.prediction.json" \
    --trace "$out/$name.prediction-trace.json" > /dev/null
  if ! mpirun -np 2 --bind-to core "$splitbrain" run --backend cpu --plan "$plan" --data synthetic:shape=3x32x32 --warmup "$warmup" \
      --iters "$iters" --log-every 1 --report "$out/$name.measured.json" --trace "$out/$name.measured-trace.json"; then
    echo "$name skipped (the executor refused it: see above)" | tee -a "$out/runs.txt"
    continue
  fi
  echo "$name ran" >> "$out/runs.txt"
done

for plan in "${chosen[@]}"; do
  name=$(basename "$plan" .json)
  [ -f "$out/$name.measured.json" ] || continue
  echo "== [6/6] predicted vs measured: $name"
  "$splitbrain" compare "$out/$name.prediction.json" "$out/$name.measured.json" --out "$out/compare/$name" \
    --predicted-trace "$out/$name.prediction-trace.json" --measured-trace "$out/$name.measured-trace.json"
done

echo
echo "== summary over the plans run"
/usr/bin/python3 tools/bench/fidelity_report.py "$out" --command "bash tools/demo.sh" --load "$(cut -d' ' -f1-3 /proc/loadavg)" "-"
sed -n '/^- plans run/,/^$/p' "$out/README.md"
echo "figures: $out/predicted-vs-measured.png, $out/phases.png and $out/compare/<plan>/{phases,memory}.{png,svg}"
echo "merged traces (chrome://tracing, Perfetto): $out/compare/<plan>/trace.json"
echo "everything: $out/"
