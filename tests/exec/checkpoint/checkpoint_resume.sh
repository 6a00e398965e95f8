#!/usr/bin/env bash
# 10 steps straight, and 5 steps + a killed job + 5 resumed steps, must end with bitwise
# identical weights and optimizer state on every rank (the checkpoint files are compared).
# A corrupt or foreign checkpoint must be refused with exit code 2.
# Usage: checkpoint_resume.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
# Runs name --backend cpu: they check the CPU executor, on machines with a GPU too.
set -euo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan=$source/plans/examples/fashion-vgg-splitbrain-2.json
run=("$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan" --data synthetic:shape=1x28x28 --warmup 0 --log-every 100)

"${run[@]}" --iters 10 --checkpoint "$work/straight" > "$work/straight.log"
# The second job would run 1000 steps; it is killed (SIGKILL, no clean-up) as soon as its
# step-5 checkpoint is complete, long before the step-10 one starts.
"${run[@]}" --iters 1000 --checkpoint-every 5 --checkpoint "$work/first-half" > "$work/first.log" 2>&1 &
job=$!
for _ in $(seq 1 600); do
  grep -qs '"step": 5' "$work/first-half/checkpoint.json" && break
  sleep 0.05
done
kill -9 "$job" 2> /dev/null || true
pkill -9 -f "checkpoint $work/first-half" 2> /dev/null || true
wait "$job" 2> /dev/null || true
grep -q '"step": 5' "$work/first-half/checkpoint.json" || { echo "the step-5 checkpoint never appeared"; cat "$work/first.log"; exit 1; }
"${run[@]}" --iters 5 --resume "$work/first-half" --checkpoint "$work/resumed" > "$work/resumed.log"
grep -q "resumed from $work/first-half at step 5" "$work/resumed.log"
for rank in 0 1; do
  cmp "$work/straight/rank-$rank.bin" "$work/resumed/rank-$rank.bin"
done
grep -q '"step": 10' "$work/resumed/checkpoint.json"

# A truncated rank file is refused with a message naming it.
head -c 100 "$work/first-half/rank-1.bin" > "$work/truncated"
cp "$work/truncated" "$work/first-half/rank-1.bin"
set +e
"${run[@]}" --iters 1 --resume "$work/first-half" > "$work/bad.log" 2>&1
status=$?
set -e
[ "$status" -eq 2 ] || { echo "expected exit 2 for a truncated checkpoint, got $status"; cat "$work/bad.log"; exit 1; }
grep -q "rank-1.bin: truncated checkpoint" "$work/bad.log" || { cat "$work/bad.log"; exit 1; }

# ZeRO 3 keeps parameters and optimizer state as per-rank slices: a checkpoint holds the slices,
# and resuming from it continues bitwise identically (with recompute, which changes nothing).
/usr/bin/python3 - "$source/plans/examples/fashion-vgg-data-parallel-2.json" "$work/zero3.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["options"] = {"zero_stage": 3, "recompute": True}
json.dump(plan, open(sys.argv[2], "w"))
PY
zero=("$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/zero3.json" --data synthetic:shape=1x28x28 --warmup 0 --log-every 100)
"${zero[@]}" --iters 4 --checkpoint "$work/zero-straight" > "$work/zero-straight.log"
"${zero[@]}" --iters 2 --checkpoint "$work/zero-half" > "$work/zero-half.log"
"${zero[@]}" --iters 2 --resume "$work/zero-half" --checkpoint "$work/zero-resumed" > "$work/zero-resumed.log"
for rank in 0 1; do
  cmp "$work/zero-straight/rank-$rank.bin" "$work/zero-resumed/rank-$rank.bin"
done
echo "checkpoint/resume: killed after step 5, resumed: bitwise identical to 10 straight steps; truncated checkpoint refused;" \
  "ZeRO 3 + recompute resumed bitwise"
