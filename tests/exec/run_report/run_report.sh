#!/usr/bin/env bash
# A 2-rank run writes the measured report (the prediction's keys) and a Chrome trace with a
# compute and a communication row per rank; `compare` accepts report and prediction and finds
# the bytes equal; a pipeline's hand-overs are booked as its bubble.
# Usage: run_report.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC
# Runs name --backend cpu: they check the CPU executor, on machines with a GPU too.
set -euo pipefail
binary=$1 source=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan=$source/plans/examples/fashion-vgg-splitbrain-2.json
"$mpiexec" -np 2 "$binary" run --backend cpu --plan "$plan" --data synthetic:shape=1x28x28 --warmup 1 --iters 2 \
  --report "$work/measured.json" --trace "$work/trace.json" > "$work/run.log"
"$binary" simulate --plan "$plan" --json "$work/predicted.json" --trace "$work/predicted-trace.json" > /dev/null
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
m = json.load(open(f"{work}/measured.json"))
for key in ("iteration_seconds", "samples_per_second", "phases", "ranks", "collectives", "losses"):
    assert key in m, key
for key in ("compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"):
    assert key in m["phases"], key
assert len(m["ranks"]) == 2
for r in m["ranks"]:
    for key in ("params", "grads", "optimizer", "activations", "buffers"):
        assert r["memory"][key] >= 0, key
    assert r["peak_memory_bytes"] > 0 and r["peak_rss_bytes"] > 0 and r["comm_bytes_sent"] > 0
    # Both ranks run on this one host, so every byte stays within it.
    split = r["comm_bytes_sent_per_host_level"]
    assert split == {"within_host": r["comm_bytes_sent"], "across_hosts": 0}, split
    # Host transfers of a step: its input batch per micro-batch (this plan has no pipeline).
    transfers = r["host_transfers_per_step"]
    assert transfers["count"] == m["micro_batches"] and transfers["bytes"] > 0, transfers
    assert transfers["by_purpose"] == {"input": m["micro_batches"], "labels": 0, "loss": 0, "other": 0}, transfers
t = json.load(open(f"{work}/trace.json"))
rows = {(e["pid"], e["tid"]) for e in t["traceEvents"] if e["ph"] == "X"}
assert rows == {(0, 0), (0, 1), (1, 0), (1, 1)}, rows
# Both ranks on one machine share its time axis: it starts at the rank that began its step
# first, and the other's step began after (shared_time_axis.h); a wait for a core shows there.
first = {pid: min(e["ts"] for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == pid) for pid in (0, 1)}
assert min(first.values()) < 50.0 and max(first.values()) >= 0.0, first
# Each rank's median seconds per instruction over the 2 timed steps, keyed as compare keys them.
medians = t["instruction_seconds_median"]
assert t["instruction_seconds_steps"] == 2 and len(medians) == 2, (t["instruction_seconds_steps"], len(medians))
for rank in medians:
    assert rank["forward conv1"] > 0 and rank["optimizer"] > 0, rank
    assert not any(" mb" in name for name in rank), rank
print("report and trace: ok")
PY
"$binary" compare "$work/predicted.json" "$work/measured.json" --out "$work/compare" \
  --predicted-trace "$work/predicted-trace.json" --measured-trace "$work/trace.json" > "$work/compare.log"
grep -q '"bytes_equal": true' "$work/compare/comparison.json" || { cat "$work/compare.log"; exit 1; }
# One host, one node in the prediction: the bytes per level line up and are equal.
grep -q "within_host .* yes" "$work/compare.log" || { cat "$work/compare.log"; exit 1; }
/usr/bin/python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["bytes_per_host_level"]; assert l["mapped"] and l["equal"], l' \
  "$work/compare/comparison.json" || { cat "$work/compare.log"; exit 1; }
# Instruction by instruction: both traces name the step's instructions alike, so every pass and
# redistribution the simulator prices is found among the measured ones, on both ranks.
/usr/bin/python3 - "$work/compare/comparison.json" <<'PY' || { cat "$work/compare.log"; exit 1; }
import json, sys
rows = json.load(open(sys.argv[1]))["instructions"]
for rank in (0, 1):
    mine = {r["instruction"]: r for r in rows if r["rank"] == rank}
    assert mine["forward conv1"]["predicted_seconds"] > 0 and mine["forward conv1"]["measured_seconds"] > 0, mine
    priced = [n for n, r in mine.items() if r["predicted_seconds"] > 0 and n.split()[0] in ("forward", "backward", "redistribute")]
    assert any(n.startswith("redistribute") for n in priced), priced
    unmeasured = [n for n in priced if mine[n]["measured_seconds"] == 0]
    assert not unmeasured, unmeasured
print("instruction differences: ok")
PY
grep -q "where predicted and measured differ most" "$work/compare.log" || { cat "$work/compare.log"; exit 1; }
# The merged trace: every rank's predicted and measured process, each with its events.
/usr/bin/python3 - "$work/compare/trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert sorted(n.split(":")[0] for n in names.values()) == ["measured", "measured", "predicted", "predicted"], names
busy = {e["pid"] for e in events if e["ph"] == "X"}
assert busy == set(names), (busy, names)
print("merged trace: ok")
PY
# Figures where matplotlib is installed; otherwise compare says why it skipped them.
if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
  for figure in phases.png phases.svg memory.png memory.svg; do
    [ -s "$work/compare/$figure" ] || { cat "$work/compare.log"; echo "missing $figure"; exit 1; }
  done
else
  grep -q "figures skipped" "$work/compare.log" || { cat "$work/compare.log"; exit 1; }
fi
# Reports of different plans are refused.
"$binary" simulate --plan "$source/plans/examples/fashion-vgg-data-parallel-2.json" --json "$work/other.json"
set +e
"$binary" compare "$work/other.json" "$work/measured.json" > "$work/refused.log" 2>&1
status=$?
set -e
[ "$status" -eq 2 ] && grep -q "different plans" "$work/refused.log" || { cat "$work/refused.log"; exit 1; }
# A pipeline stage's hand-overs (sends, receives and their waits) are booked as the bubble, as the
# prediction books them: the exposed communication of a pipeline without collectives is only its
# host transfers, far below the stages' waits for each other.
"$binary" plan --model fashion-vgg --devices 2 --batch 16 --top 40 --emit-plans "$work/plans" > /dev/null
pipeline=$(ls "$work"/plans/*pipeline-2-stages*.json | head -n 1)
"$mpiexec" -np 2 "$binary" run --backend cpu --plan "$pipeline" --data synthetic:shape=1x28x28 --warmup 1 --iters 3 \
  --report "$work/pipeline.json" > "$work/pipeline.log"
/usr/bin/python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["phases"]; assert p["comm_exposed"] < p["bubble"], p' \
  "$work/pipeline.json"
echo "run report, trace and compare: ok"
