#!/usr/bin/env bash
# Fully connected layers predicted with the flat GEMM curve and with the GEMM table, against
# measured, on this machine: one `splitbrain calibrate` (1 rank, without --model, so no layer's
# exact problem is measured and the linear layers are priced by the curve or the table), then for
# fashion-vgg and vgg11-cifar10 on 1 rank at batch 64 and at batch 4 (few rows: a skinny GEMM)
# the planner's best plan is simulated with the calibrated cluster file as written (table) and
# with its gemm_table removed (flat curve), and run RUNS times with a trace; each fc layer's
# forward and backward time is the median over the runs' traces.
# Writes results/gemm-table/: README.md (table, CPU, load), results.json, the calibrated cluster
# and calibrate's output. Made in a temporary folder and renamed. Knobs: RUNS (3), ITERS (5).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/gemm-table
runs=${RUNS:-3} iters=${ITERS:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gemm-table.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/gemm-table
mkdir -p "$work"
sb=./build/tools/splitbrain
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

echo "[gemm-table] calibrating (1 rank)" >&2
"$sb" calibrate --repeats 5 --out "$work/cluster-table.json" > "$work/calibrate.txt"
python3 - "$work/cluster-table.json" "$tmp/cluster-flat.json" <<'PY'
import json, sys
cluster = json.load(open(sys.argv[1]))
del cluster["device"]["gemm_table"]
json.dump(cluster, open(sys.argv[2], "w"), indent=2)
PY

cases=()
for model in fashion-vgg vgg11-cifar10; do
  data=synthetic:shape=3x32x32
  [ "$model" = fashion-vgg ] && data=synthetic:shape=1x28x28
  for batch in 64 4; do
    name=$model-b$batch
    cases+=("$name")
    mkdir -p "$tmp/$name"
    "$sb" plan --model "$model" --cluster "$work/cluster-table.json" --devices 1 --batch "$batch" --top 1 \
      --emit-plans "$tmp/$name/plans" > /dev/null
    plan=$(ls "$tmp/$name/plans"/*.json | head -n 1)
    cp "$plan" "$tmp/$name/plan.json"
    "$sb" simulate --plan "$plan" --cluster "$work/cluster-table.json" --trace "$tmp/$name/table.json" > /dev/null
    "$sb" simulate --plan "$plan" --cluster "$tmp/cluster-flat.json" --trace "$tmp/$name/flat.json" > /dev/null
    for run in $(seq 1 "$runs"); do
      echo "[gemm-table] $name: run $run/$runs" >&2
      "$sb" run --plan "$plan" --data "$data" --iters "$iters" --warmup 2 --trace "$tmp/$name/run-$run.json" > /dev/null
    done
  done
done

python3 tools/bench/gemm_table_report.py "$tmp" "$work" "$runs" "$loadavg_start" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" "$(nproc)" "${cases[@]}"
rm -rf "$out.new"
mv "$work" "$out.new"
rm -rf "$out"
mv "$out.new" "$out"
echo "[gemm-table] wrote $out" >&2
