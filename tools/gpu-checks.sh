#!/usr/bin/env bash
# The checks that need a GPU, on a machine that has one (issue "1/5 Step programs", must-show 5):
#  1. the GPU tests: every CUDA kernel against its CPU twin, the staging pool, and (2 GPUs) the
#     NCCL engine against the MPI engine;
#  2. fashion-vgg: plan for as many ranks as there are GPUs (at most 2) on the dgx-h100 cluster
#     file, simulate the best plan, run it with `run --backend cuda`, compare;
#  3. (2 GPUs) `calibrate --backend cuda` timing NCCL's collectives between them;
#  4. vgg11-cifar10 on one GPU at batch 64 and 512: `splitbrain run --backend cuda` against the
#     PyTorch eager peer (tools/bench/pytorch_peer.py --device cuda, fp32, TF32 off) in the same
#     run, and the prediction for the cluster file against the measurement (time, memory, host
#     transfers); and once with `run --no-kernel-graphs`, every cuDNN/cuBLAS call queued directly.
# Writes results/gpu/: README.md (device, commands, outcome), tests.txt, fashion-vgg/ and
# vgg11-b<N>/ (plan, prediction, measurement, traces, comparison) and the PyTorch peers' JSON.
# Made in a temporary folder and renamed, so nothing is left half-written.
# Knobs (environment): OUT (results/gpu), BUILD (build folder, build-gpu), PREBUILT (a folder with
# bin/splitbrain and bin/exec_cuda_*tests built elsewhere: no CMake here), ITERS (10), WARMUP (3),
# MODEL (fashion-vgg), CLUSTER (dgx-h100), BATCHES ("64 512"), REPEATS (runs of each side of the
# PyTorch comparison, 3), EXTRA_MODELS (a small GPT and resnet18), PYTHON (python3), BACKEND (cuda;
# cpu only to try the script on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/gpu}
build=${BUILD:-build-gpu} iters=${ITERS:-10} warmup=${WARMUP:-3} batches=${BATCHES:-64 512}
model=${MODEL:-fashion-vgg} cluster=${CLUSTER:-dgx-h100} python=${PYTHON:-python3} backend=${BACKEND:-cuda}
repeats=${REPEATS:-3}
extra_models=${EXTRA_MODELS:-gpt:layers=2,hidden=128,heads=4,seq=64,vocab=512,positions=64 resnet18}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
# Unbound ranks: splitbrain pins each to its share of the node's cores itself, so a rank's data
# reader thread has cores beside the one that drives the GPU (mpirun would bind to one core).
launch=(mpirun --bind-to none)

if [ "$backend" = cuda ]; then
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  if [ "${gpus:-0}" -eq 0 ]; then
    echo "[gpu-checks] no GPU visible (nvidia-smi -L lists none): nothing to check here" >&2
    exit 2
  fi
else
  gpus=1
fi
ranks=$(( gpus < 2 ? gpus : 2 ))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-checks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/gpu
mkdir -p "$work"
{ nvidia-smi -L 2> /dev/null || echo "no GPU (BACKEND=$backend)"; } > "$work/devices.txt"
torch_device=$([ "$backend" = cuda ] && echo cuda || echo cpu)

if [ -n "${PREBUILT:-}" ]; then
  sb=$PREBUILT/bin/splitbrain
  tests_dir=$PREBUILT/bin
else
  echo "[gpu-checks] building with the CUDA backend in $build" >&2
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPLITBRAIN_CUDA=ON > "$work/cmake.txt"
  cmake --build "$build" -j "$(nproc)" > "$work/build.txt" 2>&1 || { tail -n 40 "$work/build.txt"; exit 1; }
  sb=$build/tools/splitbrain
  tests_dir=$build/tests/exec/cuda
fi

