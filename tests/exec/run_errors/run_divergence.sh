#!/usr/bin/env bash
# A run whose loss stops being a finite number: every rank stops at that step, the step and the
# likely cause (the learning rate) are printed, the report is written marked "diverged" and the
# job exits 3; --keep-going-on-nan trains on to the end with exit 0.
# Usage: run_divergence.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
set -uo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The example plan at a small batch: a few steps take a second.
sed 's/"batch": 128/"batch": 16/' "$source/plans/examples/fashion-vgg-data-parallel-2.json" > "$work/plan.json"
failures=0
fail() { echo "FAIL $1"; sed 's/^/    /' "$work/out.log" | tail -20; failures=$((failures + 1)); }

run() {
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/plan.json" --data synthetic:samples=256 \
    --warmup 0 --iters 6 --lr 1e30 --report "$work/report.json" --trace "$work/trace.json" "$@" > "$work/out.log" 2>&1
}

run
status=$?
if [ "$status" -ne 3 ]; then
  fail "a diverged run: exit $status, expected 3"
elif ! grep -qE "step [0-9]+/6: the loss is (nan|inf|-inf): training diverged" "$work/out.log" ||
     ! grep -qF -- "--lr 1e+30 is too high" "$work/out.log"; then
  fail "a diverged run: no message naming the step and --lr"
elif ! python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
diverged = report["diverged"]
assert diverged["stopped"] and diverged["loss"] in ("nan", "inf", "-inf"), diverged
assert len(report["losses"]) == diverged["step"] < 6, (report["losses"], diverged)
json.load(open(sys.argv[2]))
' "$work/report.json" "$work/trace.json"; then
  fail "a diverged run: its report and trace"
else
  echo "ok   a diverged run stops with exit 3"
fi

rm -f "$work/report.json" "$work/trace.json"
run --keep-going-on-nan
status=$?
if [ "$status" -ne 0 ]; then
  fail "--keep-going-on-nan: exit $status, expected 0"
elif ! grep -qF "training on (--keep-going-on-nan)" "$work/out.log" ||
     ! python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
assert len(report["losses"]) == 6 and None in report["losses"], report["losses"]
assert not report["diverged"]["stopped"], report["diverged"]
' "$work/report.json"; then
  fail "--keep-going-on-nan: trains on to the end with null losses"
else
  echo "ok   --keep-going-on-nan trains on"
fi

[ "$failures" -eq 0 ] || exit 1
echo "run divergence: stopped with exit 3, or trained on when asked"
