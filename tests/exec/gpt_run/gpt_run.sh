#!/usr/bin/env bash
# `splitbrain run` trains a tiny GPT end to end: the planner's SplitBrain plan for 2 ranks,
# emitted as a file, runs under mpirun on synthetic token sequences, the loss falls, held-out
# sequences are predicted far better than by guessing, and the measured bytes per step equal the
# simulator's prediction for the plan. Bad data for a token model, --epochs, and a plan whose
# tied table no step can share exit with code 2 and say why.
# Usage: gpt_run.sh SPLITBRAIN_BINARY MPIEXEC
# Runs name --backend cpu: they check the CPU executor, on machines with a GPU too.
set -uo pipefail
binary=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model="gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16"
failures=0

fail() { echo "FAIL $1"; failures=$((failures + 1)); }

"$binary" plan --model "$model" --devices 2 --batch 8 --cluster dgx-a100-80g --emit-plans "$work/plans" > "$work/plan.log" 2>&1 \
  || { cat "$work/plan.log"; echo "FAIL plan"; exit 1; }
splitbrain_plan=$(grep -l '"family": "splitbrain' "$work"/plans/*.json | head -1)
model_plan=$(grep -l '"family": "model-parallel' "$work"/plans/*.json | head -1)
[ -n "$splitbrain_plan" ] && [ -n "$model_plan" ] || { ls "$work/plans"; echo "FAIL: the planner emitted no splitbrain or model-parallel plan"; exit 1; }

# Training: 60 steps of SGD with momentum (the plan's) at a learning rate that learns quickly.
if "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$splitbrain_plan" --data tokens --iters 60 --warmup 0 --lr 0.2 --log-every 1 \
     --eval --report "$work/measured.json" > "$work/run.log" 2>&1; then
  "$binary" simulate --plan "$splitbrain_plan" --json "$work/predicted.json" > /dev/null 2>&1 || fail "simulate"
  python3 - "$work/measured.json" "$work/predicted.json" "$work/run.log" <<'PY' || failures=$((failures + 1))
import json, re, sys
measured, predicted = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
losses = [float(x) for x in re.findall(r"loss ([0-9.]+)", open(sys.argv[3]).read())]
ok = True
first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
if len(losses) != 60 or not last < 0.7 * first:  # measured: about 4.57 -> 2.4
    print(f"FAIL the loss did not fall by 30% in 60 steps: {losses}"); ok = False
# Next-token accuracy on held-out sequences, far above guessing (1/96) once the loss has fallen.
accuracy = measured.get("test_accuracy", -1.0)
if not accuracy > 10 / 96:
    print(f"FAIL held-out next-token accuracy {accuracy}, guessing gives {1 / 96:.4f}"); ok = False
for rank, (m, p) in enumerate(zip(measured["ranks"], predicted["ranks"])):
    if m["comm_bytes_sent"] != p["comm_bytes_sent"]:
        print(f"FAIL rank {rank} sent {m['comm_bytes_sent']} bytes per step, predicted {p['comm_bytes_sent']}"); ok = False
if ok:
    print(f"ok   trained: mean loss of the first 5 steps {first:.4f}, of the last 5 {last:.4f}; held-out accuracy "
          f"{accuracy:.4f}; bytes per step equal the prediction on every rank")
sys.exit(0 if ok else 1)
PY
else
  sed 's/^/    /' "$work/run.log" | tail -20; fail "run of $splitbrain_plan"
fi

source "$(dirname "$0")/../expect_exit_2.sh"
expect "image data for a token model" "reads token ids; its data is 'tokens'" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$splitbrain_plan" --data fashion-mnist --iters 1
expect "epochs of endless token sequences" "--epochs: token sequences have no epochs" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$splitbrain_plan" --data tokens --epochs 1
# The planner's model-parallel plan splits wte's vocabulary like lm_head's; split its columns
# instead and the tied table could not be shared without communication no step lists.
python3 - "$model_plan" "$work/columns.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["layers"]["wte"] = {"out": ["model"]}
json.dump(plan, open(sys.argv[2], "w"))
PY
expect "tied head split unlike its table" "layer 'lm_head': mesh axis 'model' splits the vocabulary rows" -- \
  "$mpiexec" -np 2 "$binary" run --backend cpu --plan "$work/columns.json" --data tokens --iters 1

[ "$failures" -eq 0 ] || exit 1
echo "gpt run: trained, bytes as predicted, bad input refused with exit 2"