echo "[gpu-checks] GPU tests" >&2
tests_ok=yes
{
  for t in exec_cuda_tests exec_cuda_staging_tests; do
    echo "== $t"
    timeout 240 "$tests_dir/$t" --gtest_brief=1 || { echo "== $t FAILED (exit $?)"; tests_ok=no; }
  done
  if [ "$gpus" -ge 2 ]; then
    echo "== mpirun -np 2 exec_cuda_nccl_tests"
    timeout 300 "${launch[@]}" -np 2 "$tests_dir/exec_cuda_nccl_tests" --gtest_brief=1 || { echo "== FAILED (exit $?)"; tests_ok=no; }
  else
    echo "== exec_cuda_nccl_tests not run: it needs 2 GPUs, $gpus visible"
  fi
  if [ "$backend" = cuda ] && [ "$gpus" -lt 2 ]; then
    # More ranks than GPUs must be refused with exit code 2 and the counts, not fail inside NCCL.
    echo "== mpirun -np 2 splitbrain run --backend $backend on $gpus GPU: expect exit 2"
    "$sb" plan --model "$model" --cluster "$cluster" --devices 2 --batch 64 --top 1 --emit-plans "$tmp/plans-2" > /dev/null
    status=0
    timeout 120 "${launch[@]}" -np 2 "$sb" run --plan "$(ls "$tmp"/plans-2/*.json | head -n 1)" --backend "$backend" --iters 1 \
      --warmup 0 > "$tmp/shortage.txt" 2>&1 || status=$?
    grep -v '^\[plan\]' "$tmp/shortage.txt" | tail -n 3
    [ "$status" -eq 2 ] && echo "== refused with exit 2: PASSED" || { echo "== exit $status: FAILED"; tests_ok=no; }
  fi
} > "$work/tests.txt" 2>&1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^== ' "$work/tests.txt" >&2 || true

run_options=()  # more options of `splitbrain run`: the calibration's cuDNN algorithms, once there are
# run_and_compare NAME PLAN RANKS CLUSTER: simulate PLAN on CLUSTER, run it on the backend, compare;
# everything under $work/NAME. Returns 1 when the run fails.
run_and_compare() {
  local dir=$work/$1 plan=$2 np=$3 prediction_cluster=$4
  mkdir -p "$dir"
  cp "$plan" "$dir/plan.json"
  "$sb" simulate --plan "$dir/plan.json" --cluster "$prediction_cluster" --json "$dir/prediction.json" \
    --trace "$dir/prediction-trace.json" > /dev/null
  if ! timeout 180 "${launch[@]}" -np "$np" "$sb" run --plan "$dir/plan.json" --backend "$backend" --data synthetic \
      "${run_options[@]}" --warmup "$warmup" --iters "$iters" --log-every 1 --report "$dir/measured.json" \
      --trace "$dir/measured-trace.json" > "$dir/run.txt" 2>&1; then
    tail -n 5 "$dir/run.txt" >&2
    return 1
  fi
  "$sb" compare "$dir/prediction.json" "$dir/measured.json" --out "$dir/compare" \
    --predicted-trace "$dir/prediction-trace.json" --measured-trace "$dir/measured-trace.json" |
    sed -e '/^wrote /d' -e '/^figures:/,$d' > "$dir/compare.txt"
}

echo "[gpu-checks] $model on $ranks rank(s), cluster $cluster, --backend $backend" >&2
"$sb" plan --model "$model" --cluster "$cluster" --devices "$ranks" --batch 64 --top 1 --emit-plans "$tmp/plans-$model" \
  > "$work/plan-$model.txt"
model_ok=yes
run_and_compare "$model" "$(ls "$tmp/plans-$model"/*.json | head -n 1)" "$ranks" "$cluster" || model_ok=no

# Every other kind of layer through the runtime on the GPU: a small GPT (embeddings, layer norm,
# attention, GELU) and ResNet-18 (batch norm, residual sums, adaptive pooling), best plan for one GPU.
extra_ok=yes
extra_index=0
for extra in $extra_models; do
  extra_index=$((extra_index + 1))
  echo "[gpu-checks] $extra, 1 GPU, batch 16" >&2
  "$sb" plan --model "$extra" --cluster "$cluster" --devices 1 --batch 16 --top 1 --emit-plans "$tmp/plans-extra-$extra_index" \
    > /dev/null
  run_and_compare "extra-$extra_index" "$(ls "$tmp/plans-extra-$extra_index"/*.json | head -n 1)" 1 "$cluster" ||
    extra_ok=no
done

