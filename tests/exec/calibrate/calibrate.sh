#!/usr/bin/env bash
# `splitbrain calibrate` under mpirun writes a cluster file that the simulator accepts, with
# measured (positive, finite) rates and the preset's structure.
# Usage: calibrate.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
set -euo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mpiexec" -np 2 "$binary" calibrate --repeats 2 --model fashion-vgg --out "$work/cluster.json" > "$work/calibrate.log"
grep -q "all_reduce" "$work/calibrate.log"
grep -q '"name": "local-cpu-calibrated"' "$work/cluster.json"
# Every collective the runtime runs is measured and fitted, forward and backward kernels too.
for kind in all_reduce all_gather reduce_scatter all_to_all send_recv; do
  grep -q "\"$kind\": {" "$work/cluster.json" || { echo "no fitted link for $kind"; exit 1; }
  grep -q "\[calibrate\] $kind" "$work/calibrate.log" || { echo "no measurements of $kind"; exit 1; }
done
# Each link with the factor its bandwidth reached per size, 1 at the largest (the fitted line).
/usr/bin/python3 - "$work/cluster.json" <<'PY'
import json, sys
links = json.load(open(sys.argv[1]))["levels"][0]["collective_links"]
for kind, link in links.items():
    by_size = link["bandwidth_factors"]
    assert len(by_size["buffer_bytes"]) == len(by_size["factors"]) >= 3, (kind, by_size)
    assert by_size["buffer_bytes"][-1] == 64 << 20 and 0.5 < by_size["factors"][-1] < 2.0, (kind, by_size)
PY
# No memory-bound call is charged more fixed time (half size / rate) than a short update took.
/usr/bin/python3 - "$work/cluster.json" "$work/calibrate.log" <<'PY'
import json, re, sys
device = json.load(open(sys.argv[1]))["device"]
# Timed as N back-to-back calls ("x N"), their caches warm; the line gives the N calls' time.
short = re.search(r"sgd-momentum update 4096 parameters x([0-9]+)\s+([0-9.]+) ms", open(sys.argv[2]).read())
assert short, "no short update timed"
short_seconds = float(short.group(2)) * 1e-3 / int(short.group(1))
curves = [device["memory_efficiency"]] + [c for pair in device["op_memory_efficiency"].values() for c in pair.values()]
for curve in curves:
    fixed = curve["half_efficiency_bytes"] / (device["memory_bandwidth_bytes_per_second"] * curve["max_efficiency"])
    assert fixed <= short_seconds * 1.01 + 1e-6, (curve, fixed, short_seconds)
PY
grep -q '"backward_efficiency"' "$work/cluster.json"
grep -q '"op_memory_efficiency"' "$work/cluster.json"
grep -q '"weight_gradient_efficiency"' "$work/cluster.json"
# The GEMM table over its whole grid, with progress.
grep -q '"gemm_table"' "$work/cluster.json"
grep -q '^\[calibrate\] gemm table: 48 shapes in ' "$work/calibrate.log"
grep -q "overlap:" "$work/calibrate.log"
# fashion-vgg's gradients fill one bucket, reduced after the backward: its step cannot say how much
# a reduction beside the backward costs, so the probe's overlap stays.
grep -q "^\[calibrate\] overlap in the step: no model's data-parallel step reduces a bucket beside" \
  "$work/calibrate.log"
# A pipeline message's host overheads between ranks 0 and 1, measured and written (LogGP's o).
/usr/bin/python3 - "$work/cluster.json" "$work/calibrate.log" <<'PY'
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
for key in ("send_overhead", "receive_overhead"):
    overhead = level[key]
    assert 0.0 <= overhead["seconds"] < 0.01 and 0.0 <= overhead["seconds_per_byte"] <= 1e-6, (key, overhead)
    assert overhead["seconds"] + overhead["seconds_per_byte"] * 8192 > 0.0, (key, overhead)
assert "a pipeline message's host overheads" in open(sys.argv[2]).read()
PY
# Where the ranks ran is printed and kept with the measurements (exec/comm/rank_placement.h).
grep -q '^\[calibrate\] placement: rank 0 cpus .*, rank 1 cpus ' "$work/calibrate.log"
grep -q '"splitbrain calibrate: rank placement rank 0 cpus ' "$work/cluster.json"
# --model: the exact kernels of fashion-vgg's plans (convolutions, pooling, activations, linear layers), on 1
# rank alone and on 2 at once.
grep -q '"measured_kernels"' "$work/cluster.json"
grep -q 'conv2d n64 c1 h28 w28 k32 r3x3 s1x1 p1,1,1,1 d1x1 g1 bias, 1 busy' "$work/cluster.json"
grep -q 'conv2d n32 c1 h28 w28 k32 r3x3 s1x1 p1,1,1,1 d1x1 g1 bias, 2 busy' "$work/cluster.json"
grep -q '"problem": "maxpool n64 c32 h28 w28 r2x2 s2x2 p0,0, 1 busy"' "$work/cluster.json"
grep -q '"problem": "relu 1605632, 1 busy"' "$work/cluster.json"
grep -q '"problem": "linear m64 k3136 n256 bias, 1 busy"' "$work/cluster.json"
# Each also with the caches warm, read against the cache size where Linux gives one.
grep -q '"problem": "linear m64 k3136 n256 bias, 1 busy, caches warm"' "$work/cluster.json"
if [ -r /sys/devices/system/cpu/cpu0/cache/index0/size ]; then grep -q '"last_level_cache_bytes"' "$work/cluster.json"; fi
# A pipeline's kernels at every micro-batch the planner may pick on 2 stages (64 / {2, 4, 8, 16}).
for n in 4 8 16; do grep -q "conv2d n$n c1 h28 w28 k32 r3x3 s1x1 p1,1,1,1 d1x1 g1 bias, 2 busy" "$work/cluster.json"; done
# Two ranks at once cannot be measured by one.
status=0
"$mpiexec" -np 1 "$binary" calibrate --repeats 1 --model fashion-vgg --devices 2 --out "$work/refused.json" \
  > "$work/refused.log" 2>&1 || status=$?
[ "$status" -eq 2 ] || { echo "calibrate --devices 2 on 1 rank: exit $status, expected 2"; exit 1; }
grep -q "mpirun -np 2" "$work/refused.log" || { cat "$work/refused.log"; exit 1; }
[ ! -e "$work/refused.json" ] || { echo "refused calibration wrote a file"; exit 1; }
"$binary" simulate --plan "$source/plans/examples/fashion-vgg-splitbrain-2.json" --cluster "$work/cluster.json" \
  --json "$work/prediction.json" > /dev/null
grep -q '"cluster": "local-cpu-calibrated"' "$work/prediction.json"
echo "calibrate: ok"
