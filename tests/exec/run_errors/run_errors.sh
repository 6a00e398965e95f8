#!/usr/bin/env bash
# Bad input to `splitbrain run` under mpirun: exit code 2, a message that names the problem,
# and no hang (ctest's timeout would catch one).
# Usage: run_errors.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
# Runs name --backend cpu: they check the CPU executor, on machines with a GPU too.
set -uo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan2=$source/plans/examples/fashion-vgg-data-parallel-2.json
failures=0

source "$(dirname "$0")/../expect_exit_2.sh"

expect "plan for another rank count" "the plan's mesh {data: 2} has 2 ranks but mpirun started 1" -- \
  "$mpiexec" -np 1 "$binary" run --backend cpu --plan "$plan2" --iters 1
expect "missing data folder" "/nonexistent/fashion" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data fashion-mnist:/nonexistent/fashion --iters 1
mkdir -p "$work/corrupt"
head -c 4000 /dev/urandom > "$work/corrupt/train-images-idx3-ubyte.gz"
printf '\x1f\x8b garbage' > "$work/corrupt/train-labels-idx1-ubyte.gz"
expect "corrupt data file" "$work/corrupt/train-" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data "fashion-mnist:$work/corrupt" --iters 1
expect "data that does not fit the model" "samples are [3, 32, 32] but model 'fashion-vgg' takes [1, 28, 28]" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic:shape=3x32x32 --iters 1
sed 's/"fc2"/"fc9"/' "$source/plans/examples/fashion-vgg-splitbrain-2.json" > "$work/mismatch.json"
expect "plan that does not match its model" "layers.fc9: no such layer in model 'fashion-vgg'" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/mismatch.json" --iters 1
expect "missing plan" "/nonexistent/plan.json: cannot open" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan /nonexistent/plan.json --iters 1
# Step counts that would end in an empty report, and output paths found bad only after training.
expect "epochs that round to no step" "--epochs 0.0001: less than one step" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic:samples=256 --epochs 0.0001
expect "epochs that leave nothing to measure" "leave none to measure after --warmup 2" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic:samples=256 --epochs 1
expect "steps beyond a run's limit" "more than the 1000000000 steps a run may take" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic --warmup 999999999 --iters 2
expect "a report into a missing folder" "--report /nonexistent/dir/r.json: folder /nonexistent/dir does not exist" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic --iters 1 --report /nonexistent/dir/r.json
expect "a trace onto a folder" "--trace $work: is a folder" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic --iters 1 --trace "$work"
expect "synthetic samples beyond the limit" "samples=1099511627776 must be between 1 and 2^27" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic:samples=1099511627776 --iters 1
expect "threads beyond the range" "--threads" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan2" --data synthetic --iters 1 --threads 1000000
# bf16 runs emulated on the CPU (exec/runtime/mixed_precision.h); fp16 (loss scaling) and bf16
# under ZeRO are the simulator's only.
sed 's/"dtype": "fp32"/"dtype": "fp16"/' "$plan2" > "$work/fp16.json"
expect "a plan in fp16" "plan dtype fp16 (gradients fp16): the executor has no fp16" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/fp16.json" --data synthetic --iters 1
sed -e 's/"dtype": "fp32"/"dtype": "bf16"/' -e 's/"optimizer": {/"options": {"zero_stage": 1}, "optimizer": {/' "$plan2" > "$work/bf16-zero.json"
expect "a bf16 plan under ZeRO" "bf16 under ZeRO is not built" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/bf16-zero.json" --data synthetic --iters 1
# Dropout on the attention probabilities is priced by the simulator, not run by the executor.
cat > "$work/attention-dropout.json" <<'JSON'
{"format": "splitbrain-plan", "version": 1, "batch": 4, "mesh": {"data": 2}, "default": {"batch": ["data"]},
 "model": "gpt:layers=1,hidden=64,heads=4,seq=16,vocab=96,positions=16,attn_dropout=10"}
JSON
expect "attention dropout" "dropout on the attention probabilities (0.1) is not supported by the executor yet" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/attention-dropout.json" --data tokens --iters 1
# A mixture-of-experts layer with a capacity (tokens dropped beyond it) is priced, not run: refused
# naming the layer and the field.
cat > "$work/moe.json" <<'JSON'
{"format": "splitbrain-plan", "version": 1, "batch": 4, "mesh": {"data": 2}, "default": {"batch": ["data"]},
 "model": "moe:layers=1,hidden=32,heads=4,kv_heads=2,ffn=48,vocab=64,seq=16,experts=4,top_k=2,capacity=125"}
JSON
expect "a mixture-of-experts capacity" "layer 'h0.feed_forward.moe': capacity_factor 1.25 is priced but the executor does not run it" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/moe.json" --data tokens --iters 1
# A plan far beyond this machine's memory is refused before anything is allocated.
sed 's/"batch": 128/"batch": 1048576/' "$plan2" > "$work/huge-batch.json"
expect "a plan beyond the machine's memory" "pass --ignore-memory-limit to run anyway" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/huge-batch.json" --data synthetic --iters 1

[ "$failures" -eq 0 ] || exit 1
echo "run errors: all refused with exit 2"
