#!/usr/bin/env bash
# A rank stopped with SIGSTOP in the middle of a run: the watchdog (--watchdog-seconds 3) ends
# the job within seconds instead of letting the other rank wait forever, naming the stopped rank.
# Usage: watchdog.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
set -uo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
cleanup() {
  pkill -9 -f "splitbrain run .*$work" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cp "$source/plans/examples/fashion-vgg-data-parallel-2.json" "$work/plan.json"
"$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/plan.json" --data synthetic --iters 100000 --log-every 1 \
  --watchdog-seconds 3 > "$work/run.log" 2>&1 &
job=$!
# Wait for training to be under way, then stop rank 1.
for _ in $(seq 1 600); do
  grep -q "step 2/" "$work/run.log" 2> /dev/null && break
  sleep 0.1
done
grep -q "step 2/" "$work/run.log" || { echo "the run never got going"; cat "$work/run.log"; exit 1; }
rank1=""
for pid in $(pgrep -f "splitbrain run .*$work/plan.json"); do
  if tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then rank1=$pid; fi
done
[ -n "$rank1" ] || { echo "rank 1's process not found"; exit 1; }
kill -STOP "$rank1"
stopped_at=$(date +%s)
# The job must end by itself; give it 60 s.
for _ in $(seq 1 600); do
  kill -0 "$job" 2> /dev/null || break
  sleep 0.1
done
if kill -0 "$job" 2> /dev/null; then
  kill -CONT "$rank1" 2> /dev/null
  echo "the job still runs 60 s after rank 1 was stopped"; cat "$work/run.log"; exit 1
fi
wait "$job"
status=$?
took=$(( $(date +%s) - stopped_at ))
[ "$status" -ne 0 ] || { echo "the job ended with exit 0"; cat "$work/run.log"; exit 1; }
grep -q "watchdog: rank 1 (pid $rank1) made no progress for 3 s and no longer runs" "$work/run.log" \
  || { echo "no watchdog message naming rank 1"; cat "$work/run.log"; exit 1; }
echo "watchdog: rank 1 stopped, the job ended after $took s (exit $status) naming it"
