#!/usr/bin/env bash
# The main job on a built-in default: sets up, builds, shows the model zoo and the per-layer
# analysis of vgg11-cifar10, then predicts a training step of it under a hybrid plan (Gholami's
# batch x model grid on 4 GPUs of a DGX A100). The plan -> run -> compare loop joins here as the
# planner and the executor land; see the status table in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== [1/4] dependencies"
bash tools/install-dependencies.sh
echo "== [2/4] build"
bash tools/build.sh > build.log 2>&1 || { tail -n 40 build.log; echo "build failed: see build.log"; exit 1; }
echo "   built build/tools/splitbrain"
echo "== [3/4] the model zoo, then vgg11-cifar10 at batch 64"
./build/tools/splitbrain models
echo
./build/tools/splitbrain inspect --model vgg11-cifar10 --batch 64
echo
echo "== [4/4] one predicted training step: plans/examples/vgg11-cifar10-gholami-grid-4.json on dgx-a100-80g"
./build/tools/splitbrain simulate --plan plans/examples/vgg11-cifar10-gholami-grid-4.json --cluster dgx-a100-80g
