#!/usr/bin/env bash
# `splitbrain plan --export torchrun` end to end: the tiny GPT's best 2-device data-parallel plan
# exported, then run by its launch.sh (torch.distributed.run, 2 processes, gloo on CPU) for a few
# steps; every loss must be finite and the mean loss of the last third of the steps below that of
# the first third.
# Exits 77 (ctest: skipped) with the reason where PyTorch is not installed (Debian: python3-torch).
# Usage: torchrun_export_test.sh SPLITBRAIN_BINARY
set -euo pipefail
binary=$1
model=gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16

skip() { echo "SKIP: $*"; exit 77; }
python=
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" > /dev/null && "$candidate" -c "import torch.distributed.run" 2> /dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || skip "no python3 with PyTorch (install python3-torch)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$binary" plan --model "$model" --devices 2 --batch 16 --export torchrun --export-dir "$work/out" > "$work/plan.txt"
launch=$(ls "$work"/out/*/launch.sh)
grep -q -- "--nproc_per_node 2" "$launch" || { echo "FAIL: $launch does not start 2 processes"; cat "$launch"; exit 1; }

# A free port: ctest may run other distributed tests at the same time.
port=$("$python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
PYTHON=$python STEPS=10 MASTER_PORT=$port OMP_NUM_THREADS=1 "$launch" --require-decrease > "$work/run.txt" 2>&1 || {
  echo "FAIL: the exported launch failed:"; cat "$work/run.txt"; exit 1;
}
grep "loss" "$work/run.txt"
grep -q "step 10 loss" "$work/run.txt" || { echo "FAIL: no loss of step 10"; cat "$work/run.txt"; exit 1; }
echo "PASS"
