#!/usr/bin/env bash
# `splitbrain calibrate` under mpirun writes a cluster file that the simulator accepts, with
# measured (positive, finite) rates and the preset's structure.
# Usage: calibrate.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
set -euo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mpiexec" -np 2 "$binary" calibrate --repeats 2 --out "$work/cluster.json" > "$work/calibrate.log"
grep -q "all_reduce" "$work/calibrate.log"
grep -q '"name": "local-cpu-calibrated"' "$work/cluster.json"
# Every collective the runtime runs is measured and fitted, forward and backward kernels too.
for kind in all_reduce all_gather reduce_scatter all_to_all send_recv; do
  grep -q "\"$kind\": {" "$work/cluster.json" || { echo "no fitted link for $kind"; exit 1; }
  grep -q "\[calibrate\] $kind" "$work/calibrate.log" || { echo "no measurements of $kind"; exit 1; }
done
grep -q '"backward_efficiency"' "$work/cluster.json"
grep -q '"op_memory_efficiency"' "$work/cluster.json"
grep -q '"weight_gradient_efficiency"' "$work/cluster.json"
grep -q "overlap:" "$work/calibrate.log"
"$binary" simulate --plan "$source/plans/examples/fashion-vgg-splitbrain-2.json" --cluster "$work/cluster.json" \
  --json "$work/prediction.json" > /dev/null
grep -q '"cluster": "local-cpu-calibrated"' "$work/prediction.json"
echo "calibrate: ok"
