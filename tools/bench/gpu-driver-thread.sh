#!/usr/bin/env bash
# On a GPU machine: does the thread that drives the GPU, alone on a CPU of its own, steady a
# host-paced step? vgg11-cifar10 at batch 64 on one GPU (results/gpu's plan and cuDNN algorithms),
# `splitbrain run --no-bind` (every thread free on every CPU) against the same with the main thread
# moved alone onto one CPU and every other thread onto the rest from outside (taskset on each
# thread while the run starts, what exec/comm/driver_thread_cpu.h now does inside), interleaved
# with the PyTorch peer; `ps` shows which threads are busy. Writes OUT (results/gpu-driver-thread):
# summary.txt, topology.txt, each run's report and output, ps-*.txt. About 2 minutes.
# Knobs: PREBUILT (folder with bin/splitbrain; else build/tools/splitbrain), DRIVER_CPU (2), OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sb=${PREBUILT:+$PREBUILT/bin/splitbrain}
sb=${sb:-build/tools/splitbrain}
out=${OUT:-results/gpu-driver-thread} main_cpu=${DRIVER_CPU:-2}
plan=results/gpu/vgg11-b64/plan.json algos=results/gpu/conv-algorithms.json
o=$(mktemp -d "${TMPDIR:-/tmp}/driver-thread.XXXXXX")
{ lscpu; nvidia-smi topo -m; echo siblings; cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | sort -u | tr '\n' ' '; echo; } > "$o/topology.txt" 2>&1
siblings=$(cat "/sys/devices/system/cpu/cpu$main_cpu/topology/thread_siblings_list")
others=$(python3 -c "
import os
s = set()
for part in '$siblings'.split(','):
    a, _, b = part.partition('-'); s |= set(range(int(a), int(b or a) + 1))
print(','.join(str(c) for c in sorted(os.sched_getaffinity(0)) if c not in s))")
echo "main cpu $main_cpu, its siblings $siblings, helpers on $others" | tee -a "$o/summary.txt"
# sbrun MODE INDEX: MODE none (threads free) or iso (main thread alone on main_cpu).
sbrun() {
  mpirun --bind-to none -np 1 "$sb" run --plan $plan --backend cuda --data synthetic --conv-algorithms $algos --no-bind \
    --warmup 20 --iters 400 --report "$o/sb-$1-$2.json" > "$o/sb-$1-$2.txt" 2>&1 &
  local launcher=$! pid=""
  for k in $(seq 1 60); do
    sleep 0.1
    pid=$(pgrep -n -f "splitbrain run --plan" | grep -v "^$launcher$" | head -n 1 || true)
    if [ -n "$pid" ] && [ "$1" = iso ]; then
      for t in /proc/"$pid"/task/*; do
        tid=${t##*/}
        if [ "$tid" = "$pid" ]; then taskset -pc "$main_cpu" "$tid"; else taskset -pc "$others" "$tid"; fi > /dev/null 2>&1 || true
      done
    fi
    if { [ "$k" = 20 ] || [ "$k" = 30 ]; } && [ -n "$pid" ]; then ps -L -o tid,comm,psr,pcpu -p "$pid" >> "$o/ps-$1-$2.txt" 2>&1 || true; fi
  done
  wait $launcher
  echo "sb $1 $2 $(python3 -c "import json;print(round(json.load(open('$o/sb-$1-$2.json'))['iteration_seconds']*1e3,3))")" | tee -a "$o/summary.txt"
}
ptrun() {
  timeout 60 python3 tools/bench/pytorch_peer.py --device cuda --no-pin --batch 64 --iters 100 --warmup 5 --out "$o/pt-$1.json" > /dev/null 2>&1
  echo "pt $1 $(python3 -c "import json;print(round(json.load(open('$o/pt-$1.json'))['iteration_seconds']*1e3,3))")" | tee -a "$o/summary.txt"
}
for i in 1 2 3; do ptrun $i; sbrun none $i; sbrun iso $i; done
sbrun none 4; sbrun none 5; sbrun iso 4; sbrun iso 5
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$o" "$out.new" && rm -rf "$out" && mv "$out.new" "$out" && rm -rf "$o"
echo "wrote $out" >&2