# The cost model measured on this GPU: vgg11's kernel problems at the batches below, on top of the
# cluster file (its links and collectives stay the file's).
echo "[gpu-checks] calibrate --backend $backend --model vgg11-cifar10 --batch ${batches// /,}" >&2
# The runs below use the cuDNN algorithms the calibration timed (each process would search anew).
calibrated=$work/calibrated-cluster.json
algorithms=()
[ "$backend" = cuda ] && algorithms=(--conv-algorithms "$work/conv-algorithms.json")
vgg_ok=yes
if timeout 240 "${launch[@]}" -np 1 "$sb" calibrate --backend "$backend" --base "$cluster" --model vgg11-cifar10 \
    --batch "${batches// /,}" --out "$calibrated" "${algorithms[@]}" > "$work/calibrate.txt" 2>&1; then
  run_options=("${algorithms[@]}")
else
  tail -n 5 "$work/calibrate.txt" >&2
  calibrated=$cluster
  vgg_ok=no
fi
# Two GPUs: NCCL's collectives between them as calibrate times them for the cluster file's links.
nccl_calibrate=skipped
if [ "$backend" = cuda ] && [ "$gpus" -ge 2 ]; then
  echo "[gpu-checks] calibrate --backend cuda on 2 GPUs: NCCL's collectives" >&2
  nccl_calibrate=passed
  timeout 300 "${launch[@]}" -np 2 "$sb" calibrate --backend cuda --base "$cluster" --model vgg11-cifar10 --batch 64 \
    --out "$work/calibrated-2-gpus.json" > "$work/calibrate-2-gpus.txt" 2>&1 || nccl_calibrate=FAILED
