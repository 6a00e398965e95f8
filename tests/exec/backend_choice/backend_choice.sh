#!/usr/bin/env bash
# `splitbrain run --backend`: an unknown backend is a flag error, `cuda` without a visible GPU
# (or in a build without the CUDA backend) is refused with exit code 2 and says why, so is
# `--tf32` on the cpu backend, and `cpu` trains and names itself (and TF32 off) in the report.
# Usage: backend_choice.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC WITH_CUDA(ON|OFF)
set -uo pipefail
binary=$1 source=$2 mpiexec=$3 with_cuda=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan2=$source/plans/examples/fashion-vgg-data-parallel-2.json
failures=0

source "$(dirname "$0")/../expect_exit_2.sh"

expect "unknown backend" "--backend: bogus not in {cpu,cuda}" -- \
  "$binary" run --plan "$plan2" --backend bogus
expect "tf32 on the cpu backend" "--tf32: TF32 is a tensor-core mode of NVIDIA GPUs" -- \
  "$mpiexec" -np 2 "$binary" run --plan "$plan2" --backend cpu --tf32 --iters 1
if [ "$with_cuda" = ON ]; then
  # Hides every GPU, so this holds on GPU machines too.
  expect "cuda without a GPU" "no CUDA device" -- \
    env CUDA_VISIBLE_DEVICES=-1 "$mpiexec" -np 2 "$binary" run --plan "$plan2" --backend cuda --iters 1
else
  expect "cuda in a build without it" "this splitbrain was built without the CUDA backend (SPLITBRAIN_CUDA=OFF)" -- \
    "$mpiexec" -np 2 "$binary" run --plan "$plan2" --backend cuda --iters 1
fi

if "$mpiexec" -np 2 "$binary" run --plan "$plan2" --backend cpu --iters 1 --warmup 0 --report "$work/report.json" \
    > "$work/cpu.log" 2>&1 && grep -q '"backend": "cpu"' "$work/report.json" && grep -q '"tf32": false' "$work/report.json"; then
  echo "ok   cpu backend runs and is named in the report"
else
  echo "FAIL cpu backend"; sed 's/^/    /' "$work/cpu.log" | tail -20
  failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] || exit 1
echo "backend choice: all as expected"
