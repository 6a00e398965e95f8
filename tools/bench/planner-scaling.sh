#!/usr/bin/env bash
# Predicted speedup and memory saving against data parallelism, per plan family, for the VGG
# CIFAR-10 models on two cluster presets and 1 to 64 devices (strong scaling: global batch 1024).
# Writes results/planner-scaling/{rankings/*.csv, scaling.csv, README.md, *.png}.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/planner-scaling
mkdir -p "$out/rankings"
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
for model in vgg16-cifar10 vgg11-cifar10; do
  for cluster in dgx-a100-80g v100-pcie-10gbe; do
    for devices in 1 2 4 8 16 32 64; do
      echo "[scaling] $model on $devices x $cluster" >&2
      ./build/tools/splitbrain plan --model "$model" --cluster "$cluster" --devices "$devices" --batch 1024 \
        --csv "$out/rankings/$model-$cluster-$devices.csv" > /dev/null 2>&1
    done
  done
done
/usr/bin/python3 tools/bench/planner_scaling_report.py "$out"