fi
for batch in $batches; do
  echo "[gpu-checks] vgg11-cifar10, 1 GPU, batch $batch: splitbrain and PyTorch" >&2
  "$sb" plan --model vgg11-cifar10 --cluster "$cluster" --devices 1 --batch "$batch" --emit-plans "$tmp/plans-b$batch" \
    > /dev/null
  plan=$(grep -l '"data-parallel' "$tmp/plans-b$batch"/*.json | head -n 1)
  run_and_compare "vgg11-b$batch" "$plan" 1 "$calibrated" || vgg_ok=no
  "$sb" simulate --plan "$plan" --cluster "$cluster" --json "$work/vgg11-b$batch/prediction-preset.json" > /dev/null
  timeout 180 "$python" tools/bench/pytorch_peer.py --device "$torch_device" --batch "$batch" --iters "$iters" \
    --warmup "$warmup" --out "$work/vgg11-b$batch/pytorch.json" 2>> "$work/vgg11-b$batch/run.txt" || vgg_ok=no
  # More runs of both, alternated: a GPU's speed moves between minutes, and the table gives the
  # median run of each side and their spread.
  for repeat in $(seq 2 "$repeats"); do
    timeout 180 "${launch[@]}" -np 1 "$sb" run --plan "$plan" --backend "$backend" --data synthetic "${run_options[@]}" \
      --warmup "$warmup" --iters "$iters" --report "$work/vgg11-b$batch/measured-repeat-$repeat.json" \
      >> "$work/vgg11-b$batch/run.txt" 2>&1 || vgg_ok=no
    timeout 180 "$python" tools/bench/pytorch_peer.py --device "$torch_device" --batch "$batch" --iters "$iters" \
      --warmup "$warmup" --out "$work/vgg11-b$batch/pytorch-repeat-$repeat.json" 2>> "$work/vgg11-b$batch/run.txt" ||
      vgg_ok=no
  done
  # Once more with every cuDNN and cuBLAS call queued directly rather than through its recorded
  # CUDA graph (exec/cuda/call_graphs.h): what the graphs save the host.
  timeout 180 "${launch[@]}" -np 1 "$sb" run --plan "$plan" --backend "$backend" --data synthetic "${run_options[@]}" \
    --warmup "$warmup" --iters "$iters" --no-kernel-graphs --report "$work/vgg11-b$batch/direct-calls.json" \
    >> "$work/vgg11-b$batch/run.txt" 2>&1 || vgg_ok=no
done
"$python" tools/gpu_checks_report.py "$work" $batches > "$work/vgg11-vs-pytorch.md" || vgg_ok=no

{
  echo "# GPU checks"
  echo
  echo "Made by \`bash tools/gpu-checks.sh\` (ITERS=$iters WARMUP=$warmup REPEATS=$repeats MODEL=$model CLUSTER=$cluster BACKEND=$backend"
  echo "BATCHES=\"$batches\"$([ -n "${PREBUILT:-}" ] && echo ", PREBUILT: built on another machine") at commit"
  echo "$(git rev-parse --short HEAD 2> /dev/null || echo unknown) on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "Devices:"
  echo
  sed 's/^/    /' "$work/devices.txt"
  echo
  echo "- GPU tests: $( [ "$tests_ok" = yes ] && echo passed || echo FAILED); see \`tests.txt\`:"
  echo
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^== ' "$work/tests.txt" | sed 's/^/      /' || true
  echo
  echo "- $model, \`mpirun -np $ranks splitbrain run --backend $backend\` on the best plan for $ranks GPU(s):" \
    "$( [ "$model_ok" = yes ] && echo ran || echo "FAILED: $(tail -n 1 "$work/$model/run.txt")")"
  if [ "$model_ok" = yes ]; then
    echo
    echo "  Predicted (\`$cluster\`) against measured:"
    echo
    echo '```'
    cat "$work/$model/compare.txt"
    echo '```'
  fi
  echo
  echo "- Other layer kinds, best plan for 1 GPU at batch 16, \`run --backend $backend\`:" \
    "$( [ "$extra_ok" = yes ] && echo ran || echo FAILED)"
  index=0
  for extra in $extra_models; do
    index=$((index + 1))
    echo "  - \`$extra\` (\`extra-$index/\`): $(grep -E '^\[run\] step' "$work/extra-$index/run.txt" | tail -n 1 || echo "no step")"
  done
  echo
  echo "- \`mpirun -np 2 splitbrain calibrate --backend cuda\` (NCCL's collectives between two GPUs, \`calibrate-2-gpus.txt\`):" \
    "$nccl_calibrate$([ "$nccl_calibrate" = skipped ] && echo ": it needs 2 GPUs, $gpus visible")"
  grep -E "fitted:" "$work/calibrate-2-gpus.txt" 2> /dev/null | sed 's/^/      /' || true
  echo
  echo "## vgg11-cifar10 on one GPU against PyTorch eager (fp32, TF32 off), same run"
  echo
  echo "Predicted with \`calibrate --backend $backend\` on this GPU (\`calibrated-cluster.json\`, \`calibrate.txt\`),"
  echo "the runs with the cuDNN algorithms it timed (\`run --conv-algorithms conv-algorithms.json\`), and, for comparison, with the"
  echo "\`$cluster\` file as written. On both sides the thread that drives the GPU runs alone on one CPU, the process's"
  echo "other threads on the rest (exec/comm/driver_thread_cpu.h; \`pytorch_peer.py\` does the same after its first step)."
  echo
  # The runtime's host time per pass that calibrate fitted from a short run of the step.
  grep -E "^\[calibrate\] (the runtime's host time per pass|warning)" "$work/calibrate.txt" | sed 's/^/    /' || true
  echo
  cat "$work/vgg11-vs-pytorch.md"
  echo
  echo "Kernel graphs (cuDNN's and cuBLAS's calls launched from CUDA graphs recorded per argument set, the default):"
  echo
  for batch in $batches; do
    echo "- batch $batch: $(grep -m 1 -E '^\[run\] kernel graphs' "$work/vgg11-b$batch/run.txt" | sed 's/^\[run\] //' || echo "no count")"
    echo "  ($(grep -E '^\[run\] step .* ms \(median' "$work/vgg11-b$batch/run.txt" | head -n 1 | sed 's/^\[run\] //;s/,.*//'));" \
      "with \`--no-kernel-graphs\` (\`direct-calls.json\`):" \
      "$("$python" -c 'import json,sys; print("%.3f ms" % (1e3 * json.load(open(sys.argv[1]))["iteration_seconds"]))' \
        "$work/vgg11-b$batch/direct-calls.json" 2> /dev/null || echo "did not run")"
  done
} > "$work/README.md"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[gpu-checks] wrote $out/README.md" >&2
[ "$tests_ok" = yes ] && [ "$model_ok" = yes ] && [ "$extra_ok" = yes ] && [ "$vgg_ok" = yes ] && [ "$nccl_calibrate" != FAILED ]
