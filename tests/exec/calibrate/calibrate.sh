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
"$binary" simulate --plan "$source/plans/examples/fashion-vgg-splitbrain-2.json" --cluster "$work/cluster.json" \
  --json "$work/prediction.json" > /dev/null
grep -q '"cluster": "local-cpu-calibrated"' "$work/prediction.json"
echo "calibrate: ok"
