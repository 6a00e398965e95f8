#!/usr/bin/env bash
# `splitbrain calibrate --model` reads how much a gradient reduction beside the backward costs off
# the model's own data-parallel step (tools/calibration/step_overlap_calibration.h), and writes it.
# Usage: calibrate_step_overlap.sh SPLITBRAIN_BINARY MPIEXEC
set -euo pipefail
binary=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# An MLP of 3 hidden layers 3000 wide (108 MB of weights, several buckets): its data-parallel step
# is run both ways and the overlap read off it is the cluster file's, unless the steps ran faster
# than even full overlap prices them (a link priced too high), when the probe's stays.
mlp=mlp:hidden=3000,layers=3
"$mpiexec" -np 2 "$binary" calibrate --repeats 1 --model "$mlp" --out "$work/cluster-mlp.json" > "$work/calibrate-mlp.log"
grep -q "^\[calibrate\] overlap in the step: $mlp: the reductions cost the step [0-9.]* ms (the pairs of steps spread [0-9.]* ms); priced" \
  "$work/calibrate-mlp.log" || { cat "$work/calibrate-mlp.log"; exit 1; }
/usr/bin/python3 - "$work/cluster-mlp.json" "$work/calibrate-mlp.log" <<'PY'
import json, re, sys
cluster = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
overlap = cluster.get("communication_overlap", 1.0)
from_step = any("communication_overlap" in s and "step_overlap_calibration.h" in s for s in cluster["sources"])
printed = re.search(r"overlap in the step: ([-+][0-9.]+) \(the host pays", log)
not_read = re.search(r"overlap in the step: not read: the reductions cost the step ([0-9.]+) ms, priced ([0-9.]+) ms even all hidden", log)
assert bool(printed) != bool(not_read), "the step's overlap neither read nor refused, or both"
if printed:
    assert -1.0 <= overlap <= 1.0 and abs(overlap - float(printed.group(1))) < 0.005, (overlap, printed.group(1))
    assert from_step, cluster["sources"]
else:
    assert float(not_read.group(1)) < float(not_read.group(2)), not_read.group(0)
    probe = re.search(r"\] overlap: .* -> ([-+][0-9.]+) \(the host pays", log)
    assert probe and abs(overlap - float(probe.group(1))) < 0.005, (overlap, probe and probe.group(1))
    assert not from_step, cluster["sources"]
PY
echo "calibrate step overlap: ok"
