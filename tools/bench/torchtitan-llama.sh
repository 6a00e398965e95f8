#!/usr/bin/env bash
# Predicted against published, out of sample: torchtitan's Llama 3 training throughput with FSDP2 on
# 64 A100 80GB (pytorch/torchtitan docs/performance.md), each row's job written as a splitbrain
# plan and simulated on dgx-a100-80g:nodes=8 as shipped (tools/bench/torchtitan_llama.py says how).
# Writes results/torchtitan-llama/ (README.md, results.json, plans/), made in a temporary folder and
# renamed. Needs a build (./build/tools/splitbrain, or SPLITBRAIN=path). Simulator only: seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${SPLITBRAIN:-./build/tools/splitbrain}
[ -x "$binary" ] || { echo "torchtitan-llama: no splitbrain at $binary (build first, or set SPLITBRAIN)" >&2; exit 2; }
out=results/torchtitan-llama
tmp=$(mktemp -d "results/.torchtitan-llama.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/bench/torchtitan_llama.py "$binary" "$tmp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "[torchtitan-llama] wrote $out/README.md" >&2
