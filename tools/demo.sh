#!/usr/bin/env bash
# The main job on a built-in default: sets up, builds, then shows the model zoo and the
# per-layer analysis of vgg11-cifar10. (The plan -> run -> compare loop joins here as the
# planner and the executor land; see the status table in README.md.)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== [1/3] dependencies"
bash tools/install-dependencies.sh
echo "== [2/3] build"
bash tools/build.sh > build.log 2>&1 || { tail -n 40 build.log; echo "build failed: see build.log"; exit 1; }
echo "   built build/tools/splitbrain"
echo "== [3/3] the model zoo, then vgg11-cifar10 at batch 64"
./build/tools/splitbrain models
echo
./build/tools/splitbrain inspect --model vgg11-cifar10 --batch 64
