#!/usr/bin/env bash
# The README's example, run for real: calibrate this machine, plan vgg11-cifar10 on 2 ranks with
# the measured rates, predict the top plan, run it under mpirun and compare. Writes every command's
# output to results/readme-example/ (output.txt), with the machine and its load.
# Usage: bash tools/bench/readme-example.sh   (after bash tools/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/results/readme-example
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH=$root/build/tools:$PATH
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
cd "$work"
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo '$ mpirun -np 2 splitbrain calibrate --model vgg11-cifar10 --batch 48 --out cluster.json'
  mpirun -np 2 splitbrain calibrate --model vgg11-cifar10 --batch 48 --out cluster.json | tail -1
  echo '$ splitbrain plan --model vgg11-cifar10 --devices 2 --batch 48 --cluster cluster.json --emit-plans plans-out'
  splitbrain plan --model vgg11-cifar10 --devices 2 --batch 48 --cluster cluster.json --emit-plans plans-out | sed -n '6,$p'
  plan=plans-out/$(ls plans-out | head -1)
  echo "\$ splitbrain simulate --plan $plan --cluster cluster.json --json predicted.json"
  splitbrain simulate --plan "$plan" --cluster cluster.json --json predicted.json
  echo "\$ mpirun -np 2 splitbrain run --plan $plan --data synthetic --report measured.json"
  mpirun -np 2 splitbrain run --plan "$plan" --data synthetic --report measured.json | tail -1
  echo '$ splitbrain compare predicted.json measured.json --out cmp'
  splitbrain compare predicted.json measured.json --out cmp | grep -v '^cmp/\|^figures:\|^wrote\|^merged'
  echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/output.txt.tmp" 2>&1
mv "$out/output.txt.tmp" "$out/output.txt"
echo "wrote $out/output.txt"
