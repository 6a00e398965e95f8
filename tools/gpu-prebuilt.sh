#!/usr/bin/env bash
# tools/gpu-checks.sh on a GPU machine that has the CUDA driver and Open MPI but no compilers or
# development packages: the CUDA build is made here and carried there with the shared libraries
# such a machine lacks.
#   bash tools/gpu-prebuilt.sh pack [BUILD]  here, after building BUILD (build/) with SPLITBRAIN_CUDA=ON:
#                                            writes .gpu-carry/prebuilt.tar.xz (splitbrain, the GPU test
#                                            programs, oneDNN, fmt, OpenCL, OpenMP, ONNX, protobuf)
#   bash tools/gpu-prebuilt.sh check         there, in a copy of this tree with .gpu-carry/: unpacks into
#                                            /tmp, runs tools/gpu-checks.sh with PREBUILT=, and tars its
#                                            results/gpu/ into $OUT/gpu.tgz (one file comes back where
#                                            many may not), the log beside it
# Knobs of `check` (environment): OUT (where the tarball goes, required), CHECKS_TIMEOUT (seconds,
# 420), and gpu-checks.sh's own (REPEATS, BATCHES, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.gpu-carry
staged=/tmp/splitbrain-prebuilt

case "${1:-}" in
  pack)
    build=${2:-build}
    rm -rf "$staged" && mkdir -p "$staged/bin" "$staged/lib" "$carry"
    cp "$build/tools/splitbrain" "$staged/bin/"
    for program in exec_cuda_tests exec_cuda_staging_tests exec_cuda_nccl_tests; do
      cp "$build/tests/exec/cuda/$program" "$staged/bin/"
    done
    for library in libdnnl.so.2 libfmt.so.9 libOpenCL.so.1 libgomp.so.1 libonnx.so.1 libonnx_proto.so.1 \
        libprotobuf.so.32; do
      cp -L "/lib/x86_64-linux-gnu/$library" "$staged/lib/"
    done
    strip "$staged"/bin/* "$staged"/lib/* 2> /dev/null || true
    tar -C "$(dirname "$staged")" -cJf "$carry/prebuilt.tar.xz.tmp" "$(basename "$staged")"
    mv "$carry/prebuilt.tar.xz.tmp" "$carry/prebuilt.tar.xz"
    echo "wrote $carry/prebuilt.tar.xz ($(du -h "$carry/prebuilt.tar.xz" | cut -f1)), made from $build at $(git rev-parse --short HEAD)"
    ;;
  check)
    : "${OUT:?OUT: the folder the results tarball goes to}"
    results=$OUT
    tar -C "$(dirname "$staged")" -xJf "$carry/prebuilt.tar.xz"
    export LD_LIBRARY_PATH=$staged/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    work=$(mktemp -d /tmp/gpu-prebuilt.XXXXXX)
    mkdir -p "$work/tmp"
    start=$(date +%s)
    status=0
    TMPDIR=$work/tmp OUT=$work/gpu PREBUILT=$staged timeout "${CHECKS_TIMEOUT:-420}" bash tools/gpu-checks.sh \
      > "$results/gpu-checks.log" 2>&1 || status=$?
    echo "gpu-checks.sh: exit $status after $(($(date +%s) - start)) s" >> "$results/gpu-checks.log"
    tail -n 30 "$results/gpu-checks.log"
    [ -d "$work/gpu" ] && tar -C "$work" -czf "$results/gpu.tgz" gpu
    exit "$status"
    ;;
  *)
    sed -n '2,14p' "$0" >&2
    exit 2
    ;;
esac
