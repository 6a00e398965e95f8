#!/usr/bin/env bash
# Does `splitbrain plan` beat the experts? The 10 GPTs of Narayanan et al., SC21, Table 1: the
# published Megatron-LM plans and the same meshes with Megatron-LM's later practice (sequence
# parallelism, selective recomputation, interleaved 1F1B), against the planner's best plan for the
# same job (tools/bench/planner_vs_experts.py says how). Arguments go to it: `--rows 1,5,8` runs
# those rows only (the full run takes 15-25 minutes on 2 CPUs). Writes results/planner-vs-experts/
# (README.md, results.json, results.csv, plans/), made in a temporary folder and renamed. Needs a
# Release build (./build/tools/splitbrain, or SPLITBRAIN=path). Simulator only.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${SPLITBRAIN:-./build/tools/splitbrain}
[ -x "$binary" ] || { echo "planner-vs-experts: no splitbrain at $binary (build first, or set SPLITBRAIN)" >&2; exit 2; }
out=results/planner-vs-experts
tmp=$(mktemp -d "results/.planner-vs-experts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/bench/planner_vs_experts.py "$binary" "$tmp" "$@"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "[planner-vs-experts] wrote $out/README.md" >&2
